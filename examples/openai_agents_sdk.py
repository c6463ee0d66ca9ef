"""webhand's tools in an OpenAI Agents SDK agent, on the bundled demo site.

    python examples/openai_agents_sdk.py          # without OPENAI_API_KEY: the tools run, the model does not
    OPENAI_API_KEY=… python examples/openai_agents_sdk.py

Needs `pip install 'webhand[openai-agents]'`. The SDK ships no offline model, so without a key the
example builds the agent and calls its tools the way the SDK's runner does (`on_invoke_tool` with
the model's JSON arguments), with scripted_model.py choosing the calls. With a key, `Runner.run`
lets the model drive.
"""

from __future__ import annotations

import asyncio
import json
import os

from agents import Agent, Runner
from agents.tool_context import ToolContext

import scripted_model
import webhand
from webhand.adapters.openai_agents import openai_agents_tools
from webhand.demo import serve_demo_site


async def main() -> None:
    with serve_demo_site() as url:
        async with webhand.open_browser(capabilities=["core"]) as browser:
            agent = Agent(name="browser", instructions="You use a web browser through tools.",
                          tools=openai_agents_tools(browser))
            task = f"{scripted_model.TASK} The site is at {url}."
            if os.environ.get("OPENAI_API_KEY"):
                result = await Runner.run(agent, task)
                print(result.final_output)
                return
            tools = {tool.name: tool for tool in agent.tools}
            replies: list[str] = []
            while calls := scripted_model.next_calls(url, replies):
                for name, args in calls:
                    print(f"→ {name} {args}")
                    arguments = json.dumps(args)
                    context = ToolContext(context=None, tool_name=name, tool_call_id=f"call_{len(replies)}",
                                          tool_arguments=arguments)
                    replies.append(str(await tools[name].on_invoke_tool(context, arguments)))
            print(scripted_model.final_answer(replies))
            print("(Set OPENAI_API_KEY to let a model drive this agent with Runner.run.)")


if __name__ == "__main__":
    asyncio.run(main())
