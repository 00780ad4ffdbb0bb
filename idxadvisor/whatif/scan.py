"""Counting keys examined by an index scan (planner-semantics.md §4).

Two execution modes, as in ``IndexScan``:

* a single contiguous range (``isSingleInterval``): seek to the start key, stop at the end position;
  exactly the in-range entries are examined, no overshoot key;
* several ranges: the ``IndexBoundsChecker`` drives the cursor and every entry the cursor returns is
  counted before it is judged (VALID / seek / DONE), with the seek rules of §4.

Keys are compared in *position space*: for one scan, each index field's distinct values (those of the
entries read plus the interval end points) are numbered in BSON order, negated for a field read in
descending order, so a key is a tuple of ints in scan order followed by the RecordId. Only the entries
whose leading value can lie inside the bounds are materialised, plus one stopper on each side.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from bson import MaxKey, MinKey

from idxadvisor.whatif.bounds import OIL
from idxadvisor.whatif.bsonorder import MISSING, SortKey, sort_key
from idxadvisor.whatif.keys import IndexModel, KeyTuple
from idxadvisor.whatif.query import Unsupported
from idxadvisor.whatif.wildcard import slice_entries

BIG = 1 << 62
NARROW_GROUPS = True   # see _narrow_point_groups; tests switch it off to check the result is unchanged
PosInterval = tuple[int, bool, int, bool]


@dataclass
class PreparedScan:
    """The entries one scan can reach, in scan order, and its bounds in position space."""

    entries: list[tuple[int, ...]]          # (positions..., rid * direction)
    oils: list[list[PosInterval]]           # ascending in scan order
    single_interval: tuple[tuple[int, ...], bool, tuple[int, ...], bool] | None
    direction: int
    nfields: int
    local: bool = False                     # positions numbered for this scan alone (_prepare_locally)


def _envelope(oil0: OIL) -> tuple[SortKey, SortKey] | None:
    if not oil0:
        return None
    return oil0[0].start_key, oil0[-1].end_key


def materialize(model: IndexModel, oils: Sequence[OIL]) -> tuple[list[int], list[KeyTuple]]:
    """Documents and keys whose leading key lies in the leading field's bounds, plus one neighbour each side."""
    envelope = _envelope(oils[0])
    if envelope is None:
        return [], []
    lo, hi = envelope
    special = model.special_docs
    columns = model.columns
    ordering = columns[0].ordering
    start = bisect_left(ordering.keys, lo)
    stop = bisect_right(ordering.keys, hi)
    chosen = ordering.docs[start:stop]
    if special:
        chosen = [i for i in chosen if i not in special]
    if NARROW_GROUPS and len(columns) > 1 and oils[0] and all(iv.is_point for iv in oils[0]) and oils[1]:
        chosen = _narrow_point_groups(chosen, ordering.keys[start:stop] if not special else
                                      [columns[0].sort_keys[i] for i in chosen], columns[1].sort_keys, oils)
    if model.spec.sparse:
        value_lists = [c.values for c in columns]
        chosen = [i for i in chosen if any(v[i] is not MISSING for v in value_lists)]
    if model.members is not None:
        members = model.members
        chosen = [i for i in chosen if i in members]
    key_lists = [c.sort_keys for c in columns]
    if len(key_lists) == 1:
        only = key_lists[0]
        keys: list[KeyTuple] = [(only[i],) for i in chosen]
    else:
        keys = list(zip(*[[column[i] for i in chosen] for column in key_lists]))
    docs = list(chosen)
    below: tuple[SortKey, int, KeyTuple] | None = None
    above: tuple[SortKey, int, KeyTuple] | None = None
    for position, step in ((start - 1, -1), (stop, 1)):
        # The nearest plain document the index holds (a sparse or partial index skips some).
        while 0 <= position < len(ordering.docs):
            doc_index = ordering.docs[position]
            doc_keys = model.doc_keys(doc_index) if doc_index not in special else []
            if doc_keys:
                if step < 0:
                    below = (doc_keys[0][0], doc_index, doc_keys[0])
                else:
                    above = (doc_keys[0][0], doc_index, doc_keys[0])
                break
            position += step
    for doc_index in sorted(special):
        for key in model.doc_keys(doc_index):
            key0 = key[0]
            if lo <= key0 <= hi:
                docs.append(doc_index)
                keys.append(key)
            elif key0 < lo:
                if below is None or key0 > below[0]:
                    below = (key0, doc_index, key)
            elif above is None or key0 < above[0]:
                above = (key0, doc_index, key)
    for neighbour in (below, above):
        if neighbour is not None:
            docs.append(neighbour[1])
            keys.append(neighbour[2])
    return docs, keys


