"""webhand's tools in an OpenAI Agents SDK agent, on the bundled demo site.

    python examples/openai_agents_sdk.py                 # a scripted model, no API key
    OPENAI_API_KEY=… python examples/openai_agents_sdk.py --openai

Needs `pip install 'webhand[openai-agents]'`. The SDK ships no offline model, so without `--openai`
a small `Model` (below) plays the model from scripted_model.py: `Runner.run`'s agent loop, its tool
calls and the tools' replies are the real ones, only the choice of the next call is scripted.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from typing import Any

from agents import Agent, Model, ModelResponse, RunConfig, Runner, Usage
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

import scripted_model
import webhand
from webhand.adapters.openai_agents import openai_agents_tools
from webhand import serve_demo_site


class ScriptedModel(Model):
    """Answers with the scripted tool calls, reading the tool outputs in the run's input items."""

    def __init__(self, url: str) -> None:
        self.url = url

    async def get_response(self, system_instructions: Any, input: Any, *args: Any, **kwargs: Any) -> ModelResponse:
        items = input if isinstance(input, list) else []
        replies = [str(item["output"]) for item in items
                   if isinstance(item, dict) and item.get("type") == "function_call_output"]
        calls = scripted_model.next_calls(self.url, replies)
        if calls:
            output: list[Any] = [ResponseFunctionToolCall(type="function_call", name=name, arguments=json.dumps(args),
                                                          call_id=f"call_{uuid.uuid4().hex[:8]}")
                                 for name, args in calls]
        else:
            text = ResponseOutputText(type="output_text", text=scripted_model.final_answer(replies), annotations=[])
            output = [ResponseOutputMessage(id=f"msg_{uuid.uuid4().hex[:8]}", type="message", role="assistant",
                                            status="completed", content=[text])]
        return ModelResponse(output=output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("this example does not stream")


async def main(use_openai: bool) -> None:
    with serve_demo_site() as url:
        async with webhand.open_browser(capabilities=["core"]) as browser:
            agent = Agent(name="browser", instructions="You use a web browser through tools.",
                          tools=openai_agents_tools(browser), model=None if use_openai else ScriptedModel(url))
            # No traces are sent anywhere from the scripted run.
            result = await Runner.run(agent, f"{scripted_model.TASK} The site is at {url}.",
                                      run_config=RunConfig(tracing_disabled=not use_openai))
            for item in result.new_items:
                if item.type == "tool_call_item":
                    print(f"→ {item.raw_item.name} {item.raw_item.arguments}")
            print(result.final_output)


if __name__ == "__main__":
    asyncio.run(main("--openai" in sys.argv[1:]))
