"""``run_whatif`` and ``render_text``: option parsing, the result envelope, the text rendering."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from idxadvisor.errors import UsageError
from idxadvisor.indexes.model import IndexSpec
from idxadvisor.whatif import Estimator, WhatIfQuery, render_text, run_whatif


@pytest.fixture()
def sample(tmp_path: Path) -> Path:
    path = tmp_path / "orders.json"
    rows = [{"_id": i, "status": ["new", "paid", "shipped"][i % 3], "amount": i * 10,
             "at": {"$date": f"2024-01-{i % 28 + 1:02d}T00:00:00Z"}} for i in range(60)]
    path.write_text("\n".join(json.dumps(r) for r in rows))
    return path


def test_run_whatif_explains_and_describes_the_inputs(sample: Path) -> None:
    result = run_whatif(data=sample, query='{"filter": {"status": "paid", "amount": {"$gte": 100}}, '
                                           '"sort": {"amount": -1}, "limit": 5}',
                        indexes=['{"status": 1, "amount": -1}', '{"key": {"at": 1}, "sparse": true}'], hint=None)
    assert result["planSummary"] == "IXSCAN { status: 1, amount: -1 }"
    assert (result["nReturned"], result["totalKeysExamined"], result["totalDocsExamined"]) == (5, 5, 5)
    assert result["blockingSort"] is False
    assert result["indexBounds"] == {"status": ['["paid", "paid"]'], "amount": ["[inf.0, 100]"]}
    assert result["sample"] == {"path": str(sample), "documents": 60, "documentsSeen": 60, "sampled": False,
                                "problems": 0}
    assert result["serverVersion"] == "8.0"
    assert result["query"]["limit"] == 5
    text = render_text(result)
    assert "IXSCAN { status: 1, amount: -1 }" in text and "keys examined: 5" in text


def test_the_collector_is_paused_while_the_sample_is_loaded_and_explained(
        sample: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """100,000 documents build a million objects: with the collector on, a third of the run went to collections."""
    seen: list[bool] = []
    explain = Estimator.explain

    def recording(self: Estimator, *args: object, **kwargs: object) -> object:
        seen.append(gc.isenabled())
        return explain(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Estimator, "explain", recording)
    assert gc.isenabled()
    run_whatif(data=sample, query='{"filter": {"status": "paid"}}', indexes=[], hint=None)
    assert seen == [False]
    assert gc.isenabled()  # and restored afterwards


def test_extended_json_in_the_query_and_hint(sample: Path) -> None:
    result = run_whatif(data=sample, query='{"filter": {"at": {"$gte": {"$date": "2024-01-20T00:00:00Z"}}}}',
                        indexes=['{"at": 1}', '{"status": 1}'], hint='{"at": 1}', server_version="7.0")
    assert result["stages"] == ["FETCH", "IXSCAN"]
    assert result["indexBounds"]["at"] == ["[new Date(1705708800000), new Date(9223372036854775807)]"]
    assert result["serverVersion"] == "7.0"


def test_a_release_candidate_version_models_its_release(sample: Path) -> None:
    result = run_whatif(data=sample, query='{"filter": {}}', indexes=[], hint=None, server_version="8.0.0-rc1")
    assert result["serverVersion"] == "8.0"


@pytest.mark.parametrize(("kwargs", "option"), [
    ({"query": "{not json"}, "--query"),
    ({"query": "[]"}, "--query"),
    ({"query": '{"command": "aggregate"}'}, "--query"),
    ({"query": '{"command": "distinct", "filter": {}}'}, "--query"),
    ({"query": '{"filter": {}, "limit": "five"}'}, "--query"),
    ({"query": '{"filter": {}, "limit": Infinity}'}, "--query"),
    ({"query": '{"filter": {}, "skip": NaN}'}, "--query"),
    ({"query": '{"filter": {"a": {"$numberDecimal": "abc"}}}'}, "--query"),  # bson's wrappers raise more than
    ({"query": '{"filter": {"a": {"$oid": "zz"}}}'}, "--query"),  # ValueError: each was an internal error
    ({"query": '{"filter": {"a": {"$date": {"$numberLong": "-99999999999999"}}}}'}, "--query"),
    ({"query": '{"filter": {}, "pipeline": [1, 2]}'}, "--query"),
    ({"query": '{"filter": {"a": {"$binary": {"base64": ""}}}}'}, "a wrapper without its 'subType'"),
    ({"indexes": ['{"key": {"a": 1}, "wildcardProjection": [1]}']}, "--index"),
    ({"indexes": ['{"key": {"a": 1}, "partialFilterExpression": 5}']}, "--index"),
    ({"indexes": ["{bad"]}, "--index"),
    ({"indexes": ['{"a": 0}']}, "--index"),
    ({"hint": "{oops"}, "--hint"),
    ({"hint": '{"zzz": 1}'}, "hint"),
    ({"server_version": "eight"}, "--server-version"),
    ({"server_version": "8.0.0.0"}, "--server-version"),
])
def test_bad_options_are_usage_errors_naming_the_option(sample: Path, kwargs: dict, option: str) -> None:
    arguments = {"data": sample, "query": '{"filter": {}}', "indexes": [], "hint": None}
    arguments.update(kwargs)
    with pytest.raises(UsageError) as caught:
        run_whatif(**arguments)
    assert option in str(caught.value)
    assert "\n" not in str(caught.value)


def test_unsupported_and_error_results_render_one_line() -> None:
    assert "not estimated: $where" in render_text({"unsupported": "$where (server-side JavaScript)"})
    error = {"error": {"code": 171, "codeName": "CannotIndexParallelArrays", "message": "cannot index parallel arrays [b] [a]"},
             "index": "a_1_b_1"}
    assert "cannot be built" in render_text(error)


def test_candidates_are_reported_with_the_winner() -> None:
    docs = [{"a": i % 50, "b": i % 7} for i in range(700)]
    estimator = Estimator(docs)
    result = estimator.explain(WhatIfQuery(filter={"a": 3, "b": 3}),
                               [IndexSpec.from_key({"a": 1}), IndexSpec.from_key({"b": 1})])
    winners = [c for c in result["candidates"] if c["won"]]
    assert len(winners) == 1 and winners[0]["plan"] == "IXSCAN { a: 1 }" == result["planSummary"]
    assert "won:  IXSCAN { a: 1 }" in render_text(result)


def test_query_from_json_validates_shape() -> None:
    query = WhatIfQuery.from_json({"command": "count", "filter": {"a": {"$date": "2024-01-01T00:00:00Z"}}, "skip": 2})
    assert query.command == "count" and query.skip == 2
    with pytest.raises(UsageError):
        WhatIfQuery.from_json({"filter": [], "command": "find"})
    with pytest.raises(UsageError):
        WhatIfQuery.from_json({"skip": -1})
    with pytest.raises(UsageError):
        WhatIfQuery.from_json({"filter": {}, "hint": 5})
    grown = WhatIfQuery.from_json({"filter": {}, "hint": "a_1", "collation": {"locale": "en", "strength": 2},
                                   "min": {"a": 1}, "max": {"a": 5}})
    assert (grown.hint, grown.collation, grown.min, grown.max) == ("a_1", {"locale": "en", "strength": 2},
                                                                    {"a": 1}, {"a": 5})


def test_fields_and_commands_outside_the_model_are_answers_not_errors() -> None:
    query = WhatIfQuery.from_json({"filter": {}, "batchSize": 2, "command": "update"})
    assert query.unknown == ("batchSize", "command 'update'")
    result = Estimator([{"a": 1}]).explain(query)
    assert "batchSize" in result["unsupported"] and "command 'update'" in result["unsupported"]


def test_a_hint_works_across_calls_with_equal_but_distinct_index_specs() -> None:
    """Regression: cached index models kept the first call's spec, so a later hint matched no model."""
    from idxadvisor.indexes.model import IndexSpec
    from idxadvisor.whatif import Estimator, WhatIfQuery

    estimator = Estimator([{"_id": n, "a": n % 5, "b": n} for n in range(50)])
    query = WhatIfQuery(filter={"a": 2}, sort={"b": -1})
    for _ in range(2):
        spec = IndexSpec.from_key({"a": 1, "b": -1})
        result = estimator.explain(query, [spec], spec)
        assert (result["planSummary"], result["totalKeysExamined"], result["nReturned"]) == ("IXSCAN { a: 1, b: -1 }", 10, 10)


