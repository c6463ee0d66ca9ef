"""Running JavaScript in the page."""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from webhand.durations import Timeout
from webhand.errors import EvaluationDisabled
from webhand.response import Response, to_json_text
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, tool


class EvalArgs(PageArgs):
    expression: str = Field(description="JavaScript to run in the page, like in the DevTools console; its last value is returned.")
    await_promise: bool = Field(True, description="Wait for a returned promise and return its value.")
    timeout: Timeout = None

    @model_validator(mode="before")
    @classmethod
    def _function_form(cls, data: Any) -> Any:
        """Playwright MCP and Chrome DevTools MCP send a function (``() => document.title``) as
        ``function``, to be called: it runs as the expression that calls it."""
        if isinstance(data, dict) and "function" in data and "expression" not in data:
            data = dict(data)
            source = data.pop("function")
            data["expression"] = f"({source})()" if isinstance(source, str) else source
        return data


@tool("browser_eval", destructive=True, enabled=lambda settings: settings.evaluate_enabled)
async def evaluate(session: Session, args: EvalArgs, response: Response) -> None:
    """Run JavaScript in the current page and return its result as JSON."""
    if not session.settings.evaluate_enabled:
        raise EvaluationDisabled("JavaScript evaluation is disabled by configuration (evaluate_enabled = false).",
                                 "Use browser_snapshot and the action tools instead.")
    tab = await session.tab()
    value = await tab.console.evaluate(args.expression, await_promise=args.await_promise,
                               timeout=args.timeout or session.settings.timeout)
    response.large(to_json_text(value), what="result", suffix=".json")
    response.data({"result": value})
