"""The pointer table: a page swaps what is under the pointer as it arrives, so that a click aimed at
"Cancel" would press "Delete account"; and a page tries to show a typed secret in the pixels.

Each row of POINTER_ROWS is one attempt on tests/pages/hostile/swap.html: how the page swaps
(a new node in Cancel's place, one laid over it, Cancel itself relabelled), on which event
(mousemove, mouseover, pointerenter), through a ref click and a coordinate click. A swap is
refused with no press at all (the page's log of presses stays empty) and the reply says what is
there now; a page that swaps nothing is clicked and the reply names what took the press.
"""

from __future__ import annotations

import json
import re


from helpers import ok

SWAPS = [("replace", "mousemove"), ("replace", "mouseover"), ("replace", "pointerenter"), ("cover", "mousemove"),
         ("rename", "mousemove"), ("none", "mousemove")]
POINTER_ROWS = [(how, on, channel) for how, on in SWAPS for channel in ("ref", "xy")]


async def _log(tools) -> list[str]:
    return json.loads(ok(await tools.call("browser_eval", {"expression": "JSON.stringify(window.log)"})).strip().strip('"')
                      .encode().decode("unicode_escape"))


async def _attempt(tools, site, row: int, how: str, on: str, channel: str) -> tuple[str, bool, list[str]]:
    """One row: the reply, whether it was an error, and the presses the page logged."""
    left = 20 + (row % 9) * 135  # each attempt starts with the pointer away from its button
    ok(await tools.call("browser_navigate", {"url": site.url(f"hostile/swap.html?how={how}&on={on}&x={left}")}))
    if channel == "ref":
        snapshot = ok(await tools.call("browser_snapshot", {}))
        ref = re.search(r'button "Cancel" \[(e\d+)\]', snapshot).group(1)
        reply = await tools.call("browser_click", {"ref": ref, "timeout": 3})
    else:
        ok(await tools.call("browser_resize", {"width": 1280, "height": 720}))
        ok(await tools.call("browser_take_screenshot", {}))
        reply = await tools.call("browser_mouse_click_xy", {"x": left + 60, "y": 70})
    return reply.text, reply.is_error, await _log(tools)


async def test_a_press_lands_only_on_the_element_aimed_at(tools, site, driver, capsys):
    table = []
    for row, (how, on, channel) in enumerate(POINTER_ROWS):
        text, refused, log = await _attempt(tools, site, row, how, on, channel)
        first = text.splitlines()[0]
        if how == "none":
            held = not refused and log == ["pointerdown:Cancel", "click:Cancel"] and 'button "Cancel"' in first
        else:
            held = refused and log == [] and "Nothing was pressed" in first and '"Delete account"' in first
        table.append((how, on, channel, "held" if held else "FAILED", first[:150], log))
    with capsys.disabled():
        print(f"\npointer table ({driver}): swap, event, channel, outcome, reply")
        for row in table:
            print("  {:<8} {:<13} {:<4} {:<7} {} {}".format(*row))
    assert all(row[3] == "held" for row in table), table
