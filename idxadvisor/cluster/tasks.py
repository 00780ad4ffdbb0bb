"""What Dask workers run: parse one byte range, read one input whole, merge digests. Module-level functions, so that
a task names them and a worker imports them from its own installation of idxadvisor."""

from __future__ import annotations

from dataclasses import replace
from functools import partial

from idxadvisor.cluster.inputs import Location
from idxadvisor.models.inputs import InputSummary
from idxadvisor.parse.block import BlockOptions, BlockParser, BlockStats
from idxadvisor.parse.run import Runner, RunOptions
from idxadvisor.runtime import collector_paused
from idxadvisor.shapes.digest import Digest, DigestOptions


def parse_ranges(location: Location, ranges: list[tuple[int, int]], mode: str, block_options: BlockOptions,
                 digest_options: DigestOptions) -> tuple[BlockStats, Digest]:
    """Consecutive newline-aligned blocks of one input, read one at a time by this worker, as a local worker parses
    a task: their digest, and their counts with what pairing left open at the task's edges (the client settles those
    in input order, as the local Runner does)."""
    digest = Digest(digest_options)
    parser = BlockParser(mode, block_options, digest)
    with collector_paused():  # as in a local worker: the collector, walking every parsed line's objects, cost 45%
        for start, end in ranges:
            parser.feed(location.read_range(start, end))
        return parser.finish(), digest


def read_whole(location: Location, label: str, size: int, run_options: RunOptions,
               digest_options: DigestOptions) -> tuple[list[InputSummary], Digest]:
    """An input that cannot be cut (compressed, an archive, one JSON document): read start to end by this worker."""
    runner = Runner(replace(run_options, jobs=1), partial(Digest, digest_options))
    with location.open() as raw:
        summaries, digest = runner.run_stream(label, raw, size)
    return summaries, digest  # type: ignore[return-value]


def seal_digest(digest: Digest) -> Digest:
    """The digest of one whole input, sealed (``Digest.seal``): only then may it be merged with other inputs'."""
    digest.seal()
    return digest


def merge_digests(*digests: Digest) -> Digest:
    """Digests added up into the first (each is the output of one task and read by no other)."""
    merged, *rest = digests
    with collector_paused():
        for digest in rest:
            merged.merge(digest)
    return merged
