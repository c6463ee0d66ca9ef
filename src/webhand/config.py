"""Settings: defaults < config file (TOML) < environment ``WEBHAND_*`` < flags.

This module owns the one ``Settings`` model every other module reads. Loading from a TOML
file and per-agent profiles build on :func:`Settings.from_sources`.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from webhand.errors import ConfigError


def _default_output_dir() -> Path:
    return Path(os.environ.get("WEBHAND_OUTPUT_DIR") or Path(tempfile.gettempdir()) / "webhand-output")


class Viewport(BaseModel):
    model_config = ConfigDict(extra="forbid")
    width: int = Field(1280, gt=0, le=16384)
    height: int = Field(720, gt=0, le=16384)


class Settings(BaseModel):
    """Everything a webhand process can be told. Field names are the config keys."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True)

    # Browser
    executable_path: str | None = Field(None, description="Chromium/Chrome binary to launch.")
    cdp_url: str | None = Field(None, description="Connect to this browser (http://host:port or ws://...) instead of launching one.")
    headless: bool = True
    extra_args: list[str] = Field(default_factory=list, description="More Chromium command-line flags.")
    viewport: Viewport = Field(default_factory=Viewport)
    # Sessions
    isolation: Literal["process", "context"] = "process"
    warm_reserve: bool = Field(True, description="In process isolation, keep one browser launched ahead of need.")
    max_sessions: int = Field(5, ge=1, le=1000)
    idle_timeout: float = Field(1800.0, gt=0, description="Seconds a session may be idle before it is closed.")
    idle_check_interval: float = Field(60.0, gt=0)
    # Time
    timeout: float = Field(15.0, gt=0, le=600, description="Default timeout of one operation, in seconds.")
    action_timeout: float = Field(5.0, gt=0, le=600, description="How long an action waits for its element to be actionable.")
    launch_timeout: float = Field(30.0, gt=0, le=600)
    # Output
    output_dir: Path = Field(default_factory=_default_output_dir)
    screenshot_dir: Path | None = None
    download_dir: Path | None = None
    large_output_bytes: int = Field(1024, ge=128, description="Eval results and logs larger than this go to a file.")
    snapshot_max_chars: int = Field(40_000, ge=1000, description="Snapshots larger than this go to a file.")
    console_buffer: int = Field(1000, ge=10, le=100_000)
    # Security
    evaluate_enabled: bool = True
    capabilities: list[str] = Field(default_factory=lambda: ["core"])
    roots: list[Path] = Field(default_factory=list, description="Folders file tools may read and write; empty means the output dir and the working dir.")

    @field_validator("capabilities")
    @classmethod
    def _known_caps(cls, value: list[str]) -> list[str]:
        return [c.strip() for c in value if c.strip()]

    @property
    def screenshots(self) -> Path:
        return self.screenshot_dir or self.output_dir / "screenshots"

    @property
    def downloads(self) -> Path:
        return self.download_dir or self.output_dir / "downloads"

    @property
    def files(self) -> Path:
        """Where large replies are written."""
        return self.output_dir / "files"

    @classmethod
    def from_sources(cls, *layers: dict[str, Any], env: dict[str, str] | None = None) -> "Settings":
        """Merge dict layers (lowest first), then ``WEBHAND_*`` variables, and validate once.

        A bad value is refused with the key, the value and what is allowed.
        """
        merged: dict[str, Any] = {}
        for layer in layers:
            merged.update({k: v for k, v in layer.items() if v is not None})
        merged.update(_from_env(os.environ if env is None else env))
        try:
            return cls(**merged)
        except ValidationError as error:
            problems = []
            for item in error.errors():
                key = ".".join(str(p) for p in item["loc"])
                problems.append(f"{key}={item.get('input')!r}: {item['msg']}")
            raise ConfigError("Invalid webhand setting: " + "; ".join(problems) + ".",
                              "Fix the value in webhand.toml, the WEBHAND_* variable or the flag.") from None


_ENV_LISTS = {"extra_args", "capabilities", "roots"}


def _from_env(env: dict[str, str] | os._Environ[str]) -> dict[str, Any]:
    """Read ``WEBHAND_<FIELD>`` variables; ``WEBHAND_CHROME`` is the documented alias of the binary."""
    values: dict[str, Any] = {}
    for name in Settings.model_fields:
        raw = env.get(f"WEBHAND_{name.upper()}")
        if raw is None:
            continue
        if name in _ENV_LISTS:
            values[name] = [part for part in raw.split("," if name != "extra_args" else " ") if part]
        elif name == "viewport":
            width, _, height = raw.lower().partition("x")
            values[name] = {"width": width, "height": height}
        else:
            values[name] = raw
    return values
