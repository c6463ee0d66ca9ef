"""SessionManager: get_or_create, named sessions, limits, shutdown; its collaborators keep the warm
reserve (session/warm_reserve.py) and close idle sessions (session/idle.py).

Isolation modes:
- ``process`` (default): each session has its own Chromium. One browser, with its context and a
  blank tab, is kept launched in reserve so that a new conversation does not wait for a launch;
  the next one is prepared after that conversation's first call, not during it.
- ``context``: sessions share one Chromium, each in its own browser context (cookies, storage,
  cache apart). One context is kept ready the same way.
With a pool (``pool``, ``cdp_url`` or ``playwright_url``), ``engine/pool.py`` places each new
session (session/placing.py), without a warm reserve or ``max_sessions``.

A session on a named profile (profiles.py: ``profile`` for each conversation's default session,
or browser_session_create's ``profile``, which may name only a profile the configuration gives
the agent: ``profiles.may_open``) always gets a browser of its own, launched on the
profile's folder, whatever the isolation: its default context is the one Chromium keeps on disk.
It holds the profile's lock until its browser has exited. A session without a profile gets the
``storage_state`` file loaded before its first page, and written back at close when
``save_storage_state`` says so (storage_state.py).

Long because getting a session is one decision with many inputs (isolation, profile, pool,
limits, the reserve) and shutting them all down must see the same table; the reserve, idle reaping,
placement and profiles are collaborators in their own modules.
"""

from __future__ import annotations

import asyncio
import atexit
import logging
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path

from webhand.config import Settings, Viewport
from webhand.engine.driver import BrowserHandle, Driver, TabEvents
from webhand.engine.launch.chrome import reap_orphans
from webhand.engine.launch.local_launch import Launcher
from webhand.errors import (ConfigError, InvalidArgument, SessionClosed, SessionLimitReached, SessionNotFound,
                            shorten)
from webhand.security.masking import Masker
from webhand.session import call_deadline, placing
from webhand.session.idle import IdleReaper
from webhand.session.profiles import ProfileLock, may_open
from webhand.session.storage_state import read_storage_state, write_storage_state
from webhand.session.warm_reserve import Prepared, WarmReserve
from webhand.conversation_files import ConversationFiles
from webhand.session.session import Session, SessionKey
from webhand.session.shutdown import Steps, within_cap

log = logging.getLogger("webhand.sessions")

_STATE_HINT = "Fix the file storage_state names (or remove the setting); it must be the JSON browser_storage_state saves."

@dataclass(frozen=True)
class SessionInfo:
    conversation: str
    name: str
    url: str
    tabs: int
    idle_seconds: float
    browser_pid: int | None
    status: str = "idle"  # idle, busy, crashed, closing (Session.status)
    created_at: float = 0.0  # Unix time
    last_used_at: float = 0.0
    actions: int = 0  # tool calls recorded in its history
    public_id: str = ""  # names the session in dashboard URLs
    profile: str | None = None  # the named profile it runs on; None: a temporary one
    control: str | None = None  # who holds control in the dashboard and since when (HumanControl.describe)


def make_driver(settings: Settings) -> Driver:
    """The driver the settings name (``driver``); each is imported only when chosen."""
    if settings.driver == "firefox":
        from webhand.engine.bidi import FirefoxDriver

        return FirefoxDriver(settings)
    if settings.driver == "cdp":
        from webhand.engine.cdp import CdpDriver

        return CdpDriver(settings)
    from webhand.engine.pw import PlaywrightDriver

    return PlaywrightDriver(settings)


def _shutting_down() -> SessionClosed:
    """What a call gets whose session was still opening when shutdown began."""
    return SessionClosed("The browser session was not opened: webhand is shutting down.",
                         "No further call can run here; start webhand again to go on.")


def _validate_name(name: str | None) -> str:
    if name is None or name == "":
        return "default"
    if len(name) > 64 or not all(c.isalnum() or c in "-_." for c in name):
        raise InvalidArgument(f"Session name {name!r} is not valid.", "Use up to 64 letters, digits, '-', '_' or '.'.")
    return name


