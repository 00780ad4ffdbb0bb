"""A shape's time breakdown: summed over the executions that logged each component, merged exactly."""

from __future__ import annotations

from pathlib import Path

from idxadvisor.ingest.sources import Source
from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import RunOptions, Runner
from idxadvisor.shapes.digest import Digest
from idxadvisor.workload import load_workload, save_workload
from idxadvisor.workload.codec import encode_breakdown
from tests.helpers import REFERENCE_YEAR, digest_block, json_line, slow_attr

FIND = {"find": "orders", "filter": {"status": "A"}}


def lines() -> list[str]:
    out = []
    for n in range(60):
        extra = {"queues": {"execution": {"admissions": 2, "totalTimeQueuedMicros": 200_000 + n}},
                 "workingMillis": 3} if n % 3 else {}
        out.append(json_line(slow_attr(FIND, durationMillis=210 + n, **extra),
                             ts=f"2025-01-01T10:{n // 60:02d}:{n % 60:02d}.000+00:00"))
    return out


def test_components_are_summed_over_the_executions_that_logged_them() -> None:
    _, digest = digest_block("\n".join(lines()) + "\n", "json-log")
    [stats] = digest.shapes.values()
    timing = stats.timing
    assert (stats.count, timing.executions, timing.measured("queued_ms")) == (60, 40, 40)
    assert timing.total("working_ms") == 120
    assert "disk_read_ms" not in timing.components  # never logged: unknown, not 0
    assert timing.share("disk_read_ms") is None
    assert 0.8 < timing.share("queued_ms") < 0.9
    assert timing.waited_share() == 1 - timing.share("working_ms")


def test_a_digest_of_blocks_and_one_read_back_from_a_workload_file_hold_the_same_breakdown(tmp_path: Path) -> None:
    path = tmp_path / "mongod.log"
    path.write_text("\n".join(lines()) + "\n")
    documents = []
    for block_size in (1 << 20, 700):
        options = RunOptions(BlockOptions(REFERENCE_YEAR), jobs=1, block_size=block_size, task_size=block_size)
        summaries, digest = Runner(options, Digest).run([Source(str(path), path)])
        [stats] = digest.shapes.values()
        documents.append(encode_breakdown(stats.timing))
        save_workload(tmp_path / "w.json", digest, summaries)
        [loaded] = load_workload(tmp_path / "w.json").digest.shapes.values()
        documents.append(encode_breakdown(loaded.timing))
    assert all(document == documents[0] for document in documents)