def test_unreadable_sample_documents_are_counted_and_shown(tmp_path: Path) -> None:
    path = tmp_path / "orders.json"
    path.write_text('{"_id": 1, "a": 1}\n{"_id": 2, "a": {"$date": 1e400}}\nnot json\n{"_id": 3, "a": 2}\n'
                    '{"_id": 4, "a": {"$numberDecimal": "abc"}}\n')  # decimal.InvalidOperation: an internal error
    result = run_whatif(data=path, query='{"filter": {"a": 1}}', indexes=[], hint=None)
    assert (result["sample"]["documents"], result["sample"]["problems"]) == (2, 3)
    assert render_text(result).splitlines()[0].endswith(", 3 unreadable skipped")


def test_a_sort_stage_that_is_not_a_document_is_not_estimated(sample: Path) -> None:
    result = run_whatif(data=sample, query='{"command": "aggregate", "pipeline": [{"$sort": 1}]}', indexes=[],
                        hint=None)
    assert result["unsupported"] == "$sort needs a document"


def test_names_in_the_text_output_are_escaped_for_a_terminal(tmp_path: Path) -> None:
    """The query's field names, an index's name and the sample's path are printed: a newline in one must not start
    a forged line, nor an escape sequence or a bidi control reach the terminal."""
    forged = "st\nFORGED: no findings\x1b[2J\u202e"
    sample = tmp_path / "orders\n\u202ejson.json"
    sample.write_text("\n".join(json.dumps({"_id": i, forged: i % 3}) for i in range(30)))
    result = run_whatif(data=sample, query=json.dumps({"filter": {forged: 1}}),
                        indexes=[json.dumps({"key": {forged: 1}, "name": "by\nFORGED: name\x1b]0;x\x07"})], hint=None)
    text = render_text(result)
    assert not [line for line in text.splitlines() if line.startswith("FORGED")]
    assert [character for character in "\x1b\u202e\x07" if character in text] == []
    assert "st\\nFORGED: no findings\\x1b[2J\\u202e" in text and "orders\\n\\u202ejson.json" in text
    refused = render_text({"unsupported": f"the field {forged}"})
    assert refused.splitlines()[-1] == "not estimated: the field st\\nFORGED: no findings\\x1b[2J\\u202e"
