"""Read every input on all cores and fold the events into one sink.

Each input is cut into newline-aligned blocks: byte ranges of a plain file (each worker reads its own, a block at a
time, and parses a run of consecutive blocks as one task), or blocks read from a stream (gzip, tar member, stdin) and
handed to a worker, a task each. A worker parses a task into a fresh sink and sends back the task's counts and the
sink pickled, never the events, so memory does not grow with the input. The counts are folded in input order, which
statement pairing needs at task boundaries; the sinks need no order but their neighbours': with a few workers this
process merges them as they come; with many (``PARTITIONED_FROM_WORKERS``), each task's digest comes back cut by shape
into a piece per worker, worker k merges every task's piece k, all at once, and this process only puts the pieces of
each input together. With a few workers, this process is one of them: it
parses every ``jobs``-th task itself (no pickling, nothing to ship), where it would otherwise wait for the others and
then merge while they parse, three busy processes on two cores. Small inputs, and every input with one job, are parsed
in this process.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from collections import deque
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Protocol, TypeVar

from idxadvisor.ingest.detect import HEAD_SIZE, WHOLE_DOCUMENT, WORKLOAD, detect_format
from idxadvisor.ingest.sources import (
    DEFAULT_MAX_LINE_BYTES,
    READ_ERRORS,
    OpenedInput,
    OverlongLine,
    Source,
    StreamError,
    compression,
    iter_blocks,
    open_source,
    open_stream,
    read_decompressed,
    read_range,
    split_file,
)
from idxadvisor.models.events import JSON_LOG, PROFILE, TEXT_LOG, UNKNOWN, Event, Problem
from idxadvisor.models.inputs import InputSummary
from idxadvisor.parse.block import BlockOptions, BlockParser, BlockStats
from idxadvisor.parse.documents import parse_documents
from idxadvisor.parse.pairing import BoundaryState
from idxadvisor.runtime import collector_paused
from idxadvisor.units import human_bytes

if TYPE_CHECKING:
    from concurrent.futures import Executor

MAX_DOCUMENT_INPUT = 256 * 1024 * 1024
#: A task is a run of consecutive blocks parsed by one worker into one digest; only then is the digest shipped back
#: and merged, which on real logs (a thousand shapes in every block) costs two thirds of parsing a 20 MB block. Tasks
#: are cut so that each worker gets about two (one piece of work to overlap with merging), and never longer than
#: this, so that progress moves.
MAX_TASK_SIZE = 256 * 1024 * 1024
#: An input whose format is not recognised is read this far (decompressed) for a slow-operation entry, then given up
#: as an input error: a gzip of a GiB of junk lines would otherwise take minutes counting each one as a problem.
UNRECOGNISED_LIMIT = 64 * 1024 * 1024
#: A compressed input that goes this far (decompressed) in a row without a slow-operation entry, at more than
#: ``HOSTILE_RATIO`` times the compressed bytes it took, is given up: a 4.7 MB gzip of a GiB of newlines is a
#: decompression bomb that only costs time. Real mongod logs compress 10-50x (a quiet server's stretch without a slow
#: query too); a plain file, or a stream that is not compressed, is not bounded: its size is its cost.
ENTRYLESS_STREAM_LIMIT = 64 * 1024 * 1024
HOSTILE_RATIO = 200
TASKS_PER_WORKER = 2
#: From this many workers on, a sink that can be cut by shape (``SplitSink``: a digest) comes back from each task in
#: as many pieces as there are workers, and worker k merges every task's piece k, all workers at once: one round of
#: merges where a tree of neighbouring pairs took five levels one after another with 32 tasks (0.25 s each on a
#: 16-core machine: 1.3 s of a 4.1 s run, docs/speed.md), and this process unpickled and merged the last two whole
#: (unpickling and merging a thousand shapes takes it about 0.03 s a task: with fewer workers that overlaps the
#: parsing). Shards of an input pile up to ``SHARDS_PER_WORKER`` per worker, or
#: ``MAX_SHARD_BYTES`` together, before a round merges them, so that this process does not hold a large input's.
PARTITIONED_FROM_WORKERS = 4
SHARDS_PER_WORKER = 2
MAX_SHARD_BYTES = 256 * 1024 * 1024
#: ``--jobs`` left to its default: a worker more for each this many seconds of parsing the inputs hold (estimated from
#: their size, at the rate one core parses their format), up to the cores. A worker pool costs about a tenth of a second
#: (starting it, shipping digests back, merging them): below a few tenths of a second of work each, it does not pay.
MIN_SECONDS_PER_WORKER = 0.4
#: Bytes a second one core parses, by the format the first bytes of the first input show (text logs need regular
#: expressions and shell-syntax documents; JSON lines decode in C).
PARSE_RATE = {JSON_LOG: 90e6, TEXT_LOG: 40e6}
_COMPRESSION_RATIO_GUESS = 8
_READ_SIZE = 1 << 20


class Sink(Protocol):
    def add(self, event: Event) -> None: ...
    def merge(self, other: Sink) -> None: ...


class SplitSink(Sink, Protocol):
    """A sink that can be cut into pieces that merge independently (a digest, by shape): ``PARTITIONED_FROM_WORKERS``."""

    def split(self, parts: int) -> list[Sink]: ...
    def piece_of(self, event: Event, parts: int) -> int: ...


SinkT = TypeVar("SinkT", bound=Sink)


@dataclass(frozen=True)
class RunOptions:
    block: BlockOptions
    jobs: int | None = None  # worker processes; None: as many as the inputs' size makes worth it (``default_jobs``)
    block_size: int = 8 * 1024 * 1024
    inline_threshold: int = 16 * 1024 * 1024  # below this much input, parsing in this process is faster
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES  # a longer line is skipped and counted as a problem
    task_size: int | None = None  # bytes of a file per task; None: TASKS_PER_WORKER each, at most MAX_TASK_SIZE


@dataclass(frozen=True, slots=True)
class _Task:
    mode: str
    data: bytes | None = None
    path: Path | None = None
    parts: tuple[tuple[int, int], ...] = ()  # consecutive blocks of ``path``: (start, end), read one at a time
    overlong: int | None = None  # the length of a line too long to read: counted, never parsed

    @property
    def size(self) -> int:
        if self.overlong is not None:
            return self.overlong
        return len(self.data) if self.data is not None else sum(end - start for start, end in self.parts)


def overlong_line(length: int) -> BlockStats:
    """The counts of a line skipped for its length: one line, one problem (its line number is made absolute when
    the block is merged)."""
    reason = OverlongLine(length).reason
    return BlockStats(lines=1, problems=1, problem_examples=[Problem(reason, 1)])


def _run_task(task: _Task, options: BlockOptions, sink_factory: Callable[[], Sink],
              ship: int = 0) -> tuple[BlockStats, Sink | bytes | list[bytes]]:
    """Parse one task into a fresh sink; ``ship``: in a worker, the sink comes back pickled here, so that the process
    that receives it unpickles it outside the parsing; over 1, cut into that many pieces, each pickled, which this
    process passes on to the merges (``_merge_pieces``) without unpickling them."""
    sink = sink_factory()
    parser = BlockParser(task.mode, options, sink)
    with collector_paused():  # every parsed line leaves objects behind, none in a cycle: the collector cost 45%
        if task.data is not None:
            parser.feed(task.data)
        else:
            assert task.path is not None
            for start, end in task.parts:  # one block in memory at a time
                parser.feed(read_range(task.path, start, end))
        stats = parser.finish()
        if ship > 1:
            return stats, _pickled_pieces(sink, ship)
        return stats, (pickle.dumps(sink, protocol=pickle.HIGHEST_PROTOCOL) if ship else sink)


def _pickled_pieces(sink: Sink, parts: int) -> list[bytes]:
    split: SplitSink = sink  # type: ignore[assignment]  # the caller checked (``Runner._partitioned``)
    return [pickle.dumps(piece, protocol=pickle.HIGHEST_PROTOCOL) for piece in split.split(parts)]


class _Operations(list[Event]):
    """What pairing settles at a task's first edge (``InputState.fold``): operations kept for that task's sink."""

    def add(self, event: Event) -> None:
        self.append(event)


def _unpacked(payload: Sink | bytes, operations: list[Event]) -> Sink:
    """A task's sink (unpickled when it was shipped), with the operations its first edge settled added to it."""
    sink: Sink = pickle.loads(payload) if isinstance(payload, bytes) else payload
    for event in operations:
        sink.add(event)
    return sink


