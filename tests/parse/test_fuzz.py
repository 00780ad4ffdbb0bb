"""No input makes a parser raise: random bytes, cut lines and mutated real lines are counted, never fatal.

Seeds are the demo workload's lines (fixtures/demo) and, when ../shared is present, real lines from the corpus.
"""

from __future__ import annotations

import gzip
import random
from pathlib import Path

from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from idxadvisor.models.events import Event
from idxadvisor.parse.block import BlockOptions, count_lines
from idxadvisor.parse.documents import parse_documents
from idxadvisor.parse.fields import MAX_COUNTER
from idxadvisor.parse.profile import NotAProfileDocument, event_from_profile
from idxadvisor.shapes.digest import Digest
from idxadvisor.shapes.shape import shape_of
from tests.conftest import FIXTURES_DIR, SHARED_DIR
from tests.helpers import CollectingSink, digest_block

MODES = ("json-log", "text-log", "profile")
FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _seed_lines() -> tuple[list[bytes], list[bytes]]:
    json_lines = [line for line in (FIXTURES_DIR / "demo" / "shop.log").read_bytes().splitlines()
                  if b'"id":51803' in line][:200]
    text_lines: list[bytes] = []
    corpus = SHARED_DIR / "corpus"
    if corpus.is_dir():
        atlas = next(corpus.glob("mongo-log-parser/*00-01*.gz"))
        json_lines += [line for line in gzip.decompress(atlas.read_bytes()).splitlines()
                       if b'"id":51803' in line][:300]
        for path in [corpus / "keyhole/mongod.log", *sorted(corpus.glob("mtools/*.log"))]:
            text_lines += [line for line in path.read_bytes().splitlines() if line.endswith(b"ms")][:60]
    else:
        text_lines.append(b'2020-06-23T10:21:26.019+0000 I  COMMAND  [conn7] command shop.orders command: find '
                          b'{ find: "orders", filter: { status: "A", a: { $in: [ 1, 2 ] } } } planSummary: '
                          b'COLLSCAN keysExamined:0 docsExamined:10 nreturned:1 12ms')
    return json_lines, text_lines


JSON_LINES, TEXT_LINES = _seed_lines()
REAL_LINES = JSON_LINES + TEXT_LINES


def check(data: bytes, mode: str) -> None:
    stats, digest = digest_block(data, mode)
    assert 0 <= stats.entries <= stats.lines
    assert stats.problems <= stats.lines + stats.entries
    assert digest.operations + stats.absorbed <= stats.entries + stats.lines
    for shape in digest.shapes.values():  # counters stay within what the server can count, so ratios never overflow
        assert 0 <= max(shape.keys_examined, shape.docs_examined, shape.nreturned) <= MAX_COUNTER * shape.count


@FAST
@given(st.binary(max_size=4000), st.sampled_from(MODES))
@example(b'{"t":{"$date":"x"},"id":51803,"attr":{"command":{"find":{"$in":1}}}}\n', "json-log")
@example(b'{"t":{"$date":"2025-01-01T00:00:00Z"},"id":51803,"attr":{"durationMillis":1e999}}', "json-log")
@example(b"Mon Feb 30 10:00:00 [conn1] query a.b query: { } 5ms\n", "text-log")
# Past failures (the review of 2026-11): each raised before it was fixed.
@example(b'{"t":{"$date":"2024-01-01T00:00:00.000+00:00"},"id":51803,"ctx":"c1","attr":{"command":{"find":"b"}}}\n'
         b'{"t":{"$date":"2024-01-01T00:00:01.000"},"id":51803,"ctx":"c1","attr":{"command":{"find":"b"}}}\n',
         "json-log")  # naive.log: an offset-less date beside an aware one
@example(b'{"t":{"$date":"2024-01-01T00:00:00Z"},"id":51803,"attr":{"durationMillis":"inf"}}\n', "json-log")
@example(b'{"t":{"$date":"0001-01-01T00:00:00.000+01:00"},"id":51803,"attr":{"command":{"find":"b"}}}\n',
         "json-log")  # y2.log: a year-0 UTC timestamp in the timeline
