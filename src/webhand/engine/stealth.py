"""``stealth = true``: hide the usual signs of an automated headless Chromium.

The same for both Chromium drivers (raw CDP, Playwright; the Firefox driver refuses the setting,
config.py): each installs ``script`` in every page and frame, and the user agent and ``headers()``
on every request (``engine/pw/stealth.py``, ``engine/cdp/stealth.py``).

The evasions are playwright-stealth's (PyPI, maintained, each one a small script of its own)
rather than a list of our own. What webhand adds is what a script cannot do, and consistency:

- the launch flag ``--disable-blink-features=AutomationControlled`` (``navigator.webdriver`` is
  then false natively, with no patched getter for a page to find);
- the context's user agent is the browser's own with ``HeadlessChrome`` made ``Chrome``, on the
  HTTP header as well as in JavaScript, with a matching ``sec-ch-ua`` header;
- ``navigator.platform`` and the WebGL vendor agree with that user agent (Linux, an Intel GPU
  through ANGLE) instead of the library's Windows defaults.

What it does not defeat is in docs/design.md ("Stealth").
"""

from __future__ import annotations

from functools import cached_property

LAUNCH_FLAGS = ["--disable-blink-features=AutomationControlled"]
LANGUAGES = ("en-US", "en")
_WEBGL_VENDOR = "Google Inc. (Intel)"
_WEBGL_RENDERER = "ANGLE (Intel, Mesa Intel(R) UHD Graphics 620 (KBL GT2), OpenGL 4.6)"


class StealthProfile:
    """One browser's disguise: its user agent without "Headless", and the evasions to match."""

    def __init__(self, user_agent: str) -> None:
        self.user_agent = user_agent.replace("HeadlessChrome/", "Chrome/")
        platform = ("Linux x86_64" if "Linux" in self.user_agent
                    else "MacIntel" if "Mac OS" in self.user_agent else "Win32")
        # Imported here: playwright-stealth imports Playwright's Python package, which the raw-CDP
        # driver does not load otherwise (no Node process starts either way).
        from playwright_stealth import Stealth

        self.evasions = Stealth(navigator_user_agent_override=self.user_agent, navigator_platform_override=platform,
                                navigator_languages_override=LANGUAGES, webgl_vendor_override=_WEBGL_VENDOR,
                                webgl_renderer_override=_WEBGL_RENDERER)

    @cached_property
    def script(self) -> str:
        """Every evasion in one script, to run before a document's own (the library's own payload)."""
        return str(self.evasions.script_payload)

    def headers(self) -> dict[str, str]:
        """Sent with every request: the languages, and the client hints that match the user agent."""
        headers = {"Accept-Language": ",".join(LANGUAGES) + ";q=0.9"}
        if self.evasions.sec_ch_ua_override:
            headers["sec-ch-ua"] = self.evasions.sec_ch_ua_override
        return headers
