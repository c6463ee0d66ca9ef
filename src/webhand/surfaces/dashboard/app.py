"""The dashboard's routes (Starlette): the page, the sessions, a live view, takeover and input.

Security is shared with the MCP endpoint (``surfaces/http_security``): loopback by default, a
bearer token required on any other address, Host and Origin checked against the same allow list
(the SDK's check, reused), and bodies capped. The page itself (static, no data) loads without the token, so that a person can
open the link and type the token in; every route that returns or changes anything needs it.
POSTs must be ``application/json``, which a cross-site form cannot send.
"""

from __future__ import annotations

import asyncio
import base64
import functools
import json
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from importlib import resources
from typing import Any

from mcp.server.transport_security import TransportSecurityMiddleware
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from webhand.engine.driver import InputEvent, Tab
from webhand.errors import WebhandError
from webhand.host import Webhand
from webhand.security.masking import Masker
from webhand.session.control import LEASE_RENEW_SECONDS, wait_for_agent_to_finish
from webhand.session.session import Session
from webhand.surfaces.dashboard.live import DashboardLiveView
from webhand.surfaces.dashboard.views import session_details, sessions_list

DASHBOARD_PATH = "/dashboard"
#: How often an idle live stream checks that its session still exists and follows the active tab.
_FOLLOW_SECONDS = 1.0
_INPUT_TIMEOUT = 5.0
_NOT_HELD = ("This page no longer holds control of the session: it was released, it lapsed (the page did not renew "
             "it in time), or someone forced its release. Take control again to go on.")
_INPUT_FIELDS = {"kind", "x", "y", "button", "click_count", "delta_x", "delta_y", "key", "code", "text", "modifiers"}


#: A route's method on the Dashboard (Starlette calls it bound, with the request), and the shape
#: of one about a session, which ``on_open_session`` turns into the first.
Handler = Callable[["Dashboard", Request], Awaitable[Response]]
SessionHandler = Callable[["Dashboard", Request, Session], Awaitable[Response]]


def checked(handler: Handler) -> Handler:
    """A route that answers only requests the HTTP security lets through (Host, Origin; the
    token is checked before, by the gate around the whole app); any other gets its refusal."""

    @functools.wraps(handler)
    async def route(self: Dashboard, request: Request) -> Response:
        refused = await self._refusal(request)
        return refused or await handler(self, request)

    return route


def on_open_session(handler: SessionHandler) -> Handler:
    """A ``checked`` route about the open session named in its path (``{sid}``): a 404 telling the
    page to reload its list when that session is closed or never was."""

    @checked
    @functools.wraps(handler)
    async def route(self: Dashboard, request: Request) -> Response:
        session = self._session(request)
        if session is None:
            return self._gone()
        return await handler(self, request, session)

    return route


def page_html() -> str:
    return resources.files("webhand.surfaces.dashboard").joinpath("page.html").read_text(encoding="utf-8")


