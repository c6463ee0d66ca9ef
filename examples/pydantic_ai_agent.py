"""webhand's tools in a PydanticAI agent, on the bundled demo site.

    python examples/pydantic_ai_agent.py                      # scripted model (FunctionModel), no API key
    python examples/pydantic_ai_agent.py openai:gpt-4.1-mini  # a real model (needs its API key)

Needs `pip install 'webhand[pydantic-ai]'`. With no model named, PydanticAI's own FunctionModel
plays the model from scripted_model.py: the agent loop, the tool calls and the replies are the real
ones, only the choice of the next call is scripted.
"""

from __future__ import annotations

import asyncio
import sys

from pydantic_ai import Agent
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

import scripted_model
import webhand
from webhand.adapters.pydantic_ai import pydantic_ai_tools
from webhand import serve_demo_site


def scripted(url: str) -> FunctionModel:
    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        replies = [str(part.content[0] if isinstance(part.content, list) else part.content)
                   for message in messages for part in message.parts if isinstance(part, ToolReturnPart)]
        calls = scripted_model.next_calls(url, replies)
        if not calls:
            return ModelResponse(parts=[TextPart(scripted_model.final_answer(replies))])
        return ModelResponse(parts=[ToolCallPart(name, args) for name, args in calls])

    return FunctionModel(respond)


async def main(model_name: str | None) -> None:
    with serve_demo_site() as url:
        async with webhand.open_browser(capabilities=["core"]) as browser:
            tools = pydantic_ai_tools(browser)
            model = model_name or scripted(url)
            agent = Agent(model, tools=tools, instructions="You use a web browser through tools.")
            result = await agent.run(f"{scripted_model.TASK} The site is at {url}.")
            for message in result.all_messages():
                for part in message.parts:
                    if isinstance(part, ToolCallPart):
                        print(f"→ {part.tool_name} {part.args}")
            print(result.output)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1] if len(sys.argv) > 1 else None))
