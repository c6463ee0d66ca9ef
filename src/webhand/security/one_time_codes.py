"""Private: one-time codes (TOTP, RFC 6238) from a seed in the secrets file, typed without the model seeing them.

A secret whose value is an ``otpauth://totp/…`` URI, or which the file declares with
``NAME.totp=SEED`` (a base32 seed, spaces allowed, as sites show it), is a seed: typing
``<secret>NAME</secret>`` types the code of the moment, computed by ``pyotp``. A code with less
than ``FRESH_MARGIN`` seconds left would often expire between typing and the server's check, so
the typing waits for the next one instead (``seconds_until_fresh``).

The seed and the codes are secrets like any other (secret_store.py): the seed in the spellings a
site shows it (the URI, the bare seed, lower case, groups of four), and the codes near now and
every code typed, in every encoding the masker knows, never leave webhand in a reply or a file.
"""

from __future__ import annotations

import binascii
import re
import time
from collections import deque

import pyotp

#: A code with fewer seconds than this left is not typed: the next one is, once it is valid.
FRESH_MARGIN = 3.0
#: The codes typed, per seed, masked for as long as the process runs (a field keeps a typed code on the page).
_TYPED_KEPT = 64
_typed: dict[str, deque[str]] = {}


class SeedError(ValueError):
    """The value is not a TOTP seed; the message never quotes it."""


class OneTimeCodes:
    """The TOTP generator of one seed."""

    def __init__(self, text: str) -> None:
        self.text = text
        try:
            if text.lower().startswith("otpauth://"):
                generator = pyotp.parse_uri(text)
                if not isinstance(generator, pyotp.TOTP):
                    raise SeedError("it is an otpauth:// URI of a counter-based (HOTP) code, not a time-based one")
            else:
                generator = pyotp.TOTP(re.sub(r"[\s-]", "", text).upper())
            generator.now()  # decodes the seed: a bad one fails here, not at the first typing
        except SeedError:
            raise
        except (binascii.Error, ValueError, TypeError) as error:
            # pyotp's messages name the problem ("Non-base32 digit found"), never the seed.
            raise SeedError(f"it is not a TOTP seed ({type(error).__name__}: {str(error)[:80]})") from None
        self._generator: pyotp.TOTP = generator
        self.seed = generator.secret

    @property
    def interval(self) -> int:
        return int(self._generator.interval)

    def seconds_until_fresh(self, now: float | None = None) -> float:
        """0 when the current code has at least ``FRESH_MARGIN`` seconds left, else the seconds until
        the next one is valid."""
        now = time.time() if now is None else now
        left = self.interval - (now % self.interval)
        return 0.0 if left >= FRESH_MARGIN else left

    def code_to_type(self, now: float | None = None) -> str:
        """The code of the moment, remembered so every reply masks it from now on."""
        code = str(self._generator.at(time.time() if now is None else now))
        typed = _typed.setdefault(self.seed, deque(maxlen=_TYPED_KEPT))
        if code not in typed:
            typed.append(code)
        return code

    def spellings(self, now: float | None = None) -> list[str]:
        """Every value masking hides for this seed: the seed as written and as sites show it, the
        codes valid around now (the previous two, the current, the next) and every code typed."""
        now = time.time() if now is None else now
        seed = self.seed
        grouped = " ".join(seed[i:i + 4] for i in range(0, len(seed), 4))
        codes = [str(self._generator.at(now + step * self.interval)) for step in (-2, -1, 0, 1)]
        return list(dict.fromkeys([self.text, seed, seed.lower(), grouped, grouped.lower(),
                                   *codes, *_typed.get(seed, ())]))
