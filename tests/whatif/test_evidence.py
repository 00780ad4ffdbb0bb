"""Evidence in analyze: today's plan and the candidate estimated over the sample, scaled to the collection."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.api import analyze
from idxadvisor.cli import run
from idxadvisor.config import Settings
from idxadvisor.testing import operation_lines

CUSTOMERS = [{"_id": n, "lastName": ["Silva", "Novak", "Berg", "Rossi"][n % 4], "city": "Porto",
              "email": f"u{n}@x.org"} for n in range(200)]


def write(tmp_path: Path, operations: list[dict], documents: list[dict], ns: str = "shop.customers") -> list[str]:
    log = tmp_path / "app.log"
    log.write_text("\n".join(operation_lines(operations)) + "\n")
    data = tmp_path / f"{ns}.json"
    data.write_text("\n".join(json.dumps(document) for document in documents) + "\n")
    return [str(log), str(data)]


def collscan(filter_: dict, docs: int = 20000, returned: int = 5, **extra) -> dict:
    return {"ns": "shop.customers", "command": {"find": "customers", "filter": filter_, **extra}, "plan": "COLLSCAN",
            "keysExamined": 0, "docsExamined": docs, "nreturned": returned, "repeat": 10}


def test_evidence_is_calibrated_to_the_log(tmp_path: Path) -> None:
    log, data = write(tmp_path, [collscan({"lastName": "Silva", "city": "Porto"})], CUSTOMERS)
    report = analyze([log], Settings(data=[data]))
    (finding,) = [f for f in report.findings if f.rule == "IX001"]
    evidence = finding.evidence
    assert evidence is not None and evidence.evaluator == "estimator"
    assert evidence.before["planSummary"] == "COLLSCAN" and evidence.before["totalDocsExamined"] == 20000
    assert evidence.before["logged"] == {"totalKeysExamined": 0.0, "totalDocsExamined": 20000.0, "nReturned": 5.0}
    assert evidence.before["sample"] == {"nReturned": 50, "totalKeysExamined": 0, "totalDocsExamined": 200}
    # 50 of 200 sampled customers match; the collection is 100x the sample
    assert evidence.after["planSummary"] == "IXSCAN { lastName: 1, city: 1 }"  # the selective field first
    assert (evidence.after["totalKeysExamined"], evidence.after["totalDocsExamined"]) == (5000, 5000)
    assert "scaled x100.0 so that today's plan examines what the log shows" in " ".join(evidence.notes)
    assert evidence.query is None  # literal values stay out without --show-values
    assert analyze([log], Settings(data=[data], show_values=True)).findings[0].evidence.query == {
        "command": "find", "filter": {"lastName": "Silva", "city": "Porto"}}


def test_a_candidate_below_the_saving_threshold_is_dropped_with_its_reason(tmp_path: Path) -> None:
    everyone = [{**document, "lastName": "Silva", "city": "Porto"} for document in CUSTOMERS]
    log, data = write(tmp_path, [collscan({"lastName": "Silva", "city": "Porto"})], everyone)
    report = analyze([log], Settings(data=[data]))
    assert [f.rule for f in report.findings] == []
    (skip,) = [s for s in report.skipped if s.shape.startswith("find shop.customers")]
    # the index selection weighs it first: by the estimate it saves no server time, under the --min-saving floor
    assert skip.reason == ("IX001: index selection, key: saves 0.00 s of server time per hour on its own: under "
                           "--min-saving 0.5 plus its writes (x10 --write-cost-factor)")
    assert analyze([log], Settings(data=[data], min_savings_pct=0)).findings == []  # -100% is below 0% too


def test_redacted_values_are_drawn_from_the_sample(tmp_path: Path) -> None:
    log, data = write(tmp_path, [collscan({"lastName": "###", "city": {"$in": "###"}})], CUSTOMERS)
    finding = analyze([log], Settings(data=[data], show_values=True)).findings[0]
    query = finding.evidence.query
    assert query["filter"]["lastName"] in {"Silva", "Novak", "Berg", "Rossi"}
    assert query["filter"]["city"] == {"$in": ["Porto"]}
    assert finding.evidence.after["nReturned"] > 0


def test_the_representative_query_carries_the_logged_collation_and_hint(tmp_path: Path) -> None:
    hinted = collscan({"lastName": "Silva", "city": "Porto"}, hint={"$natural": 1})
    log, data = write(tmp_path, [hinted], CUSTOMERS)
    (finding,) = [f for f in analyze([log], Settings(data=[data], show_values=True)).findings if f.rule == "IX001"]
    assert finding.evidence.query["hint"] == {"$natural": 1}
    assert finding.evidence.before["planSummary"] == "COLLSCAN"

    # Under strength 2 "silva" matches "Silva" and "SILVA"; the proposed index has the simple collation, so it cannot
    # serve the collated equality: the estimate sees the whole-index scan, and the suggestion is dropped.
    people = [{**document, "lastName": document["lastName"].upper() if document["_id"] % 2 else document["lastName"]}
              for document in CUSTOMERS]
    collated = collscan({"lastName": "silva", "city": "Porto"}, collation={"locale": "en", "strength": 2})
    log, data = write(tmp_path, [collated], people)
    report = analyze([log], Settings(data=[data]))
    assert [f.rule for f in report.findings] == []
    (skip,) = [s for s in report.skipped if s.shape.startswith("find shop.customers")]
    assert "saves 0.00 s of server time per hour on its own: under --min-saving" in skip.reason


def test_a_limit_is_applied_after_scaling(tmp_path: Path) -> None:
    operation = {"ns": "shop.customers", "command": {"find": "customers", "filter": {"lastName": "Silva"},
                                                     "sort": {"email": 1}, "limit": 10},
                 "plan": "COLLSCAN", "keysExamined": 0, "docsExamined": 20000, "nreturned": 10, "hasSortStage": True,
                 "repeat": 10}
    log, data = write(tmp_path, [operation], CUSTOMERS)
    (finding,) = analyze([log], Settings(data=[data])).findings
    before, after = finding.evidence.before, finding.evidence.after
    assert finding.rule == "IX002" and before["blockingSort"] and not after["blockingSort"]
    assert before["totalDocsExamined"] == 20000  # a blocking sort reads every match first
    assert (after["totalKeysExamined"], after["nReturned"]) == (10, 10)  # the index gives the sort: 10 and stop


def test_an_estimate_outside_the_model_keeps_the_finding(tmp_path: Path) -> None:
    log, data = write(tmp_path, [collscan({"lastName": "Silva", "city": "Porto", "tags": {"$size": 2}})], CUSTOMERS)
    (finding,) = analyze([log], Settings(data=[data])).findings
    assert "unsupported" in finding.evidence.after and "$size" in finding.evidence.after["unsupported"]


def test_whatif_command_text_and_json(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    _, data = write(tmp_path, [], CUSTOMERS)
    arguments = ["whatif", "--data", data, "--query", '{"filter": {"lastName": "Berg"}, "sort": {"email": 1}}',
                 "--index", '{"lastName": 1}', "--index", '{"lastName": 1, "email": 1}']
    assert run(arguments) == 0
    text = capsys.readouterr().out
    assert "plan: IXSCAN { lastName: 1, email: 1 }" in text and "blocking sort: no" in text
    assert run([*arguments, "--format", "json", "--hint", '{"lastName": 1}']) == 0
    result = json.loads(capsys.readouterr().out)
    assert (result["planSummary"], result["blockingSort"], result["nReturned"]) == ("IXSCAN { lastName: 1 }", True, 50)
    assert result["sample"]["documents"] == 200


@pytest.mark.parametrize(("option", "value", "message"), [
    ("--query", "{filter: }", "idxadvisor: error: --query is not valid (Extended) JSON: "),
    ("--index", '{"a": 0}', "idxadvisor: error: --index {\"a\": 0}: index direction 0 is not valid"),
    ("--hint", '{"zz": 1}', "idxadvisor: error: hint { zz: 1 } names no index given with --index"),
])
def test_whatif_errors_are_one_line(capsys: pytest.CaptureFixture[str], tmp_path: Path, option: str, value: str,
                                    message: str) -> None:
    _, data = write(tmp_path, [], CUSTOMERS)
    arguments = {"--query": '{"filter": {"a": 1}}', "--index": '{"a": 1}', "--hint": None} | {option: value}
    argv = ["whatif", "--data", data] + [part for name, text in arguments.items() if text for part in (name, text)]
    assert run(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(message) and err.count("\n") == 1


def test_a_redacted_regex_is_filled_with_the_start_of_a_sampled_value() -> None:
    import random

    from idxadvisor.indexes.sampling import SampleStatistics
    from idxadvisor.whatif.evidence import _fill_redacted

    sample = SampleStatistics([{"lastName": "Silvano"}, {"lastName": "Silvano"}])
    filled = _fill_redacted({"lastName": {"$regex": "^###", "$options": "i"}, "n": {"$regex": "###"}},
                            sample, random.Random(1), "")
    assert filled["lastName"] == {"$regex": "^Sil", "$options": "i"}
    assert filled["n"] == {"$regex": ""}  # a field the sample lacks: a regex that matches anything
