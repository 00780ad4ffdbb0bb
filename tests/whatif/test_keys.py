"""Index key generation (planner-semantics.md §2): multikey expansion, nesting, empty arrays, missing."""

from __future__ import annotations

import pytest

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif.bsonorder import UNDEFINED, sort_key
from idxadvisor.whatif.keys import ParallelArrays, build_column, build_index, generate_keys


def _values(doc: dict, paths: list[str], sparse: bool = False) -> set[tuple]:
    keys, _ = generate_keys(doc, paths, sparse)
    return set(keys.values()) if keys else set()


def test_missing_field_is_null_and_duplicates_collapse() -> None:
    assert _values({"b": 1}, ["a"]) == {(None,)}
    assert _values({"a": [1, 1, 2]}, ["a"]) == {(1,), (2,)}


def test_empty_array_is_undefined_and_single_element_is_multikey() -> None:
    keys, multikey = generate_keys({"a": []}, ["a"])
    assert set(keys.values()) == {(UNDEFINED,)} and multikey == [{"a"}]
    keys, multikey = generate_keys({"a": [2]}, ["a"])
    assert set(keys.values()) == {(2,)} and multikey == [{"a"}]


def test_nested_arrays_are_keyed_whole() -> None:
    keys, _ = generate_keys({"a": [[1, 2], 3]}, ["a"])
    assert sorted(map(repr, keys.values())) == ["(3,)", "([1, 2],)"]


def test_arrays_along_one_path_multiply() -> None:
    """explain_multikey.js: 4 keys, multiKeyPaths {a: [], b.c: [b, b.c], b.d: [b]}."""
    doc = {"a": 1, "b": [{"c": ["w", "x"], "d": 3}, {"c": ["y", "z"], "d": 4}]}
    keys, multikey = generate_keys(doc, ["a", "b.c", "b.d"])
    assert set(keys.values()) == {(1, "w", 3), (1, "x", 3), (1, "y", 4), (1, "z", 4)}
    assert multikey == [set(), {"b", "b.c"}, {"b"}]


def test_path_through_scalar_elements_is_null() -> None:
    assert _values({"a": [1, {"b": 2}]}, ["a.b"]) == {(None,), (2,)}
    assert _values({"a": 5}, ["a.b"]) == {(None,)}


def test_parallel_arrays_are_an_error() -> None:
    with pytest.raises(ParallelArrays) as caught:
        generate_keys({"scores_spring": [8, 6], "scores_fall": [5, 9]}, ["scores_spring", "scores_fall"])
    assert caught.value.as_error() == {"code": 171, "codeName": "CannotIndexParallelArrays",
                                       "message": "cannot index parallel arrays [scores_fall] [scores_spring]"}


def test_sparse_indexes_skip_documents_without_any_field() -> None:
    assert _values({"c": 1}, ["a"], sparse=True) == set()
    assert _values({"b": 1}, ["a", "b"], sparse=True) == {(None, 1)}
    assert _values({"a": None}, ["a"], sparse=True) == {(None,)}


def test_columns_share_plain_values_and_key_arrays() -> None:
    docs = [{"a": 1, "t": ["x", "y"]}, {"a": 2}, {"t": []}, {"a": {"b": 3}}]
    column = build_column(docs, "t")
    assert column.multikey_paths == {"t"}
    assert sorted(column.complex_keys) == [0, 2]
    assert [k for k, _ in column.value_keys(2)] == [sort_key(UNDEFINED)]
    dotted = build_column(docs, "a.b")
    assert dotted.sort_keys == [sort_key(None)] * 3 + [sort_key(3)]


def test_index_model_keys_and_parallel_array_build_error() -> None:
    docs = [{"a": 1, "t": ["x", "y"]}, {"a": [1, 2], "t": ["z"]}]
    spec = IndexSpec.from_key({"a": 1, "t": 1})
    model = build_index(spec, [build_column(docs, "a"), build_column(docs, "t")], docs)
    assert model.build_error is not None and model.build_error["code"] == 171
    ok = IndexSpec.from_key({"a": 1, "t": -1})
    model = build_index(ok, [build_column(docs[:1], "a"), build_column(docs[:1], "t")], docs[:1])
    assert model.build_error is None
    assert sorted(model.doc_keys(0)) == sorted([(sort_key(1), sort_key("x")), (sort_key(1), sort_key("y"))])
    assert model.is_multikey and model.explain_multikey_paths() == {"a": [], "t": ["t"]}
