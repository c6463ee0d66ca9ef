"""The model's JavaScript on Playwright: the shared console runner (``engine/javascript.py``) over
the tab's own CDP session."""

from __future__ import annotations

from playwright.async_api import Error as PWError

from webhand.engine.javascript import ConsoleJavaScript
from webhand.engine.pw.errors import translate


class TabJavaScript(ConsoleJavaScript):
    """Expects ``self._session()``, the tab's CDP session (``PlaywrightTab``)."""

    _driver_errors = (PWError,)

    @staticmethod
    def _translate_error(error: BaseException, doing: str, timeout: float | None) -> Exception:
        return translate(error, doing, timeout)  # type: ignore[arg-type]
