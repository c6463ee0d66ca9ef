"""Durations as people and other tools write them: ``15``, ``"15s"``, ``"500ms"``, ``"2m"``.

Other browser tools' configs and models send timeouts as strings with a unit; refusing those
would break configs written for them for no gain. Everything inside webhand is seconds (float).
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, WithJsonSchema

_DURATION = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(ms|s|m|min)?\s*$", re.IGNORECASE)
_SECONDS_PER_UNIT = {"ms": 0.001, "s": 1.0, "m": 60.0, "min": 60.0, None: 1.0}


def to_seconds(value: Any) -> Any:
    """``"500ms"`` -> 0.5; numbers pass through; anything else is left for the field's own check,
    except a string that is not a duration, which is refused with the forms that work."""
    if not isinstance(value, str):
        return value
    match = _DURATION.match(value)
    if match is None:
        raise ValueError(f"{value!r} is not a duration: give seconds as a number (15, 0.5) or with a unit "
                         "(\"15s\", \"500ms\", \"2m\")")
    unit = match.group(2).lower() if match.group(2) else None
    return float(match.group(1)) * _SECONDS_PER_UNIT[unit]


#: A tool's own ``timeout`` argument. The schema says only "number" (every tool list is paid for
#: in tokens); strings with a unit are accepted all the same.
Timeout = Annotated[
    float | None,
    BeforeValidator(to_seconds),
    WithJsonSchema({"type": "number"}),
    Field(gt=0, le=600, description="Max seconds.")]
