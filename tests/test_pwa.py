"""A real progressive web app (tests/pages/pwa/): a service worker caches the app shell, and the
page loads again offline. browser_service_workers lists, updates, activates and unregisters it.
"""

from __future__ import annotations


def ok(reply):
    assert not reply.is_error, reply.text
    return reply


async def _installed(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("pwa/index.html")}))
    ok(await tools.call("browser_wait_for", {"text": "service worker"}))  # ready (and claiming the page)
    listed = ok(await tools.call("browser_service_workers", {}))
    return listed


async def test_service_workers_are_listed_with_scope_script_state_and_running_status(tools, site):
    listed = await _installed(tools, site)
    assert f"- scope {site.url('pwa/')}" in listed.text
    assert f"active: {site.url('pwa/sw.js?v=1')} (running)" in listed.text
    assert listed.data["registrations"][0]["versions"][0]["state"] == "active"


async def test_the_app_shell_reloads_offline_from_the_service_worker(tools, site):
    await _installed(tools, site)
    ok(await tools.call("browser_reload", {}))  # now the page is controlled: its requests go through the worker
    offline = ok(await tools.call("browser_network_conditions", {"offline": True}))
    assert "now: offline" in offline.text
    asked_before = len(site.received_paths("/pwa/"))
    reloaded = ok(await tools.call("browser_reload", {}))
    assert "PWA notes" in (await tools.call("browser_snapshot", {})).text, reloaded.text
    # None of the shell reached the server. After a navigation, the browser itself checks the worker's
    # script for an update (the spec's Soft Update): Chromium sends that outside the page's emulated
    # network, so sw.js may be asked for (design.md says so).
    asked = [path for path in site.received_paths("/pwa/")[asked_before:] if not path.startswith("/pwa/sw.js")]
    assert asked == [], asked
    requests = ok(await tools.call("browser_network_requests", {"url_contains": "/pwa/index.html"})).text
    assert requests.splitlines()[0] == "Network: offline (browser_network_conditions)"
    assert requests.splitlines()[-1].endswith("/pwa/index.html (document, from service worker)")


async def test_offline_holds_for_what_the_service_worker_asks_the_network_for(tools, site):
    await _installed(tools, site)
    ok(await tools.call("browser_reload", {}))  # now the page is controlled: its requests go through the worker
    ok(await tools.call("browser_network_conditions", {"offline": True}))
    # Not in the worker's cache: the worker passes it on with its own fetch(), which is offline too.
    fetched = ok(await tools.call("browser_eval", {"expression": """
        fetch('/pwa/not-cached.txt?offline=1').then(r => 'answered ' + r.status, e => 'failed: ' + e.message)"""}))
    assert fetched.data["result"].startswith("failed"), fetched.text
    assert not site.received_paths("/pwa/not-cached.txt?offline=1")


async def test_a_waiting_worker_is_shown_then_activated_by_skip_waiting(tools, site):
    await _installed(tools, site)
    ok(await tools.call("browser_click", {"selector": "#update"}))
    ok(await tools.call("browser_wait_for", {"text": "version 2 waiting"}))
    waiting = ok(await tools.call("browser_service_workers", {}))
    assert f"waiting: {site.url('pwa/sw.js?v=2')}" in waiting.text
    activated = ok(await tools.call("browser_service_workers", {"action": "skip_waiting"}))
    assert f"Activated the waiting worker of {site.url('pwa/')}" in activated.text
    assert f"active: {site.url('pwa/sw.js?v=2')}" in activated.text and "waiting:" not in activated.text


async def test_update_checks_the_script_of_a_registration_now(tools, site):
    await _installed(tools, site)
    asked_before = len(site.received_paths("/pwa/sw.js?v=1"))
    updated = ok(await tools.call("browser_service_workers", {"action": "update", "scope": site.url("pwa/")}))
    assert f"Checked for an update of {site.url('pwa/')}" in updated.text
    assert len(site.received_paths("/pwa/sw.js?v=1")) == asked_before + 1, "the browser fetched the script again"


async def test_unregister_removes_every_registration_of_an_origin(tools, site):
    await _installed(tools, site)
    gone = ok(await tools.call("browser_service_workers", {"action": "unregister", "origin": site.origin}))
    assert f"Unregistered {site.url('pwa/')}" in gone.text
    assert "No service workers are registered in this session." in gone.text


async def test_an_unknown_scope_is_refused_with_the_scopes_there_are(tools, site):
    await _installed(tools, site)
    refused = await tools.call("browser_service_workers", {"action": "update", "scope": site.url("elsewhere/")})
    assert refused.is_error and f"(scopes: {site.url('pwa/')})" in refused.text


async def test_the_registration_controlling_the_page_is_marked_and_only_while_it_does(tools, site):
    listed = await _installed(tools, site)  # the worker claims the page it was registered from
    registry = ok(await tools.call("browser_service_workers", {}))
    assert f"- scope {site.url('pwa/')} (controls this page)" in registry.text, (listed.text, registry.text)
    assert registry.data["registrations"][0]["controls_page"] is True
    # Out of its scope the registration is still listed, but controls nothing here.
    ok(await tools.call("browser_navigate", {"url": site.url("login.html")}))
    elsewhere = ok(await tools.call("browser_service_workers", {}))
    assert f"- scope {site.url('pwa/')}\n" in elsewhere.text + "\n" and "controls this page" not in elsewhere.text
    assert elsewhere.data["registrations"][0]["controls_page"] is False
    # Back in scope, a reload is controlled from its first request.
    ok(await tools.call("browser_navigate", {"url": site.url("pwa/index.html")}))
    ok(await tools.call("browser_wait_for", {"text": "controlled by the service worker"}))
    again = ok(await tools.call("browser_service_workers", {}))
    assert "(controls this page)" in again.text, again.text
