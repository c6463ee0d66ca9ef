"""Shared fixtures: local sites on 127.0.0.1, a Webhand, and the no-browser-left-behind check.

Pages live in tests/pages/. Two servers serve them on two ports so that frames can be
cross-origin. Plain helpers (the server, settings, process checks) are in helpers.py.
"""

from __future__ import annotations

import contextlib
import glob
import os
import tempfile
import uuid
from collections.abc import AsyncIterator, Iterator

import pytest

from corpus_site import CorpusSite
from helpers import (Cli, Site, own_browser_processes, own_registry_entries, settings_for_tests, short_temp_dir,
                     wait_until_gone)
from webhand import Webhand
from webhand.engine.bidi.firefox import find_firefox
from webhand.errors import WebhandError

# The servers the tests start remember their browser's launch (engine/launch/launch_memo.py) in the user's
# cache: keep that out of the home directory of whoever runs the tests.
os.environ.setdefault("XDG_CACHE_HOME", tempfile.mkdtemp(prefix="webhand-tests-cache-"))


@pytest.fixture
def data_home(tmp_path, monkeypatch: pytest.MonkeyPatch):
    """XDG_DATA_HOME, where named profiles live, in this test's own folder."""
    folder = tmp_path / "data"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("XDG_DATA_HOME", str(folder))
    return folder


@pytest.fixture(scope="session")
def site() -> Iterator[Site]:
    server = Site()
    yield server
    server.close()


@pytest.fixture(scope="session")
def other_site() -> Iterator[Site]:
    """A second origin (another port) for cross-origin frames and origin policies."""
    server = Site()
    yield server
    server.close()


@pytest.fixture(scope="session")
def corpus_site() -> Iterator[CorpusSite]:
    """The real-page corpus (MiniWoB++, Python's docs, Swagger UI) on 127.0.0.1: see corpus_site.py."""
    server = CorpusSite()
    yield server
    server.close()


# ---------------------------------------------------------------------------------------------
# The driver conformance suite: every test that reaches a browser through the ``driver`` fixture
# (``webhand`` and ``tools`` request it, and so does every fixture built on them) runs once per
# driver, with the same assertions. A test (or a module, through ``pytestmark``) that has a reason
# to run on the default driver alone says so: ``@pytest.mark.one_driver("what it tests is above
# the Driver: ...")``. What decides is the fixtures a test uses, never a list of file names; so a
# test or fixture that builds its own Webhand takes ``driver`` and passes ``driver=driver`` to
# settings_for_tests.

#: The default driver first: a test marked ``one_driver`` runs on it alone. Then Playwright, then
#: Firefox (engine/bidi/, WebDriver BiDi). ``WEBHAND_TEST_DRIVERS`` (comma-separated) picks others for
#: a local run ("firefox" runs the suite on the Firefox driver alone).
DRIVERS = tuple(os.environ.get("WEBHAND_TEST_DRIVERS", "cdp,playwright,firefox").split(","))


def _firefox_missing() -> str | None:
    """Why the Firefox column cannot run here (no Firefox installed), or None."""
    try:
        find_firefox()
    except WebhandError:
        return "no Firefox installed (firefox-esr or firefox on PATH): run scripts/ensure-firefox"
    return None


#: Why a driver's column is skipped on this machine (its browser is not installed), by driver.
DRIVER_MISSING = {"firefox": _firefox_missing()} if "firefox" in DRIVERS else {}

_NOT_BUILT = "not built on Firefox yet: "
#: Why Firefox 153 never reports a shared or service worker's console messages.
_NO_WORKER_CONSOLE = (
    "Firefox/BiDi: a {kind} worker's console calls never come as log.entryAdded (Firefox 153's log module listens "
    "per window, by its inner window id: a dedicated worker's calls come as its window's, a shared or service "
    "worker's, which have no window, never), and nothing can be run in a worker to hear them: script.getRealms lists "
    "the {kind}-worker realm, but script.evaluate with {{\"target\": {{\"realm\": <it>}}}} answers \"no such frame: "
    "Realm with id … not found\" (tests/pages/workers.html, pwa/index.html)")
