"""webhand's tools as LangChain tools, on the bundled demo site.

    python examples/langchain_tools.py

Needs `pip install 'webhand[langchain]'`. langchain-core holds the tools and messages, not an agent
loop or a chat model, so this example runs the loop an agent would: the model's AIMessage carries
tool calls, each tool's `ainvoke(tool_call)` answers with a ToolMessage. The model's part is played
by scripted_model.py; with a real chat model (langchain-openai, langchain-anthropic …) it would be
`model.bind_tools(tools)` and `await model.ainvoke(messages)` instead.
"""

from __future__ import annotations

import asyncio
import uuid

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage

import scripted_model
import webhand
from webhand.adapters.langchain import langchain_tools
from webhand import serve_demo_site


def scripted_model_turn(url: str, messages: list[BaseMessage]) -> AIMessage:
    """What the chat model would answer: tool calls, or the final text."""
    replies = [m.content if isinstance(m.content, str) else m.content[0]["text"]
               for m in messages if isinstance(m, ToolMessage)]
    calls = scripted_model.next_calls(url, replies)
    if not calls:
        return AIMessage(content=scripted_model.final_answer(replies))
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:8]}",
                                              "type": "tool_call"} for name, args in calls])


async def main() -> None:
    with serve_demo_site() as url:
        async with webhand.open_browser(capabilities=["core"]) as browser:
            tools = {tool.name: tool for tool in langchain_tools(browser)}
            messages: list[BaseMessage] = [HumanMessage(f"{scripted_model.TASK} The site is at {url}.")]
            while True:
                answer = scripted_model_turn(url, messages)
                messages.append(answer)
                if not answer.tool_calls:
                    break
                for call in answer.tool_calls:
                    print(f"→ {call['name']} {call['args']}")
                    messages.append(await tools[call["name"]].ainvoke(call))
            print(answer.content)


if __name__ == "__main__":
    asyncio.run(main())