def _narrow_point_groups(docs: list[int], keys0: list[SortKey], keys1: list[SortKey | None],
                         oils: Sequence[OIL]) -> list[int]:
    """Drop entries the scan cannot reach when the leading field has only point bounds (§4).

    Within one leading value the cursor only ever lands on entries whose second field lies inside that
    field's bounds, on the first entry past them, or on the group's first entry (after a seek past the
    previous prefix); a leading value between the points is only entered at its first entry. Both scan
    directions are kept (the least and greatest second-field values of each group, and the nearest
    value on each side of the bounds), with every entry sharing such a value, so the result is a
    superset of what the scan reads.
    """
    points = {iv.start_key for iv in oils[0]}
    lo1, hi1 = oils[1][0].start_key, oils[1][-1].end_key
    out: list[int] = []
    n = len(docs)
    i = 0
    while i < n:
        key0 = keys0[i]
        j = i
        while j < n and keys0[j] == key0:
            j += 1
        group = docs[i:j]
        values = [keys1[d] for d in group]
        keep: set[Any] = {min(values), max(values)}
        if key0 in points:
            below = [v for v in values if v < lo1]
            above = [v for v in values if v > hi1]
            if below:
                keep.add(max(below))
            if above:
                keep.add(min(above))
            out.extend(d for d, v in zip(group, values) if lo1 <= v <= hi1 or v in keep)
        else:
            out.extend(d for d, v in zip(group, values) if v in keep)
        i = j
    return out


def prepare(model: IndexModel, oils: Sequence[OIL], direction: int) -> PreparedScan:
    """Materialise and order the reachable entries of one scan (``direction`` 1 forward, -1 backward)."""
    nfields = len(oils)
    if model.wildcard is not None:
        docs, keys = slice_entries(model.wildcard, oils, direction, is_single_interval_value_space(oils))
        return _prepare_locally(model, oils, direction, docs, keys)
    docs, keys = materialize(model, oils)
    directions = [d * direction for d in model.directions]
    columns: list[list[int]] = []
    position_of: list[Any] = []
    for j in range(nfields):
        ordering = model.columns[j].ordering
        rank = ordering.rank
        sign = 2 * directions[j]
        try:
            columns.append([rank[key[j]] * sign for key in keys])
        except KeyError:  # a compound key value the single-path column lacks: number this scan alone
            return _prepare_locally(model, oils, direction, docs, keys)
        position_of.append(lambda key, o=ordering, s=directions[j]: o.position(key) * s)
    return _prepared(columns, docs, oils, position_of, directions, direction)


def _prepare_locally(model: IndexModel, oils: Sequence[OIL], direction: int, docs: list[int],
                     keys: list[KeyTuple]) -> PreparedScan:
    nfields = len(oils)
    directions = [d * direction for d in model.directions]
    columns: list[list[int]] = []
    position_of: list[Any] = []
    for j in range(nfields):
        values: set[SortKey] = {key[j] for key in keys}
        for interval in oils[j]:
            values.add(interval.start_key)
            values.add(interval.end_key)
        sign = directions[j]
        table = {value: 2 * rank * sign for rank, value in enumerate(sorted(values))}
        columns.append([table[key[j]] for key in keys])
        position_of.append(table.__getitem__)
    prepared = _prepared(columns, docs, oils, position_of, directions, direction)
    prepared.local = True
    return prepared


def _prepared(columns: list[list[int]], docs: list[int], oils: Sequence[OIL], position_of: list[Any],
              directions: Sequence[int], direction: int) -> PreparedScan:
    """The sorted index entries (key ranks, then record id) and the intervals as ranks."""
    columns.append([doc * direction for doc in docs])
    entries = list(zip(*columns))
    entries.sort()
    pos_oils = [_positions(oil, position_of[j], directions[j]) for j, oil in enumerate(oils)]
    unbounded = [len(oil) == 1 and oil[0].is_all_values for oil in oils]
    return PreparedScan(entries, pos_oils, _single_interval(pos_oils, unbounded), direction, len(oils))


