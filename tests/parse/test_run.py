from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from idxadvisor.ingest.sources import OpenedInput
from idxadvisor.models.events import JSON_LOG, TEXT_LOG
from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import PARTITIONED_FROM_WORKERS, TASKS_PER_WORKER, Runner, RunOptions, _run_task
from idxadvisor.shapes.digest import Digest

REFERENCE_YEAR = 2024


def _task_sizes(path: Path, jobs: int, block_size: int) -> list[int]:
    runner = Runner(RunOptions(BlockOptions(REFERENCE_YEAR), jobs=jobs, block_size=block_size), Digest)
    runner._workers = jobs  # as run() sets it when a pool parses the tasks
    opened = OpenedInput(str(path), path=path, size=path.stat().st_size)
    return [task.size for task in runner._tasks(opened, JSON_LOG)]


def test_tasks_cover_the_file_and_are_as_even_as_blocks_allow(tmp_path: Path) -> None:
    line = b'{"t":{"$date":"2024-01-01T00:00:00.000Z"},"s":"I","c":"NETWORK","id":22943,"msg":"x"}\n'
    path = tmp_path / "mongod.log"
    path.write_bytes(line * 2_000)  # 13.8 blocks of 12,500 bytes: four tasks of whole blocks cannot be equal
    block_size = 12_500
    sizes = _task_sizes(path, jobs=2, block_size=block_size)
    assert sum(sizes) == path.stat().st_size
    assert len(sizes) == 2 * TASKS_PER_WORKER
    # within a block of each other: 3, 4, 3 and 3.8 blocks (cutting where a run passes its share: 4, 4, 4, 1.8)
    assert max(sizes) - min(sizes) <= block_size + len(line)


def test_one_job_reads_a_file_as_one_task(tmp_path: Path) -> None:
    path = tmp_path / "mongod.log"
    path.write_bytes(b'{"t":{"$date":"2024-01-01T00:00:00.000Z"},"s":"I","id":1,"msg":"x"}\n' * 1_000)
    assert _task_sizes(path, jobs=1, block_size=4_096) == [path.stat().st_size]


def _workload_log(copies: int = 1) -> str:
    """Finds with plans on a few connections, and update statements beside the command entries that wrap them; with
    ``copies`` > 1 the same lines again and again (a naive concatenation: the same day repeated, times included)."""
    from tests.helpers import json_line, slow_attr

    lines = []
    for n in range(400):
        stamp = f"2025-01-01T10:{n // 60 % 60:02d}:{n % 60:02d}"
        connection = f"conn{n % 7}"
        lines.append(json_line(slow_attr({"find": "orders", "filter": {"k": n % 5}, "sort": {"d": -1}},
                                         planSummary="IXSCAN { k: 1 }" if n % 3 else "COLLSCAN",
                                         durationMillis=100 + n % 37), ctx=connection, ts=f"{stamp}.100+00:00"))
        lines.append(json_line({"type": "update", "ns": "shop.orders", "command": {"q": {"_id": n}, "u": {"$set": {
            "a": 1}}}, "planSummary": "IDHACK", "keysExamined": 1, "docsExamined": 1, "durationMillis": 150},
            ctx=connection, component="WRITE", ts=f"{stamp}.400+00:00"))
        lines.append(json_line({"type": "command", "ns": "shop.$cmd", "command": {"update": "orders",
                                "ordered": True}, "durationMillis": 152}, ctx=connection, ts=f"{stamp}.450+00:00"))
    return ("\n".join(lines) + "\n") * copies


def _read(path: Path, jobs: int, task_size: int | None, monkeypatch: Any = None,
          block_size: int = 8_192) -> tuple[dict, int]:
    """The workload document of a run, and how many rounds of merges the workers did."""
    from idxadvisor.ingest.sources import expand_sources
    from idxadvisor.workload import workload_document

    merges = 0
    original = Runner._merge_shards

    def counted(self: Runner, state: Any, final: bool) -> None:
        nonlocal merges
        merges += 1
        original(self, state, final)

    if monkeypatch is not None:
        monkeypatch.setattr(Runner, "_merge_shards", counted)
    options = RunOptions(BlockOptions(REFERENCE_YEAR), jobs=jobs, block_size=block_size, task_size=task_size,
                         inline_threshold=0)
    summaries, digest = Runner(options, Digest).run(expand_sources([str(path)]))
    return workload_document(digest, summaries), merges


