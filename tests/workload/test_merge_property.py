"""Digests merge exactly: any split of the inputs, each analysed and saved, merged in any order, is the digest of all
the inputs read at once; and any split of one input into blocks is the digest of reading it whole."""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import datetime, timedelta, timezone
from functools import partial
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from idxadvisor.api import read_inputs
from idxadvisor.config import Settings
from idxadvisor.ingest.sources import Source
from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import RunOptions, Runner
from idxadvisor.shapes.digest import SET_CAP, CappedSet, Digest, RunLog
from idxadvisor.shapes.sketch import EXACT_LIMIT, RELATIVE_ERROR
from idxadvisor.workload import save_workload, workload_document
from idxadvisor.workload.merge import merge_workloads
from tests.helpers import REFERENCE_YEAR, json_line, slow_attr

START = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)
FIND = {"find": "orders", "filter": {"status": "A", "customerId": 7}, "sort": {"createdAt": -1}}
COUNT = {"aggregate": "orders",
         "pipeline": [{"$match": {"status": "A"}}, {"$group": {"_id": "$sku", "n": {"$sum": 1}}}],
         "cursor": {}}
PLANS = ["COLLSCAN", "IXSCAN { status: 1 }", "IXSCAN { status: 1, customerId: 1 }"]


@st.composite
def operations(draw: st.DrawFn) -> list[str]:
    """The lines of one log: finds, polled aggregations, and update statements with their command entries (whose
    pairing spans block boundaries), at distinct times over two days (so the timeline's buckets and runs vary)."""
    count = draw(st.integers(1, 25))
    offsets = sorted(draw(st.lists(st.integers(0, 2 * 86_400_000), min_size=count, max_size=count, unique=True)))
    lines = []
    for offset in offsets:
        ts = START + timedelta(milliseconds=offset)
        stamp = ts.isoformat(timespec="milliseconds")
        duration = draw(st.one_of(st.integers(0, 200), st.integers(900, 30_000)))
        connection = f"conn{draw(st.integers(1, 9))}"
        kind = draw(st.sampled_from(["find", "find", "aggregate", "update"]))
        if kind == "update":
            statement = {"type": "update", "ns": "shop.orders", "command": {"q": {"_id": 1}, "u": {"$set": {"a": 1}}},
                         "planSummary": "IDHACK", "keysExamined": 1, "docsExamined": 1, "durationMillis": duration}
            lines.append(json_line(statement, ctx=connection, component="WRITE", ts=stamp))
            wrapper = {"type": "command", "ns": "shop.$cmd", "command": {"update": "orders", "ordered": True},
                       "durationMillis": duration + 1}
            lines.append(json_line(wrapper, ctx=connection, ts=(ts + timedelta(milliseconds=1)).isoformat(
                timespec="milliseconds")))
            continue
        command = FIND if kind == "find" else COUNT
        attr = slow_attr(command, planSummary=draw(st.sampled_from(PLANS)), durationMillis=duration,
                         docsExamined=draw(st.integers(0, 10_000)), keysExamined=draw(st.integers(0, 10_000)),
                         nreturned=draw(st.integers(0, 50)), hasSortStage=draw(st.booleans()),
                         queryHash=draw(st.sampled_from(["A1B2C3D4", "0F0F0F0F", "77AA77AA", "C0FFEE00", "1234ABCD"])))
        lines.append(json_line(attr, ctx=connection, ts=stamp, appName=draw(st.sampled_from(["api", "batch"]))))
    return lines


@contextmanager
def small_caps() -> Iterator[None]:
    """Caps small enough for a few dozen operations to pass them: 3 connections and hashes, the latest 4 runs."""
    import idxadvisor.shapes.digest as digest_module

    saved = digest_module.SET_CAP, RunLog.MAX_RUNS
    digest_module.SET_CAP, RunLog.MAX_RUNS = 3, 4
    try:
        yield
    finally:
        digest_module.SET_CAP, RunLog.MAX_RUNS = saved


def comparable(document: dict) -> dict:
    """A workload document without what names where it was written: the tool line, and input names (sorted, since
    a merge lists inputs in the order it merged them)."""
    document = json.loads(json.dumps(document))
    document.pop("tool")
    document["inputs"] = sorted(document["inputs"], key=lambda item: item["path"])
    return document


