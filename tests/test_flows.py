"""Flows (issue 40): a task recorded once from a session's history, replayed without the model on
other builds of its page, healing small shifts and stopping where the page differs."""

from __future__ import annotations

import json
import re

import pytest

from webhand.tools.flows.store import flow_path, load_flow

APP = "flows/app.html"


def ref(snapshot: str, pattern: str) -> str:
    match = re.search(pattern + r" \[(e\d+)\]", snapshot)
    assert match, f"{pattern} not in:\n{snapshot}"
    return match.group(1)


async def record_people(tools, site) -> None:
    """The task, done by refs on the base build: delete bob, add dan, save."""
    await tools.call("browser_navigate", {"url": site.url(APP + "?v=base")})
    shot = (await tools.call("browser_snapshot", {})).text
    delete_bob = re.search(r"bob \| bob@example.org\n\s*button \"Delete\" \[(e\d+)\]", shot)
    assert delete_bob, shot
    for name, arguments in [("browser_click", {"ref": delete_bob.group(1)}),
                            ("browser_type", {"ref": ref(shot, 'textbox "Email address"'), "text": "dan@example.org"}),
                            ("browser_type", {"ref": ref(shot, 'textbox "Name"'), "text": "dan"}),
                            ("browser_click", {"ref": ref(shot, 'button "Save"')})]:
        reply = await tools.call(name, arguments)
        assert not reply.is_error, reply.text
    assert "+ status: Saved dan <dan@example.org>" in reply.text


@pytest.fixture
async def people(tools, site, data_home):
    """The people flow, saved with the start URL and the typed name as parameters."""
    await record_people(tools, site)
    reply = await tools.call("browser_save_flow", {"name": "people", "params": {"url": site.url(APP + "?v=base"),
                                                                               "who": "dan"}})
    assert not reply.is_error, reply.text
    assert "Saved the flow 'people': 5 steps, parameters url, who." in reply.text
    return load_flow("people")


async def run(tools, site, version: str, **extra):
    return await tools.call("browser_run_flow", {"name": "people", "params": {"url": site.url(f"{APP}?v={version}"),
                                                                             "who": "erin"}, **extra})


async def test_a_saved_flow_keeps_several_ways_to_each_element_and_what_each_step_did(people):
    click, email = people.steps[1], people.steps[2]
    delete = click.targets[click.arguments["ref"]]
    assert (delete.role, delete.name) == ("button", "Delete")
    assert [(a.role, a.name) for a in delete.ancestors][:1] == [("row", "bob bob@example.org Delete")]
    assert "+ status: Deleted bob" in click.expect.changes
    field = email.targets["@1"]
    assert (field.label, field.placeholder, field.attributes, field.css) == \
        ("Email", "you@example.org", {"id": "email"}, "#email")
    assert people.steps[0].arguments == {"url": "{{url}}"} and people.steps[3].arguments["text"] == "{{who}}"
    assert people.steps[2].arguments["text"] == "{{who}}@example.org"
    mode = flow_path("people").stat().st_mode & 0o777
    assert mode == 0o600


async def test_the_flow_replays_on_its_own_build_without_healing(tools, site, people):
    reply = await run(tools, site, "base")
    assert "Ran the flow 'people': 5 of 5 steps." in reply.text, reply.text
    assert "Healed" not in reply.text and "Still found" not in reply.text
    assert "+ status: Saved erin <erin@example.org>" in reply.text  # "dan" was typed in both fields


async def test_class_names_changed_replays_by_the_ways_that_do_not_use_them(tools, site, people):
    reply = await run(tools, site, "a")
    assert "Ran the flow 'people': 5 of 5 steps." in reply.text, reply.text
    assert "Healed" not in reply.text and "Still found" not in reply.text  # no recorded way used a class


async def test_rows_reordered_finds_the_button_in_its_row(tools, site, people):
    reply = await run(tools, site, "b")
    assert "Ran the flow 'people': 5 of 5 steps." in reply.text, reply.text
    assert ("Still found step 2: button 'Delete' in row 'bob bob@example.org Delete' found by role+name; "
            "no longer: css found another element (button 'Delete')") in reply.text
    after = (await tools.call("browser_snapshot", {})).text
    assert "alice | alice@example.org" in after and "bob | bob@example.org" not in after  # bob's row, not alice's


