from __future__ import annotations

from idxadvisor.rules.base import RuleContext, ShapeAnalysis, Verdict
from idxadvisor.rules.causes import WaitRule, described, worst
from idxadvisor.shapes.digest import ShapeStats
from idxadvisor.shapes.timing import TimeBreakdown
from idxadvisor.units import human_bytes, human_ms

PULLERS = 3  # shapes named as reading the most from disk


class DiskReads(WaitRule):
    """A shape spends its time reading from disk: its working set does not fit in the cache.

    ## What it does
    Flags a shape whose executions spent a large part of their time reading data into the WiredTiger cache
    (`storage.data.timeReadingMicros`, text logs from 4.0 and JSON logs), with the bytes read per execution and per
    document returned, and names the shapes of the log that read the most from disk. It says what the log cannot
    show: the cache's size and its eviction.

    ## Why is this bad?
    A query that returns one document through an index should take a millisecond. When its pages are not in the
    cache, each execution waits for the disk; when many shapes compete for a cache smaller than the data they touch,
    they evict each other's pages and every one of them reads from disk. No index helps a 1-key lookup: the cache
    does, or reading less.

    ## Example
    ```js
    db.products.find({ sku: "S1" })  // 480 ms, 430 ms of it reading 48 MB from disk
    ```

    ## Fix
    Read less: project the fields needed, keep large arrays and blobs out of hot documents. Give the cache more
    memory (or the node more RAM), or move the shapes that pull the most (named in the finding) to a secondary or
    another time. `db.serverStatus().wiredTiger.cache` shows the cache size and its reads.

    ## Options
    - `min_share` (0.3): the part of the time spent reading before the rule fires.
    - `min_mean_ms` (10): the reading time per execution before the rule fires.
    - `min_executions` (3)

    ## References
    - https://www.mongodb.com/docs/manual/core/wiredtiger/#memory-use
    """

    code = "TM004"
    name = "disk-reads"
    components = ("disk_read_ms",)

    def verdict(self, analysis: ShapeAnalysis, context: RuleContext, breakdown: TimeBreakdown, share: float,
                mean: float) -> Verdict:
        stats = analysis.stats
        read = breakdown.mean("bytes_read")
        per_doc = ""
        if read is not None:
            returned = stats.nreturned / max(analysis.executions, 1)
            per_doc = f", {human_bytes(read)} read per execution for {returned:,.0f} document(s) returned"
        message = (f"{described(stats)} spent {share:.0%} of its time reading from disk, {human_ms(mean)} per "
                   f"execution{worst(breakdown, 'disk_read_ms')}{per_doc}: its data is not in the cache.")
        pullers = context.derived(f"{self.code} pullers", _pullers)  # the same for every victim: once per run
        details = []
        if pullers:
            details.append("the shapes that read the most from disk: " + "; ".join(
                f"{described(other)} ({human_bytes(_bytes_read(other))})" for other in pullers))
        details.append("read less (project the fields needed, keep large fields out of hot documents), or give the "
                       "cache more memory")
        details.append("the log cannot show the cache's size or its eviction: db.serverStatus().wiredTiger.cache can")
        return Verdict(message, details=details, impact=0.0,
                       related=[other.shape.fingerprint for other in pullers if other is not stats])


def _pullers(shapes: list[ShapeStats]) -> list[ShapeStats]:
    """The shapes that read the most bytes from disk, most first."""
    return sorted((other for other in shapes if other.timing is not None and other.timing.total("bytes_read")),
                  key=lambda other: (-_bytes_read(other), other.shape.fingerprint))[:PULLERS]


def _bytes_read(stats: ShapeStats) -> float:
    return (stats.timing.total("bytes_read") if stats.timing is not None else None) or 0.0