class SessionManager:
    def __init__(self, settings: Settings, driver: Driver | None = None) -> None:
        if driver is None:
            driver = make_driver(settings)
        self.settings = settings
        self.driver = driver
        self.pool = placing.pool_for(settings, driver)
        self._sessions: dict[SessionKey, Session] = {}
        self._files: dict[str, ConversationFiles] = {}  # each conversation's own folder, chosen here, never by a model
        self._creating: dict[SessionKey, asyncio.Task[Session]] = {}
        self._shared: BrowserHandle | None = None  # context isolation
        self._shared_lock = asyncio.Lock()
        # A context with a blank tab prepared ahead of need (session/warm_reserve.py).
        self.reserve = WarmReserve(self._prepare, self._reserve_now, settings.timeout)
        self._boot: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()  # sessions whose browser died, being cleaned up
        self._ending: set[Session] = set()  # sessions being closed on request (kill_session)
        self.idle = IdleReaper(settings, self._sessions)  # closes idle sessions (session/idle.py)
        self._stopping = False
        self.dashboard_url: str | None = None  # where a dashboard serves these sessions (surfaces/dashboard/)
        #: How that dashboard links to one session, from its url and the session's public id: the
        #: dashboard's own form, which it sets when it is mounted (tools reach no surface).
        self.dashboard_link: Callable[[str, str], str] | None = None
        self._loop_guard: AsyncGenerator[None, None] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None  # the loop webhand started on, for the exit
        self._shutting_down: asyncio.Task[None] | None = None
        atexit.register(self._kill_at_exit)

    def link_to(self, session: Session) -> str | None:
        """``session``'s page in the dashboard being served; None while none is."""
        if self.dashboard_url is None or self.dashboard_link is None:
            return None
        return self.dashboard_link(self.dashboard_url, session.public_id)

    # -- life ----------------------------------------------------------------------------------
    async def start(self) -> None:
        """Begin booting, without waiting for it: a server can answer its client at once while the
        driver starts. The first session (or ``ready``) waits for the boot to finish."""
        self._loop = asyncio.get_running_loop()
        if self._boot is None:
            self._boot = asyncio.create_task(self._boot_up(), name="webhand-boot")
        if self._loop_guard is None:
            self._loop_guard = self._shut_down_with_the_loop()
            await self._loop_guard.__anext__()

    async def _shut_down_with_the_loop(self) -> AsyncIterator[None]:
        """Shut down when the event loop ends without ``shutdown_all`` (a program that never called
        close()): ``asyncio.run`` closes the async generators it started before it closes the loop,
        so browsers and the Playwright driver are stopped while the loop can still run their
        clean-up, instead of being killed at exit with "Event loop is closed" tracebacks."""
        try:
            yield
        finally:
            self._loop_guard = None
            if self._boot is not None or self._shutting_down is not None:
                await self.shutdown_all()

    async def ready(self, *, reserve: bool = False) -> None:
        """Wait until sessions can open; with ``reserve``, also until the warm reserve is prepared."""
        await self.start()
        assert self._boot is not None
        await asyncio.shield(self._boot)
        if reserve:
            await self.reserve.ready()

    async def _boot_up(self) -> None:
        """Reap browsers a dead webhand left behind, start the driver, the idle reaper and the reserve."""
        if self.settings.warm_reserve and (launcher := self.launcher) is not None:
            launcher.prelaunch()
        # Reaping only touches browsers whose owner is dead, so the driver can start beside it.
        reaped, _ = await asyncio.gather(asyncio.to_thread(reap_orphans), self.driver.start())
        if reaped:
            log.info("killed %d browser processes left behind by an earlier webhand", len(reaped))
        if self.pool is not None:
            await self.pool.start()
        self.idle.start()
        self.reserve.refill()

    @property
    def launcher(self) -> Launcher | None:
        """The launcher of the browser the next session takes, for a cold start (``prelaunch`` it
        beside the driver's start-up, adopt one a stdio server launched from memory, wait for its
        process): None when webhand launches none ahead, because sessions go where a pool (or
        ``cdp_url``) says, or each default session runs on a profile, whose browser is launched on
        demand on the profile's folder (``engine/launch/launch_memo.py``), or because it is shutting
        down."""
        return self.driver.launcher if self._reserve_wanted() and not self._stopping else None

    def _reserve_wanted(self) -> bool:
        """Whether a browser is launched ahead of need: not for a pool (it places sessions), nor when
        every default session runs on a profile (its browser is launched on the profile's folder)."""
        return self.pool is None and self.settings.profile is None

    async def shutdown_all(self) -> None:
        """Close every session and every browser webhand started, within the ``timeout`` cap
        (session/shutdown.py: what overruns is logged, and the browsers are killed by pid).
        Safe to call twice, and from two places at once: a program's close() can race the end of
        its event loop (``asyncio.run`` closes ``open_browser`` and the loop guard together), and
        the later call waits for the shutdown under way instead of killing what it is closing."""
        if self._shutting_down is None:
            self._shutting_down = asyncio.create_task(self._shut_down(), name="webhand-shutdown")
        if self._shutting_down is asyncio.current_task():
            return  # the loop guard, closed by the shutdown itself
        await asyncio.shield(self._shutting_down)

    async def _shut_down(self) -> None:
        try:
            self._stopping = True
            try:
                await within_cap(self._close_everything, self.driver, self.settings.timeout)
            finally:
                self._boot = None
                self._stopping = False
            guard, self._loop_guard = self._loop_guard, None
            if guard is not None:
                await guard.aclose()  # nothing left for it to do
        finally:
            self._shutting_down = None

    async def _close_everything(self, steps: Steps) -> None:
        if self._boot is not None:  # let a boot under way finish, so nothing half-started is left
            await steps.run("waiting for the start-up under way", self._boot)
        self.idle.stop()
        self.reserve.stop_refilling()
        opening = list(self._creating.values())
        for task in opening:
            task.cancel()
        sessions = [*self._sessions.values(), *self._ending]  # Session.close: a second call waits for the first
        self._sessions.clear()
        # Sessions cut short while opening unwind here too (closing what they launched), so that
        # nothing is still being closed after shutdown returns.
        await steps.run(f"closing {len(sessions)} session{'' if len(sessions) == 1 else 's'}",
                        asyncio.gather(*(s.close() for s in sessions), *self._closing, *opening,
                                       return_exceptions=True))
        await steps.run("closing the warm reserve", self.reserve.discard())
        if self._shared is not None:
            shared, self._shared = self._shared, None
            await steps.run("closing the shared browser", shared.close())
        if self.pool is not None:
            await steps.run("disconnecting from the pool", self.pool.close())
        await steps.run("stopping the driver", self.driver.stop())

    def _kill_at_exit(self) -> None:
        """When the interpreter exits without shutdown_all. A program that ran its own loop and
        left it open (``loop.run_until_complete`` without close()) gets a clean shutdown on that
        loop, whose tasks then end before Python destroys them (else: "Task was destroyed but it
        is pending!", "Event loop is closed" on its stderr). Then, last resort: SIGKILL what we
        own (by pid: every browser the driver launched that was not closed, reserve included)."""
        loop = self._loop
        if loop is not None and not loop.is_closed() and not loop.is_running() \
                and (self._boot is not None or self._sessions):
            try:
                loop.run_until_complete(asyncio.wait_for(self.shutdown_all(), self.settings.timeout + 5))
                left = [task for task in asyncio.all_tasks(loop) if not task.done()]
                for task in left:  # the libraries' own readers and keep-alives, now idle
                    task.cancel()
                loop.run_until_complete(asyncio.wait_for(asyncio.gather(*left, return_exceptions=True), 5))
            except Exception as error:  # noqa: BLE001 - the kill below still ends every browser
                log.debug("shutting down at exit failed: %r", error)
        self.driver.kill_now()

    # -- sessions ------------------------------------------------------------------------------
    async def get_or_create(self, conversation_id: str, name: str | None = None, *,
                            profile: str | None = None) -> Session:
        """The open session, or a new one; a new default session runs on ``profile``, else on the
        configured ``profile`` (named sessions get one only from ``create``)."""
        key = SessionKey(conversation_id, _validate_name(name))
        if profile is not None:
            self._may_open(profile)
        session = self._sessions.get(key)
        if session is None and key.name != "default" and key not in self._creating \
                and not self.settings.create_named_sessions_implicitly:
            # A typo (or a session just destroyed) must not silently start a fresh browser.
            names = sorted(k.name for k in self._sessions if k.conversation == conversation_id)
            closed = self.idle.take_notice(key)  # told here: browser_session_create starts anew
            why = f" {closed}" if closed else ""
            raise SessionNotFound(f"No session named {key.name!r} is open (open: {', '.join(names) or 'none'}).{why}",
                                  f"Start it with browser_session_create name={key.name!r}, or leave out `session` "
                                  "to use the default session.")
        if session is not None:
            if session.alive:
                return session
            # The browser died (crash, OOM kill) or its endpoint was lost: start over, and say so.
            self._sessions.pop(key, None)
            if session.profile is not None:
                await session.close()  # its profile's lock is free only once the dead browser is gone
            else:
                self._close_in_background(session)
            fresh = await self._create(key, profile=session.profile)
            placing.tell_replaced(session.placement, fresh)
            return fresh
        return await self._create(key, profile=(profile or self.settings.profile) if key.name == "default" else None)

    def _close_in_background(self, session: Session) -> None:
        """Clean up after a session whose browser died (what is left of its process group, its
        user-data dir) without holding up the call that replaces it: that took seconds on a busy
        machine, and the call must answer within its own timeout."""
        task = asyncio.create_task(session.close(), name="webhand-close-dead-session")
        self._closing.add(task)

        def done(finished: asyncio.Task[None]) -> None:
            self._closing.discard(finished)
            if not finished.cancelled() and finished.exception() is not None:
                log.warning("cleaning up after a dead browser failed: %s", finished.exception())

        task.add_done_callback(done)

    async def create(self, conversation_id: str, name: str, *, viewport: Viewport | None = None,
                     profile: str | None = None) -> Session:
        """Start a new named session (refused if that name is already open in the conversation),
        on the named ``profile`` if given."""
        if profile is not None:
            self._may_open(profile)
        key = SessionKey(conversation_id, _validate_name(name))
        existing = self._sessions.get(key)
        if existing is not None and existing.alive:
            raise InvalidArgument(f"A session named {key.name!r} is already open.",
                                  f"Use it by passing session={key.name!r} to page tools, or browser_session_destroy it first.")
        return await self._create(key, viewport, profile=profile)

    def _may_open(self, profile: str) -> None:
        """A profile asked for by name (a tool's ``profile``) is one this agent's configuration gives."""
        may_open(profile, self.settings.profile, self.settings.allowed_profiles)

    async def _create(self, key: SessionKey, viewport: Viewport | None = None, *,
                      profile: str | None = None) -> Session:
        # Two calls racing for the same new session share one creation.
        task = self._creating.get(key)
        if task is None:
            if self.pool is None and len(self._sessions) + len(self._creating) >= self.settings.max_sessions:
                raise SessionLimitReached(
                    f"{self.settings.max_sessions} browser sessions are open, the most allowed.",
                    "Close one with browser_close (or browser_session_destroy), or raise max_sessions.")
            task = asyncio.create_task(self._open(key, viewport, profile))
            call_deadline.does_the_calls_work(task)  # its browser's launch is not the call's time
            self._creating[key] = task
            task.add_done_callback(lambda _: self._creating.pop(key, None))
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and not (current is not None and current.cancelling()):
                raise _shutting_down() from None  # only shutdown_all cancels an opening session
            raise

    async def _open(self, key: SessionKey, viewport: Viewport | None = None, profile: str | None = None) -> Session:
        await self.ready()
        files = self.files_of(key.conversation)
        files.ensure()  # owner-only before the page can download anything into it
        # Read before a browser is taken: a file to fix is said at once, and wastes no launch.
        state_file = self.settings.storage_state if profile is None else None
        state = await asyncio.to_thread(read_storage_state, state_file, _STATE_HINT) if state_file else None
        # The warm reserve has the default viewport; another size needs its own context.
        custom = viewport is not None and viewport != self.settings.viewport
        if profile is not None:
            prepared = await self._prepare_on_profile(key, profile, viewport)
        else:
            prepared = await self._prepare(viewport) if custom else await self.reserve.take()
        if state is not None:
            try:
                await prepared.context.set_storage_state(state, timeout=self.settings.timeout)
            except BaseException:
                await prepared.close()
                raise
        if self._stopping:
            # Shutdown cancelled this opening, but the cancellation can be lost on the way (Python
            # 3.11's asyncio.wait_for returns a result that arrives with it): registered now, the
            # session would come after shutdown cleared the list, and its browser would outlive it.
            await prepared.close()
            raise _shutting_down()
        # The context was made before anyone asked for it (the warm reserve): it learns its
        # conversation's download folder only now.
        prepared.context.downloads_dir = files.downloads
        session = Session(key, self.settings, prepared.browser, prepared.context, prepared.events,
                          owns_browser=prepared.owns_browser, files=files)
        if prepared.profile is not None:
            session.profile = prepared.profile.name
            session.on_closed.append(prepared.profile.release)  # after its browser exited
        if state_file is not None and self.settings.save_storage_state:
            session.before_close.append(lambda: self._save_storage_state(session, state_file))
        if prepared.placement is not None and self.pool is not None:
            placing.adopt_placement(session, self.pool, prepared.placement)
        closed = self.idle.take_notice(key)
        if closed is not None:
            session.notices.append(f"{closed} This call runs in a fresh browser session.")
        self._sessions[key] = session
        session.dashboard_link = lambda: self.link_to(session)
        session.on_closed.append(lambda: self._sessions.pop(key, None) if self._sessions.get(key) is session else None)
        if not custom and profile is None:
            self.reserve.refill_after_first_call(session)
        return session

    async def _save_storage_state(self, session: Session, path: Path) -> None:
        """Write the session's cookies and localStorage back to ``storage_state``, secrets masked as
        browser_storage_state masks them."""
        if not session.browser.alive:
            return  # nothing to read: the file keeps what it had
        state = Masker(self.settings.secrets_file).data(await session.context.storage_state())
        await asyncio.to_thread(write_storage_state, path, state)

    async def _prepare_on_profile(self, key: SessionKey, profile: str, viewport: Viewport | None) -> Prepared:
        """A browser of its own on the named profile, its default context with one tab; the
        profile's lock is held from before the launch until the session's browser exits."""
        if self.pool is not None:
            raise ConfigError(f"Profile {profile!r} needs a browser webhand launches on this machine, but this webhand "
                              "connects to browsers elsewhere (cdp_url, playwright_url or pool).",
                              "Use a webhand without those settings for profiles, or sign in with storage_state.")
        purpose = f"conversation {shorten(key.conversation, 24)}, session {key.name!r}"
        lock = await asyncio.to_thread(ProfileLock.acquire, profile, purpose)
        try:
            with call_deadline.not_counted():  # the launch has launch_timeout, not the call's time
                browser = await self.driver.launch(profile_dir=str(lock.folder))
            events = TabEvents()
            size = viewport or self.settings.viewport
            try:
                context = await browser.existing_context(events=events, width=size.width, height=size.height)
                if not context.tabs:
                    await (await context.new_tab()).warm_up()
            except BaseException:
                await browser.close()
                raise
        except BaseException:
            lock.release()
            raise
        return Prepared(browser, context, events, owns_browser=True, profile=lock)

    async def kill_session(self, conversation_id: str, name: str | None = None) -> bool:
        key = SessionKey(conversation_id, _validate_name(name))
        self.idle.take_notice(key)  # closed on purpose: nothing left to tell
        session = self._sessions.pop(key, None)
        if session is None:
            return False
        self._ending.add(session)  # a shutdown meanwhile waits for this close instead of killing beneath it
        try:
            await session.close()
        finally:
            self._ending.discard(session)
        return True

    async def kill_conversation(self, conversation_id: str) -> int:
        """Close every session of a conversation (the host says the conversation ended).

        Its folder is forgotten but its files stay on disk for the user: a later conversation,
        even one with the same id, gets a new folder and cannot reach them."""
        self._files.pop(conversation_id, None)
        keys = [k for k in self._sessions if k.conversation == conversation_id]
        self.idle.forget_conversation(conversation_id)
        for key in keys:
            await self.kill_session(key.conversation, key.name)
        return len(keys)

    def find(self, conversation_id: str, name: str | None = None) -> Session | None:
        return self._sessions.get(SessionKey(conversation_id, _validate_name(name)))

    def by_public_id(self, public_id: str) -> Session | None:
        """The session a dashboard URL names (its unguessable ``public_id``)."""
        return next((s for s in self._sessions.values() if s.public_id == public_id), None)

    def sessions(self) -> list[Session]:
        return list(self._sessions.values())

    def files_of(self, conversation_id: str) -> ConversationFiles:
        """The conversation's own folder (made on first write) and the check for its tools' paths."""
        files = self._files.get(conversation_id)
        if files is None:
            files = self._files[conversation_id] = ConversationFiles(self.settings)
        return files

    def list(self, conversation_id: str | None = None) -> list[SessionInfo]:
        infos = []
        for key, session in self._sessions.items():
            if conversation_id is not None and key.conversation != conversation_id:
                continue
            tabs = [t for t in session.context.tabs if not t.closed]
            active = session.active_tab
            url = active.url if active is not None and not active.closed else (tabs[0].url if tabs else "")
            infos.append(SessionInfo(key.conversation, key.name, url, len(tabs), round(session.idle_for(), 1),
                                     session.browser.pid if session.owns_browser else None, session.status,
                                     round(session.created_at, 3), round(session.last_used_at, 3),
                                     session.history.count, session.public_id, session.profile,
                                     session.control.describe()))
        return infos

    def browser_pids(self) -> list[int]:
        """Pids of every browser this manager launched and still owns (sessions, reserve, shared)."""
        pids = {s.browser.pid for s in self._sessions.values() if s.owns_browser and s.browser.pid}
        if reserved := self.reserve.browser_pid():
            pids.add(reserved)
        if self._shared is not None and self._shared.pid:
            pids.add(self._shared.pid)
        return sorted(pids)

    # -- browsers --------------------------------------------------------------
    async def _shared_browser(self) -> BrowserHandle:
        async with self._shared_lock:
            if self._shared is None or not self._shared.alive:
                if self._shared is not None:
                    await self._shared.close()
                with call_deadline.not_counted():  # the launch has launch_timeout, not the call's time
                    self._shared = await self.driver.launch()
            return self._shared

    async def _prepare(self, viewport: Viewport | None = None) -> Prepared:
        """A fresh context with one blank tab, in a new browser or the shared one, or where the pool says."""
        if self.pool is not None:
            placement, context, events = await placing.open_in_pool(self.pool, viewport or self.settings.viewport)
            return Prepared(placement.browser, context, events, placement.owns_browser, placement)
        shared = self.settings.isolation == "context"
        if shared:
            browser = await self._shared_browser()
        else:
            with call_deadline.not_counted():  # the launch has launch_timeout, not the call's time
                browser = await self.driver.launch()
        events = TabEvents()
        viewport = viewport or self.settings.viewport
        try:
            context = await browser.new_context(width=viewport.width, height=viewport.height,
                                                downloads_dir=None, events=events)  # set by _open
            await (await context.new_tab()).warm_up()
        except BaseException:
            if not shared:
                await browser.close()
            raise
        return Prepared(browser, context, events, owns_browser=not shared)

    def _reserve_now(self) -> bool:
        """Whether the warm reserve is kept now: asked for, wanted, and not shutting down."""
        return self.settings.warm_reserve and self._reserve_wanted() and not self._stopping