async def test_a_notice_inserted_above_the_rows_is_said_and_updated(tools, site, people):
    reply = await run(tools, site, "c", update=True)
    assert "Ran the flow 'people': 5 of 5 steps." in reply.text, reply.text
    assert "no longer: css found another element" in reply.text
    assert "The healed ways are written back into the flow." in reply.text
    assert load_flow("people").steps[1].targets["@1"].css != people.steps[1].targets["@1"].css
    again = await run(tools, site, "c")
    assert "Still found" not in again.text and "Healed" not in again.text, again.text


async def test_a_field_whose_name_changed_is_healed_by_its_kept_label(tools, site, people):
    reply = await run(tools, site, "d")
    assert "Ran the flow 'people': 5 of 5 steps." in reply.text, reply.text
    assert ("Healed step 3: textbox 'Email address' in form 'Add person' found by label 'Email' "
            "(role+name found 0); its name is now 'Work email'.") in reply.text
    assert "Still found step 3" not in reply.text, reply.text  # the heal's line says which way failed


async def test_an_id_made_random_is_said(tools, site, people):
    reply = await run(tools, site, "e")
    assert "Ran the flow 'people': 5 of 5 steps." in reply.text, reply.text
    assert ("Still found step 3: textbox 'Email address' in form 'Add person' found by role+name; "
            "no longer: id found 0; css found 0") in reply.text


async def test_a_button_gone_stops_at_its_step_and_says_what_would_go_on(tools, site, people):
    reply = await run(tools, site, "gone")
    assert not reply.is_error
    assert "The flow 'people' stopped at step 2 of 5; step 1 ran." in reply.text, reply.text
    assert "Expected: button 'Delete' in row 'bob bob@example.org Delete' (the step: click button 'Delete')." \
        in reply.text
    assert "Instead: no way finds exactly one element that agrees: role+name found 0" in reply.text
    assert "bob | bob@example.org" in reply.text  # the page near where the button was
    assert "2. browser_click {\"ref\": \"<button 'Delete' in row 'bob bob@example.org Delete'>\"}" in reply.text
    assert "5. browser_click {\"ref\": \"<button 'Save' in form 'Add person'>\"}" in reply.text
    # The calls to go on carry this run's values, ready to make: not the flow's {{parameters}}.
    assert "\"text\": \"erin@example.org\"" in reply.text and "{{who}}" not in reply.text, reply.text
    snapshot = (await tools.call("browser_snapshot", {})).text  # the session is left where it stopped
    assert "bob | bob@example.org" in snapshot


async def test_a_save_that_shows_an_error_stops_at_the_save(tools, site, people):
    reply = await run(tools, site, "error")
    assert "The flow 'people' stopped at step 5 of 5; steps 1-4 ran." in reply.text, reply.text
    assert "Expected: click button 'Save' to show a new status (recorded: + status: Saved dan <dan@example.org>)." \
        in reply.text
    assert "Instead: it showed no new status; it showed: + alert: Could not save: the server said no." in reply.text, \
        reply.text


async def test_parameters_are_checked_before_anything_runs(tools, site, people):
    reply = await tools.call("browser_run_flow", {"name": "people", "params": {"who": "x"}})
    assert reply.is_error and "needs the parameter 'url'" in reply.text
    reply = await tools.call("browser_run_flow", {"name": "people", "params": {"url": "x", "who": "y", "zz": "1"}})
    assert reply.is_error and "takes no parameter 'zz'" in reply.text


async def test_list_flows_names_each_with_its_parameters(tools, site, people):
    reply = await tools.call("browser_list_flows", {})
    assert "- people: 5 steps; params: url, who" in reply.text
    assert reply.data == {"flows": [{"name": "people", "description": "", "params": ["url", "who"], "steps": 5}]}


async def test_the_flow_file_is_the_documented_json(people):
    data = json.loads(flow_path("people").read_text())
    assert data["webhand_flow"] == 1 and data["name"] == "people" and len(data["steps"]) == 5


