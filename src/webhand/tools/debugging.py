"""Debugging a page: its service workers (a PWA's offline behaviour) and its performance."""

from __future__ import annotations

from functools import cache
from importlib import resources
from typing import Literal
from urllib.parse import urlsplit

from pydantic import Field

from webhand.engine.driver import ServiceWorkerRegistration
from webhand.durations import Timeout
from webhand.errors import InvalidArgument
from webhand.response import Response
from webhand.session.session import Session
from webhand.tools.definition import PageArgs, ToolArgs, tool


class ServiceWorkersArgs(PageArgs):
    action: Literal["list", "unregister", "update", "skip_waiting"] = Field(
        "list", description="list; unregister (scope, or every one of origin); update: check for a new script now; "
                            "skip_waiting: activate the waiting worker.")
    scope: str | None = Field(None,
                              description="The registration's scope URL, as listed; may be omitted when there is one.")
    origin: str | None = Field(None,
                               description="unregister: every registration of this origin, e.g. http://localhost:8080.")
    timeout: Timeout = None


def _origin(url: str) -> str:
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. an unclosed IPv6 bracket
        raise InvalidArgument("origin is not a URL.", "Give an origin like http://localhost:8080.") from None
    return f"{parts.scheme}://{parts.netloc}"


def _describe(registrations: list[ServiceWorkerRegistration], response: Response, reach: str | None) -> str:
    if not registrations:
        return "No service workers are registered in this session." + (f"\n{reach}" if reach else "")
    lines = [f"Service workers ({len(registrations)}):"] + ([reach] if reach else [])
    for registration in registrations:
        lines.append(f"- scope {response.clip(registration.scope, 300)}"
                     + (" (controls this page)" if registration.controls_page else ""))
        lines += [f"  {v.state}: {response.clip(v.script_url, 300)} ({v.running})" for v in registration.versions]
    return "\n".join(lines)


@tool("browser_service_workers", capability="debug")
async def service_workers(session: Session, args: ServiceWorkersArgs, response: Response) -> None:
    """List service worker registrations (scope, script, state: installing/waiting/active, running or not, which one
    controls this page); or unregister, update, skip waiting."""
    tab = await session.tab()
    registrations = await tab.service_workers.registrations()
    timeout = args.timeout or session.settings.timeout
    if args.action != "list":
        scopes = _targets(args, registrations)
        for scope in scopes:
            await tab.service_workers.act(args.action, scope, timeout=timeout)
        done = {"unregister": "Unregistered", "update": "Checked for an update of",
                "skip_waiting": "Activated the waiting worker of"}
        response.add(f"{done[args.action]} {', '.join(response.clip(s, 300) for s in scopes)}.")
        if args.action == "unregister":
            response.add("Pages it controls keep it until they are closed or reloaded.")
        registrations = await tab.service_workers.registrations()
    response.add(_describe(registrations, response, tab.service_workers.reach))
    response.data({"registrations": [{"scope": r.scope, "controls_page": r.controls_page,
                                      "versions": [v.__dict__ for v in r.versions]} for r in registrations]})


def _targets(args: ServiceWorkersArgs, registrations: list[ServiceWorkerRegistration]) -> list[str]:
    """The scopes the action applies to."""
    scopes = [r.scope for r in registrations]
    listed = ", ".join(scopes) or "none"
    if args.origin is not None:
        if args.action != "unregister":
            raise InvalidArgument("origin only goes with action unregister.", "Give scope for update or skip_waiting.")
        found = [s for s in scopes if _origin(s) == _origin(args.origin)]
        if not found:
            raise InvalidArgument(f"No service worker is registered for the origin {args.origin} (scopes: {listed}).",
                                  "Call browser_service_workers to list them.")
        return found
    if args.scope is not None:
        if args.scope not in scopes:
            raise InvalidArgument(f"No service worker is registered for the scope {args.scope} (scopes: {listed}).",
                                  "Give a scope exactly as browser_service_workers lists it.")
        return [args.scope]
    if len(scopes) == 1:
        return scopes
    raise InvalidArgument(f"Say which registration: {len(scopes)} are registered (scopes: {listed}).",
                          "Call again with scope (or origin to unregister all of one origin).")


