"""Workload files combined: several merged into one (``idxadvisor merge``), and one extended with the inputs it has
not counted yet (``analyze --save-workload FILE`` when FILE exists: the incremental mode).

A digest adds up exactly (``Digest.merge``), but it cannot subtract: once an input is counted, its operations are
mixed with every other's. So the one thing a merge must never do is count an input twice. An input is known by
the SHA-256 of its first 64 KiB (decompressed) and its size, as recorded in the workload file:

* merging two workload files that both counted the same input is refused, naming both;
* extending a workload skips an input it has counted already (same head, same size), and reads only the new lines
  of a log that grew since (same head, larger: a log is appended to, and mongod's rotation renames the file, so the
  head is matched whatever the file is called now). The earlier read must have ended at the end of a line; a file
  that shrank was truncated or replaced, and both are refused with one line, since neither can be counted honestly.
  A compressed file is decompressed and the bytes counted before are passed over; a tar archive is known by its
  name and its members' names, and skipped once counted.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from idxadvisor.errors import InputError, UsageError
from idxadvisor.ingest.detect import HEAD_SIZE
from idxadvisor.ingest.sources import READ_ERRORS, Source, compression, is_tar, read_decompressed
from idxadvisor.models.inputs import InputSummary
from idxadvisor.shapes.digest import Digest, DigestOptions
from idxadvisor.workload.file import Workload, described_filters, is_workload_file, load_workload

def identity(summary: InputSummary) -> tuple[str, int] | None:
    """What tells one input from another: the hash of its head and its size (None: nothing was read from it)."""
    if summary.head_sha256 is None or not summary.bytes:
        return None
    return summary.head_sha256, summary.bytes


def merge_workloads(paths: Sequence[Path]) -> Workload:
    """The workload files merged into one, their inputs listed as recorded. UsageError when their filters differ or
    when two of them counted the same input."""
    if not paths:
        raise UsageError("name the workload files to merge")
    for path in paths:
        if path.is_file() and not is_workload_file(Source(str(path), path)):
            raise InputError(f"{path}: not a workload file: merge takes the files 'analyze --save-workload' writes "
                             "(name logs to analyze, with --save-workload to record them)")
    workloads = [load_workload(path, qualify_paths=False) for path in paths]
    first = workloads[0]
    merged = Workload(", ".join(str(path) for path in paths), Digest(first.filters), [])
    counted: dict[tuple[str, int], str] = {}
    for workload in workloads:
        if workload.filters != first.filters:
            raise UsageError(f"{workload.path} was recorded with {described_filters(workload.filters)} and "
                             f"{first.path} with {described_filters(first.filters)}: digests of different operations "
                             "cannot be added up; record them again with the same --min-ms, --since and --until")
        for summary in workload.inputs:
            known = identity(summary)
            if known is not None and known in counted:
                raise UsageError(f"{workload.path} and {counted[known]} both counted {summary.path} (same size and "
                                 "first 64 KiB): merging them would count its operations twice")
            if known is not None:
                counted[known] = workload.path
        merged.digest.merge(workload.digest)
        merged.inputs += workload.inputs
    return merged


@dataclass
class WorkloadExtension:
    """What extending a workload file does with each input named: the sources to read (new inputs, and grown logs
    from where they were counted up to), and the inputs skipped because they were counted already."""

    workload: Workload
    to_read: list[Source] = field(default_factory=list)
    grown: dict[str, InputSummary] = field(default_factory=dict)  # label read again -> its earlier summary
    skipped: list[str] = field(default_factory=list)  # one line per input skipped

    def apply(self, digest: Digest, summaries: list[InputSummary]) -> tuple[Digest, list[InputSummary]]:
        """The extended workload: its earlier digest with the new one added, and its inputs (a grown log's earlier
        summary and the summary of its new lines made one). UsageError when a new input was counted before under
        another identity (a workload file named as an input, say, that holds one of them)."""
        earlier = self.workload
        counted = {identity(summary) for summary in earlier.inputs} - {None}
        inputs = list(earlier.inputs)
        for summary in summaries:
            before = self.grown.get(summary.path)
            if before is not None:
                inputs[inputs.index(before)] = joined_summary(before, summary)
                continue
            if identity(summary) in counted:
                raise UsageError(f"{summary.path}: {earlier.path} counted this input already (same size and first "
                                 "64 KiB): adding it would count its operations twice")
            inputs.append(summary)
        earlier.digest.merge(digest)
        return earlier.digest, inputs


def plan_extension(path: Path, sources: list[Source], options: DigestOptions) -> WorkloadExtension:
    """Which of ``sources`` the workload file at ``path`` has counted, and from where to read the rest."""
    try:
        workload = load_workload(path, qualify_paths=False)
    except InputError as exc:  # never overwrite a file that is not a workload: it may be anything
        raise UsageError(f"--save-workload: {exc}; it is only added to when it is a workload file: name a new file, "
                         "or delete this one to start afresh") from None
    if workload.filters != options:
        raise UsageError(f"--save-workload: {path} was recorded with {described_filters(workload.filters)}, and this "
                         f"run asks for {described_filters(options)}: its operations and this run's would not be "
                         "counted alike; pass the filters it was recorded with, or save to a new file")
    extension = WorkloadExtension(workload)
    for source in sources:
        earlier = _counted_before(workload, source) if source.path is not None and source.error is None else None
        if earlier is None:
            extension.to_read.append(source)
            continue
        decision = _extension_of(source, earlier, workload.path)
        if decision is None:
            name = f" (as {earlier.path})" if earlier.path != source.label else ""
            extension.skipped.append(f"{source.label}: counted in {workload.path} already{name}: skipped")
        else:
            extension.to_read.append(decision)
            extension.grown[source.label] = earlier
    return extension


def _counted_before(workload: Workload, source: Source) -> InputSummary | None:
    """The input of the workload that ``source`` is, or began as (the same first 64 KiB); None for a new input."""
    assert source.path is not None
    try:
        with open(source.path, "rb") as handle:
            raw_head = handle.read(512)
        if is_tar(raw_head) or (compression(raw_head) is not None and is_tar(read_decompressed(source.path, 512))):
            members = [summary for summary in workload.inputs if summary.path.startswith(f"{source.label}:")]
            return members[0] if members else None
        head = read_decompressed(source.path, HEAD_SIZE)
    except READ_ERRORS:
        return None  # the reader reports what is wrong with it
    digest = hashlib.sha256(head).hexdigest()
    matches = [summary for summary in workload.inputs if summary.head_sha256 == digest and summary.bytes]
    return max(matches, key=lambda summary: summary.bytes) if matches else None


def _extension_of(source: Source, earlier: InputSummary, workload: str) -> Source | None:
    """None when ``source`` was counted whole; else the source to read from where it was counted up to."""
    assert source.path is not None
    if earlier.path.startswith(f"{source.label}:"):
        return None  # a tar archive: archives are written once
    with open(source.path, "rb") as handle:
        compressed = compression(handle.read(6)) is not None
        size = source.path.stat().st_size
        if not compressed:
            if size == earlier.bytes:
                return None
            if size < earlier.bytes:
                raise UsageError(f"{source.label} is smaller than when {workload} counted it ({earlier.bytes:,} bytes, "
                                 f"now {size:,}) with the same first 64 KiB: it was truncated or replaced, and its "
                                 "counted operations cannot be taken out of the workload; save to a new file")
            handle.seek(earlier.bytes - 1)
            if handle.read(1) != b"\n":
                raise UsageError(f"{source.label} grew since {workload} counted it, but that read ended inside a line "
                                 "(it was counted while being written): its last line cannot be counted honestly; "
                                 "save to a new file")
    return replace(source, start=earlier.bytes)


def joined_summary(earlier: InputSummary, later: InputSummary) -> InputSummary:
    """One input read in two parts (a log counted, then its new lines): the counts added, the span widened."""
    joined = replace(earlier, path=later.path, versions=earlier.versions | later.versions,
                     problem_examples=list(earlier.problem_examples),
                     index_sightings=earlier.index_sightings + later.index_sightings)
    for name in ("lines", "entries", "problems", "truncated", "operations", "paired", "json_entries", "text_entries",
                 "bytes"):
        setattr(joined, name, getattr(earlier, name) + getattr(later, name))
    if earlier.format != later.format and later.entries:
        joined.format = later.format
    for problem in later.problem_examples[: max(0, 5 - len(joined.problem_examples))]:
        joined.problem_examples.append(replace(problem, line=None if problem.line is None
                                               else problem.line + earlier.lines))
    firsts = [moment for moment in (earlier.first_ts, later.first_ts) if moment is not None]
    lasts = [moment for moment in (earlier.last_ts, later.last_ts) if moment is not None]
    joined.first_ts, joined.last_ts = (min(firsts) if firsts else None), (max(lasts) if lasts else None)
    joined.error = later.error
    return joined
