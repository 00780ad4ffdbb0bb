"""Numbers as people read them."""

from __future__ import annotations

import pytest

from idxadvisor.units import human_bytes, human_count, human_impact, human_ms


@pytest.mark.parametrize(("value", "text"), [
    (0, "0"), (999, "999"), (95_412, "95,412"), (412_300, "412k"), (6_489_000, "6.5M"), (74_140_200, "74M"),
    (1_234_000_000, "1.2B"), (3_200_000_000_000, "3,200B"),
])
def test_counts(value: float, text: str) -> None:
    assert human_count(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (412, "412 ms"), (2_140, "2.1 s"), (192_000, "3m 12s"), (3_720_000, "1h 02m"),
])
def test_durations(value: float, text: str) -> None:
    assert human_ms(value) == text


@pytest.mark.parametrize(("value", "text"), [
    (512, "512 B"), (153_100_000, "153.1 MB"), (3_900_000_000, "3.9 GB"), (5e15, "5,000.0 TB"),
])
def test_bytes(value: float, text: str) -> None:
    assert human_bytes(value) == text


def test_impact_names_its_unit() -> None:
    assert human_impact(3_900_000_000, "bytes") == "3.9 GB read for nothing"
    assert human_impact(6_489_000, "documents") == "6.5M documents wasted"
