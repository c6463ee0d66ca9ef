"""``webhand doctor``: find Chromium, launch it, drive one page, and say what is wrong.

Each check prints ``ok`` or ``FAIL`` with what to do; the exit status is non-zero when any
check failed, so scripts and CI can use it too.
"""

from __future__ import annotations

import asyncio
import os
import platform
import sys
import time
from importlib import metadata

from webhand import __version__
from webhand.config import Settings, find_config_file
from webhand.errors import WebhandError

_VERSION_TIMEOUT_SECONDS = 10.0


def _package_version(name: str) -> str:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return "not installed"


class _Report:
    def __init__(self) -> None:
        self.failed = 0

    def ok(self, what: str, detail: str = "") -> None:
        print(f"ok    {what}" + (f": {detail}" if detail else ""))

    def fail(self, what: str, error: str) -> None:
        self.failed += 1
        print(f"FAIL  {what}: {error}")

    def info(self, what: str, detail: str) -> None:
        print(f"      {what}: {detail}")


async def _binary_version(path: str) -> str:
    process = await asyncio.create_subprocess_exec(path, "--version", stdout=asyncio.subprocess.PIPE,
                                                   stderr=asyncio.subprocess.STDOUT)
    try:
        out, _ = await asyncio.wait_for(process.communicate(), _VERSION_TIMEOUT_SECONDS)
    except TimeoutError:
        process.kill()
        await process.wait()
        return f"(no answer to --version within {_VERSION_TIMEOUT_SECONDS:g} s)"
    # Distribution wrappers may print shell noise first; the version is the last line.
    lines = [line for line in out.decode(errors="replace").splitlines() if line.strip()]
    return lines[-1].strip() if lines else "(no version printed)"


async def _check_endpoints(settings: Settings, report: _Report) -> None:
    """Connect to each remote endpoint once, with its headers and timeout, then disconnect."""
    from webhand.engine.pool import expand_headers, redacted_url
    from webhand.session.manager import make_driver

    pool = settings.effective_pool()
    assert pool is not None
    driver = make_driver(settings)
    try:
        for endpoint in pool.endpoints:
            what = f"endpoint {endpoint.label}"
            if endpoint.url is None:
                report.info(what, f"local launching, capacity {endpoint.capacity}")
                continue
            started = time.monotonic()
            try:
                browser = await driver.connect(endpoint.url, kind=endpoint.kind, timeout=endpoint.timeout,
                                               headers=expand_headers(endpoint.headers, endpoint.label))
            except WebhandError as error:
                report.fail(what, str(error))
                continue
            # Header names only: their values are credentials.
            headers = f", headers {', '.join(sorted(endpoint.headers))}" if endpoint.headers else ""
            report.ok(what, f"{endpoint.kind} {redacted_url(endpoint.url)}{headers}, Chromium {browser.version}, "
                            f"connected in {time.monotonic() - started:.1f} s, capacity {endpoint.capacity}")
            await browser.close()  # only disconnects: webhand never kills a browser it did not start
    finally:
        await driver.stop()


async def run_doctor(settings: Settings) -> int:
    from webhand.engine.launch.chromium_binary import choose_chromium
    from webhand.host import Webhand
    from webhand.security.locations import private_folder, runtime_dir

    report = _Report()
    report.info("webhand", f"{__version__} on Python {platform.python_version()} ({sys.platform}, "
                           f"{'root' if os.geteuid() == 0 else 'user'})")
    report.info("packages", ", ".join(f"{n} {_package_version(n)}" for n in ("playwright", "cdp-use", "mcp", "pydantic")))
    try:
        config = find_config_file()
        report.info("config file", str(config) if config else "none (defaults, env WEBHAND_* and flags)")
    except WebhandError as error:
        report.fail("config file", str(error))

    try:
        report.ok("runtime dir", str(runtime_dir()))
    except (OSError, WebhandError) as error:
        report.fail("runtime dir", str(error))
    try:
        # The same check as a conversation's first file (conversation_files.py): the user's, and nobody else's to change.
        report.ok("output dir", private_folder(settings.output_dir.expanduser(), "Set output_dir (WEBHAND_OUTPUT_DIR) to "
                                               "a folder of your own that only you can write."))
    except WebhandError as error:
        report.fail("output dir", str(error))

    how = "set" if "driver" in settings.model_fields_set else (
        "picked: these settings need Playwright" if settings.needs_playwright() else "the default")
    what = "Firefox over WebDriver BiDi (engine/bidi/)" if settings.driver == "firefox" else \
        f"Chromium over {'raw CDP' if settings.driver == 'cdp' else 'Playwright'}"
    report.info("driver", f"{settings.driver}: {what} ({how}; set driver in webhand.toml, WEBHAND_DRIVER or --driver)")
    pool = settings.effective_pool()
    if settings.driver == "firefox" and not settings.cdp_url:
        from webhand.engine.bidi.firefox import find_firefox

        try:
            binary = find_firefox(settings.firefox_path)
        except WebhandError as error:
            report.fail("Firefox", str(error))
            return 1
        report.ok("Firefox found", f"{binary} ({await _binary_version(binary)})")
    elif pool is not None:
        await _check_endpoints(settings, report)
    if settings.driver != "firefox" and (pool is None or any(e.kind == "local" for e in pool.endpoints)):
        configured = settings.executable_path
        if configured and not (os.path.isfile(configured) and os.access(configured, os.X_OK)):
            report.fail("executable_path", f"{configured} is not an executable file. Fix executable_path "
                        "(--chrome, WEBHAND_EXECUTABLE_PATH or webhand.toml), or unset it to search the PATH.")
            return 1
        try:
            choice = choose_chromium(settings)
        except WebhandError as error:
            report.fail("Chromium", str(error))
            return 1
        report.ok("Chromium found", f"{choice.executable} ({await _binary_version(choice.executable)})")
        report.info("Chromium build", f"{'headless shell' if choice.flavor == 'headless-shell' else 'full browser'}: "
                                      f"{choice.reason}")
        if os.geteuid() == 0:
            report.info("sandbox", "running as root: Chromium is started with --no-sandbox")

    # The whole stack, as a host uses it: a session, a page, a reply.
    started = time.monotonic()
    try:
        async with Webhand(settings.model_copy(update={"warm_reserve": False})) as webhand:
            context = webhand.conversation("doctor")
            reply = await context.call("browser_navigate", {"url": "data:text/html,<title>webhand doctor</title>ok"})
            if reply.is_error:
                report.fail("launch and navigate", reply.text)
            else:
                report.ok("launch and navigate", f"a page loaded in {time.monotonic() - started:.1f} s")
                engine_version = getattr(getattr(webhand.sessions, "driver", None), "version", None)
                if engine_version:
                    report.info("browser version", str(engine_version))
            await webhand.end_conversation("doctor")
    except WebhandError as error:
        report.fail("launch and navigate", str(error))
    except Exception as error:  # noqa: BLE001 - the doctor reports, it never crashes
        report.fail("launch and navigate", f"{type(error).__name__}: {error}. This is a webhand bug; please report it.")

    # Informational: a browser already running is not required, so none of this fails the doctor.
    from webhand.engine.launch.running_browsers import describe, find_running_browsers

    for line in describe(await asyncio.to_thread(find_running_browsers)):
        report.info("running browser", line)

    print("All checks passed." if not report.failed else f"{report.failed} check(s) failed.")
    return 0 if not report.failed else 1
