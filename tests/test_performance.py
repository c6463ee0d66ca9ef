"""browser_performance: navigation timing, web vitals (LCP, CLS, INP) and Chromium's counters."""

from __future__ import annotations


def ok(reply):
    assert not reply.is_error, reply.text
    return reply


async def test_performance_reports_timing_vitals_of_a_shift_and_a_slow_click_and_counters(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("performance.html")}))
    ok(await tools.call("browser_wait_for", {"text": "shifted"}))
    ok(await tools.call("browser_click", {"selector": "#slow"}))  # blocks the page's main thread for 250 ms
    reply = ok(await tools.call("browser_performance", {}))
    vitals, metrics = reply.data["vitals"], reply.data["metrics"]
    assert reply.text.startswith(f"Performance of {site.url('performance.html')}\n"
                                 "Navigation (navigate): time to first byte ")
    assert vitals["navigation"]["load_ms"] > 0 and vitals["lcp_ms"] > 0 and vitals["fcp_ms"] > 0
    assert vitals["cls"] > 0, "the banner moved the content down after load"
    assert vitals["inp_ms"] >= 250 and vitals["interactions"] >= 1, "the click's handler ran for 250 ms"
    assert f"CLS {vitals['cls']:g}, INP {vitals['inp_ms']:g} ms" in reply.text
    assert metrics["Nodes"] > 10 and "Chromium counters: Documents " in reply.text


async def test_before_any_interaction_inp_is_said_to_be_missing(tools, site):
    ok(await tools.call("browser_navigate", {"url": site.url("cache.html")}))
    reply = ok(await tools.call("browser_performance", {}))
    assert "INP no interaction yet (0 interactions)" in reply.text and "CLS 0," in reply.text