#: What each driver does not do: these files' tests (or one test, "file::test", by its name without the
#: parameters) are reported on that driver as strict expected failures, not run, with the reason. A
#: reason says whether Firefox or WebDriver BiDi lacks it (the protocol gives no way) or webhand has not
#: built it on Firefox yet. Every other test that runs per driver passes on every driver.
DRIVER_GAPS: dict[str, dict[str, str]] = {
    "cdp": {},
    "playwright": {},
    "firefox": {
        # What Firefox or WebDriver BiDi cannot do (or what a test asserts of Chromium by nature).
        "test_stealth.py":
            "stealth is a Chromium disguise by nature: the tests assert HeadlessChrome in the plain user agent, a "
            "desktop Chrome's (Chrome/, WebGL not SwiftShader) in the stealthy one, and the "
            "--disable-blink-features=AutomationControlled flag. A headless Firefox 153 shows no such signs (its user "
            "agent names no Headless; 5 plugins, en-US languages) but navigator.webdriver, which is true whenever the "
            "Remote Agent runs: no preference hides it (dom.webdriver.enabled=false leaves it true), so "
            "stealth = true is refused with driver = \"firefox\" (config.py)",
        "test_interaction.py::test_drag_and_drop":
            "Firefox/BiDi: an HTML5 drag that pointer actions start never drops (the drag session swallows the "
            "release; w3c/webdriver-bidi#487): the driver refuses such a drag with that reason "
            "(test_firefox.py::test_an_html5_drag_is_refused_with_the_reason_not_reported_as_done)",
        "test_javascript.py::test_a_runaway_script_ends_as_a_timeout_naming_it_and_the_page_stays_usable":
            "BiDi has no way to stop a running script (no Runtime.terminateExecution; a reload does not interrupt "
            "it): the hung tab is ended and replaced instead, and the reply says so",
        "test_console.py::test_entries_carry_the_time_they_were_logged_and_objects_read_as_devtools_prints_them":
            "Firefox: code run by browser_eval (script.evaluate) is attributed to the page's URL, so its messages "
            "carry a location that Chromium's do not (the text and the time are the same)",
        "test_files.py::test_a_download_name_longer_than_the_file_system_takes_is_cut_keeping_its_extension":
            "Firefox 153 cuts a suggested file name to 250 bytes itself, then cancels the download of any name over "
            "245 bytes (browsingContext.downloadEnd status \"canceled\", nothing in its download folder): webhand "
            "gets no file to save under a shorter name, and the reply says the download was canceled",
        "test_page_tools.py":
            "Firefox has no WebMCP: no document.modelContext, no form tools, and WebDriver BiDi nothing that lists "
            "or runs a page's tools; the tools say so (test_page_tools.py::test_firefox_says_why_it_has_no_page_tools)",
        "test_hostile_page_text.py::test_a_page_made_2_mb_url_and_100_kb_title_come_back_bounded":
            "Firefox refuses a 2 MB URL in history.replaceState (SecurityError), so the page cannot make the URL tried",
        # Not built on Firefox yet (webhand's part).
        "test_console.py::test_shared_worker_messages_are_heard_tagged_worker":
            _NO_WORKER_CONSOLE.format(kind="shared"),
        "test_console.py::test_service_worker_messages_are_tagged_sw_once":
            _NO_WORKER_CONSOLE.format(kind="service"),
        "test_performance.py":
            "Firefox/BiDi cannot give what browser_performance reports: BiDi has no counters command (nothing like "
            "CDP's Performance.getMetrics: layouts, style recalcs and their durations, script time, event listeners; "
            "`performance.getMetrics` and `browsingContext.getMetrics` answer 'unknown command' on firefox-esr 153), "
            "and the page's own APIs lack the rest: PerformanceObserver.supportedEntryTypes is [event, first-input, "
            "largest-contentful-paint, mark, measure, navigation, paint, resource] (no 'layout-shift', so no CLS: a "
            "'CLS 0' would be made up; no 'longtask') and performance.memory is undefined (no JS heap)",
        "test_pwa.py::test_a_waiting_worker_is_shown_then_activated_by_skip_waiting":
            "Firefox/BiDi cannot run code in a service worker, and only the worker can call skipWaiting(): Firefox "
            "153 lists its realm (script.getRealms type service-worker) but answers script.evaluate there with "
            "\"no such frame: Realm with id ... not found\"; the tool refuses skip_waiting with that reason",
        "test_pwa.py::test_the_app_shell_reloads_offline_from_the_service_worker":
            "BiDi: a response says only `fromCache`, which Firefox sets for a service worker's answer too, so it "
            "cannot be told from the disk cache (the log says \"from disk cache\"; the page does reload offline "
            "from the worker and the server gets none of it)",
        "test_pwa.py::test_offline_holds_for_what_the_service_worker_asks_the_network_for":
            "Firefox 153: emulation.setNetworkConditions offline, set for the user context, does not reach a "
            "service worker's own fetch() (the worker's request reached the server and was answered 404)",
        "test_network_debugging.py::test_a_script_loaded_again_by_the_same_page_comes_from_the_memory_cache":
            "BiDi: a response says only `fromCache`, so the memory cache cannot be told from the disk cache",
        "test_network_debugging.py::test_a_page_prefetched_by_speculation_rules_is_answered_from_the_prefetch":
            "Firefox does not implement speculation rules, and BiDi names no prefetch source",
        "test_network_debugging.py::test_latency_and_throughput_are_kept_and_stated_until_changed":
            "BiDi: emulation.setNetworkConditions emulates offline only (no latency or throughput)",
        "test_network_debugging.py::test_a_continue_route_changes_url_method_headers_and_body_and_the_server_gets_the_change":
            "Firefox 153 aborts a request whose URL network.continueRequest changes (method, headers and body "
            "can change)",
        # Not built on Firefox yet: lifecycle and the corpus.
        "test_lifecycle.py::test_connecting_over_cdp_never_kills_that_browser":
            "the test's running browser is a Chromium reached over CDP; the Firefox driver connects to a BiDi ws:// "
            "URL (tests/test_firefox.py connects to a running Firefox)",
    },
}


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "one_driver(reason): run on the default driver only, though the test reaches a browser "
                   "(through `driver`, `webhand` or `tools`); the reason says why the other driver adds nothing")
    config.addinivalue_line(
        "markers", "not_on_firefox(reason): not in the Firefox column, though it runs on both Chromium drivers: "
                   "the test starts a browser of its own (a Firefox start costs seconds) to check what lies above "
                   "the Driver, which the shared-fixture tests already run on Firefox; the reason says what")


