"""Secrets the model may type but never see, and only on the sites they belong to.

The user keeps them in the file ``secrets_file`` names::

    # NAME=value; the value may be quoted ('…' or "…") to keep spaces at its ends
    GITHUB_PASSWORD=p@ss w0rd+Zq!9
    # Optional: the only origins it may be typed on (spaces or commas between them)
    GITHUB_PASSWORD.origins=https://github.com https://*.github.com
    # A two-factor seed: typing <secret>GITHUB_CODE</secret> types the current one-time code
    GITHUB_CODE.totp=JBSW Y3DP EHPK 3PXP ...     (or GITHUB_CODE=otpauth://totp/GitHub:me?secret=…)

The model writes ``<secret>NAME</secret>`` wherever it would type the value; ``expand`` puts the
real value in just before it reaches the browser, after checking that the field's origin is one
the secret may be typed on. ``redact`` (run by ``Response.result`` on every reply, and on every
file webhand writes) turns the value back into its placeholder in any of its usual encodings
(``security.secret_spellings``), so a reply, log line or history entry built from a reply never holds one.
A seed's codes (security/one_time_codes.py) are masked the same way, with the seed itself.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from webhand.errors import ConfigError, InvalidArgument, PolicyRefused
from webhand.security.one_time_codes import OneTimeCodes, SeedError
from webhand.security.secret_spellings import masking_pattern

# Every occurrence of a value is masked in every reply, so a very short value ("ab") would
# garble ordinary text; such a secret is refused when the file is read.
MIN_LENGTH = 4
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_PLACEHOLDER = re.compile(r"<secret>\s*([A-Za-z_][A-Za-z0-9_]*)\s*</secret>")
_ORIGINS_SUFFIX = ".origins"
_TOTP_SUFFIX = ".totp"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def placeholder(name: str) -> str:
    return f"<secret>{name}</secret>"


# origins ---------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SecretOrigin:
    """One origin a secret may be typed on: ``scheme://host[:port]``; a ``*.`` first label
    covers the domain and its subdomains. The scheme is required: http is not https."""

    text: str
    scheme: str
    host: str
    port: int
    wildcard: bool

    @classmethod
    def parse(cls, text: str) -> "SecretOrigin":
        parts = urlsplit(text)
        wildcard = parts.netloc.startswith("*.")
        try:
            bare = urlsplit(text.replace("*.", "", 1)) if wildcard else parts
            port = bare.port
        except ValueError:
            port, bare = None, None
        if (bare is None or parts.scheme.lower() not in _DEFAULT_PORTS or not bare.hostname
                or parts.path not in ("", "/") or parts.query or parts.fragment or parts.username):
            raise ValueError(text)
        host = _host(bare.hostname)
        return cls(text, parts.scheme.lower(), host, port or _DEFAULT_PORTS[parts.scheme.lower()], wildcard)

    def matches(self, origin: str) -> bool:
        parts = urlsplit(origin)
        try:
            port = parts.port or _DEFAULT_PORTS.get(parts.scheme)
        except ValueError:
            return False
        host = _host(parts.hostname or "")
        if parts.scheme != self.scheme or port != self.port or not host:
            return False
        return host == self.host or (self.wildcard and host.endswith("." + self.host))


def _host(host: str) -> str:
    """A host as browsers compare it: lower case, no trailing dot, IDNA (punycode)."""
    host = host.lower().rstrip(".")
    try:
        return host.encode("idna").decode("ascii") if not host.isascii() else host
    except UnicodeError:
        return host


# the secrets file ------------------------------------------------------------------------------
@dataclass(frozen=True)
class Secret:
    name: str
    value: str
    origins: tuple[SecretOrigin, ...] = ()  # empty: any origin
    codes: OneTimeCodes | None = None  # a TOTP seed: typing the secret types its current code

    def spellings(self) -> list[str]:
        """The values masking hides for this secret (a seed's change with the time and the codes typed)."""
        return self.codes.spellings() if self.codes is not None else [self.value]


class SecretBook:
    """The secrets of one file, with the pattern that finds any of them: built once per file, and
    again when the one-time codes to hide change (every period of a seed, and after each typing)."""

    def __init__(self, secrets: dict[str, Secret]) -> None:
        self.secrets = secrets
        self._compiled: tuple[tuple[tuple[str, str], ...], re.Pattern[str] | None] = ((), None)

    def mask(self, text: str) -> str:
        if not text or not self.secrets:
            return text
        values = tuple(sorted(((value, secret.name) for secret in self.secrets.values()
                               for value in secret.spellings()),
                              key=lambda pair: -len(pair[0])))  # longest first: a secret holding another is masked whole
        if values != self._compiled[0]:
            self._compiled = (values, masking_pattern([value for value, _ in values]))
        names, pattern = [name for _, name in values], self._compiled[1]
        assert pattern is not None

        def placeholder_of(match: re.Match[str]) -> str:
            group = match.lastgroup or "s0"  # the group that matched, s<i>, names the secret
            shown = match.group(0)
            # A one-time code is a run of digits: inside a longer number (a timestamp, an id) it is
            # not the code, and masking it would garble the number.
            if shown.isdigit() and (text[match.start() - 1:match.start()].isdigit()
                                    or text[match.end():match.end() + 1].isdigit()):
                return shown
            return placeholder(names[int(group[1:])])

        return pattern.sub(placeholder_of, text)


_cache: dict[Path, tuple[tuple[int, int], SecretBook]] = {}


def load(path: Path | None) -> SecretBook:
    """The secrets of ``path`` (none without a file); re-read when the file changes."""
    if path is None:
        return SecretBook({})
    try:
        stat = path.stat()
        stamp = (stat.st_mtime_ns, stat.st_size)
        cached = _cache.get(path)
        if cached and cached[0] == stamp:
            return cached[1]
        lines = path.read_text(encoding="utf-8").splitlines()
    except (OSError, UnicodeError):
        raise ConfigError(f"The secrets file {path} cannot be read.",
                          "Fix secrets_file in the configuration.") from None
    book = SecretBook(_parse(lines, path))
    _cache[path] = (stamp, book)
    return book


def _parse(lines: list[str], path: Path) -> dict[str, Secret]:
    values: dict[str, str] = {}
    origins: dict[str, tuple[SecretOrigin, ...]] = {}
    seeds: dict[str, OneTimeCodes] = {}
    for number, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, _, value = line.partition("=")
        key, value = key.strip(), value.strip()
        name, dot, suffix = key.partition(".")
        if not _NAME.fullmatch(name) or (dot and "." + suffix not in (_ORIGINS_SUFFIX, _TOTP_SUFFIX)):
            # never quote the line: it holds a value
            raise ConfigError(f"Line {number} of {path} does not start with a secret name (letters, digits, _).",
                              "Write NAME=value, NAME.totp=SEED or NAME.origins=https://site.example.")
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        if key == name + _ORIGINS_SUFFIX:
            origins[name] = _parse_origins(name, value, path)
            continue
        if key == name + _TOTP_SUFFIX or value.lower().startswith("otpauth://"):
            seeds[name] = _parse_seed(name, value, path, number)
            values[name] = value
            continue
        if value:
            if len(value) < MIN_LENGTH:
                raise ConfigError(f"The secret {name} in {path} is shorter than {MIN_LENGTH} characters; "
                                  "a value that short would be masked wherever it appears in replies.",
                                  "Use a longer value, or remove the line.")
            values[name] = value
    for name in origins.keys() - values.keys():
        raise ConfigError(f"{path} gives origins for {name}, but no value for it.",
                          f"Add a {name}=value line, or remove {name}{_ORIGINS_SUFFIX}.")
    return {name: Secret(name, value, origins.get(name, ()), seeds.get(name)) for name, value in values.items()}


def _parse_seed(name: str, value: str, path: Path, number: int) -> OneTimeCodes:
    try:
        return OneTimeCodes(value)
    except SeedError as error:  # its message never quotes the value
        raise ConfigError(f"Line {number} of {path}: the one-time code seed {name} cannot be used: {error}.",
                          "Give the otpauth://totp/… URI or the base32 seed the site showed when two-factor "
                          "sign-in was set up.") from None


def _parse_origins(name: str, text: str, path: Path) -> tuple[SecretOrigin, ...]:
    rules = []
    for item in text.replace(",", " ").split():
        try:
            rules.append(SecretOrigin.parse(item))
        except ValueError:
            raise ConfigError(f"{name}{_ORIGINS_SUFFIX} in {path} has {item!r}, which is not an origin.",
                              "Write origins as https://site.example[:port], or https://*.site.example "
                              "for a domain and its subdomains.") from None
    if not rules:
        raise ConfigError(f"{name}{_ORIGINS_SUFFIX} in {path} names no origin.",
                          "List at least one, e.g. https://site.example, or remove the line.")
    return tuple(rules)


# using them ------------------------------------------------------------------------------------
def mentions_secret(text: str) -> bool:
    return _PLACEHOLDER.search(text) is not None


def expand(text: str, path: Path | None, *, origin: str) -> str:
    """``text`` with each ``<secret>NAME</secret>`` replaced by its value, for a field on ``origin``
    (``scheme://host[:port]``, or "null" for an opaque origin)."""
    if "<secret>" not in text:
        return text
    book = load(path)

    def value_of(match: re.Match[str]) -> str:
        secret = book.secrets.get(match.group(1))
        if secret is None:
            known = ", ".join(sorted(book.secrets)) or "none (no secrets_file is configured)"
            raise InvalidArgument(f"There is no secret named {match.group(1)}.", f"Known secrets: {known}.")
        if secret.origins and not any(rule.matches(origin) for rule in secret.origins):
            allowed = ", ".join(rule.text for rule in secret.origins)
            raise PolicyRefused(f"The secret {secret.name} may only be typed on {allowed}; this field is on {origin}. "
                                "Nothing was typed.",
                                "Type it only into a field of one of those origins. The user sets them in the "
                                f"secrets file ({secret.name}{_ORIGINS_SUFFIX}).")
        return secret.codes.code_to_type() if secret.codes is not None else secret.value

    return _PLACEHOLDER.sub(value_of, text)


def seconds_until_fresh_codes(text: str, path: Path | None) -> float:
    """How long to wait before typing ``text`` so that each one-time code it names has at least
    a few seconds left (0 for most texts): a code about to expire would fail the sign-in."""
    if "<secret>" not in text:
        return 0.0
    book = load(path)
    seeds = [book.secrets[name].codes for name in _PLACEHOLDER.findall(text)
             if name in book.secrets and book.secrets[name].codes is not None]
    return max((codes.seconds_until_fresh() for codes in seeds if codes is not None), default=0.0)


def redact(text: str, path: Path | None) -> str:
    """``text`` with every secret value, in any usual encoding, replaced by its placeholder."""
    if path is None or not text:
        return text
    return load(path).mask(text)
