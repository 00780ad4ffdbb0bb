"""What a watch has read so far: the digest ``analyze`` builds, fed a few lines at a time, and the window.

Lines go through the same pipeline as ``analyze``'s blocks: the format detected from an input's first lines, a
``BlockParser`` per piece into a digest of its own, statement pairing carried from piece to piece by the input's
``InputState``, and that digest merged into the total (and copied into the window). At the end of an input (a
rotation, the end of stdin, the end of the watch) the waiting wrappers are settled and the digest sealed, as
``analyze`` does at the end of each file; so the final report is the report ``analyze`` gives of the same lines.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import datetime, timezone

from idxadvisor.api import digest_options
from idxadvisor.config import Settings
from idxadvisor.ingest.detect import EMPTY, HEAD_SIZE, WHOLE_DOCUMENT, WORKLOAD, detect_format
from idxadvisor.models.events import JSON_LOG, PROFILE, TEXT_LOG, UNKNOWN
from idxadvisor.models.inputs import InputSummary
from idxadvisor.parse.block import BlockOptions, BlockParser
from idxadvisor.parse.run import InputState, overlong_line
from idxadvisor.report.build import shape_is_selected
from idxadvisor.shapes.digest import Digest, ShapeStats
from idxadvisor.watch.follow import InputEnd, InputStart, Lines, Overlong, Piece
from idxadvisor.watch.window import Window

LINE_FORMATS = (JSON_LOG, TEXT_LOG, PROFILE)


@dataclass
class _Input:
    state: InputState
    from_first_byte: bool
    mode: str | None = None  # None until its first lines tell the format
    held: bytearray = field(default_factory=bytearray)  # lines read before the format was known
    head: bytearray = field(default_factory=bytearray)  # its first HEAD_SIZE bytes: with its size, its identity


class WatchSession:
    """The total digest and the window of a watch; ``feed`` takes the follower's pieces."""

    def __init__(self, settings: Settings, window_seconds: float, interval: float, now: float) -> None:
        self.settings = settings
        self.options = digest_options(settings)
        self.block_options = BlockOptions(reference_year=datetime.now(timezone.utc).year,
                                          keep_excerpts=settings.show_values)
        self.total = Digest(self.options)
        self.window = Window(window_seconds, interval, now)
        self.summaries: list[InputSummary] = []
        self.changed = False  # lines arrived since the last advice
        self._input: _Input | None = None
        self._selected: dict[str, bool] = {}  # fingerprint -> in scope (--ns, --exclude-ns, internal traffic)

    def feed(self, pieces: list[Piece]) -> None:
        for piece in pieces:
            if isinstance(piece, Lines):
                self._lines(piece.data)
            elif isinstance(piece, InputStart):
                self._start(piece)
            elif isinstance(piece, Overlong):
                self._overlong(piece.length)
            elif isinstance(piece, InputEnd):
                self.end_input()

    def _start(self, piece: InputStart) -> None:
        self.end_input()
        summary = InputSummary(piece.label, UNKNOWN)
        self.summaries.append(summary)
        self._input = _Input(InputState(summary), piece.from_first_byte)

    def _lines(self, data: bytes) -> None:
        current = self._input
        if current is None:
            return
        summary = current.state.summary
        if current.from_first_byte and len(current.head) < HEAD_SIZE:
            current.head += data[:HEAD_SIZE - len(current.head)]
            summary.head_sha256 = hashlib.sha256(current.head).hexdigest()
        summary.bytes += len(data)
        if summary.error is not None:
            return
        if current.mode is None:
            current.held += data
            if not self._detect(current):
                return
            data, current.held = bytes(current.held), bytearray()
        self._parse(current, data)

    def _detect(self, current: _Input) -> bool:
        """Tell the input's format from its first lines; False while they are all blank (and under HEAD_SIZE)."""
        detected = detect_format(bytes(current.held[:HEAD_SIZE]))
        if detected == EMPTY and len(current.held) < HEAD_SIZE:
            return False
        summary = current.state.summary
        if detected in (WHOLE_DOCUMENT, WORKLOAD):
            summary.error = ("not a log written a line at a time (watch follows JSON logs, text logs and profiler "
                             "documents one per line; read this input with 'idxadvisor analyze')")
            current.held = bytearray()
            return False
        current.mode = detected if detected in LINE_FORMATS else TEXT_LOG  # as analyze reads an unknown format
        summary.format = detected if detected in LINE_FORMATS else UNKNOWN
        return True

    def _parse(self, current: _Input, data: bytes) -> None:
        assert current.mode is not None
        piece = Digest(self.options)
        stats = BlockParser(current.mode, self.block_options, piece).parse(data)
        current.state.fold(stats, piece, self.block_options.max_problem_examples)
        self._absorb(piece)

    def _overlong(self, length: int) -> None:
        if self._input is not None:
            self._input.state.summary.bytes += length
            piece = Digest(self.options)
            self._input.state.fold(overlong_line(length), piece, self.block_options.max_problem_examples)

    def _absorb(self, piece: Digest) -> None:
        if piece.shapes or piece.skipped:
            self.window.add(piece)  # copied before the merge: the total may take the piece's statistics as they are
            self.total.merge(piece)
            self.changed = True

    def end_input(self) -> None:
        """The current input ended: its waiting wrappers are operations of their own, and the digest is sealed."""
        current, self._input = self._input, None
        if current is None:
            return
        if current.mode is None and current.held and current.state.summary.error is None:
            current.mode = TEXT_LOG  # only blank lines came: counted as lines, nothing more
            self._parse(current, bytes(current.held))
        piece = Digest(self.options)
        current.state.close(piece)
        self._absorb(piece)
        self.total.seal()

    def selected_shapes(self) -> dict[str, ShapeStats]:
        """The shapes in scope that ran at least once (above --min-ms). Whether a shape is in scope is worked out once:
        it depends on its namespace, and on whether its executions are internal, which for one shape are nearly always
        all or none (the final report decides on all of them)."""
        selected, known = {}, self._selected
        for fingerprint, stats in self.total.shapes.items():
            if not stats.count:
                continue
            in_scope = known.get(fingerprint)
            if in_scope is None:
                in_scope = known[fingerprint] = shape_is_selected(stats, self.settings) is None
            if in_scope:
                selected[fingerprint] = stats
        return selected

    @property
    def operations(self) -> int:
        return sum(summary.operations for summary in self.summaries)

    @property
    def current_label(self) -> str | None:
        return self._input.state.summary.path if self._input is not None else None