def _mark_reason(definition: pytest.Function | pytest.Item, name: str, example: str) -> str | None:
    """The reason a test gives with mark ``name`` (its own mark, its class's or its module's), or None
    when it has no such mark. A mark without its reason is a usage error: the reason is the point."""
    mark = definition.get_closest_marker(name)
    if mark is None:
        return None
    reason = mark.args[0] if mark.args else mark.kwargs.get("reason")
    if not isinstance(reason, str) or not reason.strip():
        raise pytest.UsageError(f"{definition.nodeid}: {name} needs its reason, e.g. @pytest.mark.{name}({example!r})")
    return reason


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Every test that reaches a browser through ``driver`` (``webhand`` and ``tools`` do) gets one
    run per driver, unless it is marked ``one_driver`` with its reason."""
    if "driver" in metafunc.fixturenames:
        alone = _mark_reason(metafunc.definition, "one_driver", "what it tests is above the Driver") is not None
        drivers = DRIVERS[:1] if alone else DRIVERS
        if _mark_reason(metafunc.definition, "not_on_firefox", "it starts a browser of its own to check X") is not None:
            drivers = tuple(d for d in drivers if d != "firefox") or drivers
        metafunc.parametrize("driver", drivers, scope="session", indirect=True)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        driver = getattr(item, "callspec", None) and item.callspec.params.get("driver")
        if not driver:
            continue
        if DRIVER_MISSING.get(driver):
            item.add_marker(pytest.mark.skip(reason=DRIVER_MISSING[driver]))
            continue
        gaps = DRIVER_GAPS.get(driver, {})
        gap = gaps.get(f"{item.path.name}::{getattr(item, 'originalname', '')}") or gaps.get(item.path.name)
        if gap:
            item.add_marker(pytest.mark.xfail(reason=gap, run=False, strict=True))


@pytest.fixture(scope="session")
def driver(request: pytest.FixtureRequest) -> str:
    """The driver under test ("cdp", "playwright" or "firefox"), a parameter of every test that reaches a browser."""
    return str(getattr(request, "param", DRIVERS[0]))


class SharedWebhands:
    """The run's shared Webhands, one per driver, each started when first asked for and kept until
    the run ends.

    They are not kept by the ``webhand`` fixture itself: pytest holds one value of a parametrized
    fixture at a time, and a test file's tests run per driver (its cdp tests, then its playwright
    tests, then the next file's cdp tests under xdist's ``--dist loadfile``), so a fixture holding
    the Webhand closed it and launched the other driver's at each switch, twice a file: about 2 s of
    CPU and 2 to 5 s of a test's time per launch, some 330 s of test time over the suite (what the
    first test of each driver took beyond its file's median, in a full run)."""

    def __init__(self, tmp_path_factory: pytest.TempPathFactory) -> None:
        self._tmp_path_factory = tmp_path_factory
        self._started: dict[str, Webhand] = {}
        self._exits = contextlib.AsyncExitStack()

    async def of(self, driver: str) -> Webhand:
        if driver not in self._started:
            webhand = Webhand(settings_for_tests(self._tmp_path_factory, driver=driver))
            self._started[driver] = await self._exits.enter_async_context(webhand)
            # The browser is launched here, not inside the first test's tool call: a cold Firefox takes
            # seconds (more on a loaded machine), which belong to no test's timeout.
            await webhand.sessions._shared_browser()
        return self._started[driver]

    async def close(self) -> None:
        self._started.clear()
        await self._exits.aclose()


