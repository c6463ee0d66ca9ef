"""browser_eval: promises are awaited, rejections and timeouts are typed errors, positions are right."""

from __future__ import annotations

import re

from helpers import settings_for_tests
from webhand import Webhand


async def _eval(tools, site, expression: str, **extra):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    return await tools.call("browser_eval", {"expression": expression, **extra})


async def test_a_returned_promise_gives_its_value_when_it_resolves(tools, site):
    reply = await _eval(tools, site, "new Promise(r => setTimeout(() => r('ready'), 100))")
    assert not reply.is_error and reply.data == {"result": "ready"}


async def test_a_resolved_promise_gives_its_value(tools, site):
    reply = await _eval(tools, site, "Promise.resolve(7)")
    assert not reply.is_error and reply.data == {"result": 7}


async def test_a_rejected_promise_is_an_error_naming_the_rejection(tools, site):
    reply = await _eval(tools, site, "Promise.reject(new Error('no such user'))")
    assert reply.is_error and reply.data["error"] == "EvaluationFailed"
    assert "rejected: Error: no such user" in reply.text


async def test_a_promise_that_never_settles_fails_at_the_timeout(tools, site):
    reply = await _eval(tools, site, "new Promise(() => {})", timeout=1)
    assert reply.is_error and reply.data["error"] == "ActionTimeout"
    assert "did not settle within 1 s" in reply.text and "larger timeout" in reply.text


async def test_an_error_in_one_line_input_reports_its_own_line_and_column(tools, site):
    reply = await _eval(tools, site, "  notDefined.call()")
    assert reply.is_error and "ReferenceError: notDefined is not defined (line 1, column 3)" in reply.text


async def test_an_error_on_a_later_line_reports_that_line(tools, site):
    reply = await _eval(tools, site, "const a = 1;\nnotDefined.call()")
    assert reply.is_error and "(line 2, column 1)" in reply.text


async def test_eval_returns_json_and_reports_exceptions_with_their_line(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    reply = await tools.call("browser_eval", {"expression": "({title: document.title, n: 1 + 1, el: document.querySelector('h1')})"})
    assert reply.data["result"]["title"] == "Sign in" and reply.data["result"]["n"] == 2
    assert reply.data["result"]["el"].startswith("<h1>")
    reply = await tools.call("browser_eval", {"expression": "await new Promise(r => setTimeout(() => r('late'), 10))"})
    assert reply.data == {"result": "late"}
    reply = await tools.call("browser_eval", {"expression": "const a = 1;\nnotDefined.call()"})
    assert reply.is_error and "ReferenceError: notDefined is not defined" in reply.text
    assert re.search(r"line \d+", reply.text)


async def test_eval_can_be_disabled_by_config(tmp_path_factory, site, driver):
    settings = settings_for_tests(tmp_path_factory, evaluate_enabled=False, warm_reserve=False, driver=driver)
    async with Webhand(settings) as wh:
        assert "browser_eval" not in wh.tools
        reply = await wh.conversation("c").call("browser_eval", {"expression": "1"})
        assert reply.is_error and "not enabled" in reply.text


async def test_large_eval_results_go_to_a_file(tools, site, webhand):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    reply = await tools.call("browser_eval", {"expression": "'x'.repeat(5000)"})
    assert "saved to" in reply.text and len(reply.text) < 1000
    path = re.search(r"saved to (\S+?)\.?$", reply.text, re.M).group(1)
    assert open(path).read() == '"' + "x" * 5000 + '"'


async def test_a_runaway_script_ends_as_a_timeout_naming_it_and_the_page_stays_usable(tools, site):
    await tools.call("browser_navigate", {"url": site.url("login.html")})
    runaway = await tools.call("browser_eval", {"expression": "while(true){}", "timeout": 2})
    assert runaway.is_error
    assert "The JavaScript did not finish within 2 s" in runaway.text, runaway.text
    assert "loop" in runaway.text and "timeout" in runaway.text  # what to do next
    assert "Internal error" not in runaway.text and "page" not in runaway.text.split(".")[0]  # blames the script
    after = await tools.call("browser_eval", {"expression": "document.title"})
    assert not after.is_error and after.data == {"result": "Sign in"}, after.text
    snapshot = await tools.call("browser_snapshot", {})
    assert not snapshot.is_error and 'button "Sign in"' in snapshot.text, snapshot.text