def _positions(oil: OIL, position_of: Any, sign: int) -> list[PosInterval]:
    out = []
    for iv in oil:
        s, e = position_of(iv.start_key), position_of(iv.end_key)
        if sign > 0:
            out.append((s, iv.start_inclusive, e, iv.end_inclusive))
        else:
            out.append((e, iv.end_inclusive, s, iv.start_inclusive))
    if sign < 0:
        out.reverse()
    return out


def _single_interval(oils: list[list[PosInterval]], unbounded: Sequence[bool]
                     ) -> tuple[tuple[int, ...], bool, tuple[int, ...], bool] | None:
    """``IndexBoundsBuilder::isSingleInterval`` in position space (start, inclusive, end, inclusive).

    ``unbounded[j]`` says field ``j`` is ``[MinKey, MaxKey]`` in value space (the only interval allowed
    after the one non-point field).
    """
    start: list[int] = []
    end: list[int] = []
    j = 0
    n = len(oils)
    while j < n and len(oils[j]) == 1 and oils[j][0][0] == oils[j][0][2] and oils[j][0][1] and oils[j][0][3]:
        start.append(oils[j][0][0])
        end.append(oils[j][0][2])
        j += 1
    if j == n:
        return tuple(start), True, tuple(end), True
    if len(oils[j]) != 1:
        return None
    s, start_inc, e, end_inc = oils[j][0]
    start.append(s)
    end.append(e)
    j += 1
    while j < n:
        if not unbounded[j]:
            return None
        low, high = oils[j][0][0], oils[j][0][2]
        start.append(low if start_inc else high)
        end.append(high if end_inc else low)
        j += 1
    return tuple(start), start_inc, tuple(end), end_inc


def is_single_interval_value_space(oils: Sequence[OIL]) -> bool:
    """The same test on value-space bounds (for deciding COUNT_SCAN eligibility before scanning)."""
    j = 0
    n = len(oils)
    while j < n and len(oils[j]) == 1 and oils[j][0].is_point:
        j += 1
    if j == n:
        return True
    if len(oils[j]) != 1:
        return False
    j += 1
    while j < n:
        if not (len(oils[j]) == 1 and oils[j][0].is_all_values):
            return False
        j += 1
    return True


def start_end_keys(oils: Sequence[OIL], directions: Sequence[int], fields: Sequence[str]
                   ) -> tuple[dict[str, Any], bool, dict[str, Any], bool]:
    """COUNT_SCAN's ``startKey``/``endKey`` with trailing fields widened to MinKey/MaxKey (§8)."""
    start: dict[str, Any] = {}
    end: dict[str, Any] = {}
    start_inc = end_inc = True
    j = 0
    n = len(oils)
    aligned = [_align(oil, d) for oil, d in zip(oils, directions)]
    while j < n and len(aligned[j]) == 1 and aligned[j][0].is_point:
        start[fields[j]] = aligned[j][0].start
        end[fields[j]] = aligned[j][0].end
        j += 1
    if j < n:
        iv = aligned[j][0]
        start[fields[j]] = iv.start
        end[fields[j]] = iv.end
        start_inc, end_inc = iv.start_inclusive, iv.end_inclusive
        j += 1
    while j < n:
        iv = aligned[j][0]
        ascending = isinstance(iv.start, MinKey)
        low, high = (MinKey(), MaxKey()) if ascending else (MaxKey(), MinKey())
        start[fields[j]] = low if start_inc else high
        end[fields[j]] = high if end_inc else low
        j += 1
    return start, start_inc, end, end_inc


def _align(oil: OIL, direction: int) -> OIL:
    if direction > 0:
        return list(oil)
    return [iv.reversed() for iv in reversed(oil)]


def aligned_bounds(oils: Sequence[OIL], directions: Sequence[int]) -> list[OIL]:
    """Bounds as explain prints them: each field's OIL in the order the scan reads it."""
    return [_align(oil, d) for oil, d in zip(oils, directions)]


# --- scanning ---


def single_range_span(scan: PreparedScan) -> tuple[int, int]:
    """Entries examined by a start/end-key scan, ``entries[lo:hi]``: exactly those in range, all valid."""
    assert scan.single_interval is not None
    start, start_inc, end, end_inc = scan.single_interval
    entries = scan.entries
    lo = bisect_left(entries, start if start_inc else start + (BIG,))
    hi = bisect_left(entries, end + (BIG,) if end_inc else end)
    return lo, max(lo, hi)