def nearest_rank(values: list[float], p: float) -> float:
    ordered = sorted(values)
    return ordered[max(1, math.ceil(p / 100 * len(ordered))) - 1]


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(logs=st.lists(operations(), min_size=1, max_size=4), data=st.data())
def test_any_split_of_the_inputs_merged_in_any_order_is_the_whole(logs: list[list[str]], data: st.DataObject) -> None:
    groups = data.draw(st.lists(st.integers(0, len(logs) - 1), min_size=len(logs), max_size=len(logs)), "groups")
    with tempfile.TemporaryDirectory() as directory, small_caps():
        root = Path(directory)
        paths = []
        for number, lines in enumerate(logs):  # a first line of its own: identical logs would be one input
            paths.append(root / f"member{number}.log")
            startup = json_line({}, ctx="initandlisten", component="CONTROL", message_id=4615611,
                                msg=f"member {number}")
            paths[-1].write_text("\n".join([startup, *lines]) + "\n", encoding="utf-8")
        whole, inputs = read_inputs([str(path) for path in paths], Settings(jobs=1))
        parts = []
        for group in sorted(set(groups)):
            digest, summaries = read_inputs([str(path) for path, chosen in zip(paths, groups) if chosen == group],
                                            Settings(jobs=1))
            parts.append(root / f"part{group}.json")
            save_workload(parts[-1], digest, summaries)
        order = data.draw(st.permutations(parts), "merge order")
        merged = merge_workloads(order)
        assert comparable(workload_document(merged.digest, merged.inputs)) == \
            comparable(workload_document(whole, inputs))
    durations = [json.loads(line)["attr"]["durationMillis"] for lines in logs for line in lines
                 if '"find":"orders"' in line]
    if durations:  # the histogram's percentiles, merged, are within its stated error of the exact ones
        (finds,) = [stats for stats in merged.digest.shapes.values() if stats.shape.op == "find"]
        for p in (50, 95, 99):
            exact, estimated = nearest_rank(durations, p), finds.duration.percentile(p)
            if exact < EXACT_LIMIT:
                assert estimated == exact
            else:
                assert exact <= estimated <= exact * (1 + RELATIVE_ERROR)


def read_in_blocks(path: Path, block_size: int) -> tuple[Digest, list]:
    options = RunOptions(BlockOptions(REFERENCE_YEAR), jobs=1, block_size=block_size, task_size=block_size)
    summaries, digest = Runner(options, partial(Digest)).run([Source(str(path), path)])
    return digest, summaries  # type: ignore[return-value]


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(lines=operations(), block_size=st.integers(200, 4_000))
@example(lines=[json_line(slow_attr(COUNT, durationMillis=5), ts=(START + timedelta(seconds=15 * n)).isoformat())
                for n in range(8)], block_size=200).via("aggregation intervals across block boundaries")
def test_any_split_of_one_input_into_blocks_is_the_whole(lines: list[str], block_size: int) -> None:
    with tempfile.TemporaryDirectory() as directory, small_caps():
        path = Path(directory) / "mongod.log"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        whole, whole_inputs = read_in_blocks(path, 1 << 30)
        blocks, block_inputs = read_in_blocks(path, block_size)
        assert workload_document(blocks, block_inputs)["shapes"] == workload_document(whole, whole_inputs)["shapes"]
        assert [summary.operations for summary in block_inputs] == [summary.operations for summary in whole_inputs]
        for stats in whole.shapes.values():
            if stats.shape.op == "aggregate" and stats.count > 1:  # every gap between its latest runs
                assert stats.intervals.n == min(stats.count, RunLog.MAX_RUNS) - 1


@given(st.lists(st.text(min_size=1, max_size=3), max_size=60), st.integers(0, 60), st.integers(1, 8))
def test_capped_sets_keep_the_smallest_members_whatever_the_split(values: list[str], cut: int, cap: int) -> None:
    import idxadvisor.shapes.digest as digest_module

    saved, digest_module.SET_CAP = digest_module.SET_CAP, cap
    try:
        whole, first, second = CappedSet(), CappedSet(), CappedSet()
        for position, value in enumerate(values):
            whole.add(value)
            (first if position < cut else second).add(value)
        second.merge(first)
        assert second.kept() == whole.kept() == set(sorted(set(values))[:cap])
        assert second.capped == whole.capped == (len(set(values)) > cap)
    finally:
        digest_module.SET_CAP = saved
    assert SET_CAP == digest_module.SET_CAP

