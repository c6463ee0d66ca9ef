"""The tab's ``keyboard`` (engine/driver.py's ``Keyboard``): keys on whatever has focus, as
Playwright's ``page.keyboard`` sends them; its errors told in webhand's words (errors.py)."""

from __future__ import annotations

import asyncio

from playwright.async_api import Error as PWError
from playwright.async_api import Page as PWPage

from webhand.engine.pw.errors import translate, unknown_key
from webhand.errors import ActionTimeout


class PlaywrightKeyboard:
    def __init__(self, page: PWPage) -> None:
        self._page = page

    async def press(self, key: str, *, timeout: float) -> None:
        try:
            await asyncio.wait_for(self._page.keyboard.press(key), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"Pressing {key} did not finish within {timeout:g} s.",
                                "The page may be busy: call browser_snapshot.") from None
        except PWError as error:
            raise unknown_key(key, error) or translate(error, f"Pressing {key}", timeout) from None

    async def type_text(self, text: str, *, timeout: float) -> None:
        try:
            await asyncio.wait_for(self._page.keyboard.type(text), timeout)
        except asyncio.TimeoutError:
            raise ActionTimeout(f"Typing did not finish within {timeout:g} s.",
                                "The page may be busy: call browser_snapshot to see what was typed.") from None
        except PWError as error:
            raise translate(error, "Typing", timeout) from None
