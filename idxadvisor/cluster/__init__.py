"""Reading inputs on a Dask cluster (``analyze --dask-scheduler tcp://host:8786``): the same digest and input
summaries as a local run, for log lakes larger than one machine.

The client plans the inputs (``inputs.py``: paths every worker sees, or fsspec URLs), submits one task per run of
consecutive byte ranges of a plain log (about ``TASKS_PER_WORKER`` tasks per worker thread over all the inputs, as a
local run cuts its tasks: each worker reads its own ranges, one block at a time) and one per input that cannot be
cut, and tree-reduces the digests on the cluster (``FAN_IN`` at a time), so only the final digest, the size of the
shape table, comes back. What each task's statement pairing left open at its edges comes back beside it and is
settled here, task by task in input order, by the same code the local Runner uses (``parse.run.InputState``): a
write statement and its command entry are one operation wherever the cut fell. Dask and fsspec are imported only
here, and this package only with ``--dask-scheduler``.
"""

from __future__ import annotations

import operator
from pathlib import Path
from typing import Any

import orjson

from idxadvisor.cluster.inputs import PlannedInput, is_url, parse_mode, plan_inputs
from idxadvisor.cluster.tasks import merge_digests, parse_ranges, read_whole, seal_digest
from idxadvisor.errors import InputError, ServerError, UsageError
from idxadvisor.ingest.sources import ByteRange, read_stream_decompressed, sort_out_non_logs
from idxadvisor.models.events import UNKNOWN
from idxadvisor.models.inputs import InputSummary
from idxadvisor.parse.run import MAX_TASK_SIZE, TASKS_PER_WORKER, InputState, RunOptions, overlong_line
from idxadvisor.shapes.digest import Digest, DigestOptions
from idxadvisor.workload import Workload, check_filters, load_workload
from idxadvisor.workload.file import parse_workload

#: Digests merged by one task of the tree: a level's merges run side by side, so a smaller fan-in is more levels
#: of fewer unpickles each (32 tasks: 3 levels of 4 rather than 2 of 8, about the same; 8 kept the levels few).
FAN_IN = 4
CONNECT_TIMEOUT = "20s"


def read_on_cluster(arguments: list[str], scheduler: str, run_options: RunOptions, digest_options: DigestOptions,
                    skipped: list[str] | None = None) -> tuple[Digest, list[InputSummary]]:
    """Every input parsed on the cluster at ``scheduler`` into one digest, with a summary per input in the order a
    local run gives them (logs first, then the inputs of workload files). As locally, the files of a directory (or a
    pattern, a prefix, an archive) that are not logs are left out, their names in ``skipped``; an input named that
    is not one has the error ``NOT_A_LOG``."""
    client = _connect(scheduler)
    try:
        planned = plan_inputs(arguments, run_options.block_size, run_options.max_line_bytes)
        return _read(client, planned, run_options, digest_options, skipped)
    finally:
        client.close()


def _connect(scheduler: str) -> Any:
    try:
        from distributed import Client
    except ImportError:
        raise UsageError("--dask-scheduler needs Dask: pip install 'idxadvisor[dask]'") from None
    try:
        return Client(scheduler, timeout=CONNECT_TIMEOUT, set_as_default=False)
    except (OSError, TimeoutError, ValueError) as exc:
        raise ServerError(f"cannot reach the Dask scheduler at {scheduler}: {exc}") from None


