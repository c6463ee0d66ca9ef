"""What a page announced before its event comes: a new window whose tab does not exist yet (a
``window.open``, a ``target=_blank`` link), or a file download whose download event has not arrived
(a navigation answered "attachment"). An action's settle waits for the event while one is
announced (``Context.expecting_tab``, ``Context.expecting_download``); each driver's context
keeps one ``Announcements`` for each kind.
"""

from __future__ import annotations

import time

#: How long an announcement is expected to be followed by its event. The browser can decide
#: otherwise (a download refused, a popup blocked): one never followed is forgotten after this,
#: so it cannot make every later action wait.
ANNOUNCEMENT_SECONDS = 5.0


class Announcements:
    """The announcements of one kind still waiting for their event, oldest first."""

    def __init__(self) -> None:
        self._times: list[float] = []  # time.monotonic() of each announcement

    def announce(self) -> None:
        self._times.append(time.monotonic())

    def arrived(self) -> None:
        """The event came: the oldest announcement is answered (none is fine: an unannounced one)."""
        if self._times:
            self._times.pop(0)

    def expecting(self) -> bool:
        """Whether an announcement within the last ``ANNOUNCEMENT_SECONDS`` still waits for its event."""
        now = time.monotonic()
        self._times = [t for t in self._times if now - t < ANNOUNCEMENT_SECONDS]
        return bool(self._times)
