"""The report's timelines: points built without validation, percentiles of coarse bins."""

from __future__ import annotations

import math
from datetime import datetime, timezone

from hypothesis import given
from hypothesis import strategies as st

from idxadvisor.models.report import TimelinePoint
from idxadvisor.shapes.sketch import coarse_percentile, coarse_upper


def test_a_point_built_from_a_digest_is_the_model_pydantic_would_construct() -> None:
    values = {"start": datetime(2026, 11, 24, 9, 30, tzinfo=timezone.utc), "count": 3, "total_ms": 310.5,
              "max_ms": 200.0, "p95_ms": 208.0, "docs_examined": 9_000, "keys_examined": 0}
    fast, constructed = TimelinePoint.of(**values), TimelinePoint.model_construct(**values)
    assert fast == constructed
    assert fast.model_dump_json() == constructed.model_dump_json()
    assert fast.model_fields_set == constructed.model_fields_set == set(TimelinePoint.model_fields)
    assert fast.model_copy(update={"count": 4}).count == 4 and fast.count == 3  # its own state, not shared


def _percentile_by_rank(bins: dict[int, int], p: float, maximum: float) -> float:
    """The nearest-rank definition, walked bin by bin."""
    total = sum(bins.values())
    if not total:
        return 0.0
    rank, seen = max(1, math.ceil(p / 100 * total)), 0
    for bin_index in sorted(bins):
        seen += bins[bin_index]
        if seen >= rank:
            return min(coarse_upper(bin_index), maximum)
    return maximum


@given(st.dictionaries(st.integers(-1, 200), st.integers(0, 50), max_size=4), st.sampled_from([50, 95, 99, 100]),
       st.floats(0, 1e7))
def test_the_percentile_of_one_bin_takes_the_short_way_to_the_same_answer(bins: dict[int, int], p: float,
                                                                          maximum: float) -> None:
    assert coarse_percentile(bins, p, maximum) == _percentile_by_rank(bins, p, maximum)