def _read(client: Any, planned: list[PlannedInput], run_options: RunOptions, digest_options: DigestOptions,
          skipped: list[str] | None) -> tuple[Digest, list[InputSummary]]:
    digests: list[Any] = []  # futures of each input's digest, sealed
    block_stats: dict[int, list[Any]] = {}  # input position -> futures of its tasks' stats (or stats), in order
    whole: dict[int, Any] = {}  # input position -> future of its summaries
    task_size = _task_size(client, planned, run_options.block_size)
    for position, item in enumerate(planned):
        if item.whole:
            result = client.submit(read_whole, item.location, item.label, item.size, run_options, digest_options,
                                   pure=False)
            whole[position] = client.submit(operator.itemgetter(0), result, pure=False)
            digests.append(client.submit(operator.itemgetter(1), result, pure=False))  # sealed by its own Runner
        elif item.error is None and not item.workload:
            block_stats[position] = []
            parts: list[Any] = []  # futures of the input's block digests, in order
            item.tasks = _tasks(item.ranges, task_size)
            for task in item.tasks:
                if task[0].overlong:  # a line over --max-line-bytes: counted, never read
                    block_stats[position].append(overlong_line(task[0].end - task[0].start))
                    continue
                result = client.submit(parse_ranges, item.location, [(part.start, part.end) for part in task],
                                       parse_mode(item), run_options.block, digest_options, pure=False)
                block_stats[position].append(client.submit(operator.itemgetter(0), result, pure=False))
                parts.append(client.submit(operator.itemgetter(1), result, pure=False))
            merged = _tree_reduce(client, parts)  # an input's blocks first: only they may join at their edges
            if merged is not None:
                digests.append(client.submit(seal_digest, merged, pure=False))
    root = _tree_reduce(client, digests)
    try:
        gathered_stats = client.gather(block_stats)
        gathered_whole = client.gather(whole)
        reduced = client.gather(root) if root is not None else None
    except Exception as exc:  # noqa: BLE001 - a worker's failure, whatever it was, ends the run in one line
        raise ServerError(f"a Dask task failed: {type(exc).__name__}: {exc}") from None
    digest = Digest(digest_options)
    summaries: list[InputSummary] = []
    workloads: list[Workload] = []
    for position, item in enumerate(planned):
        if item.error is not None:
            summaries.append(InputSummary(item.label, UNKNOWN, error=item.error))
        elif item.workload:
            workloads.append(_load_workload(item))
        elif item.whole:
            summaries += gathered_whole[position]
        else:
            summaries.append(_fold(item, gathered_stats[position], digest, run_options))
    if reduced is not None:
        digest.merge(reduced)
    summaries = sort_out_non_logs(summaries, {item.label for item in planned if not item.scanned}, skipped)
    for workload in workloads:
        check_filters(workload, digest.options)
        digest.merge(workload.digest)
        summaries += workload.inputs
    return digest, summaries


def _task_size(client: Any, planned: list[PlannedInput], block_size: int) -> int:
    """Bytes of one task: ``TASKS_PER_WORKER`` tasks for each worker thread over all the cut inputs, at least a
    block, at most ``MAX_TASK_SIZE`` (a worker reads one block of a task at a time, whatever its size)."""
    threads = max(1, sum(client.nthreads().values()))
    total = sum(part.end - part.start for item in planned for part in item.ranges)
    return min(max(-(-total // (TASKS_PER_WORKER * threads)), block_size), MAX_TASK_SIZE)


def _tasks(ranges: list[ByteRange], task_size: int) -> list[list[ByteRange]]:
    """Consecutive ranges grouped into tasks of about ``task_size`` bytes; an overlong line is a task of its own."""
    tasks: list[list[ByteRange]] = []
    current: list[ByteRange] = []
    held = 0
    for part in ranges:
        if part.overlong:
            if current:
                tasks.append(current)
            tasks.append([part])
            current, held = [], 0
            continue
        current.append(part)
        held += part.end - part.start
        if held >= task_size:
            tasks.append(current)
            current, held = [], 0
    if current:
        tasks.append(current)
    return tasks


def _tree_reduce(client: Any, digests: list[Any]) -> Any:
    """The digests merged ``FAN_IN`` at a time on the cluster, level by level; None when there are none."""
    while len(digests) > 1:
        digests = [client.submit(merge_digests, *digests[start:start + FAN_IN], pure=False)
                   for start in range(0, len(digests), FAN_IN)]
    return digests[0] if digests else None


def _fold(item: PlannedInput, stats: list[Any], digest: Digest, run_options: RunOptions) -> InputSummary:
    """A line-format input's summary from its blocks' stats, pairing settled in input order into ``digest``."""
    state = InputState(InputSummary(item.label, item.format))
    state.summary.head_sha256 = item.head_sha256
    for task, block in zip(item.tasks, stats):
        state.summary.bytes += sum(part.end - part.start for part in task)
        state.fold(block, digest, run_options.block.max_problem_examples)
    state.close(digest)
    return state.summary


def _load_workload(item: PlannedInput) -> Workload:
    assert item.location is not None
    if not item.location.url:
        return load_workload(Path(item.label))
    with item.location.open() as raw:
        data = read_stream_decompressed(raw)
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"{item.label}: the workload file is not JSON ({exc.msg})") from None
    return parse_workload(document, item.label)


__all__ = ["is_url", "read_on_cluster"]