@example(b'{"t":{"$date":"0001-01-01T00:00:00.000Z"},"id":51803,"ctx":"c","attr":{"type":"update","ns":"a.b",'
         b'"command":{"q":{}}}}\n{"t":{"$date":"0001-01-01T00:00:00.100Z"},"id":51803,"ctx":"c","attr":{"type":'
         b'"command","ns":"a.$cmd","command":{"update":"b"},"durationMillis":1e300}}\n', "json-log")  # y1, bigdur
@example(b"2020-01-01T00:00:00.000+0000 I COMMAND  [conn1] command a.b command: find { find: \"b\" } "
         + b"9" * 5000 + b"ms\n", "text-log")  # big2.log
@example(b"2020-01-01T00:00:00.000+0000 I COMMAND  [conn1] command a.b command: find { find: \"b\" } "
         + b"9" * 400 + b"ms\n", "text-log")  # big.log
@example(b"2020-01-01T00:00:00.000+0000 I COMMAND  [conn1] command a.b command: find { find: \"b\" } keysExamined:"
         + b"9" * 400 + b" nreturned:1 5ms\n", "text-log")  # a 400-digit counter (an OverflowError in a ratio)
@example(b'{"t":{"$date":"2024-01-01T00:00:00Z"},"id":51803,"attr":{"docsExamined":-4,"keysExamined":1e30}}\n',
         "json-log")
@example(b'{"t":{"$date":"2024-01-01T00:00:00Z"},"id":51803,"attr":{"command":{"find":"b","filter":{"a":'
         b'{"$elemMatch":{"$elemMatch":{"$gt":1}}}}}}}\n', "json-log")  # em.log
@example(b'{"t":{"$date":"2024-01-01T00:00:00Z"},"id":51803,"attr":{"command":{"find":"b","filter":'
         + b'{"$and":[' * 500 + b"{}" + b"]}" * 500 + b"}}}\n", "json-log")  # deep2.log
@example(b'{"op":"query","ns":"a.b","millis":{"$numberDouble":"Infinity"},"ts":{"$date":"0001-01-01T00:00:00Z"}}\n',
         "profile")
def test_random_bytes(data: bytes, mode: str) -> None:
    check(data, mode)


@FAST
@given(st.sampled_from(REAL_LINES), st.data())
def test_real_lines_cut_anywhere(line: bytes, data: st.DataObject) -> None:
    cut = data.draw(st.integers(0, len(line)))
    mode = "json-log" if line.startswith(b"{") else "text-log"
    check(line[:cut] + b"\n" + line + b"\n" + line[cut:], mode)


@FAST
@given(st.sampled_from(REAL_LINES), st.lists(st.tuples(st.integers(0, 10**6), st.integers(0, 255)), max_size=6))
def test_real_lines_mutated(line: bytes, mutations: list[tuple[int, int]]) -> None:
    mutated = bytearray(line)
    for position, value in mutations:
        if mutated:
            mutated[position % len(mutated)] = value
    mode = "json-log" if line.startswith(b"{") else "text-log"
    check(bytes(mutated) + b"\n", mode)


