"""The catalog: every tool webhand serves, grouped by capability.

Each module in this package declares the tools of one area with ``@tool``; importing the
package imports them all, so a new tool file needs no edit anywhere else.

Private: webhand's public API is what ``webhand`` exports (``webhand.__all__``) and the adapters
(``webhand.adapters``); the modules here may change in any release.
"""

from __future__ import annotations

import importlib
import pkgutil

from webhand.config import Settings
from webhand.tools.definition import CAPABILITIES, Tool, registered

for _module in pkgutil.iter_modules(__path__):
    if _module.name != "definition" and not _module.name.startswith("_"):
        importlib.import_module(f"{__name__}.{_module.name}")

CATALOG: dict[str, Tool] = dict(sorted(registered().items()))


def enabled_tools(settings: Settings, capabilities: list[str] | None = None) -> list[Tool]:
    """The tools a host serves: those of the chosen capability groups that config allows; none
    when the browser is off for this agent (``enabled = false``), whatever groups are asked for."""
    if not settings.enabled:
        return []
    caps = set(capabilities if capabilities is not None else settings.capabilities)
    if "all" in caps:
        caps = set(CAPABILITIES)
    return [t for t in CATALOG.values() if t.capability in caps and t.is_enabled(settings)]


__all__ = ["CAPABILITIES", "CATALOG", "Tool", "enabled_tools"]
