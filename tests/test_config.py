"""webhand.toml, per-agent overrides, env and flags: precedence, and bad values refused at start."""

from __future__ import annotations

from pathlib import Path

import pytest

from webhand.config import Settings, load_settings
from webhand.errors import ConfigError
from webhand.conversation_files import ConversationFiles
from webhand.surfaces.cli.main import main

CONFIG = """
[defaults.browser]
headless = true
timeouts = { default = 20, action = 4 }
max_sessions = 7
screenshot_dir = "shots"
viewport = "800x600"

[agents.researcher.browser]
evaluate_enabled = false
timeouts = { default = 30 }

[agents.offline.browser]
enabled = false
"""


@pytest.fixture
def config(tmp_path) -> Path:
    path = tmp_path / "webhand.toml"
    path.write_text(CONFIG)
    return path


def test_file_then_agent_then_env_then_flags(config):
    base = load_settings(config=config, env={})
    assert (base.timeout, base.action_timeout, base.max_sessions) == (20, 4, 7)
    assert (base.viewport.width, base.viewport.height) == (800, 600)
    assert base.screenshot_dir == config.parent / "shots", "paths in the file are relative to the file"

    agent = load_settings(config=config, agent="researcher", env={})
    assert agent.timeout == 30 and agent.evaluate_enabled is False and agent.max_sessions == 7

    env = load_settings(config=config, agent="researcher", env={"WEBHAND_TIMEOUT": "40", "WEBHAND_MAX_SESSIONS": "9"})
    assert env.timeout == 40 and env.max_sessions == 9

    flags = load_settings(config=config, agent="researcher", env={"WEBHAND_TIMEOUT": "40"}, flags={"timeout": 50})
    assert flags.timeout == 50

    assert load_settings(config=config, agent="offline", env={}).enabled is False


def test_the_file_is_found_in_the_working_dir_then_the_user_config_dir(config, tmp_path, monkeypatch):
    assert load_settings(cwd=tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "none")}).max_sessions == 7
    user = tmp_path / "xdg"
    (user / "webhand").mkdir(parents=True)
    (user / "webhand" / "webhand.toml").write_text("[defaults.browser]\nmax_sessions = 3\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(user))
    assert load_settings(cwd=tmp_path / "xdg", env={}).max_sessions == 3
    assert load_settings(cwd=tmp_path / "xdg", env={"WEBHAND_CONFIG": str(config)}).max_sessions == 7


@pytest.mark.parametrize(("text", "expected"), [
    ("[defaults.browser]\nmax_sessions = 0\n", ["max_sessions=0", "greater than or equal to 1", "webhand.toml"]),
    ("[defaults.browser]\nisolation = 'thread'\n", ["isolation='thread'", "'process' or 'context'"]),
    ("[defaults.browser]\ndriver = 'selenium'\n", ["driver='selenium'", "'cdp', 'playwright' or 'firefox'"]),
    ("[defaults.browser]\nheadles = true\n", ["defaults.browser.headles", "Allowed:", "headless"]),
    ("[defaults.browser]\ntimeouts = { forever = 1 }\n", ["timeouts.forever", "default", "action"]),
    ("[defaults.browser]\nenabled = 'yes'\n", ["enabled='yes'", "true or false"]),
    ("[browser]\nheadless = true\n", ["Unknown key browser", "defaults"]),
    ("[defaults.browser\n", ["not valid TOML"]),
])
def test_bad_values_are_refused_with_key_value_and_what_is_allowed(tmp_path, text, expected):
    path = tmp_path / "webhand.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as refused:
        load_settings(config=path, env={})
    for part in expected:
        assert part in str(refused.value)


def test_the_driver_comes_from_the_file_then_the_env_then_the_flag(tmp_path):
    path = tmp_path / "webhand.toml"
    path.write_text("[defaults.browser]\ndriver = 'cdp'\n")
    assert load_settings(config=path, env={}).driver == "cdp"
    assert load_settings(config=path, env={"WEBHAND_DRIVER": "playwright"}).driver == "playwright"
    assert load_settings(config=path, env={"WEBHAND_DRIVER": "playwright"}, flags={"driver": "cdp"}).driver == "cdp"


def test_env_and_missing_files_and_agents_are_reported(config, tmp_path):
    with pytest.raises(ConfigError, match=r"timeout='soon'.*environment"):
        load_settings(config=config, env={"WEBHAND_TIMEOUT": "soon"})
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(config=tmp_path / "missing.toml", env={})
    with pytest.raises(ConfigError, match="Known agents: offline, researcher"):
        load_settings(config=config, agent="nobody", env={})


def test_the_cli_refuses_to_start_on_a_bad_config(tmp_path, capsys):
    path = tmp_path / "webhand.toml"
    path.write_text("[defaults.browser]\nmax_sessions = -1\n")
    assert main(["mcp", "--config", str(path), "--port", "0"]) == 1
    error = capsys.readouterr().err
    assert "max_sessions=-1" in error and str(path) in error


def test_every_documented_browser_key_maps_onto_a_setting(tmp_path):
    path = tmp_path / "webhand.toml"
    path.write_text("""
[defaults.browser]
enabled = true
headless = true
evaluate_enabled = false
executable_path = "/usr/bin/chromium"
screenshot_dir = "shots"
download_dir = "dl"
viewport = { width = 1024, height = 768 }
isolation = "context"
idle_timeout = 600
max_sessions = 3
timeouts = { default = 20, action = 4, launch = 40 }
allowed_origins = ["127.0.0.1:8000"]
blocked_origins = ["evil.example"]
roots = ["files"]
secrets_file = "secrets.env"
""")
    settings = load_settings(config=path, env={})
    assert settings.download_dir == tmp_path / "dl" and settings.roots == [tmp_path / "files"]
    assert settings.secrets_file == tmp_path / "secrets.env" and settings.blocked_origins == ["evil.example"]
    assert (settings.timeout, settings.action_timeout, settings.launch_timeout) == (20, 4, 40)
    assert settings.idle_timeout == 600 and settings.isolation == "context" and settings.viewport.width == 1024


def test_an_empty_screenshot_dir_means_the_default_folder(tmp_path):
    (tmp_path / "webhand.toml").write_text('[defaults.browser]\nscreenshot_dir = ""\n')
    from_file = load_settings(config=tmp_path / "webhand.toml", env={}, flags={"output_dir": str(tmp_path / "out")})
    from_env = Settings.from_sources(env={"WEBHAND_SCREENSHOT_DIR": "", "WEBHAND_OUTPUT_DIR": str(tmp_path / "out")})
    for settings in (from_file, from_env):
        files = ConversationFiles(settings)
        assert files.screenshots == files.folder / "screenshots"
        assert files.folder.parent == (tmp_path / "out").resolve()
