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
    if value >= 10_000_000:
        return f"{value / 1_000_000:.0f}M"
    if value >= 100_000:
        return f"{value / 1000:.0f}k"
    return f"{value:,.0f}"
