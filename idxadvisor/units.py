"""Numbers and arguments as people read them: durations, counts, sizes (used by rule messages and every report),
user-given paths or URIs with their passwords masked (used wherever an argument is echoed back), and text from logs
with its control characters shown rather than obeyed (wherever it reaches a terminal)."""

from __future__ import annotations

import math
import re

# A run of text that may be a URI: anything between spaces and quotes. Its user-info is what comes before the last @
# (people paste unencoded @ into passwords; a host holds none), and its password what follows the first colon there.
# This reads no scheme, so `mongodb//admin:pw@host`, `admin:pw@host` and a Path's `mongodb:/admin:pw@host` are masked
# as `mongodb://admin:pw@host` is: a URI pymongo cannot parse is exactly the one echoed in an error.
_URI_LIKE = re.compile(r"[^\s'\"`<>]*@[^\s'\"`<>]*")
_SCHEME_FOLDED = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:/(?!/)")
# URI options that carry a secret: tlsCertificateKeyFilePassword=…, and AWS_SESSION_TOKEN:… in authMechanismProperties
_SECRET_OPTION = re.compile(r"(?i)(?P<head>(?:[?&;][^=&;\s]*(?:password|secret|token)[^=&;\s]*=|aws_session_token:))"
                            r"(?P<secret>[^&;,\s'\"`<>]+)")
MASK = "****"


# What a terminal obeys or a reader cannot see, shown as an escape instead: every C0 control (newline and tab too: a
# newline in a namespace would start a line of its own, forging one of the report's), DEL, C1 (with NEL), the line and
# paragraph separators, and the invisible format characters that reorder or hide text (bidi embeddings, overrides and
# isolates, marks, zero-width spaces and joiners, the word joiner and the BOM): `shop.c\u202eevil` must not print
# reversed.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]")


def printable(text: str) -> str:
    """``text`` with each control, line-breaking or invisible formatting character shown as its escape (``\\x1b``,
    ``\\n``, ``\\u202e``): a namespace, field name or log excerpt printed to a terminal or into Markdown is read,
    never obeyed, and stays on its line. The same object when there is none (the common case, one regex search)."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


# The characters of _CONTROL that reorder or hide text without breaking a line: what a page (HTML) must still show
_INVISIBLE = re.compile("[\u061c\u200b-\u200f\u202a-\u202e\u2060-\u2069\ufeff]")


def visible(text: str) -> str:
    """``text`` with each bidi control or invisible formatting character shown as its escape (``\\u202e``), and
    everything else as it is: for a page, where a newline is only white space but U+202E still reverses a name."""
    return _INVISIBLE.sub(_escape, text) if _INVISIBLE.search(text) else text


def _escape(match: re.Match[str]) -> str:
    character = match.group()
    code = ord(character)
    return {"\n": "\\n", "\t": "\\t"}.get(character) or (
        f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}")


def mask_secrets(text: str) -> str:
    """``text`` with every password it may hold replaced by ``****``: the user-info password of anything URI-like
    (``user:password@``, with a valid scheme, a malformed one or none) and URI options named for a password, secret
    or token. It does not parse URIs: a URI too damaged to parse is masked like a good one."""
    if "@" in text:
        text = _URI_LIKE.sub(_masked_user_info, text)
    if "=" in text or ":" in text:
        text = _SECRET_OPTION.sub(lambda match: f"{match['head']}{MASK}", text)
    return text


def _masked_user_info(match: re.Match[str]) -> str:
    token = match.group()
    at = token.rfind("@")
    user_info_start = 0
    slashes = token.find("//", 0, at)
    if slashes >= 0:
        user_info_start = slashes + 2
    elif folded := _SCHEME_FOLDED.match(token, 0, at):
        user_info_start = folded.end()
    colon = token.find(":", user_info_start, at)
    if colon < 0:  # a user name alone (mongodb://admin@host, an e-mail address): nothing secret
        return token
    return f"{token[:colon + 1]}{MASK}{token[at:]}"


def human_ms(value: float) -> str:
    """412 ms, 2.1 s, 3m 12s, 1h 02m: rounded first, so 59,999 ms is 1m 00s rather than 60.0 s."""
    if not math.isfinite(value):
        return _not_finite(value)
    if round(value) < 1000:
        return f"{value:.0f} ms"
    seconds = value / 1000
    if round(seconds, 1) < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(round(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(round(value / 60_000), 60)
    return f"{hours}h {minutes:02d}m"


def human_count(value: float) -> str:
    """95,412, 412k, 6.5M, 74M, 1.2B: exact below 100,000, three significant digits or fewer above.

    The unit is chosen after rounding, so 999,999 is 1.0M rather than 1,000k.
    """
    if not math.isfinite(value):
        return _not_finite(value)
    if round(value) < 100_000:
        return f"{value:,.0f}"
    for divisor, suffix in ((1e3, "k"), (1e6, "M"), (1e9, "B")):
        scaled = value / divisor
        decimals = 1 if round(scaled, 1) < 10 else 0
        if round(scaled, decimals) < 1000 or suffix == "B":
            return f"{scaled:,.{decimals}f}{suffix}"
    raise AssertionError("unreachable")


def human_seconds(value: float) -> str:
    """Server time saved: ``0.42 s``, ``12 s``, ``1,234 s``."""
    if not math.isfinite(value):
        return _not_finite(value)
    return f"{value:,.2f} s" if value < 10 else f"{value:,.0f} s"


def _not_finite(value: float) -> str:
    """A number past a float's range (an estimate's product of large counts): shown, never an internal error."""
    return "∞" if value > 0 else "-∞" if value < 0 else "?"


def human_bytes(value: float) -> str:
    """512 B, 153.1 MB, 3.9 GB: the unit is chosen after rounding, so 999,999 bytes are 1.0 MB, not 1,000.0 kB."""
    for unit in ("B", "kB", "MB", "GB", "TB"):
        decimals = 0 if unit == "B" else 1
        if round(value, decimals) < 1000 or unit == "TB":
            return f"{value:,.{decimals}f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def human_impact(value: float, unit: str) -> str:
    """An impact in its unit: bytes read beyond what was returned, or documents examined beyond it."""
    return f"{human_bytes(value)} read for nothing" if unit == "bytes" else f"{human_count(value)} documents wasted"


def counted(count: int, singular: str, plural: str | None = None) -> str:
    """``1 execution``, ``3 executions``, ``1,204 lines``: a count and its noun, in the right number."""
    return f"{count:,} {singular if count == 1 else plural or singular + 's'}"
