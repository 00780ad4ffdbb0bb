"""Every SARIF document the tool writes is valid SARIF 2.1.0: checked against the OASIS schema (tests/schemas) with a
JSON Schema validator, formats included (``uri``, ``uri-reference``: code-scanning uploads reject invalid ones)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft4Validator, FormatChecker

from idxadvisor.cli import run
from tests.conftest import FIXTURES_DIR

SCHEMA = json.loads((Path(__file__).resolve().parents[1] / "schemas" / "sarif-schema-2.1.0.json").read_text())
# every format jsonschema knows: the schema's "uri-reference" is not a draft-4 format, but it is SARIF's rule
VALIDATOR = Draft4Validator(SCHEMA, format_checker=FormatChecker())
DEMO = FIXTURES_DIR / "demo"


def errors(document: dict) -> list[str]:
    return [f"{'/'.join(map(str, error.absolute_path))}: {error.message}" for error in VALIDATOR.iter_errors(document)]


def sarif_of(capsys: pytest.CaptureFixture[str], *arguments: str) -> dict:
    run([*arguments, "--format", "sarif", "--jobs", "1"])
    return json.loads(capsys.readouterr().out)


def test_the_schema_rejects_what_is_not_sarif() -> None:
    assert errors({"version": "2.1.0", "runs": [{"tool": {"driver": {}}}]})  # a driver needs a name
    assert errors({"version": "2.1.0", "runs": [{"tool": {"driver": {"name": "x"}}, "results": [
        {"message": {"text": "m"}, "locations": [{"physicalLocation": {"artifactLocation": {"uri": "a b\\c"}}}]}]}]})


@pytest.mark.parametrize("arguments", [
    ["analyze", str(DEMO / "shop.log"), "--indexes", str(DEMO / "indexes.json"), "--data", str(DEMO / "data")],
    ["analyze", str(DEMO / "shop.log")],
    ["check", "--workload", str(DEMO / "shop.log"), "--baseline-indexes", str(DEMO / "indexes.json"), "--indexes",
     str(DEMO / "migrations")],
], ids=["analyze-with-evidence", "analyze-log-only", "check-migration"])
def test_reports_are_valid_sarif_2_1_0(capsys: pytest.CaptureFixture[str], arguments: list[str]) -> None:
    document = sarif_of(capsys, *arguments)
    assert document["runs"][0]["results"], "the demo has findings: an empty run would prove little"
    assert errors(document) == []


def test_the_golden_sarif_report_is_valid() -> None:
    assert errors(json.loads((FIXTURES_DIR / "reports" / "demo.sarif").read_text())) == []