async def test_a_flow_with_a_point_click_a_download_and_a_dialog_replays_where_things_moved(tools, site, data_home):
    await tools.call("browser_navigate", {"url": site.url("flows/tools.html")})
    assert not (await tools.call("browser_take_screenshot", {})).is_error
    session = tools.webhand.sessions.find(tools.conversation_id)
    tab = session.active_tab
    main = next(f for f in await tab.refs.frames() if f.key == "")
    left, top, width, height = await main.evaluate(
        "() => { const b = document.getElementById('board').getBoundingClientRect();"
        " return [b.left + scrollX, b.top + scrollY, b.width, b.height]; }")
    x, y = session.last_screenshot(tab)[1].to_image(left + 0.75 * width, top + 0.5 * height)
    clicked = await tools.call("browser_mouse_click_xy", {"x": round(x), "y": round(y)})
    assert "+ status: Board clicked on the right" in clicked.text, clicked.text
    shot = (await tools.call("browser_snapshot", {})).text
    downloaded = await tools.call("browser_click", {"ref": ref(shot, 'link "Download the report"')})
    assert not downloaded.is_error and "report.csv" in downloaded.text, downloaded.text
    asked = await tools.call("browser_click", {"ref": ref(shot, 'button "Remove all"')})
    assert "confirm dialog" in asked.text, asked.text
    answered = await tools.call("browser_handle_dialog", {"accept": True})
    assert "Removed all" in answered.text, answered.text
    saved = await tools.call("browser_save_flow", {"name": "board", "params": {"page": site.url("flows/tools.html")}})
    assert "Saved the flow 'board': 6 steps" in saved.text, saved.text
    flow = load_flow("board")
    assert [s.tool for s in flow.steps] == ["browser_navigate", "browser_take_screenshot", "browser_mouse_click_xy",
                                           "browser_click", "browser_click", "browser_handle_dialog"]
    board = flow.steps[2].targets["@1"]
    assert (board.role, board.name) == ("img", "Board") and abs(board.point.x - 0.75) < 0.02
    assert flow.steps[3].expect.download == "report.csv" and flow.steps[4].expect.dialog == "confirm"

    before = session.history.count
    reply = await tools.call("browser_run_flow", {"name": "board", "params": {"page": site.url("flows/tools.html?v=moved")}})
    assert "Ran the flow 'board': 6 of 6 steps." in reply.text, reply.text
    replayed = [e for e in session.history.all() if e["index"] > before]
    point_click = next(e for e in replayed if e["tool"] == "browser_mouse_click_xy")
    assert "+ status: Board clicked on the right" in point_click["expect"]["changes"], point_click
    assert point_click["arguments"]["y"] > y + 60  # the board moved down: the same place of it, not of the screen
    assert "Removed all" in reply.text


async def test_a_drag_between_two_elements_replays_from_its_handle_to_the_same_place_on_its_track(tools, site, data_home):
    """A vision model's drag (browser_mouse_drag_xy) records the element under its start and the
    one under its end, each with where in its box the point was; replayed on a page where the
    slider moved and its track got shorter, it drags the handle to the same fraction of the track."""
    await tools.call("browser_navigate", {"url": site.url("flows/slider.html")})
    await tools.call("browser_snapshot", {})  # the page agent is in: the recorder reads both points in one call
    assert not (await tools.call("browser_take_screenshot", {})).is_error
    session = tools.webhand.sessions.find(tools.conversation_id)
    tab = session.active_tab
    main = next(f for f in await tab.refs.frames() if f.key == "")
    handle, track = await main.evaluate(
        "() => ['handle', 'track'].map(id => { const b = document.getElementById(id).getBoundingClientRect();"
        " return [b.left + scrollX, b.top + scrollY, b.width, b.height]; })")
    image = session.last_screenshot(tab)[1]
    start = image.to_image(handle[0] + handle[2] / 2, handle[1] + handle[3] / 2)
    end = image.to_image(track[0] + 0.75 * track[2], track[1] + track[3] / 2)
    dragged = await tools.call("browser_mouse_drag_xy", {"start_x": round(start[0]), "start_y": round(start[1]),
                                                         "end_x": round(end[0]), "end_y": round(end[1])})
    assert re.search(r"status: Volume set to 7[4-6]", dragged.text), dragged.text
    saved = await tools.call("browser_save_flow", {"name": "volume", "params": {"page": site.url("flows/slider.html")}})
    assert "Saved the flow 'volume': 3 steps" in saved.text, saved.text
    drag = load_flow("volume").steps[2]
    (start_key, on_handle), (end_key, on_track) = drag.targets.items()
    assert (on_handle.role, on_handle.name, on_track.role, on_track.name) == ("slider", "Volume", "group", "Volume track")
    assert abs(on_track.point.x - 0.75) < 0.02 and abs(on_handle.point.x - 0.5) < 0.1, drag.targets

    before = session.history.count
    reply = await tools.call("browser_run_flow", {"name": "volume", "params": {"page": site.url("flows/slider.html?v=moved")}})
    assert "Ran the flow 'volume': 3 of 3 steps." in reply.text, reply.text
    replayed = next(e for e in session.history.all() if e["index"] > before and e["tool"] == "browser_mouse_drag_xy")
    assert re.search(r"status: Volume set to 7[4-6]", "\n".join(replayed["expect"]["changes"])), replayed
    assert replayed["arguments"]["start_y"] > start[1] + 60  # the handle moved down: its place, not the screen's
    shot = (await tools.call("browser_snapshot", {})).text
    assert re.search(r"Volume set to 7[4-6]", shot), shot