@cache
def _vitals_script() -> str:
    return resources.files("webhand.page").joinpath("performance.js").read_text()


#: Chromium's counters worth a model's attention, in the order shown (CDP Performance.getMetrics).
_COUNTERS = ("Documents", "Frames", "Nodes", "JSEventListeners", "JSHeapUsedSize", "JSHeapTotalSize", "LayoutCount",
             "RecalcStyleCount", "LayoutDuration", "RecalcStyleDuration", "ScriptDuration", "TaskDuration")


class PerformanceArgs(PageArgs):
    timeout: Timeout = None


@tool("browser_performance", capability="debug", read_only=True)
async def performance(session: Session, args: PerformanceArgs, response: Response) -> None:
    """Measure the current page: navigation timing, web vitals (LCP, CLS, INP, FCP) and Chromium's counters (DOM
    nodes, JS heap, layouts, script time)."""
    tab = await session.tab()
    timeout = args.timeout or session.settings.timeout
    vitals = await tab.console.evaluate(_vitals_script(), await_promise=False, timeout=timeout)
    counters = await tab.performance.read(timeout=timeout)
    navigation = vitals.get("navigation") or {}

    def ms(value: object) -> str:
        return "not recorded" if value is None else f"{value:g} ms"

    response.add(f"Performance of {response.clip(vitals.get('url', tab.url), 300)}")
    if navigation:
        response.add(f"Navigation ({navigation['type']}): time to first byte {ms(navigation['ttfb_ms'])}, "
                     f"DOMContentLoaded {ms(navigation['dom_content_loaded_ms'])}, load {ms(navigation['load_ms'])}, "
                     f"{navigation['transfer_bytes']:,} bytes transferred, {navigation['redirects']} redirects")
    lcp = ms(vitals["lcp_ms"]) + (f" (a <{vitals['lcp_element']}>)" if vitals.get("lcp_element") else "")
    inp = ms(vitals["inp_ms"]) if vitals["inp_ms"] is not None else "no interaction yet"
    response.add(f"Web vitals: LCP {lcp}, CLS {vitals['cls']:g}, INP {inp} "
                 f"({vitals['interactions']} interactions), FCP {ms(vitals['fcp_ms'])}")
    shown = [f"{name} {_counter(name, counters[name])}" for name in _COUNTERS if name in counters]
    response.add("Chromium counters: " + ", ".join(shown))
    response.data({"vitals": vitals, "metrics": counters})


def _counter(name: str, value: float) -> str:
    if name.endswith("Duration"):
        return f"{value * 1000:,.0f} ms"  # CDP gives seconds
    if name.endswith("Size"):
        return f"{value / 1_048_576:,.1f} MB"
    return f"{value:,.0f}"


class ExtensionsArgs(ToolArgs):
    timeout: Timeout = None


@tool("browser_extensions", capability="debug", read_only=True)
async def extensions(session: Session, args: ExtensionsArgs, response: Response) -> None:
    """List the browser extensions loaded into this session's browser (the extensions setting): name, version,
    id, enabled."""
    if not session.settings.extensions:
        response.add("No extensions are loaded: webhand loads none into the browser unless the configuration "
                     "lists unpacked extension folders (extensions = [\"/path/to/extension\"], process isolation).")
        return
    found = await session.browser.extensions(args.timeout or session.settings.timeout)
    if not found:
        response.add("The browser runs none of the configured extensions (it refused them at launch: check that "
                     "each folder holds a valid manifest.json).")
        return
    lines = [f"Extensions ({len(found)}):"]
    for extension in found:
        lines.append(f"- {response.clip(extension.name, 100)} {response.clip(extension.version, 40)}, id "
                     f"{extension.id}, {'enabled' if extension.enabled else 'disabled'}")
    response.add("\n".join(lines))
    response.data({"extensions": [{"name": e.name, "version": e.version, "id": e.id, "enabled": e.enabled}
                                  for e in found]})
