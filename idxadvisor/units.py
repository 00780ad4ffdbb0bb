"""Numbers as people read them: durations and counts (used by rule messages and every report)."""

from __future__ import annotations


def human_ms(value: float) -> str:
    """412 ms, 2.1 s, 3m 12s, 1h 02m."""
    if value < 1000:
        return f"{value:.0f} ms"
    seconds = value / 1000
    if seconds < 60:
        return f"{seconds:.1f} s"
    minutes, seconds = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {seconds:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def human_count(value: float) -> str:
    """95,412, 412k, 6.5M, 74M, 1.2B: exact below 100,000, three significant digits or fewer above."""
    for limit, divisor, suffix in ((1e9, 1e9, "B"), (1e6, 1e6, "M"), (1e5, 1e3, "k")):
        if value >= limit:
            scaled = value / divisor
            return f"{scaled:.1f}{suffix}" if scaled < 10 else f"{scaled:,.0f}{suffix}"
    return f"{value:,.0f}"


def human_bytes(value: float) -> str:
    for unit in ("B", "kB", "MB", "GB", "TB"):
        if value < 1000 or unit == "TB":
            return f"{value:,.0f} {unit}" if unit == "B" else f"{value:,.1f} {unit}"
        value /= 1000
    return f"{value:,.1f} TB"


def human_impact(value: float, unit: str) -> str:
    """An impact in its unit: bytes read beyond what was returned, or documents examined beyond it."""
    return f"{human_bytes(value)} read for nothing" if unit == "bytes" else f"{human_count(value)} documents wasted"