def _merge_pieces(piece: int, parts: int, group: list[tuple[bytes, list[Event]]]) -> bytes:
    """Piece ``piece`` of consecutive shards of one input, merged in a worker: each shard's piece with the operations
    settled at the shard's first edge that fall in it (the others go to the other pieces), in input order."""
    with collector_paused():
        merged: SplitSink | None = None
        for payload, operations in group:
            sink: SplitSink = pickle.loads(payload)
            for event in operations:
                if sink.piece_of(event, parts) == piece:
                    sink.add(event)
            if merged is None:
                merged = sink
            else:
                merged.merge(sink)
        return pickle.dumps(merged, protocol=pickle.HIGHEST_PROTOCOL)


@dataclass
class _Shard:
    """Consecutive tasks of one input whose sinks travel cut into pieces (``PARTITIONED_FROM_WORKERS``): each piece
    pickled, or a merge's future of it, and the operations settled at the first task's edge, not yet added."""

    pieces: list[bytes | _Result]
    operations: list[Event] = field(default_factory=list)

    @property
    def size(self) -> int:
        """Bytes of the pieces that are in this process."""
        return sum(len(piece) for piece in self.pieces if isinstance(piece, bytes))

    def ready(self) -> bool:
        return all(isinstance(piece, bytes) or getattr(piece, "done", lambda: True)() for piece in self.pieces)

    def piece(self, index: int) -> bytes:
        value = self.pieces[index]
        if not isinstance(value, bytes):
            value = self.pieces[index] = value.result()
        return value