@pytest.mark.parametrize("jobs", [PARTITIONED_FROM_WORKERS, 7])
def test_digests_merged_piece_by_piece_on_the_workers_are_the_digest_of_one_process(tmp_path: Path, monkeypatch: Any,
                                                                                    jobs: int) -> None:
    """Many workers: each task's digest comes back cut by shape, and worker k merges every task's piece k; a round
    merges the shards once there are two per worker, the last round at the input's end (with what pairing settled
    at each task's edge added to the piece its shape falls in)."""
    path = tmp_path / "mongod.log"
    path.write_text(_workload_log())
    one_process, _ = _read(path, jobs=1, task_size=None)
    pieces, rounds = _read(path, jobs=jobs, task_size=10_000, monkeypatch=monkeypatch)
    assert rounds >= 2  # 36 tasks: a round of 2 per worker and one more, then the last
    assert one_process["inputs"][0]["operations"] == 800
    assert pieces == one_process


_PARSERS_FILE: list[Path] = []  # where _recorded_task writes which process parsed each task (workers are forked)


def _recorded_task(*arguments: Any) -> Any:
    import os

    with _PARSERS_FILE[0].open("a") as record:
        record.write(f"{os.getpid()}\n")
    return _run_task(*arguments)


def test_with_two_jobs_this_process_parses_every_other_task(tmp_path: Path, monkeypatch: Any) -> None:
    """Two jobs are one worker and this process, which parses every second task itself (nothing to ship) rather than
    wait for two workers and then merge while they parse: three busy processes on two cores. The digest is the same."""
    import os

    from idxadvisor.parse import run as run_module

    path = tmp_path / "mongod.log"
    path.write_text(_workload_log())
    one_process, _ = _read(path, jobs=1, task_size=None)
    monkeypatch.setattr(run_module, "_run_task", _recorded_task)
    _PARSERS_FILE[:] = [tmp_path / "parsers"]
    assert _read(path, jobs=2, task_size=10_000)[0] == one_process
    pids = _PARSERS_FILE[0].read_text().split()
    assert len(pids) >= 4
    assert pids.count(str(os.getpid())) == len(pids) // 2
    assert len(set(pids)) == 2


def test_a_naive_concatenation_of_one_day_pairs_each_copys_writes(tmp_path: Path) -> None:
    """The same day's log repeated (``cat`` of it three times): time goes back at each copy. One process paired a
    copy's statements with the wrappers of another (2,801 operations, 799 pairs); each copy's are its own."""
    path = tmp_path / "mongod.log"
    path.write_text(_workload_log(copies=3))
    one_process, _ = _read(path, jobs=1, task_size=None)
    assert (one_process["inputs"][0]["operations"], one_process["inputs"][0]["paired"]) == (2_400, 1_200)
    assert _read(path, jobs=2, task_size=None)[0] == one_process


@pytest.mark.corpus
def test_a_naive_concatenation_of_real_logs_reads_the_same_however_it_is_cut(corpus_dir: Path,
                                                                             tmp_path: Path) -> None:
    """Real 8.2 logs with WRITE and COMMAND entries side by side, the day repeated three times: the operations, pairs
    and statistics do not depend on the tasks (one process paired 12 of the 168 writes before, tasks of 1 MB 168)."""
    day = b"".join((corpus_dir / "GOindiaRIDE" / name).read_bytes() for name in ("mongod-verify.log",
                                                                                "mongod-runtime.log"))
    path = tmp_path / "naive.log"
    path.write_bytes(day * 3)
    one_process = _without_plan_order(_read(path, jobs=1, task_size=None, block_size=1 << 20)[0])
    assert one_process["inputs"][0]["paired"] == 3 * 56
    for jobs, task_size in ((1, 1_000_000), (1, 3_000_000), (2, None), (PARTITIONED_FROM_WORKERS, 1_000_000)):
        cut = _without_plan_order(_read(path, jobs=jobs, task_size=task_size, block_size=1 << 20)[0])
        assert cut == one_process, (jobs, task_size)


