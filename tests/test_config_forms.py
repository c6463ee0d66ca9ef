"""The config forms other designs use: [[agents]] with an id, durations with units, and the
evaluate default of a server reachable from other machines."""

from __future__ import annotations

import pytest

from webhand import Webhand
from webhand.config import Settings, load_settings
from webhand.errors import ConfigError
from webhand.surfaces.mcp.streamable_http import settings_for_address

AGENTS_ARRAY = """
[defaults.browser]
max_sessions = 4

[[agents]]
id = "researcher"
[agents.browser]
evaluate_enabled = false
timeouts = { default = "20s" }

[[agents]]
id = "writer"
[agents.browser]
max_sessions = 2
"""


def test_the_agents_array_form_with_an_id_and_a_browser_table_is_read(tmp_path):
    path = tmp_path / "webhand.toml"
    path.write_text(AGENTS_ARRAY)
    researcher = load_settings(config=path, agent="researcher", env={})
    assert researcher.evaluate_enabled is False and researcher.timeout == 20 and researcher.max_sessions == 4
    assert load_settings(config=path, agent="writer", env={}).max_sessions == 2
    with pytest.raises(ConfigError, match="Known agents: researcher, writer"):
        load_settings(config=path, agent="nobody", env={})


@pytest.mark.parametrize(("text", "expected"), [
    ("[[agents]]\nname = 'x'\n", "agents[1].id"),
    ("[[agents]]\nid = 'x'\n[[agents]]\nid = 'x'\n", "'x' appears twice"),
    ("[[agents]]\nid = 'x'\ncolour = 'red'\n", "agents[1].colour"),
    ("agents = 3\n", "agents in"),
    ("[[agents]]\nid = 'x'\n[agents.browser]\ntimeout = 'soon'\n", "timeout='soon'"),
])
def test_a_bad_agents_entry_is_refused_naming_the_key_and_the_file(tmp_path, text, expected):
    path = tmp_path / "webhand.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_settings(config=path, agent="x", env={})
    assert expected in str(refused.value) and str(path) in str(refused.value)


def test_durations_with_units_are_read_from_the_file_and_the_environment(tmp_path):
    path = tmp_path / "webhand.toml"
    path.write_text('[defaults.browser]\ntimeouts = { default = "15s", action = "500ms" }\nidle_timeout = "2m"\n')
    settings = load_settings(config=path, env={"WEBHAND_LAUNCH_TIMEOUT": "45s"})
    timeouts = (settings.timeout, settings.action_timeout, settings.launch_timeout, settings.idle_timeout)
    assert timeouts == (15, 0.5, 45, 120)
    with pytest.raises(ConfigError, match=r"timeout='quick'.*\"500ms\""):
        Settings.from_sources({"timeout": "quick"}, env={})


def test_evaluate_stays_on_for_local_use_and_is_off_by_default_beyond_loopback():
    local = Settings.from_sources(env={})
    assert settings_for_address(local, "127.0.0.1").evaluate_enabled is True
    remote = settings_for_address(local, "0.0.0.0")
    assert remote.evaluate_enabled is False
    assert "browser_eval" not in Webhand(remote).tools, "the tool is not served at all"
    chosen = Settings.from_sources({"evaluate_enabled": True}, env={})
    assert settings_for_address(chosen, "0.0.0.0").evaluate_enabled is True, "configured on: kept on"
    from_env = Settings.from_sources(env={"WEBHAND_EVALUATE_ENABLED": "true"})
    assert settings_for_address(from_env, "192.0.2.10").evaluate_enabled is True
