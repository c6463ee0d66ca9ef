"""Sessions on a pool (engine/pool.py): opening one where the pool places it, and telling a
session, exactly once, that the endpoint it ran on was lost."""

from __future__ import annotations

from typing import TYPE_CHECKING

from webhand.config import Settings, Viewport
from webhand.engine.driver import Context, Driver, TabEvents
from webhand.engine.pool import DROPPED, Loss, Placement, Pool
from webhand.errors import SessionClosed, WebhandError

if TYPE_CHECKING:
    from webhand.session.session import Session

#: How long a call whose page closed waits to see whether its remote endpoint's connection drops too.
DISCONNECT_NOTICE_CAP = 2.0


async def open_in_pool(pool: Pool, viewport: Viewport) -> tuple[Placement, Context, TabEvents]:
    """A context with one tab where the pool places the session; placed again when the endpoint
    chosen was dropping at that moment (its drop is seen by an event, capped)."""
    for _ in range(len(pool.endpoints)):
        placement = await pool.place()
        try:
            return placement, *await _open_context(pool, placement, viewport)
        except SessionClosed:
            if not (placement.endpoint.remote and await placement.browser.wait_disconnected(DISCONNECT_NOTICE_CAP)):
                raise
    placement = await pool.place()
    return placement, *await _open_context(pool, placement, viewport)


async def _open_context(pool: Pool, placement: Placement, viewport: Viewport) -> tuple[Context, TabEvents]:
    events = TabEvents()
    try:
        if placement.endpoint.settings.attach_to_existing_context:
            context = await placement.browser.existing_context(events=events)
        else:
            context = await placement.browser.new_context(width=viewport.width, height=viewport.height,
                                                          downloads_dir=None, events=events)
        if not context.tabs:  # an attached context keeps the user's tabs, the first one active
            await (await context.new_tab()).warm_up()
    except BaseException:
        pool.release(placement)
        if placement.owns_browser:
            await placement.browser.close()
        raise
    return context, events


def adopt_placement(session: Session, pool: Pool, placement: Placement) -> None:
    """A new session learns where it runs: its place is freed when it closes, and its first reply
    says how long it waited in the pool's queue, if it did."""
    session.placement = placement
    session.lost = placement.lost  # type: ignore[assignment]
    session.check_place = lambda cap: pool.check(placement, cap)
    session.on_closed.append(lambda: pool.release(placement))
    if placement.waited is not None:
        session.notices.append(f"This session waited {placement.waited:.1f} s for a free place in the browser pool.")


def pool_for(settings: Settings, driver: Driver) -> Pool | None:
    """The pool sessions are placed on (None: launch here, the default, without a pool)."""
    pool = settings.effective_pool()
    return Pool(pool, driver, labels=settings.pool_labels) if pool is not None else None


def tell_replaced(lost: object, fresh: Session) -> None:
    """Tell the first call of a session whose browser died (or whose endpoint was lost) what went,
    unless the call that failed already told it."""
    if isinstance(lost, Placement) and lost.loss_reported:
        return  # the call that failed said so, and that this one starts afresh
    if isinstance(lost, Placement) and lost.endpoint.remote:
        where = fresh.placement.endpoint.name if isinstance(fresh.placement, Placement) else "another"
        # Why it was drained, as said then (the endpoint's last error has since become its reconnecting's).
        why = lost.lost.result().reason if lost.lost.done() else (lost.endpoint.last_error or DROPPED)
        went = "stopped answering" if lost.lost.done() and lost.lost.result().silent else "was lost"
        fresh.notices.append(f"The browser endpoint {lost.endpoint.name!r} of this session {went} ({why}): its "
                             f"pages, cookies and storage there are gone. This call runs in a fresh session on "
                             f"{where!r}.")
    elif fresh.profile is not None:
        fresh.notices.append(f"The previous browser of this session had exited; a new one was started on profile "
                             f"{fresh.profile!r} (its open pages are gone; the cookies and storage it had written "
                             "to the profile are kept).")
    else:
        fresh.notices.append("The previous browser of this session had exited; a new one was started "
                             "(pages, cookies and storage of the old one are gone).")


async def explain_closed(session: Session, error: WebhandError) -> WebhandError:
    """A call failed because its page or browser closed, or its pool endpoint was drained under
    it. When that is because the session's endpoint went away (the page can report its close a
    moment before the connection drops), say so, once: the next call starts a fresh session
    elsewhere without repeating it. A browser that stopped answering is named as such, so that
    the model is not sent after the page."""
    placement = session.placement
    if not isinstance(placement, Placement) or not placement.endpoint.remote:
        return error
    if not placement.lost.done() and not await session.browser.wait_disconnected(DISCONNECT_NOTICE_CAP):
        return error
    placement.loss_reported = True
    loss = placement.lost.result() if placement.lost.done() else Loss(DROPPED, silent=False)
    name = placement.endpoint.name
    again = "Call the tool again: the session is placed afresh on an endpoint that is up, and the call runs there."
    if loss.silent:
        return SessionClosed(f"The browser endpoint {name!r} of this session stopped answering ({loss.reason}), so "
                             "webhand stopped this call and took that endpoint out of the pool: this session's "
                             "pages, cookies and storage there are gone.", again)
    return SessionClosed(f"The browser endpoint {name!r} of this session was lost while the call ran: its pages, "
                         "cookies and storage there are gone.", again)


def endpoint_name(session: Session | None) -> str | None:
    placement = session.placement if session is not None else None
    return placement.endpoint.name if isinstance(placement, Placement) else None