def checker_events(scan: PreparedScan, distinct_field: int | None = None) -> Iterator[tuple[int, bool | None]]:
    """Entries the cursor returns under the IndexBoundsChecker: VALID (True), seek (False) or DONE (None) (§4).

    An IXSCAN uses it for several ranges (a single range is read with :func:`single_range_span`). A DISTINCT_SCAN
    (``distinct_field`` set) uses it for any bounds and, after each VALID key, seeks past every key that shares the
    key's prefix up to and including that field (``DistinctScan::doWork``)."""
    oils = scan.oils
    nf = scan.nfields
    if any(not oil for oil in oils):
        return
    entries = scan.entries
    n = len(entries)
    cur = [0] * nf

    def starts_from(prefix: tuple[int, ...], first: int) -> tuple[int, ...]:
        target = list(prefix)
        for j in range(first, nf):
            s, s_inc, _, _ = oils[j][cur[j]]
            target.append(s)
            if not s_inc:
                target.append(BIG)
                break
        return tuple(target)

    def leftmost_problem(key: tuple[int, ...]) -> tuple[int, int]:
        for i in range(nf):
            s, s_inc, e, e_inc = oils[i][cur[i]]
            v = key[i]
            if v < s or (v == s and not s_inc):
                return i, -1
            if v > e or (v == e and not e_inc):
                return i, 1
        return -1, 0

    def find_interval(v: int, oil: list[PosInterval]) -> tuple[int, int]:
        lo, hi = 0, len(oil)
        while lo < hi:
            mid = (lo + hi) // 2
            _, _, e, e_inc = oil[mid]
            if v > e or (v == e and not e_inc):
                lo = mid + 1
            else:
                hi = mid
        if lo == len(oil):
            return 1, -1
        s, s_inc, _, _ = oil[lo]
        if v < s or (v == s and not s_inc):
            return -1, lo
        return 0, lo

    def space_left(count: int, key: tuple[int, ...]) -> bool:
        for i in range(count):
            if cur[i] != len(oils[i]) - 1:
                return True
            _, _, e, e_inc = oils[i][cur[i]]
            if not e_inc or key[i] < e:
                return True
        return False

    index = bisect_left(entries, starts_from((), 0))
    while index < n:
        key = entries[index]
        field, where = leftmost_problem(key)
        if where == -1:
            for j in range(field, nf):
                cur[j] = 0
            field, where = leftmost_problem(key)
        if where == 0:
            yield index, True
            index = index + 1 if distinct_field is None else _after_valid(entries, key, index, distinct_field)
            continue
        if where == -1:
            target = starts_from(key[:field], field)
        else:
            target = None
            while field < nf:
                loc, which = find_interval(key[field], oils[field])
                if loc == 0:
                    cur[field] = which
                    field += 1
                    continue
                if loc == -1:
                    cur[field] = which
                    for j in range(field + 1, nf):
                        cur[j] = 0
                    target = starts_from(key[:field], field)
                    break
                if not space_left(field, key):
                    yield index, None
                    return
                target = key[:field] + (BIG,)
                for j in range(field, nf):
                    cur[j] = 0
                break
            if target is None:
                yield index, True
                index = index + 1 if distinct_field is None else _after_valid(entries, key, index, distinct_field)
                continue
        yield index, False
        index = bisect_left(entries, target, index + 1)



def _after_valid(entries: list[tuple[int, ...]], key: tuple[int, ...], index: int, distinct_field: int) -> int:
    """A DISTINCT_SCAN seeks past every key sharing this key's prefix up to the distinct field."""
    return bisect_left(entries, key[: distinct_field + 1] + (BIG,), index + 1)


def key_range_span(scan: PreparedScan, model: IndexModel, start: Sequence[Any], end: Sequence[Any]) -> tuple[int, int]:
    """Entries of a forward whole-index scan with ``start <= key < end`` in index order: ``entries[lo:hi]``."""
    def positions(values: Sequence[Any]) -> tuple[int, ...]:
        out = []
        for column, direction, value in zip(model.columns, model.directions, values):
            out.append(column.ordering.position(sort_key(value)) * direction)
        return tuple(out)

    if scan.local:
        raise Unsupported("min/max over index keys that only exist in array documents are not modelled")
    entries = scan.entries
    lo = bisect_left(entries, positions(start))
    hi = bisect_left(entries, positions(end))
    return lo, max(lo, hi)
