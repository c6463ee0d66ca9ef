"""Durations as people and other tools write them: ``15``, ``"15s"``, ``"500ms"``, ``"2m"``.

Other browser tools' configs and models send timeouts as strings with a unit; refusing those
would break configs written for them for no gain. Everything inside webhand is seconds (float).

Private module: import its public names from ``webhand`` (``webhand.__all__``); the module's path may
change in any release.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from pydantic import BeforeValidator, Field, ValidationInfo, WithJsonSchema

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


#: The longest timeout a tool call takes, in seconds.
LONGEST_TIMEOUT_SECONDS = 600


def timeout_seconds(value: Any, info: ValidationInfo) -> Any:
    """A tool's timeout in seconds. Playwright's own APIs take milliseconds (``timeout=30000``),
    and code ported from them sends those: a number past the longest timeout, without a unit,
    that is in range as milliseconds is read as milliseconds, and the reply says so (the
    validation context's ``notes``)."""
    seconds = to_seconds(value)
    unitless = not isinstance(value, str) or value.strip().replace(".", "", 1).isdigit()
    if unitless and isinstance(seconds, (int, float)) and not isinstance(seconds, bool) \
            and seconds > LONGEST_TIMEOUT_SECONDS and seconds / 1000 <= LONGEST_TIMEOUT_SECONDS:
        notes = info.context.get("notes") if isinstance(info.context, dict) else None
        if notes is not None:
            notes.append(f"{info.field_name or 'timeout'}: {seconds:g} was read as milliseconds ({seconds / 1000:g} s); "
                         "timeouts here are in seconds.")
        return seconds / 1000
    return seconds


#: A tool's own ``timeout`` argument. The schema says only "number" (every tool list is paid for
#: in tokens); strings with a unit are accepted all the same, and milliseconds past 600.
Timeout = Annotated[
    float | None,
    BeforeValidator(timeout_seconds),
    WithJsonSchema({"type": "number"}),
    Field(gt=0, le=LONGEST_TIMEOUT_SECONDS, description="Max seconds.")]