def _without_plan_order(document: dict) -> dict:
    """A workload without each shape's plan changes: copies of one day overlap in time, so which execution follows
    which (a plan change) is not defined across them, and parts cut elsewhere join them in another order."""
    for shape in document["shapes"]:
        shape.pop("plan_order", None)
    return document


def test_the_default_jobs_follow_the_size_and_format_of_the_input(tmp_path: Path) -> None:
    from idxadvisor.ingest.sources import expand_sources
    from idxadvisor.parse.run import MIN_SECONDS_PER_WORKER, PARSE_RATE, default_jobs

    json_log, text_log = tmp_path / "json.log", tmp_path / "text.log"
    json_line = b'{"t":{"$date":"2024-01-01T00:00:00.000Z"},"s":"I","c":"NETWORK","id":22943,"msg":"x"}\n'
    text_line = b"2018-12-01T19:37:47.988-0500 I NETWORK  [conn1] end connection 127.0.0.1:5000\n"
    size = int(3 * PARSE_RATE[TEXT_LOG] * MIN_SECONDS_PER_WORKER)  # three workers' worth of text
    json_log.write_bytes(json_line * (size // len(json_line)))
    text_log.write_bytes(text_line * (size // len(text_line)))
    assert default_jobs(expand_sources([str(text_log)]), cores=16) == 3
    assert default_jobs(expand_sources([str(json_log)]), cores=16) == 1  # JSON parses faster: one worker's worth
    assert default_jobs(expand_sources([str(text_log)]), cores=2) == 2
    assert default_jobs(expand_sources([str(tmp_path / "absent.log")]), cores=16) == 1


def test_a_digest_cut_by_shape_puts_each_shape_and_each_event_in_one_piece() -> None:
    """``Digest.split``: pieces with disjoint shapes that add up to the digest, the skipped counts in the first; an
    event's piece (``piece_of``) is the one that holds its shape, the first for an event a filter leaves out."""
    from idxadvisor.shapes.digest import DigestOptions
    from idxadvisor.shapes.shape import shape_of_shared
    from tests.helpers import parse_block

    events = parse_block(_workload_log(), "json-log")[1]
    digest = Digest(DigestOptions(apps=("reporting*",)))
    whole = Digest()
    for event in events:
        whole.add(event)
        digest.add(event)
    assert digest.skipped and not digest.shapes  # no event names that application
    pieces = whole.split(3)
    assert sorted(fingerprint for piece in pieces for fingerprint in piece.shapes) == sorted(whole.shapes)
    assert sum(len(piece.shapes) for piece in pieces) == len(whole.shapes) >= 2
    for event in events:
        piece = whole.piece_of(event, 3)
        assert shape_of_shared(event)[0].fingerprint in pieces[piece].shapes
    assert digest.split(3)[0].skipped == digest.skipped and not digest.split(3)[1].skipped
    assert {digest.piece_of(event, 3) for event in events} == {0}


def test_an_input_of_one_task_is_put_together_here(tmp_path: Path, monkeypatch: Any) -> None:
    """With many workers, an input that is one task (its pieces need no merging) is put together in this process,
    what pairing settled at its edges included, without a round of merges on the workers."""
    from idxadvisor.parse import run as run_module

    path = tmp_path / "mongod.log"
    path.write_text(_workload_log())
    one_process, _ = _read(path, jobs=1, task_size=None)
    monkeypatch.setattr(run_module, "_merge_pieces", _no_merge)  # the workers, forked after this, would fail
    pieces, rounds = _read(path, jobs=PARTITIONED_FROM_WORKERS, task_size=1 << 30, monkeypatch=monkeypatch)
    assert rounds == 1
    assert pieces == one_process


def _no_merge(*arguments: Any) -> bytes:
    raise AssertionError("a round of merges for an input of one task")