@pytest.fixture(scope="session")
async def shared_webhands(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[SharedWebhands]:
    shared = SharedWebhands(tmp_path_factory)
    yield shared
    await shared.close()


@pytest.fixture(scope="session")
async def webhand(shared_webhands: SharedWebhands, driver: str) -> Webhand:
    """One Webhand per driver for the run, sessions sharing one Chromium (context isolation) to keep
    tests fast. Each test gets its own conversation (see ``tools``), so tests never share cookies or pages.
    """
    return await shared_webhands.of(driver)


@pytest.fixture
async def tools(webhand: Webhand) -> AsyncIterator[object]:
    """A fresh conversation's Conversation; its sessions are closed when the test ends."""
    context = webhand.conversation(f"test-{uuid.uuid4().hex[:10]}")
    yield context
    await webhand.end_conversation(context.conversation_id)


# ---------------------------------------------------------------------------------------------
# No browser left behind


@pytest.fixture(scope="session", autouse=True)
def no_browser_left_behind(request: pytest.FixtureRequest) -> Iterator[None]:
    """After the whole run (fixtures torn down), this process has no browser (Chromium or Firefox) left and no registry entry."""
    yield
    # Session fixtures (the shared Webhand) are finalized before this one because they were
    # requested later; whatever is still alive now leaked.
    left = wait_until_gone(own_browser_processes(), timeout=10)
    assert not left, f"Browser processes left behind: {[p.pid for p in left]}"
    assert not own_registry_entries(), "PID registry entries left behind"


@pytest.fixture
def short_tmp() -> Iterator[str]:
    """A private temporary folder with a short path (helpers.short_temp_dir): a stand-in browser's TMPDIR."""
    with short_temp_dir() as folder:
        yield folder


@pytest.fixture
def cli(tmp_path) -> Iterator[Cli]:
    runner = Cli(tmp_path)
    yield runner
    runner("daemon", "stop", check=False)  # whatever the test did, no daemon outlives it


# ---------------------------------------------------------------------------------------------
# Nothing left in the temporary folder: counted by the process that runs the whole suite (with
# xdist, the controller, once every worker has ended), before and after.

#: What webhand's browsers put in the temporary folder (user-data dirs, download staging) and what
#: Chromium makes there for its singleton socket. Only webhand's browsers make the first two kinds,
#: so one left fails the run; Chromium's folders are counted (the tests' own stand-in browsers, a
#: remote endpoint or a person's browser, make them too).
_TEMP_KINDS = {"user-data dirs": "webhand-chrome-*", "download staging": "webhand-cdp-downloads-*",
               "chromium singleton folders": "org.chromium.Chromium.*"}
_WEBHANDS_OWN = ("user-data dirs", "download staging")


_TEMP_BEFORE = pytest.StashKey[dict[str, set[str]]]()


def _temp_entries() -> dict[str, set[str]]:
    folder = tempfile.gettempdir()
    me = os.getuid()
    found: dict[str, set[str]] = {}
    for kind, pattern in _TEMP_KINDS.items():
        entries = set()
        for path in glob.glob(os.path.join(folder, pattern)):
            try:
                if os.lstat(path).st_uid == me:
                    entries.add(path)
            except OSError:
                continue
        found[kind] = entries
    return found


def _runs_the_whole_suite(config: pytest.Config) -> bool:
    return not hasattr(config, "workerinput")


def pytest_sessionstart(session: pytest.Session) -> None:
    if _runs_the_whole_suite(session.config):
        session.config.stash[_TEMP_BEFORE] = _temp_entries()


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    before = session.config.stash.get(_TEMP_BEFORE, None)
    if before is None or not session.testscollected:
        return
    after = _temp_entries()
    left = {kind: sorted(after[kind] - before[kind]) for kind in _TEMP_KINDS}
    counts = ", ".join(f"{kind} {len(before[kind])} before, {len(after[kind])} after, {len(left[kind])} new"
                       for kind in _TEMP_KINDS)
    print(f"\ntemporary folder {tempfile.gettempdir()}: {counts}")
    own = [path for kind in _WEBHANDS_OWN for path in left[kind]]
    if own:
        print(f"left by webhand's browsers ({len(own)}): " + ", ".join(own[:10]))
        session.exitstatus = pytest.ExitCode.TESTS_FAILED

