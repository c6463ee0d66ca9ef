"""JavaScript dialogs: alert, confirm, prompt and beforeunload.

A dialog blocks its page's JavaScript until it is answered, so webhand never leaves a tool
waiting on one: the action that opens a dialog stops there and its reply names the dialog, and
every other page tool is refused (DialogPending) until browser_handle_dialog answers it.

beforeunload: a navigation (browser_navigate, a click on a link, a script) that meets a
"leave this page?" handler is reported like any dialog; accept=true leaves the page, accept=false
stays. Closing a tab or a session never asks: it closes without running beforeunload.
"""

from __future__ import annotations

from pydantic import Field

from webhand.durations import Timeout
from webhand.errors import InvalidArgument
from webhand.response import TITLE_LIMIT, URL_LIMIT, Response
from webhand.session.changes import settle_changes
from webhand.session.session import Session, describe_dialog
from webhand.tools.definition import PageArgs, tool


class HandleDialogArgs(PageArgs):
    accept: bool = Field(description="true: OK / leave the page; false: Cancel / stay.")
    prompt_text: str | None = Field(None, description="For a prompt dialog: the text to answer with.")
    timeout: Timeout = None


@tool("browser_handle_dialog", during_dialog=True)
async def handle_dialog(session: Session, args: HandleDialogArgs, response: Response) -> None:
    """Answer the open JavaScript dialog (alert, confirm, prompt, or a leave-page prompt)."""
    dialogs = session.open_dialogs()
    if not dialogs:
        raise InvalidArgument("No JavaScript dialog is open.", "Carry on; dialogs that open are reported in the reply of the action that opened them.")
    dialog = dialogs[0]
    if args.prompt_text is not None and dialog.kind != "prompt":
        raise InvalidArgument(f"prompt_text is only for prompt dialogs; this is a {dialog.kind} dialog.",
                              "Call browser_handle_dialog again without prompt_text.")
    tab = next((t for t in session.context.tabs if t.index == dialog.tab), None)
    url_before = tab.url if tab else ""
    timeout = args.timeout or session.settings.timeout
    # What the answer does to the page (the handler goes on after confirm() returns; a leave-page
    # prompt navigates) is this call's effect, waited for and reported as an action's: watched
    # from before the answer. The watch's scripts run once the dialog is gone.
    watched = tab is not None and not tab.closed and tab is session.active_tab
    if watched:
        await settle_changes(session, response, action="answer")
    await session.answer_dialog(dialog, args.accept, args.prompt_text, timeout)
    what = {"alert": "Closed", "beforeunload": "Left the page:" if args.accept else "Stayed on the page:"}
    verb = what.get(dialog.kind, "Accepted" if args.accept else "Dismissed")
    answer = f" with {args.prompt_text!r}" if args.accept and args.prompt_text is not None else ""
    response.add(f"{verb} the {describe_dialog(dialog, hint=False)}{answer}.")
    if tab is not None and not tab.closed and not watched:
        # What the answer led to in another tab (a navigation after a beforeunload or a confirm, say).
        await tab.wait_for_load(timeout=timeout)
        if tab.url != url_before:
            title = await tab.title()
            response.add(f"Tab {tab.index} navigated to {response.page(tab.url, URL_LIMIT)}"
                         + (f" — {response.page(title, TITLE_LIMIT)}" if title else ""))
    for other in session.open_dialogs():
        response.add(describe_dialog(other))