class Dashboard:
    def __init__(self, webhand: Webhand, security: TransportSecurityMiddleware) -> None:
        self.webhand = webhand
        self.security = security
        self.live: dict[str, DashboardLiveView] = {}  # by session public id, while someone watches
        self._unanswered: set[asyncio.Future[None]] = set()  # inputs held up by a dialog the person answers

    def routes(self) -> list[Route]:
        return [
            Route("/", self.page),
            Route("/api/sessions", self.list_sessions),
            Route("/api/sessions/{sid}", self.details),
            Route("/api/sessions/{sid}/thumbnail/{index:int}", self.thumbnail),
            Route("/api/sessions/{sid}/history", self.history),
            Route("/api/sessions/{sid}/flow", self.save_flow, methods=["POST"]),
            Route("/api/sessions/{sid}/live", self.live_stream),
            Route("/api/sessions/{sid}/control", self.control, methods=["POST"]),
            Route("/api/sessions/{sid}/input", self.input, methods=["POST"]),
            Route("/api/sessions/{sid}/dialog", self.dialog, methods=["POST"]),
        ]

    def app(self) -> Starlette:
        return Starlette(routes=self.routes())

    # -- helpers ---------------------------------------------------------------------------------
    async def _refusal(self, request: Request) -> Response | None:
        refused = await self.security.validate_request(request, is_post=request.method == "POST")
        if refused is None:
            self.webhand.dashboard_seen = time.monotonic()  # someone looks: calls keep thumbnails
        return refused

    def _session(self, request: Request) -> Session | None:
        session = self.webhand.sessions.by_public_id(request.path_params["sid"])
        return session if session is not None and not session.closed else None

    @staticmethod
    def _gone() -> JSONResponse:
        return JSONResponse({"error": "No such session: it was closed, or the link is wrong. Reload the list."}, 404)

    # -- routes --------------------------------------------------------------------------------
    @checked
    async def page(self, request: Request) -> Response:
        return HTMLResponse(page_html(), headers={"Cache-Control": "no-store", "Content-Security-Policy": _CSP})

    @checked
    async def list_sessions(self, request: Request) -> Response:
        return JSONResponse({"sessions": sessions_list(self.webhand)})

    @on_open_session
    async def details(self, request: Request, session: Session) -> Response:
        since_text = request.query_params.get("since", "0")
        since = int(since_text) if since_text.isdigit() else 0  # entries after this index (the page has the rest)
        return JSONResponse(session_details(self.webhand, session, since))

    @on_open_session
    async def history(self, request: Request, session: Session) -> Response:
        """Every recorded call (spilled ones too), for `webhand export FILE`."""
        entries = await asyncio.to_thread(session.history.all)
        masker = Masker(self.webhand.settings.secrets_file)
        for entry in entries:
            entry["thumbnail"] = bool(entry.get("thumbnail"))
        return JSONResponse(masker.data({"session": session.key.name, "entries": entries}), headers={
            "Content-Disposition": f'attachment; filename="history-{session.key.name}.json"'})

    @on_open_session
    async def save_flow(self, request: Request, session: Session) -> Response:
        """Save the session's history as a flow (tools/flows/save.py): ``{"name": …, "from": n, "to": n}``,
        as browser_save_flow does; the person names it, the model runs it (browser_run_flow)."""
        from webhand.tools.flows.save import flow_from_history
        from webhand.tools.flows.store import save_flow

        body = await _json(request)
        if not isinstance(body, dict) or not isinstance(body.get("name"), str) \
                or any(body.get(k) is not None and not (isinstance(body[k], int) and body[k] >= 1) for k in ("from", "to")):
            return JSONResponse({"error": "Give the flow's `name`, and optionally `from` and `to` (history numbers)."}, 400)
        entries = await asyncio.to_thread(session.history.all)
        try:
            flow = flow_from_history(entries, body["name"], first=body.get("from"), last=body.get("to"))
            path = await asyncio.to_thread(save_flow, flow)
        except WebhandError as error:
            return JSONResponse({"error": str(error)}, 400)
        return JSONResponse({"saved": flow.name, "steps": len(flow.steps), "path": str(path)})

    @checked
    async def thumbnail(self, request: Request) -> Response:
        session = self._session(request)
        entry = next((e for e in session.history.entries if e.index == request.path_params["index"]), None) \
            if session is not None else None
        if entry is None or not entry.thumbnail:
            return Response(status_code=404)
        try:
            data = await asyncio.to_thread(_read, entry.thumbnail)
        except OSError:
            return Response(status_code=404)
        return Response(data, media_type="image/jpeg", headers={"Cache-Control": "private, max-age=3600"})

    @on_open_session
    async def live_stream(self, request: Request, session: Session) -> Response:
        view = self.live.get(session.public_id)
        if view is None:
            view = self.live[session.public_id] = DashboardLiveView(session, self.webhand.settings.dashboard_max_fps)
        queue = await view.join()

        async def events() -> AsyncIterator[bytes]:
            try:
                yield b": live view of one session\n\n"
                while not session.closed and not await request.is_disconnected():
                    try:
                        frame = await asyncio.wait_for(queue.get(), _FOLLOW_SECONDS)
                    except TimeoutError:
                        await view.follow_active_tab()  # the agent may have switched tabs
                        yield b": still here\n\n"
                        continue
                    payload = {"t": frame.timestamp, "w": frame.width, "h": frame.height,
                               "jpeg": base64.b64encode(frame.jpeg).decode()}
                    yield b"event: frame\ndata: " + json.dumps(payload).encode() + b"\n\n"
            finally:
                await view.leave(queue)
                if not view.viewers and self.live.get(session.public_id) is view:
                    del self.live[session.public_id]

        return StreamingResponse(events(), media_type="text/event-stream",
                                 headers={"Cache-Control": "no-store", "X-Accel-Buffering": "no"})

    @on_open_session
    async def control(self, request: Request, session: Session) -> Response:
        """Take control, renew its lease (the holding page, every few seconds), release it, or force
        its release (any page with the token: the holder's page may be gone or stuck)."""
        body = await _json(request)
        action = body.get("action") if isinstance(body, dict) else None
        control = session.control
        given = str(body.get("control", "")) if isinstance(body, dict) else ""
        if action == "take":
            if control.held:
                return JSONResponse({"error": f"{control.describe()}. {control.how_to_release()}",
                                     "control": control.status()}, 409)
            client = request.client.host if request.client else "an unknown address"
            token = control.take(f"a person in the dashboard (from {client})")
            if not await wait_for_agent_to_finish(session, self.webhand.settings.timeout + 10):
                control.release(token)
                return JSONResponse({"error": "The agent's current call did not finish in time; try again."}, 409)
            return JSONResponse({"control": token, "lease_seconds": control.lease_seconds,
                                 "renew_seconds": LEASE_RENEW_SECONDS})
        if action == "renew":
            if not control.renew(given):
                return JSONResponse({"error": _NOT_HELD}, 409)
            return JSONResponse({"renewed": True})
        if action == "release":
            if not control.release(given):
                return JSONResponse({"error": _NOT_HELD}, 409)
            return JSONResponse({"released": True})
        if action == "force_release":
            held_by = control.describe()
            if not control.force_release():
                return JSONResponse({"error": "Nobody has control of this session."}, 409)
            return JSONResponse({"released": True, "was": held_by})
        return JSONResponse({"error": 'Send {"action": "take"}, {"action": "renew" or "release", "control": TOKEN} '
                                      'or {"action": "force_release"}.'}, 400)

    @on_open_session
    async def input(self, request: Request, session: Session) -> Response:
        body = await _json(request)
        if not isinstance(body, dict) or not session.control.holds(str(body.get("control", ""))):
            return JSONResponse({"error": "Take control of the session first."}, 409)
        events = body.get("events")
        if not isinstance(events, list) or len(events) > 200:
            return JSONResponse({"error": "Send `events`, a list of at most 200 input events."}, 400)
        session.control.renew(str(body["control"]))  # the person is acting: their page is there
        tab = session.active_tab
        if tab is None or tab.closed:
            return JSONResponse({"error": "The session has no open tab."}, 409)
        for raw in events:
            if not isinstance(raw, dict) or not set(raw) <= _INPUT_FIELDS:
                return JSONResponse({"error": f"Input event fields are {sorted(_INPUT_FIELDS)}."}, 400)
        try:
            inputs = [InputEvent(**raw) for raw in events]
        except (TypeError, ValueError):
            return JSONResponse({"error": "An input event has a field of the wrong type."}, 400)
        # A click that opens a JavaScript dialog is not finished until the dialog is answered: the
        # reply comes when the events are sent or a dialog opens, whichever is first, and the page
        # then shows the dialog for the person to answer (``dialog``).
        session.dialog_opened.clear()
        sending = asyncio.ensure_future(self._send_inputs(tab, inputs))
        opened = asyncio.ensure_future(session.dialog_opened.wait())
        try:
            await asyncio.wait({sending, opened}, timeout=_INPUT_TIMEOUT * len(inputs) + 1,
                               return_when=asyncio.FIRST_COMPLETED)
        finally:
            opened.cancel()
        session.touch()
        if not sending.done():
            if session.open_dialogs():
                self._unanswered.add(sending)  # ends once the dialog is answered (or the tab closes)
                sending.add_done_callback(self._unanswered.discard)
                sending.add_done_callback(_retrieve)
                return JSONResponse({"sent": len(events), "dialog": True})
            sending.cancel()
            return JSONResponse({"error": "The page did not take the input in time."}, 409)
        try:
            sending.result()
        except WebhandError as error:
            return JSONResponse({"error": str(error)}, 409)
        return JSONResponse({"sent": len(events), "dialog": bool(session.open_dialogs())})

    @staticmethod
    async def _send_inputs(tab: Tab, inputs: list[InputEvent]) -> None:
        for event in inputs:
            await tab.live_view.dispatch_input(event, timeout=_INPUT_TIMEOUT)

    @on_open_session
    async def dialog(self, request: Request, session: Session) -> Response:
        """The person who holds control answers the page's JavaScript dialog (accept or dismiss)."""
        body = await _json(request)
        if not isinstance(body, dict) or not session.control.holds(str(body.get("control", ""))):
            return JSONResponse({"error": "Take control of the session first."}, 409)
        dialogs = session.open_dialogs()
        if not dialogs:
            return JSONResponse({"error": "No dialog is open any more."}, 409)
        text = body.get("text")
        if text is not None and (not isinstance(text, str) or len(text) > 10_000):
            return JSONResponse({"error": "`text` is the prompt's answer: a string of at most 10,000 characters."}, 400)
        try:
            await session.answer_dialog(dialogs[0], bool(body.get("accept")), text if dialogs[0].kind == "prompt" else None,
                                        _INPUT_TIMEOUT)
        except WebhandError as error:
            return JSONResponse({"error": str(error)}, 409)
        session.touch()
        return JSONResponse({"answered": True, "dialog": bool(session.open_dialogs())})


def _retrieve(task: asyncio.Future[None]) -> None:
    """Read a finished background send's outcome, so that its error is not reported as never retrieved."""
    if not task.cancelled():
        task.exception()


async def _json(request: Request) -> Any:
    try:
        return json.loads(await request.body())
    except ValueError:
        return None


def _read(path: str) -> bytes:
    with open(path, "rb") as file:
        return file.read()


# The page runs only its own script and shows only its own images (frames are data: URLs).
_CSP = ("default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; "
        "img-src 'self' data: blob:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
