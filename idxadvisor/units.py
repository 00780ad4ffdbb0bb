"""Numbers and arguments as people read them: durations, counts, sizes (used by rule messages and every report),
user-given paths or URIs with their passwords masked (used wherever an argument is echoed back), and text from logs
with its control characters shown rather than obeyed (wherever it reaches a terminal)."""

from __future__ import annotations

import math
import re

# scheme://user:password@ (or scheme:/user:password@, as a Path folds it); the password runs to the last @ before the
# host, since people paste unencoded @ into passwords.
_USERINFO = re.compile(r"(?P<head>\b[A-Za-z][A-Za-z0-9+.\-]*:/{1,2}[^/:@\s]*):(?P<password>[^/\s]*)@")
MASK = "****"


# the control characters a terminal obeys rather than shows (C0 but tab and newline, DEL, C1): ESC starts sequences
# that set the window title, move the cursor or hide what follows
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` with each control character shown as its escape (``\\x1b``): a namespace, field name or log excerpt
    printed to a terminal is read, never obeyed. The same object when there is none."""
    return _CONTROL.sub(lambda match: f"\\x{ord(match.group()):02x}", text) if _CONTROL.search(text) else text


def mask_secrets(text: str) -> str:
    """``text`` with the password of every ``scheme://user:password@`` replaced by ``****``."""
    return _USERINFO.sub(lambda match: f"{match['head']}:{MASK}@", text) if "@" in text else text


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
