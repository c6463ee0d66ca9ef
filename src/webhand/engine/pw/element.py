"""One element a ref (or selector) named, as a Playwright ElementHandle: exact identity."""

from __future__ import annotations

from typing import Any

from playwright.async_api import ElementHandle
from playwright.async_api import Error as PWError
from playwright.async_api import Frame as PWFrame

from webhand.engine.pw.errors import translated


class PlaywrightElement:
    def __init__(self, handle: ElementHandle, ref: str) -> None:
        self.handle = handle
        self.ref = ref

    async def click(self, *, button: str = "left", click_count: int = 1, modifiers: list[str] | None = None,
                    timeout: float) -> None:
        async with translated(f"Clicking {self.ref}", timeout):
            await self.handle.click(button=button, click_count=click_count, modifiers=modifiers or None,  # type: ignore[arg-type]
                                    timeout=timeout * 1000)

    async def fill(self, text: str, *, timeout: float) -> None:
        async with translated(f"Typing into {self.ref}", timeout):
            await self.handle.fill(text, timeout=timeout * 1000)

    async def type(self, text: str, *, delay_ms: float, timeout: float) -> None:
        async with translated(f"Typing into {self.ref}", timeout):
            await self.handle.type(text, delay=delay_ms, timeout=timeout * 1000)

    async def press(self, key: str, *, timeout: float) -> None:
        async with translated(f"Pressing {key} on {self.ref}", timeout):
            await self.handle.press(key, timeout=timeout * 1000)

    async def hover(self, *, timeout: float) -> None:
        async with translated(f"Hovering {self.ref}", timeout):
            await self.handle.hover(timeout=timeout * 1000)

    async def focus(self, *, timeout: float) -> None:
        async with translated(f"Focusing {self.ref}", timeout):
            await self.handle.focus()

    async def screenshot(self, *, timeout: float) -> bytes:
        async with translated(f"Screenshot of {self.ref}", timeout):
            return await self.handle.screenshot(timeout=timeout * 1000, type="png")

    async def describe(self) -> str:
        """A short human label (tag, id, text) for replies and errors."""
        async with translated(f"Reading {self.ref}"):
            return await self.handle.evaluate(
                "e => { const t = (e.innerText || e.value || e.getAttribute('aria-label') || '').trim().slice(0, 40);"
                " return e.tagName.toLowerCase() + (e.id ? '#' + e.id : '') + (t ? ' \"' + t + '\"' : ''); }")

    async def dispose(self) -> None:
        try:
            await self.handle.dispose()
        except PWError:
            pass


class PlaywrightFrame:
    def __init__(self, frame: PWFrame, key: str, parent_key: str | None) -> None:
        self.frame = frame
        self.key = key
        self.parent_key = parent_key

    async def evaluate(self, script: str, arg: Any = None) -> Any:
        async with translated(f"Reading frame {self.key or 'main'}"):
            return await self.frame.evaluate(script, arg)

    async def owner_marker(self, script: str) -> Any:
        try:
            owner = await self.frame.frame_element()
            try:
                return await owner.evaluate(script)
            finally:
                await owner.dispose()
        except PWError:
            return None
