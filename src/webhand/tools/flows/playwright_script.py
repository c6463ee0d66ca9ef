"""Private: a flow as a Playwright for Python script, which runs in any Python with Playwright, on
any browser Playwright runs, without webhand.

Two styles: ``plain`` (``run(page, **params)`` and a ``main()`` that takes the parameters and
``--browser``, ``--executable-path``, ``--headed``, ``--base-url`` as options) and ``pytest`` (the
same ``run`` called from ``test_<name>(page)``, the ``page`` fixture of pytest-playwright; the
parameters from ``FLOW_<NAME>`` environment variables, else their defaults).

Each target becomes its recorded ways of finding the element as Playwright locators, in the flow's
order (role and name inside the named ancestors, label, placeholder, test id, id, name, href, text,
CSS), and the script's ``find`` takes the first that matches exactly one element, waiting up to a
timeout, or fails naming the step and every locator it tried. Each step's tool becomes the
Playwright calls that do what the tool does; what the step was seen to do becomes an assertion
loose enough for a fresh run (the URL's path, digits free; the download; the new tab).

A flow file may be crafted: it is validated (``Flow.model_validate``) before this runs, and here
every recorded value reaches the script only as a Python literal (``repr`` of a string, a finite
number, a bool, a list of strings), or inside a comment with its line breaks escaped
(``response.page_line``); never as a name, a call or an operator. Code a flow step carries (the
``javascript`` of ``browser_wait_for``) is not exported: that step raises ``NotImplementedError``,
like a step whose tool has no Playwright equivalent, and ``Export.unsupported`` lists them.

Long because the mapping of every flow tool to Playwright calls sits in one table, next to the
script's fixed helpers: the two must agree, and a reader checks them side by side.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any, Literal
from urllib.parse import urlsplit

from pydantic import ValidationError

from webhand.errors import InvalidArgument
from webhand.tools.flows.format import PARAM_PATTERN, Flow, Step, Target, catalog
from webhand.response import NAME_LIMIT, page_line

Style = Literal["plain", "pytest"]
#: How long the script's ``find`` waits for one of a target's locators to match exactly one element.
FIND_TIMEOUT_MS = 10_000
#: A value to type: ``{{param}}`` or ``<secret>NAME</secret>`` (as security/secret_store.py reads it).
_PLACEHOLDERS = re.compile(PARAM_PATTERN.pattern + r"|<secret>\s*([A-Za-z_][A-Za-z0-9_]*)\s*</secret>")
#: Options of the plain script's ``main()``; a parameter of the same name gets ``--param-NAME``.
_OWN_OPTIONS = {"browser", "executable_path", "headed", "base_url", "help", "h"}


@dataclass
class Export:
    """The script, and the steps it cannot do (each line says the step and why)."""

    text: str
    unsupported: list[str] = field(default_factory=list)


def export_flow(flow: Flow, style: Style = "plain") -> Export:
    """``flow`` (validated: ``Flow.model_validate``) as a Playwright for Python script."""
    if not isinstance(flow, Flow):
        flow = Flow.model_validate(flow)
    writer = _Writer(flow)
    body = writer.body()
    text = "\n".join(_header(flow, style) + _helpers(flow) + body + _entry(flow, style)) + "\n"
    return Export(text, writer.unsupported)


# ---------------------------------------------------------------------------------------------
# Literals: the only way a recorded value enters the script


def _lit(value: Any) -> str:
    """``value`` as a Python literal: a string, a finite number, a bool, None, or a list of them."""
    if value is None or isinstance(value, (bool, str)):
        return repr(value)
    if isinstance(value, (int, float)):
        if not math.isfinite(value):
            raise InvalidArgument("The flow has a number that is not finite.", "Record the flow again.")
        return repr(value)
    if isinstance(value, list):
        return "[" + ", ".join(_lit(item) for item in value) + "]"
    raise InvalidArgument(f"The flow has a value of type {type(value).__name__} where a text or a number goes.",
                          "Record the flow again.")


def _text(value: str) -> str:
    """A typed value as an expression: its literal parts quoted, ``{{param}}`` as ``params['param']``
    and ``<secret>NAME</secret>`` as ``secret('NAME')`` (read from the environment when the script runs)."""
    parts: list[str] = []
    at = 0
    for match in _PLACEHOLDERS.finditer(value):
        if match.start() > at:
            parts.append(repr(value[at:match.start()]))
        parts.append(f"params[{match.group(1)!r}]" if match.group(1) else f"secret({match.group(2)!r})")
        at = match.end()
    if at < len(value) or not parts:
        parts.append(repr(value[at:]))
    return " + ".join(parts)


def _comment(text: str) -> str:
    return page_line(text, NAME_LIMIT)


def _css_string(value: str) -> str:
    """``value`` as a CSS string (quoted, with its quotes, backslashes and line breaks escaped)."""
    escaped = "".join(f"\\{ord(c):x} " if c in "\n\r\f\0" else "\\" + c if c in '"\\' else c for c in value)
    return f'"{escaped}"'


def _url(url: str) -> str:
    """The URL as browser_navigate opens it: ``http://`` assumed for a local host, ``https://`` for
    another, when it has no scheme (tools/navigation.py's ``normalize_url``, which sits above flows)."""
    url = url.strip()
    if re.match(r"^[A-Za-z][A-Za-z0-9+.-]*://", url) or re.match(r"^(about|data|file|blob):", url) or "{{" in url[:2]:
        return url
    host = url.split("/", 1)[0].rsplit(":", 1)[0].lower()
    local = host in ("localhost", "[::1]") or host.startswith("127.") or host.endswith(".localhost")
    return ("http://" if local else "https://") + url


# ---------------------------------------------------------------------------------------------
# The script's fixed parts


def _header(flow: Flow, style: Style) -> list[str]:
    lines = [f"# Flow {_comment(flow.name)}, exported from webhand as a Playwright for Python script.",
             "# It runs without webhand: pip install playwright (and pytest-playwright for the test)."]
    if flow.description:
        lines.append(f"# {_comment(flow.description)}")
    if style == "plain":
        lines.append("# Run: python SCRIPT [--browser chromium|firefox] [--headed] [--base-url URL]"
                     + "".join(f" --{_option(name)} VALUE" for name, p in flow.params.items() if p.default is None))
    else:
        lines.append("# Run: pytest SCRIPT (parameters from FLOW_<NAME> environment variables, the base URL from "
                     "FLOW_BASE_URL).")
    if any(_secrets_in(step) for step in flow.steps):
        lines.append("# Secrets are read from environment variables of their names; their values are not in this file.")
    return lines + ["", "import argparse" if style == "plain" else "", "import os", "import re", "import sys",
                    "import time", "from pathlib import Path", "",
                    "from playwright.sync_api import Error as PlaywrightError",
                    "from playwright.sync_api import expect" + (", sync_playwright" if style == "plain" else ""), ""]


def _helpers(flow: Flow) -> list[str]:
    origin = _origin(flow)
    return [
        f"FLOW = {flow.name!r}",
        f"RECORDED_ORIGIN = {origin!r}  # where the flow was recorded; --base-url / FLOW_BASE_URL runs it elsewhere",
        "BASE_URL = os.environ.get('FLOW_BASE_URL', '')",
        f"FIND_TIMEOUT_MS = {FIND_TIMEOUT_MS}",
        "DOWNLOADS = Path(os.environ.get('FLOW_DOWNLOADS', 'downloads'))",
        "",
        "",
        "def at(url):",
        '    """The recorded URL, on BASE_URL when one is given."""',
        "    if BASE_URL and RECORDED_ORIGIN and url.startswith(RECORDED_ORIGIN):",
        "        return BASE_URL.rstrip('/') + url[len(RECORDED_ORIGIN):]",
        "    return url",
        "",
        "",
        "def secret(name):",
        "    if name not in os.environ:",
        "        raise SystemExit(f'{FLOW}: the secret {name} is not set: set the environment variable {name} to it.')",
        "    return os.environ[name]",
        "",
        "",
        "def find(step, *candidates):",
        '    """The first candidate locator that matches exactly one element, waiting up to FIND_TIMEOUT_MS."""',
        "    page = candidates[0].page",
        "    deadline = time.monotonic() + FIND_TIMEOUT_MS / 1000",
        "    while True:",
        "        counts = []",
        "        for number, locator in enumerate(candidates):",
        "            try:",
        "                count = locator.count()",
        "            except PlaywrightError as error:",
        "                count = 'an error: ' + str(error).splitlines()[0]",
        "            if count == 1:",
        "                if number:",
        "                    print(f'{step}: healed: found by {locator}', file=sys.stderr)",
        "                return locator",
        "            counts.append(count)",
        "        if time.monotonic() >= deadline:",
        "            tried = '; '.join(f'{locator} matched {count}' for locator, count in zip(candidates, counts))",
        "            raise LookupError(f'{step}: no locator matched exactly one element in '",
        "                              f'{FIND_TIMEOUT_MS / 1000:g} s. Tried: {tried}')",
        "        page.wait_for_timeout(100)  # a poll, as expect() does: the page may still be rendering",
        "",
        "",
        "def fill_field(field, value):",
        '    """A form field set as browser_fill_form does: a list or a <select> selects, a bool checks."""',
        "    if isinstance(value, bool):",
        "        field.set_checked(value)",
        "    elif isinstance(value, list) or field.evaluate('e => e.tagName') == 'SELECT':",
        "        field.select_option(value)",
        "    else:",
        "        field.fill(value)",
        "",
        "",
        "def save_download(download):",
        "    DOWNLOADS.mkdir(parents=True, exist_ok=True)",
        "    path = DOWNLOADS / Path(download.suggested_filename).name",
        "    download.save_as(path)",
        "    print(f'{FLOW}: downloaded {path}')",
        "    return path",
        "",
        "",
        "def url_path(pattern):",
        '    """The page\'s URL, loosely: this path (digits free), any origin, any query."""',
        "    return re.compile(r'^[a-z]+://[^/]*' + pattern + r'([?#].*)?$')",
        "",
        "",
    ]


def _entry(flow: Flow, style: Style) -> list[str]:
    if style == "pytest":
        given = ", ".join(f"{name!r}: os.environ.get({('FLOW_' + name.upper())!r}, {param.default!r})"
                          for name, param in flow.params.items())
        missing = [name for name, param in flow.params.items() if param.default is None]
        lines = ["", "", f"def test_{re.sub(r'[^A-Za-z0-9_]', '_', flow.name)}(page):",
                 f"    params = {{{given}}}"]
        if missing:
            lines += ["    unset = [name for name, value in params.items() if value is None]",
                      "    if unset:",
                      "        raise RuntimeError(f'{FLOW}: set ' + ', '.join('FLOW_' + n.upper() for n in unset))"]
        return lines + ["    run(page, **params)"]
    lines = ["", "", "def main(argv=None):",
             "    global BASE_URL",
             "    parser = argparse.ArgumentParser(description=f'Run the flow {FLOW} in a browser.')",
             "    parser.add_argument('--browser', choices=['chromium', 'firefox', 'webkit'], default='chromium')",
             "    parser.add_argument('--executable-path', help='the browser binary (default: Playwright\\'s own)')",
             "    parser.add_argument('--channel', help='a browser channel; a Firefox binary of your own (--executable-path) '",
             "                        'is driven over WebDriver BiDi: moz-firefox, the default then')",
             "    parser.add_argument('--headed', action='store_true', help='show the browser window')",
             "    parser.add_argument('--base-url', default=BASE_URL, help='run on this origin instead of '",
             "                        + (RECORDED_ORIGIN or 'the recorded one'))"]
    for name, param in flow.params.items():
        required = param.default is None
        lines.append(f"    parser.add_argument({('--' + _option(name))!r}, dest={('param_' + name)!r}, "
                     f"required={required!r}, default={param.default!r}, help={param.description.replace('%', '%%')!r})")
    lines += ["    args = parser.parse_args(argv)",
              "    BASE_URL = args.base_url or ''",
              "    params = {name[len('param_'):]: value for name, value in vars(args).items() "
              "if name.startswith('param_')}",
              "    with sync_playwright() as playwright:",
              "        channel = args.channel or ('moz-firefox' if args.browser == 'firefox' and args.executable_path else None)",
              "        browser = getattr(playwright, args.browser).launch(executable_path=args.executable_path or None,",
              "                                                            channel=channel, headless=not args.headed)",
              "        try:",
              "            context = browser.new_context(accept_downloads=True)",
              "            page = context.new_page()",
              "            started = time.monotonic()",
              "            run(page, **params)",
              "            took = time.monotonic() - started",
              "        finally:",
              "            browser.close()",
              "    print(f'{FLOW}: done in {took:.2f} s')",
              "", "",
              "if __name__ == '__main__':",
              "    main(sys.argv[1:])"]
    return lines


def _option(name: str) -> str:
    return ("param-" + name if name in _OWN_OPTIONS else name).replace("_", "-")


def _origin(flow: Flow) -> str:
    first = flow.start_url or next((s.arguments.get("url", "") for s in flow.steps if s.tool == "browser_navigate"), "")
    if not isinstance(first, str) or not first:
        return ""
    parts = urlsplit(_url(first))
    return f"{parts.scheme}://{parts.netloc}" if parts.scheme in ("http", "https") and parts.netloc else ""


def _secrets_in(step: Step) -> bool:
    return "<secret>" in repr(step.arguments)


# ---------------------------------------------------------------------------------------------
# Steps


def candidates(target: Target) -> list[str]:
    """A target's ways of finding its element, as Playwright locator expressions on ``page``."""
    root = "page" + "".join(f".frame_locator({css!r})" for css in target.frame)
    found: list[str] = []
    if target.role and target.name:
        role = f".get_by_role({target.role!r}, name={target.name!r}, exact=True)"
        scope = "".join(f".get_by_role({a.role!r}, name={a.name!r}, exact=True)"
                        for a in reversed(target.ancestors) if a.role and a.name)
        if scope:
            found.append(root + scope + role)
        found.append(root + role)
    if target.label:
        found.append(f"{root}.get_by_label({target.label!r}, exact=True)")
    if target.placeholder:
        found.append(f"{root}.get_by_placeholder({target.placeholder!r}, exact=True)")
    for attribute, tag in (("data-testid", ""), ("id", ""), ("name", ""), ("href", "a")):
        value = target.attributes.get(attribute)  # type: ignore[call-overload]
        if value:
            found.append(f"{root}.locator({tag + '[' + attribute + '=' + _css_string(value) + ']'!r})")
    if target.text:
        found.append(f"{root}.get_by_text({target.text!r}, exact=True)")
    if target.css:
        found.append(f"{root}.locator({target.css!r})")
    if target.role and not target.name:
        found.append(f"{root}.get_by_role({target.role!r})")
    return found


class _Writer:
    def __init__(self, flow: Flow) -> None:
        self.flow = flow
        self.unsupported: list[str] = []
        self.before: dict[int, list[str]] = {}  # step index -> handlers registered before it runs

    def body(self) -> list[str]:
        lines = ["def run(page, **params):", f'    """The flow {_comment(self.flow.name)}, step by step."""']
        if self.flow.start_url:
            lines.append(f"    page.goto(at({_url(self.flow.start_url)!r}))")
        self._answers()
        for index, step in enumerate(self.flow.steps):
            number = index + 1
            lines.append(f"    # step {number}: {step.tool}" + (f": {_comment(step.note)}" if step.note else ""))
            action = self.before.get(index, []) + self._step(number, step.tool, step.arguments, step)
            lines += ["    " + line for line in self._wrapped(action, step)]
            lines += ["    " + line for line in self._expectations(step)]
        if len(lines) == 2:
            lines.append("    pass")
        return lines

    # Dialogs and file choosers open during a step, and are answered by a later one: Playwright
    # answers them with a handler registered before the step that opens them.
    def _answers(self) -> None:
        for index, step in enumerate(self.flow.steps):
            if step.tool == "browser_handle_dialog":
                accept, prompt = step.arguments.get("accept"), step.arguments.get("prompt_text")
                answer = (f"dialog.accept({_text(prompt)})" if isinstance(prompt, str) else "dialog.accept()") \
                    if accept else "dialog.dismiss()"
                handler = f"page.once('dialog', lambda dialog: {answer})  # answered as step {index + 1} did"
            elif step.tool == "browser_upload_file" and not (step.arguments.get("ref") or step.arguments.get("selector")):
                paths = _lit([str(p) for p in step.arguments.get("paths", [])])
                handler = f"page.once('filechooser', lambda chooser: chooser.set_files({paths}))  # step {index + 1}"
            else:
                continue
            opener = self._opener(index, "dialog" if step.tool == "browser_handle_dialog" else "")
            self.before.setdefault(opener, []).append(handler)

    def _opener(self, index: int, kind: str) -> int:
        """The step before ``index`` that opened what it answers: the last one seen to open it, else the last action."""
        earlier = [i for i in range(index - 1, -1, -1) if self.flow.steps[i].tool not in
                   ("browser_handle_dialog", "browser_take_screenshot")]
        for i in earlier:
            if kind and self.flow.steps[i].expect.dialog:
                return i
        return earlier[0] if earlier else index

    def _wrapped(self, action: list[str], step: Step) -> list[str]:
        if step.expect.download:
            action = ["with page.expect_download() as download:", *("    " + a for a in action),
                      "save_download(download.value)"]
        if step.expect.new_page:
            action = ["with page.context.expect_page() as opened:", *("    " + a for a in action),
                      "page = opened.value", "page.wait_for_load_state()"]
        return action

    def _expectations(self, step: Step) -> list[str]:
        if step.expect.url:
            path = urlsplit(step.expect.url).path or "/"
            if urlsplit(step.expect.url).scheme in ("http", "https"):
                pattern = re.sub(r"(\\?[0-9])+", "[0-9]+", re.escape(path))
                return [f"expect(page).to_have_url(url_path({pattern!r}))"]
        if step.expect.url_pattern:
            from webhand.engine.url_glob import glob_to_regex

            try:
                regex = glob_to_regex(step.expect.url_pattern)
            except InvalidArgument:
                return []
            return [f"expect(page).to_have_url(re.compile({regex!r}))"]
        return []

    def _unsupported(self, number: int, tool: str, why: str) -> list[str]:
        message = f"step {number}: {tool} {why}"
        self.unsupported.append(message)
        return [f"raise NotImplementedError({message!r})"]

    def _find(self, number: int, step: Step, arguments: dict[str, Any], ref_field: str = "ref",
              selector_field: str = "selector") -> str | None:
        """The expression that finds the step's element, or None when the step names none."""
        label = f"step {number}" + (f" ({_comment(step.note)})" if step.note else "")
        key = arguments.get(ref_field)
        if isinstance(key, str) and key in step.targets:
            ways = candidates(step.targets[key])
            if not ways:
                raise InvalidArgument(f"Step {number}'s target {key} has no way of finding its element.",
                                      "Record the flow again.")
            return f"find({label!r}, " + ", ".join(ways) + ")"
        selector = arguments.get(selector_field)
        if isinstance(selector, str) and selector:
            return f"find({label!r}, page.locator({selector!r}))"
        return None

    def _point(self, number: int, step: Step) -> tuple[str, Any] | None:
        points = self._points(number, step)
        return points[0] if points else None

    def _points(self, number: int, step: Step) -> list[tuple[str, Any]]:
        """Each point target of the step, in order (a drag's start, then its end): how the script
        finds its element, and where in the element's box the point is."""
        label = f"step {number}" + (f" ({_comment(step.note)})" if step.note else "")
        return [(f"find({label!r}, " + ", ".join(candidates(target)) + ")", target.point)
                for target in step.targets.values() if target.point is not None]

    def _step(self, number: int, tool: str, arguments: dict[str, Any], step: Step) -> list[str]:
        tools = catalog()
        try:  # a sub-step of browser_interact is checked here; a step was checked by the format
            tools[tool].input_model.model_validate(arguments)
        except (KeyError, ValidationError):
            raise InvalidArgument(f"Step {number} has a {tool[:60]!r} action with arguments that tool does not take.",
                                  "Record the flow again.") from None
        a = arguments
        short = tool.removeprefix("browser_")
        element = self._find(number, step, a) if "ref" in tools[tool].input_model.model_fields else None
        if tool == "browser_navigate":
            return [f"page.goto(at({_text(_url(a['url']))}), wait_until={a.get('wait_until', 'load')!r})"]
        if tool in ("browser_back", "browser_forward", "browser_reload"):
            return [{"back": "page.go_back()", "forward": "page.go_forward()", "reload": "page.reload()"}[short]]
        if tool == "browser_interact":
            lines: list[str] = []
            for sub in a["steps"]:
                sub = dict(sub)
                lines += self._step(number, "browser_" + str(sub.pop("action")), sub, step)
            return lines
        if tool in ("browser_handle_dialog",):
            return ["pass  # the dialog was answered by the handler registered before the step that opened it"]
        if tool == "browser_take_screenshot":
            return ["pass  # a screenshot only measured the coordinates of the next step"]
        if tool == "browser_wait_for":
            return self._wait_for(number, a)
        if tool in ("browser_press_key",):
            return [f"{element}.press({_lit(a['key'])})" if element else f"page.keyboard.press({_lit(a['key'])})"]
        if tool == "browser_keyboard_type":
            return [f"page.keyboard.type({_text(a['text'])})"]
        if tool == "browser_key_hold":
            keys = str(a["key"]).split("+")
            return [*(f"page.keyboard.down({_lit(k)})" for k in keys), f"page.wait_for_timeout({_lit(float(a['seconds']) * 1000)})",
                    *(f"page.keyboard.up({_lit(k)})" for k in reversed(keys))]
        if tool == "browser_resize":
            return [f"page.set_viewport_size({{'width': {_lit(a['width'])}, 'height': {_lit(a['height'])}}})"]
        if tool.endswith("_xy"):
            return self._mouse(number, tool, a, step)
        if tool == "browser_upload_file":
            if element is None:
                return ["pass  # the file chooser is answered by the handler registered before the step that opened it"]
            return [f"{element}.set_input_files({_lit([str(p) for p in a['paths']])})  # paths from the working folder"]
        if tool == "browser_scroll":
            x, y = _lit(a.get("x", 0)), _lit(a.get("y", 0))
            if element is None:
                return [f"page.mouse.wheel({x}, {y})"]
            if not a.get("x") and not a.get("y"):
                return [f"{element}.scroll_into_view_if_needed()"]
            return [f"{element}.evaluate('(e, d) => e.scrollBy(d[0], d[1])', [{x}, {y}])"]
        if tool == "browser_drag":
            target = self._find(number, step, a, "to_ref", "to_selector")
            if element is None or target is None:
                return self._unsupported(number, tool, "names no element to drag or none to drop onto")
            return [f"{element}.drag_to({target})"]
        if tool == "browser_fill_form":
            lines = []
            for item in a["fields"]:
                found = self._find(number, step, item)
                if found is None:
                    return self._unsupported(number, tool, "has a field with no element")
                value = item["value"]
                lines.append(f"fill_field({found}, {_text(value) if isinstance(value, str) else _lit(value)})")
            return lines
        if tool == "browser_tabs":
            return self._tabs(number, a)
        if tool == "browser_cookies":
            return self._cookies(number, a)
        if tool == "browser_storage":
            return self._storage(number, a)
        if element is None and tool in ("browser_click", "browser_type", "browser_hover", "browser_focus",
                                        "browser_check", "browser_uncheck", "browser_select_option"):
            return self._unsupported(number, tool, "names no element")
        if tool == "browser_click":
            options = []
            if a.get("button", "left") != "left":
                options.append(f"button={_lit(a['button'])}")
            if a.get("modifiers"):
                options.append(f"modifiers={_lit(list(a['modifiers']))}")
            return [f"{element}.{'dblclick' if a.get('double_click') else 'click'}({', '.join(options)})"]
        if tool == "browser_type":
            text = _text(a["text"])
            lines = []
            if a.get("slowly") or not a.get("clear", True):
                if a.get("clear", True):
                    lines.append(f"field = {element}")
                    lines.append("field.fill('')")
                    lines.append(f"field.press_sequentially({text})")
                else:
                    lines.append(f"field = {element}")
                    lines.append("field.press('End')")
                    lines.append(f"field.press_sequentially({text})")
            else:
                lines += [f"field = {element}", f"field.fill({text})"]
            if a.get("submit"):
                lines.append("field.press('Enter')")
            return lines
        if tool in ("browser_hover", "browser_focus", "browser_check", "browser_uncheck"):
            return [f"{element}.{short}()"]
        if tool == "browser_select_option":
            return [f"{element}.select_option({_lit([str(v) for v in a['values']])})"]
        return self._unsupported(number, tool, "has no Playwright equivalent in this export; do it by hand here")

    def _wait_for(self, number: int, a: dict[str, Any]) -> list[str]:
        if a.get("javascript"):
            return self._unsupported(number, "browser_wait_for", "waits on JavaScript the model wrote, which an "
                                     "export never carries; write the wait here")
        lines = []
        if a.get("text"):
            lines.append(f"page.get_by_text({_text(a['text'])}).first.wait_for()")
        if a.get("text_gone"):
            lines.append(f"expect(page.get_by_text({_text(a['text_gone'])})).to_have_count(0)")
        if a.get("selector"):
            lines.append(f"page.locator({_lit(a['selector'])}).first.wait_for(state={_lit(a.get('state', 'visible'))})")
        if a.get("url"):
            lines.append(f"page.wait_for_url(at({_lit(a['url'])}))")
        if a.get("network_idle"):
            lines.append("page.wait_for_load_state('networkidle')")
        if a.get("time"):
            lines.append(f"page.wait_for_timeout({_lit(float(a['time']) * 1000)})")
        return lines or ["pass"]

    def _mouse(self, number: int, tool: str, a: dict[str, Any], step: Step) -> list[str]:
        point = self._point(number, step)
        if tool == "browser_mouse_click_xy":
            options = [f"click_count={_lit(a.get('click_count', 1))}"]
            if a.get("button", "left") != "left":
                options.append(f"button={_lit(a['button'])}")
            if a.get("modifiers"):
                options.append(f"modifiers={_lit(list(a['modifiers']))}")
            if point is not None:
                found, at = point
                return [f"element = {found}", "box = element.bounding_box()",
                        f"element.click(position={{'x': box['width'] * {_lit(at.x)}, 'y': box['height'] * {_lit(at.y)}}}, "
                        + ", ".join(options) + ")"]
            return [f"page.mouse.click({_lit(a['x'])}, {_lit(a['y'])}, {', '.join(options)})  # the recorded "
                    "screenshot's pixels"]
        if tool == "browser_mouse_move_xy":
            if point is not None:
                found, at = point
                return [f"element = {found}", "box = element.bounding_box()",
                        f"element.hover(position={{'x': box['width'] * {_lit(at.x)}, 'y': box['height'] * {_lit(at.y)}}})"]
            return [f"page.mouse.move({_lit(a['x'])}, {_lit(a['y'])})"]
        if tool == "browser_mouse_wheel_xy":
            return [f"page.mouse.move({_lit(a['x'])}, {_lit(a['y'])})",
                    f"page.mouse.wheel({_lit(a.get('delta_x', 0))}, {_lit(a.get('delta_y', 0))})"]
        if tool == "browser_mouse_drag_xy":
            button = _lit(a.get("button", "left"))
            points = self._points(number, step)
            if len(points) == 2:  # from a place of one element to a place of another, both read before the drag
                (start, at), (end, to) = points
                return [f"start = {start}", "start.scroll_into_view_if_needed()", f"end = {end}",
                        "box, end_box = start.bounding_box(), end.bounding_box()",
                        f"page.mouse.move(box['x'] + box['width'] * {_lit(at.x)}, box['y'] + box['height'] * {_lit(at.y)})",
                        f"page.mouse.down(button={button})",
                        f"page.mouse.move(end_box['x'] + end_box['width'] * {_lit(to.x)}, "
                        f"end_box['y'] + end_box['height'] * {_lit(to.y)}, steps=10)",
                        f"page.mouse.up(button={button})"]
            return [f"page.mouse.move({_lit(a['start_x'])}, {_lit(a['start_y'])})", f"page.mouse.down(button={button})",
                    f"page.mouse.move({_lit(a['end_x'])}, {_lit(a['end_y'])}, steps=10)", f"page.mouse.up(button={button})"]
        if tool == "browser_mouse_button_xy":
            lines = [] if a.get("x") is None else [f"page.mouse.move({_lit(a['x'])}, {_lit(a['y'])})"]
            return lines + [f"page.mouse.{'down' if a['action'] == 'down' else 'up'}(button={_lit(a.get('button', 'left'))})"]
        return self._unsupported(number, tool, "has no Playwright equivalent in this export")

    def _tabs(self, number: int, a: dict[str, Any]) -> list[str]:
        action = a.get("action", "list")
        if action == "open":
            lines = ["page = page.context.new_page()"]
            return lines + ([f"page.goto(at({_text(_url(a['url']))}))"] if a.get("url") else [])
        if action == "focus":
            return [f"page = page.context.pages[{_lit(a.get('index') or 0)}]", "page.bring_to_front()"]
        if action == "close":
            index = a.get("index")
            closing = "page" if index is None else f"page.context.pages[{_lit(index)}]"
            return [f"closing = {closing}", "context = page.context", "closing.close()",
                    "page = page if page is not closing else context.pages[-1]"]
        return ["pass  # the tabs were listed"]

    def _cookies(self, number: int, a: dict[str, Any]) -> list[str]:
        action = a.get("action", "list")
        if action == "set":
            cookie = (f"{{'name': {_lit(a.get('name') or '')}, 'value': {_text(a.get('value') or '')}, "
                      f"'path': {_lit(a.get('path') or '/')}, "
                      + (f"'domain': {_lit(a['domain'])}}}" if a.get("domain") else
                         "'domain': re.sub(r'^[a-z]+://([^/:]*).*$', r'\\1', page.url)}"))
            return [f"page.context.add_cookies([{cookie}])"]
        if action == "delete":
            return [f"page.context.clear_cookies(name={_lit(a.get('name') or '')})"]
        if action == "clear":
            return [f"page.context.clear_cookies({'' if not a.get('domain') else 'domain=' + _lit(a['domain'])})"]
        return ["pass  # cookies were read"]

    def _storage(self, number: int, a: dict[str, Any]) -> list[str]:
        action, area = a.get("action", "get"), _lit(a.get("area", "local"))
        code = {"set": "a => (a[0] === 'local' ? localStorage : sessionStorage).setItem(a[1], a[2])",
                "delete": "a => (a[0] === 'local' ? localStorage : sessionStorage).removeItem(a[1])",
                "clear": "a => (a[0] === 'local' ? localStorage : sessionStorage).clear()"}.get(action)
        if code is None:
            return ["pass  # storage was read"]
        value = _text(a.get("value") or "")
        return [f"page.evaluate({code!r}, [{area}, {_lit(a.get('key') or '')}, {value}])"]
