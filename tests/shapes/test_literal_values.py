"""An aggregation's sets of literal values, kept as fingerprints (AG001: the same aggregation means the same values)."""

from __future__ import annotations

import random

from idxadvisor.models.events import Event
from idxadvisor.shapes.digest import Digest, LiteralValues, literal_fingerprint
from idxadvisor.workload.codec import decode_literal_values, encode_literal_values


def _values(fingerprints: list[int]) -> LiteralValues:
    values = LiteralValues()
    for fingerprint in fingerprints:
        values.add(fingerprint)
    return values


def test_a_split_merged_in_any_order_keeps_the_same_counts_past_the_cap() -> None:
    randomly = random.Random(7)
    fingerprints = [randomly.randrange(2**32) for _ in range(2_000)] + [12345] * 40
    randomly.shuffle(fingerprints)
    whole = _values(fingerprints)
    first, second = _values(fingerprints[:900]), _values(fingerprints[900:])
    second.merge(first)
    assert (second.distinct(), second.counts, second.runs) == (whole.distinct(), whole.counts, whole.runs)
    assert whole.runs == 2_040
    assert 1_600 < whole.distinct() <= 2_040  # the k-minimum-values estimate of 2,001 distinct sets
    assert whole.most_repeated() == 40  # 12345 is among the smallest fingerprints: kept exactly


def test_the_same_pipeline_has_one_fingerprint_and_another_value_another() -> None:
    def pipeline(campaign: int) -> dict:
        return {"aggregate": "events", "pipeline": [{"$match": {"campaignId": campaign}}, {"$count": "n"}]}

    assert literal_fingerprint(pipeline(17)) == literal_fingerprint(pipeline(17)) != literal_fingerprint(pipeline(18))
    assert literal_fingerprint({"find": "events"}) is None


def test_the_digest_counts_runs_by_their_values_without_keeping_them() -> None:
    digest = Digest()
    for minute, campaign in enumerate([17, 17, 18, 17]):
        command = {"aggregate": "events", "pipeline": [{"$match": {"campaignId": campaign}}, {"$count": "n"}]}
        ts = __import__("datetime").datetime(2026, 1, 5, 9, minute, tzinfo=__import__("datetime").timezone.utc)
        digest.add(Event("shop.events", "aggregate", command=command, ts=ts, duration_ms=200.0))
    (stats,) = digest.shapes.values()
    assert (stats.literal_values.runs, stats.literal_values.distinct(), stats.literal_values.most_repeated()) == \
        (4, 2.0, 3)
    saved = encode_literal_values(stats.literal_values)
    assert decode_literal_values(saved) == stats.literal_values


def test_app_filters_operations_by_application_name() -> None:
    from idxadvisor.shapes.digest import DigestOptions

    digest = Digest(DigestOptions(apps=("orders-*",)))
    for app in ("orders-api", "Orders-Worker", "MongoDB Compass", None):
        digest.add(Event("shop.orders", "find", command={"find": "orders", "filter": {"a": 1}}, app_name=app,
                         duration_ms=150.0))
    (stats,) = digest.shapes.values()
    assert stats.count == 2 and set(stats.apps) == {"orders-api", "Orders-Worker"}
    assert digest.skipped == {"application not matched by --app": 2}
