"""What a shape keeps of its literal filter values: lengths and counts, never the values."""

from __future__ import annotations

import json

from idxadvisor.shapes.literals import DISTINCT_CAP, LiteralStats, checksums, decode, encode, filter_document


def observed(*filters: dict, op: str = "find") -> LiteralStats:
    stats = LiteralStats()
    for literal in filters:
        stats.observe(op, {"find": "c", "filter": literal} if op == "find" else {"count": "c", "query": literal})
    return stats


def test_string_lengths_and_distinct_equality_values_are_counted() -> None:
    stats = observed({"plot": "x" * 300, "year": 1999}, {"plot": "y" * 100, "year": 1999}, {"year": {"$gt": 2000}})
    plot, year = stats.fields["plot"], stats.fields["year"]
    assert (plot.strings, plot.average_string_bytes, plot.longest, plot.distinct_values) == (2, 200.0, 300, 2)
    assert (year.values, year.equalities, year.distinct_values) == (3, 2, 1)  # a range bound is no equality
    assert stats.executions == 3


def test_in_lists_and_eq_count_as_equalities_and_many_values_read_as_many() -> None:
    stats = observed(*({"sku": {"$in": [f"s{number}", f"t{number}"]}} for number in range(DISTINCT_CAP)))
    assert stats.fields["sku"].distinct_values is None and stats.fields["sku"].many
    assert observed({"a": {"$eq": "v"}}, {"a": "v"}).fields["a"].distinct_values == 1


def test_the_filter_of_each_command_is_found() -> None:
    assert filter_document("count", {"count": "c", "query": {"a": 1}}) == {"a": 1}
    assert filter_document("update", {"q": {"a": 1}, "u": {}}) == {"a": 1}
    assert filter_document("aggregate", {"pipeline": [{"$match": {"a": 1}}, {"$limit": 1}]}) == {"a": 1}
    assert filter_document("aggregate", {"pipeline": [{"$sort": {"a": 1}}]}) is None
    assert observed({"$and": [{"a": "xy"}, {"b": "z"}]}).fields.keys() == {"a", "b"}


def test_merging_unites_the_distinct_values() -> None:
    first, second = observed({"a": "x"}), observed({"a": "y"}, {"a": "x"})
    first.merge(second)
    assert (first.executions, first.fields["a"].distinct_values, first.fields["a"].equalities) == (3, 2, 3)


def test_a_workload_file_keeps_counts_and_lengths_and_no_value() -> None:
    stats = observed({"email": "secret-person@example.com"}, {"email": "other-person@example.com"})
    document = encode(stats)
    text = json.dumps(document)
    assert "secret" not in text and "example" not in text
    assert all(str(checksum) not in text for checksum in checksums(stats.fields["email"].distinct))  # nor checksums
    back = decode(document)
    email = back.fields["email"]
    assert email.distinct_values == 2 and email.longest == len("secret-person@example.com")


def test_distinct_checksums_are_kept_packed_sorted_and_merge_the_same_in_any_order() -> None:
    values = [{"a": f"v{n}"} for n in range(5)] + [{"a": "v1"}, {"a": 3}]
    whole = observed(*values)
    packed = whole.fields["a"].distinct
    assert type(packed) is bytes and len(packed) == 6 * 4  # six distinct values, four bytes each, no set
    assert sorted(checksums(packed)) == [int.from_bytes(packed[at:at + 4], "big") for at in range(0, len(packed), 4)]
    first, second = observed(*values[4:]), observed(*values[:4])
    first.merge(second)
    assert first.fields["a"].distinct == packed and first.fields["a"].distinct_values == 6
    crowded = observed(*({"a": n} for n in range(DISTINCT_CAP + 1)))
    assert crowded.fields["a"].distinct == b"" and crowded.fields["a"].distinct_values is None
