"""The counters later rules and charts read: yields, response sizes, replans, plan cache keys, skips, aggregation runs
and per-minute work; read from every format and merged like every other statistic."""

from __future__ import annotations

from datetime import datetime, timezone

from hypothesis import given
from hypothesis import strategies as st

from idxadvisor.models.events import Event
from idxadvisor.parse.profile import event_from_profile
from idxadvisor.shapes.digest import Digest, RunLog, Timeline
from idxadvisor.shapes.shape import shape_of
from tests.helpers import digest_block, json_line, slow_attr

TEXT_AGGREGATE = (
    "2019-03-04T10:00:{second:02d}.000+0000 I COMMAND  [conn7] command shop.events command: aggregate "
    "{{ aggregate: \"events\", pipeline: [ {{ $match: {{ campaignId: 17 }} }}, {{ $group: {{ _id: \"$type\", "
    "n: {{ $sum: 1 }} }} }} ], cursor: {{}}, $db: \"shop\" }} planSummary: COLLSCAN keysExamined:0 "
    "numYields:{yields} reslen:{reslen} locks:{{ Global: {{ acquireCount: {{ r: 2 }} }} }} protocol:op_msg {ms}ms\n"
)


def only(digest: Digest):
    (stats,) = digest.shapes.values()
    return stats


def test_json_lines_give_yields_response_sizes_replans_and_plan_cache_keys() -> None:
    lines = [json_line(slow_attr({"find": "orders", "filter": {"a": n}, "skip": 40 * n, "limit": 20},
                                 numYields=3, reslen=2_000, planCacheKey="7A3C10F2", replanned=n == 2,
                                 nreturned=20), ts=f"2025-01-01T10:00:0{n}.000+00:00")
             for n in range(1, 5)]
    _, digest = digest_block("\n".join(lines) + "\n", "json-log")
    stats = only(digest)
    assert (stats.num_yields, stats.yields_measured, stats.response_bytes, stats.responses_measured) == (12, 4, 8000, 4)
    assert stats.replanned == 1 and stats.server_hashes["planCacheKey"].kept() == {"7A3C10F2"}
    assert (stats.skipped_executions, stats.skip_total, stats.skip_max) == (4, 400, 160)


def test_old_text_aggregations_without_docs_examined_still_count_their_work() -> None:
    text = "".join(TEXT_AGGREGATE.format(second=5 * n, yields=100 * n, reslen=120, ms=300 + 400 * n) for n in range(4))
    _, digest = digest_block(text, "text-log")
    stats = only(digest)
    assert stats.docs_examined == 0 and stats.num_yields == 600 and stats.response_bytes == 480
    runs = stats.runs.latest()
    assert [duration for _, duration in runs] == [300, 700, 1100, 1500]
    start = datetime(2019, 3, 4, 10, 0, tzinfo=timezone.utc).timestamp() * 1000
    assert [begin - start for begin, _ in runs] == [-300, 5000 - 700, 10000 - 1100, 15000 - 1500]


def test_profile_documents_use_their_own_spellings() -> None:
    event = event_from_profile({"op": "query", "ns": "shop.orders", "command": {"find": "orders", "filter": {"a": 1}},
                                "millis": 12, "numYield": 4, "responseLength": 5_120, "replanned": True,
                                "planCacheKey": "AB12CD34", "ts": {"$date": "2025-01-01T10:00:00Z"}})
    assert (event.num_yields, event.response_length, event.replanned, event.plan_cache_key) == (4, 5120, True,
                                                                                                 "AB12CD34")


def test_skip_comes_from_find_count_and_a_leading_skip_stage() -> None:
    def skip(op: str, command: dict) -> int:
        return shape_of(Event("shop.c", op, command=command))[1].skip

    assert skip("find", {"find": "c", "filter": {}, "skip": {"$numberInt": "500"}}) == 500
    assert skip("count", {"count": "c", "query": {}, "skip": 7}) == 7
    assert skip("aggregate", {"aggregate": "c", "pipeline": [{"$match": {}}, {"$skip": 60}, {"$limit": 20}]}) == 60
    assert skip("find", {"find": "c", "skip": -5}) == 0 and skip("update", {"q": {}, "u": {}}) == 0


def test_a_run_log_keeps_the_latest_runs_whatever_the_merge_order() -> None:
    log = RunLog()
    for start in range(RunLog.MAX_RUNS * 3):
        log.add(float(start), 1.0)
    assert len(log) == RunLog.MAX_RUNS
    assert log.latest()[0] == (float(RunLog.MAX_RUNS * 2), 1.0)


@given(st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 5_000)), max_size=300), st.integers(0, 300),
       st.booleans())
def test_run_logs_and_timelines_merge_to_the_whole(runs: list[tuple[int, int]], cut: int, reverse: bool) -> None:
    RunLog.MAX_RUNS, saved = 50, RunLog.MAX_RUNS
    try:
        whole, first, second = RunLog(), RunLog(), RunLog()
        whole_timeline, first_timeline, second_timeline = Timeline(), Timeline(), Timeline()
        for position, (start, duration) in enumerate(runs):
            moment = datetime.fromtimestamp(1.7e9 + start, tz=timezone.utc)
            for log, timeline in ((whole, whole_timeline),
                                  (first, first_timeline) if position < cut else (second, second_timeline)):
                log.add(float(start), float(duration))
                timeline.add(moment, duration, docs_examined=2, keys_examined=1)
        parts = [(second, second_timeline), (first, first_timeline)] if reverse else \
            [(first, first_timeline), (second, second_timeline)]
        merged, merged_timeline = RunLog(), Timeline()
        for log, timeline in parts:
            merged.merge(log)
            merged_timeline.merge(timeline)
        assert merged.latest() == whole.latest()
        assert merged_timeline.buckets == whole_timeline.buckets
    finally:
        RunLog.MAX_RUNS = saved


def test_write_commands_count_the_documents_they_wrote_as_returned(tmp_path) -> None:
    """An insert's ninserted and a delete command's ndeleted stand for what they returned, as an update statement's
    nMatched does: the index selection charges every index for each document written."""
    from idxadvisor.api import read_inputs
    from idxadvisor.config import Settings

    lines = [json_line({"type": "command", "ns": "shop.orders", "ninserted": 5, "keysInserted": 15,
                        "command": {"insert": "orders", "ordered": True, "$db": "shop"}, "durationMillis": 120},
                       ts=f"2025-08-18T19:3{n}:11.772+00:00") for n in range(3)]
    lines.append(json_line({"type": "command", "ns": "shop.orders", "ndeleted": 4, "durationMillis": 120,
                            "command": {"delete": "orders", "deletes": [{"q": {"a": 1}, "limit": 0}]}}))
    log = tmp_path / "writes.log"
    log.write_text("\n".join(lines) + "\n")
    digest, _ = read_inputs([str(log)], Settings(jobs=1))
    written = {stats.shape.op: (stats.count, stats.nreturned) for stats in digest.shapes.values()}
    assert written == {"insert": (3, 15), "delete": (1, 4)}