async def test_a_download_the_browser_tells_of_after_the_click_settled_is_waited_for(tools, site, data_home):
    """The recording saw a download; on this run the page starts it 2 s after the click, past the
    click's settle. The replay waits for it (capped at action_timeout) instead of stopping."""
    from webhand.tools.flows.format import Flow
    from webhand.tools.flows.store import save_flow

    save_flow(Flow.model_validate({"name": "late", "steps": [
        {"tool": "browser_navigate", "arguments": {"url": site.url("flows/late_download.html")}},
        {"tool": "browser_click", "arguments": {"ref": "@1"},
         "targets": {"@1": {"role": "button", "name": "Prepare the report"}},
         "expect": {"download": "report.csv"}, "note": "click button 'Prepare the report'"}]}))
    reply = await tools.call("browser_run_flow", {"name": "late"})
    assert "Ran the flow 'late': 2 of 2 steps." in reply.text, reply.text
    downloads = await tools.call("browser_downloads", {})
    assert "report.csv" in downloads.text, downloads.text


async def test_webhand_replay_runs_a_flow_file_and_update_writes_the_healed_ways_back(tools, site, people, tmp_path,
                                                                                      tmp_path_factory, driver):
    from helpers import settings_for_tests
    from webhand.tools.flows.store import read_flow_file
    from webhand.surfaces.cli.replay import is_flow_file, replay_flow

    path = tmp_path / "people.json"
    path.write_text(flow_path("people").read_text())
    path.chmod(0o600)
    assert is_flow_file(path)
    settings = settings_for_tests(tmp_path_factory, warm_reserve=False, driver=driver)
    finished, text = await replay_flow(path, {"url": site.url(f"{APP}?v=d"), "who": "erin"}, settings, update=True)
    assert finished, text
    assert "Healed step 3: textbox 'Email address' in form 'Add person' found by label 'Email'" in text
    healed = read_flow_file(path).steps[2].targets["@1"]
    assert (healed.name, healed.label) == ("Work email", "Email")
    finished, text = await replay_flow(path, {"url": site.url(f"{APP}?v=d"), "who": "erin"}, settings)
    assert finished and "Healed" not in text, text


@pytest.mark.one_driver("the MCP surface's prompts do not depend on the driver")
async def test_saved_flows_are_mcp_prompts_whose_arguments_are_their_parameters(webhand, tools, people):
    from mcp import Client

    from webhand.surfaces.mcp.server import build_server

    async with Client(build_server(webhand, lambda _ctx: tools), mode="legacy") as mcp:
        listed = (await mcp.list_prompts()).prompts
        assert [(p.name, [(a.name, a.required) for a in p.arguments]) for p in listed] == \
            [("people", [("url", True), ("who", True)])]
        got = await mcp.get_prompt("people", {"url": "http://127.0.0.1:9/", "who": "erin"})
    message = got.messages[0].content.text
    assert message.startswith("Run the saved flow 'people' with browser_run_flow "
                              '{"name": "people", "params": {"url": "http://127.0.0.1:9/", "who": "erin"}}.')