def test_real_lines_with_every_byte_replaced_in_turn() -> None:
    """Deterministic sweep: each position of some real lines replaced by characters that break structure."""
    rng = random.Random(5)
    for line in rng.sample(REAL_LINES, min(6, len(REAL_LINES))):
        mode = "json-log" if line.startswith(b"{") else "text-log"
        for position in range(0, len(line), max(1, len(line) // 150)):
            for byte in b'{}[]":, \x00':
                check(line[:position] + bytes([byte]) + line[position + 1:] + b"\n", mode)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(
        st.sampled_from(["$gt", "$in", "$or", "$and", "$elemMatch", "$regex", "$oid", "$date", "a", "b.c", "q",
                         "u", "filter", "sort", "pipeline", "$match", "$group", "query", "find", "_id"]),
        children, max_size=4),
    max_leaves=20,
)


@FAST
@given(st.dictionaries(st.sampled_from(["op", "ns", "command", "millis", "ts", "keysExamined", "query", "updateobj",
                                        "originatingCommand", "planSummary", "nreturned", "responseLength"]),
                       JSON_VALUES | st.sampled_from(["query", "update", "remove", "getmore", "command", "a.b"])))
@example({"op": []})
def test_random_profile_documents_and_their_shapes(document: dict) -> None:
    try:
        event = event_from_profile(document)
    except NotAProfileDocument:
        return
    shape_of(event)
    Digest().add(event)


@FAST
@given(st.sampled_from(["find", "aggregate", "count", "distinct", "update", "delete", "findAndModify", "getMore",
                        "insert"]), JSON_VALUES, JSON_VALUES)
def test_random_commands_always_have_a_shape(op: str, command: object, origin: object) -> None:
    event = Event("db.c", op, command=command if isinstance(command, dict) else {"x": command},
                  originating_command=origin if isinstance(origin, dict) else None)
    shape, _ = shape_of(event)
    assert shape.fingerprint and shape.text.startswith(shape.op)
    digest = Digest()
    digest.add(event)
    assert digest.operations == 1


WHOLE_DOCUMENT_SEEDS = [
    b'[{"op":"query","ns":"a.b","command":{"find":"b","filter":{"a":1}},"millis":5},'
    b' {"op":"query","ns":"a.b","command":{"find":"b"},"millis":7}]',
    b'{"queryPlanner":{"namespace":"a.b","parsedQuery":{"$and":[{"x":{"$gte":1}},{"x":{"$lt":9}}]},'
    b'"winningPlan":{"stage":"IXSCAN","keyPattern":{"x":1}}},"executionStats":{"executionTimeMillis":1}}',
    b'{ op: "query", ns: "a.b", command: { find: "b" }, ts: ISODate("2024-01-01T00:00:00Z"), millis: 3 }',
]


@FAST
@given(st.binary(max_size=3000) | st.builds(lambda seed, cut: seed[:cut], st.sampled_from(WHOLE_DOCUMENT_SEEDS),
                                            st.integers(0, 400)))
@example(WHOLE_DOCUMENT_SEEDS[0][:120])  # cutarr.json: a cut array kept none of its documents
@example(b'{"queryPlanner":{"namespace":"a.b","winningPlan":{"stage":"IXSCAN","keyPattern":{"x":"nan"}}}}')  # ex1
@example(b"\xef\xbb\xbf" + WHOLE_DOCUMENT_SEEDS[0])
def test_random_whole_documents(data: bytes) -> None:
    """Every document becomes an entry or a problem, every entry an event; anything that is not blank is at least
    one of them; and the counts describe the input."""
    sink = CollectingSink()
    stats, found_format = parse_documents(data, BlockOptions(2026), sink)
    assert stats.lines == count_lines(data)
    assert stats.entries == len(sink.events) == stats.operations
    assert all(type(event.ns) is str and type(event.op) is str for event in sink.events)
    if data.decode("utf-8", "replace").lstrip("\ufeff").strip():
        assert stats.entries + stats.problems >= 1, data
    else:
        assert (stats.entries, stats.problems) == (0, 0)
    assert (found_format == "unknown") == (stats.entries == 0)
    for event in sink.events:
        shape_of(event)
        Digest().add(event)


def test_a_cut_array_keeps_every_complete_document() -> None:
    whole = WHOLE_DOCUMENT_SEEDS[0]
    for cut in range(1, len(whole) + 1):
        sink = CollectingSink()
        stats, _ = parse_documents(whole[:cut], BlockOptions(2026), sink)
        complete = whole[:cut].count(b'"millis":')  # a document whose last field is in is complete (but its "}")
        assert len(sink.events) in (max(0, complete - 1), complete), cut
        assert stats.problems == (0 if cut == len(whole) else 1), cut


def test_the_fuzz_seeds_are_real(corpus_dir: Path) -> None:
    assert len(JSON_LINES) > 300 and len(TEXT_LINES) > 300