class _Result(Protocol):
    def result(self) -> Any: ...


class _Completed:
    """A task already run in this process: its result, or the exception it raised, as ``Future.result`` gives them."""

    def __init__(self, value: Any = None, error: BaseException | None = None) -> None:
        self._value, self._error = value, error

    def result(self) -> Any:
        if self._error is not None:
            raise self._error
        return self._value


class _InlineExecutor:
    """Runs tasks at once in this process (small inputs, or one job), without concurrent.futures' imports."""

    def submit(self, fn: Callable[..., Any], /, *args: Any) -> _Completed:
        try:
            return _Completed(fn(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller through the result
            return _Completed(error=exc)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Nothing runs in the background."""


if TYPE_CHECKING:
    TaskExecutor = Executor | _InlineExecutor  # a process pool, or this process


@dataclass
class InputState:
    """One input being read: its summary, and the pairing state its blocks hand on to each other (in input order)."""

    summary: InputSummary
    boundary: BoundaryState = field(default_factory=BoundaryState)
    since_entry: int = 0  # bytes merged since the last task that held a slow-operation entry
    run_start: tuple[int, int] = (0, 0)  # (bytes, compressed bytes) read up to the end of that task
    merged: Sink | None = None  # the sink of the tasks merged so far in this process
    shards: list[_Shard] = field(default_factory=list)  # cut into pieces: the tasks' sinks still to merge, in order

    def fold(self, stats: BlockStats, sink: Sink, max_problem_examples: int) -> None:
        """Count the next block of the input: its pairing settled against the blocks before it (the wrappers that
        turn out to be operations of their own go into ``sink``), its counts added to the summary."""
        summary = self.summary
        first_line = summary.lines
        absorbed_before = self.boundary.absorbed
        last_ms = stats.last_ts.timestamp() * 1000 if stats.last_ts is not None else None
        if stats.before_restart is not None and stats.closing_ms is not None:
            last_ms = stats.closing_ms  # the log's latest time is from before it started again: pairing's clock
        for wrapper in self.boundary.resolve(stats.held_wrappers, stats.early_statements, stats.tail_statements,
                                             last_ms, stats.opening_ms, stats.closing_ms, stats.before_restart):
            sink.add(wrapper)
            stats.operations += 1
        summary.paired += stats.absorbed + self.boundary.absorbed - absorbed_before
        summary.lines += stats.lines
        summary.entries += stats.entries
        summary.json_entries += stats.json_entries
        summary.text_entries += stats.text_entries
        summary.truncated += stats.truncated
        summary.problems += stats.problems
        summary.operations += stats.operations
        summary.versions |= stats.versions
        summary.index_sightings += stats.index_sightings
        for problem in stats.problem_examples:
            if len(summary.problem_examples) < max_problem_examples:
                if problem.line is not None:
                    problem.line += first_line
                summary.problem_examples.append(problem)
        _widen_span(summary, stats)
        if summary.json_entries or summary.text_entries:
            summary.format = JSON_LOG if summary.json_entries >= summary.text_entries else TEXT_LOG

    def close(self, sink: Sink) -> None:
        """The end of the input: the wrappers and statements still waiting are settled (operations of their own, or
        pairs), and what depends on the order of executions is made final (``Digest.seal``)."""
        absorbed_before = self.boundary.absorbed
        for wrapper in self.boundary.close():
            sink.add(wrapper)
            self.summary.operations += 1
        self.summary.paired += self.boundary.absorbed - absorbed_before
        seal = getattr(sink, "seal", None)  # a digest; a test's collecting sink has nothing to seal
        if seal is not None:
            seal()


class Runner:
    """Parses sources into one sink; ``progress`` is called with the bytes each finished block covered."""

    def __init__(
        self,
        options: RunOptions,
        sink_factory: Callable[[], SinkT],
        progress: Callable[[int], None] | None = None,
    ) -> None:
        self.options = options
        self.sink_factory = sink_factory
        self.sink: Sink = sink_factory()
        self.progress = progress
        self.summaries: list[InputSummary] = []
        # each task: its input, its result (None: the end of the input), its bytes, and what the input had read when
        # it was submitted (bytes, compressed bytes)
        self._pending: deque[tuple[InputState, _Result | None, int, tuple[int, int]]] = deque()
        self._workers = 1  # processes parsing tasks: 1 when they run in this process
        self._jobs = options.jobs or 1
        self._tasks_submitted = 0  # tasks handed to a pool so far (``_takes_next_task``)
        self._executor_in_use: TaskExecutor = _InlineExecutor()

    @property
    def _partitioned(self) -> bool:
        """Whether the tasks' sinks come back in pieces that the workers merge side by side
        (``PARTITIONED_FROM_WORKERS``)."""
        return self._workers >= PARTITIONED_FROM_WORKERS and hasattr(self.sink, "split")

    def run(self, sources: list[Source]) -> tuple[list[InputSummary], Sink]:
        self._jobs = self.options.jobs or default_jobs(sources)
        executor = self._executor_in_use = self._executor(sources)
        self._workers = 1 if isinstance(executor, _InlineExecutor) else self._jobs
        try:
            with collector_paused():  # merging digests builds long-lived objects: see _run_task
                for source in sources:
                    self._read_source(source, executor)
                while self._pending:
                    self._merge_oldest()
        finally:
            executor.shutdown(wait=True, cancel_futures=True)
        return self.summaries, self.sink

    def run_stream(self, label: str, stream: BinaryIO, size: int | None) -> tuple[list[InputSummary], Sink]:
        """Read one input from an open binary stream (compressed, an archive, or plain), in this process: how a
        Dask worker reads a remote file that cannot be split."""
        executor = _InlineExecutor()
        self._read_opened(label, lambda: open_stream(label, stream, size), executor)
        while self._pending:
            self._merge_oldest()
        return self.summaries, self.sink

    def _executor(self, sources: list[Source]) -> TaskExecutor:
        if self._jobs <= 1 or estimated_bytes(sources) <= self.options.inline_threshold:
            return _InlineExecutor()
        import multiprocessing  # only here: a small input never starts a pool, so it does not wait for the import
        from concurrent.futures import ProcessPoolExecutor

        methods = multiprocessing.get_all_start_methods()
        context = multiprocessing.get_context("fork" if "fork" in methods else "spawn")
        return ProcessPoolExecutor(max_workers=self._jobs - 1 if self._parses_here() else self._jobs,
                                   mp_context=context)

    def _parses_here(self) -> bool:
        """Whether this process parses a share of the tasks: with a few workers it merges their digests as they come,
        which leaves it idle most of the time."""
        return 1 < self._jobs < PARTITIONED_FROM_WORKERS

    def _read_source(self, source: Source, executor: TaskExecutor) -> None:
        if source.error is not None:
            self.summaries.append(InputSummary(source.label, UNKNOWN, error=source.error))
            return
        self._read_opened(source.label, lambda: open_source(source), executor)

    def _read_opened(self, label: str, inputs: Callable[[], Iterator[OpenedInput]], executor: TaskExecutor) -> None:
        first = len(self.summaries)
        try:
            for opened in inputs():
                self._read_input(opened, executor)
        except (OSError, StreamError) as exc:
            if len(self.summaries) > first and self.summaries[-1].error is not None:
                return  # an archive cut inside its last member: that member already says so
            verb = "stopped reading" if len(self.summaries) > first else "cannot read"
            self.summaries.append(InputSummary(label, UNKNOWN, error=f"{verb}: {_reason(exc)}"))

    def _read_input(self, opened: OpenedInput, executor: TaskExecutor) -> None:
        state = InputState(InputSummary(opened.label, UNKNOWN, error=opened.error))
        self.summaries.append(state.summary)
        if opened.error is not None:
            return
        head = _head(opened)
        state.summary.head_sha256 = hashlib.sha256(head[:HEAD_SIZE]).hexdigest()
        detected = detect_format(head)
        state.summary.format = UNKNOWN if detected == WHOLE_DOCUMENT else detected
        if detected == WORKLOAD:  # named files are split off before the run; this one came through stdin or a tar
            state.summary.error = "a workload file is read only when named as a file, not from stdin or an archive"
            return
        if detected == WHOLE_DOCUMENT:
            self._read_whole_document(opened, state)
            return
        recognised = detected in (JSON_LOG, TEXT_LOG, PROFILE)
        mode = detected if recognised else TEXT_LOG
        try:
            for task in self._tasks(opened, mode):
                self._submit(executor, state, task, opened.compressed.count if opened.compressed else 0)
                if not recognised and _not_a_log_so_far(state.summary):
                    state.summary.error = (f"not read past its first {human_bytes(UNRECOGNISED_LIMIT)}: no MongoDB "
                                           "log entry there, in a format not recognised")
                    break
                if opened.compressed is not None and _hostile_run(state, opened.compressed.count):
                    _give_up_entryless(state.summary, state.since_entry)
                    break
        except StreamError as exc:
            state.summary.error = f"stopped reading: {exc}"
        self._pending.append((state, None, 0, (0, 0)))  # the input ends here: its waiting wrappers are settled then

    def _tasks(self, opened: OpenedInput, mode: str) -> Iterator[_Task]:
        options = self.options
        if opened.path is not None:
            size = opened.size or 0
            # A worker holds one block (and a text log's decoded block) at a time, so blocks stay small; a task, a run
            # of blocks merged once, keeps the merges few. The k-th task ends at the block end nearest to k task
            # sizes into the file: tasks as even as blocks allow (a worker given the longer ones would finish last).
            task_size = options.task_size or self._task_size(size, options.block_size)
            cut, slack = 0, options.block_size // 2
            parts: list[tuple[int, int]] = []
            for part in split_file(opened.path, size, options.block_size, options.max_line_bytes, opened.start):
                if part.overlong:
                    if parts:
                        yield _Task(mode, path=opened.path, parts=tuple(parts))
                        parts = []
                    yield _Task(mode, overlong=part.end - part.start)
                    continue
                parts.append((part.start, part.end))
                if part.end - opened.start >= (cut + 1) * task_size - slack:
                    yield _Task(mode, path=opened.path, parts=tuple(parts))
                    cut, parts = cut + 1, []
            if parts:
                yield _Task(mode, path=opened.path, parts=tuple(parts))
        else:
            assert opened.stream is not None
            for block in iter_blocks(opened.stream, options.block_size, options.max_line_bytes):
                if isinstance(block, OverlongLine):
                    yield _Task(mode, overlong=block.length)
                else:
                    yield _Task(mode, data=block)

    def _task_size(self, size: int, block_size: int) -> int:
        if self._workers == 1:
            return MAX_TASK_SIZE
        return min(max(-(-size // (TASKS_PER_WORKER * self._workers)), block_size), MAX_TASK_SIZE)

    def _submit(self, executor: TaskExecutor, state: InputState, task: _Task, compressed: int = 0) -> None:
        while len(self._pending) >= max(2, 2 * self._jobs):
            self._merge_oldest()
        state.summary.bytes += task.size
        if task.overlong is not None:
            future: _Result = _Completed((overlong_line(task.overlong), self.sink_factory()))
        elif isinstance(executor, _InlineExecutor) or self._takes_next_task():
            future = _InlineExecutor().submit(_run_task, task, self.options.block, self.sink_factory)
        else:
            future = executor.submit(_run_task, task, self.options.block, self.sink_factory,
                                     self._workers if self._partitioned else 1)
        self._pending.append((state, future, task.size, (state.summary.bytes, compressed)))

    def _takes_next_task(self) -> bool:
        """Every ``jobs``-th task of a pool is parsed here (``_parses_here``), the others by the workers."""
        if not self._parses_here():
            return False
        self._tasks_submitted += 1
        return self._tasks_submitted % self._jobs == 0

    def _merge_oldest(self) -> None:
        state, future, size, read = self._pending.popleft()
        if future is None:
            self._close(state)
            return
        stats, payload = future.result()
        if stats.entries:
            state.since_entry, state.run_start = 0, read
        else:
            state.since_entry += size
        self._merge(state, stats, payload)
        if self.progress is not None:
            self.progress(size)

    def _close(self, state: InputState) -> None:
        """The input's last task is in: its sinks merged (with pieces, the last round on the workers), pairing settled
        at its end, the whole sealed, then added to the run's sink."""
        if state.shards:
            self._merge_shards(state, final=True)
        merged = state.merged if state.merged is not None else self.sink_factory()
        state.merged = None
        state.close(merged)
        self.sink.merge(merged)

    def _merge(self, state: InputState, stats: BlockStats, payload: Sink | bytes | list[bytes]) -> None:
        """Fold a task's counts in input order; its sink is merged here, or kept in pieces for the workers' merges."""
        operations = _Operations()
        state.fold(stats, operations, self.options.block.max_problem_examples)
        if self._partitioned:
            self._add_shard(state, payload, operations)
        else:
            assert not isinstance(payload, list)  # pieces come back only when partitioned
            self._merge_here(state, _unpacked(payload, operations))

    def _add_shard(self, state: InputState, payload: Sink | bytes | list[bytes], operations: list[Event]) -> None:
        """A task's sink in pieces (a task parsed here, an overlong line's empty sink, is cut here); a round of merges
        once the shards are many or large and every earlier round is in."""
        if not isinstance(payload, list):
            payload = _pickled_pieces(_unpacked(payload, operations), self._workers)
            operations = []
        state.shards.append(_Shard(list(payload), operations))
        shards = state.shards
        if ((len(shards) > SHARDS_PER_WORKER * self._workers or sum(shard.size for shard in shards) > MAX_SHARD_BYTES)
                and all(shard.ready() for shard in shards)):
            self._merge_shards(state, final=False)

    def _merge_shards(self, state: InputState, final: bool) -> None:
        """One round: worker k merges piece k of every shard of the input (``_merge_pieces``), all at once. Not final,
        the round's pieces are one shard, merged again later; final, they are put together here, into the input's
        sink (pieces hold different shapes: nothing to merge)."""
        parts, shards = self._workers, state.shards
        state.shards = []
        operations: list[Event] = []
        if final and len(shards) == 1:  # the pieces are merged already (an input of one task, or a round's)
            pieces = [shards[0].piece(index) for index in range(parts)]
            operations = shards[0].operations
        else:
            futures = [self._executor_in_use.submit(_merge_pieces, index, parts,
                                                    [(shard.piece(index), shard.operations) for shard in shards])
                       for index in range(parts)]
            if not final:
                state.shards.append(_Shard(list(futures)))
                return
            pieces = [future.result() for future in futures]
        with collector_paused():
            for piece in pieces:
                self._merge_here(state, pickle.loads(piece))
            for event in operations:  # settled at the shard's first edge: added after its own events, as a worker adds
                state.merged.add(event)  # type: ignore[union-attr]  # them to its piece

    @staticmethod
    def _merge_here(state: InputState, sink: Sink) -> None:
        if state.merged is None:
            state.merged = sink
        else:
            state.merged.merge(sink)

    def _read_whole_document(self, opened: OpenedInput, state: InputState) -> None:
        try:
            data, failure = _read_all(opened)
        except OSError as exc:
            state.summary.error = f"cannot read: {_reason(exc)}"
            return
        if failure is not None:  # a damaged stream: what came before the damage is still read
            state.summary.error = f"stopped reading: {_reason(failure)}"
        state.summary.bytes = len(data)
        sink = self.sink_factory()
        stats, found_format = parse_documents(data, self.options.block, sink)
        self._merge(state, stats, sink)
        self._close(state)
        state.summary.format = found_format
        if self.progress is not None:
            self.progress(len(data))


def _hostile_run(state: InputState, compressed: int) -> bool:
    """Whether a compressed input has gone ``ENTRYLESS_STREAM_LIMIT`` (merged) without a slow-operation entry, at over
    ``HOSTILE_RATIO`` times the compressed bytes that stretch took (both counted when its tasks were submitted)."""
    if state.since_entry <= ENTRYLESS_STREAM_LIMIT:
        return False
    run_bytes, run_compressed = state.summary.bytes - state.run_start[0], compressed - state.run_start[1]
    return run_bytes > HOSTILE_RATIO * max(run_compressed, 1)


def _give_up_entryless(summary: InputSummary, run: int) -> None:
    """End a compressed input that went ``ENTRYLESS_STREAM_LIMIT`` without an entry at a ratio no log has: an error
    line and one counted problem."""
    reason = (f"not read past its first {human_bytes(summary.bytes)}: {human_bytes(run)} in a row with no "
              f"slow-operation entry, decompressed at over {HOSTILE_RATIO}x (blank or repeated lines: a "
              "decompression bomb, not a log)")
    summary.error = reason
    summary.problems += 1
    summary.problem_examples.append(Problem(reason))


def _widen_span(summary: InputSummary, stats: BlockStats) -> None:
    if stats.first_ts is not None and (summary.first_ts is None or stats.first_ts < summary.first_ts):
        summary.first_ts = stats.first_ts
    if stats.last_ts is not None and (summary.last_ts is None or stats.last_ts > summary.last_ts):
        summary.last_ts = stats.last_ts


def _head(opened: OpenedInput) -> bytes:
    if opened.path is not None:
        with open(opened.path, "rb") as handle:
            return handle.read(HEAD_SIZE)
    peek = getattr(opened.stream, "peek", None)
    return peek(HEAD_SIZE) if peek is not None else b""


def _read_all(opened: OpenedInput) -> tuple[bytes, BaseException | None]:
    """The whole input, and the error that stopped a damaged stream early (None when it was read to its end)."""
    too_large = OSError(f"a whole-document input over {MAX_DOCUMENT_INPUT >> 20} MiB is not supported")
    if opened.path is not None:
        if (opened.size or 0) > MAX_DOCUMENT_INPUT:
            raise too_large
        return opened.path.read_bytes(), None
    assert opened.stream is not None
    pieces: list[bytes] = []
    held = 0
    while True:
        try:
            piece = opened.stream.read(_READ_SIZE)
        except READ_ERRORS as exc:
            return b"".join(pieces), exc
        if not piece:
            return b"".join(pieces), None
        pieces.append(piece)
        held += len(piece)
        if held > MAX_DOCUMENT_INPUT:
            raise too_large


def _not_a_log_so_far(summary: InputSummary) -> bool:
    """Past ``UNRECOGNISED_LIMIT`` bytes (those merged so far) without an entry or a server version."""
    return summary.bytes > UNRECOGNISED_LIMIT and not summary.entries and not summary.versions


def default_jobs(sources: list[Source], cores: int | None = None) -> int:
    """The workers ``--jobs`` stands for when not given: one for each ``MIN_SECONDS_PER_WORKER`` of parsing the inputs
    hold (their size at the parsing rate of the first input's format), at least one, at most the cores; the cores
    for stdin and pipes, whose size is not known."""
    cores = cores or os.cpu_count() or 1
    total = estimated_bytes(sources)
    if total == float("inf"):
        return cores
    rate = PARSE_RATE.get(_first_format(sources), PARSE_RATE[JSON_LOG])
    return max(1, min(cores, round(total / (rate * MIN_SECONDS_PER_WORKER))))


def _first_format(sources: list[Source]) -> str | None:
    """The format the first bytes of the first readable input show (decompressed), None when none can be read."""
    for source in sources:
        if source.error is None and source.path is not None:
            try:
                return detect_format(read_decompressed(source.path, HEAD_SIZE))
            except (*READ_ERRORS, ValueError):
                continue
    return None


def estimated_bytes(sources: list[Source]) -> float:
    total = 0.0
    for source in sources:
        if source.error is not None:
            continue
        if source.path is None:
            return float("inf")
        try:
            size = source.path.stat().st_size
            with open(source.path, "rb") as handle:
                compressed = compression(handle.read(6)) is not None
        except OSError:
            continue
        total += size * (_COMPRESSION_RATIO_GUESS if compressed else 1)
    return total


def _reason(exc: BaseException) -> str:
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror.lower()
    return str(exc) or type(exc).__name__


__all__ = ["InputState", "RunOptions", "Runner", "Sink", "default_jobs", "estimated_bytes", "overlong_line"]
