"""SARIF locations are valid URI references: relative paths percent-encoded, absolute ones file:// URIs, none for stdin."""

from __future__ import annotations

from pathlib import Path

import pytest

from idxadvisor.models.report import Report
from idxadvisor.report.sarif import document
from tests.conftest import FIXTURES_DIR


@pytest.fixture(scope="module")
def report() -> Report:
    return Report.model_validate_json((FIXTURES_DIR / "reports" / "demo.json").read_text(encoding="utf-8"))


def uris(sarif: dict) -> set[str | None]:
    return {location["physicalLocation"]["artifactLocation"]["uri"]
            for result in sarif["runs"][0]["results"] for location in result.get("locations", [])}


def with_input(report: Report, path: str) -> Report:
    return report.model_copy(update={"inputs": [report.inputs[0].model_copy(update={"path": path})]})


@pytest.mark.parametrize(("path", "uri"), [
    ("fixtures/demo/shop.log", "fixtures/demo/shop.log"),
    ("logs/my log #1.log", "logs/my%20log%20%231.log"),
    ("c:weird.log", "c%3Aweird.log"),  # not taken for a scheme
    ("/tmp/my log.log", "file:///tmp/my%20log.log"),
    ("https://u:pw@example.com/x.log", "https%3A/u%3A%2A%2A%2A%2A%40example.com/x.log"),  # masked, encoded
])
def test_the_artifact_uri_is_a_valid_reference(report: Report, path: str, uri: str) -> None:
    assert uris(document(with_input(report, path))) == {uri}
    assert uris(document(report, path)) == {uri}  # the --indexes file goes the same way


def test_findings_from_stdin_have_no_location(report: Report) -> None:
    results = document(with_input(report, "-"))["runs"][0]["results"]
    assert results and all("locations" not in result for result in results)
    assert uris(document(with_input(report, "-"), "fixtures/demo/indexes.json")) == {"fixtures/demo/indexes.json"}


def test_an_absolute_path_round_trips(report: Report, tmp_path: Path) -> None:
    target = tmp_path / "a b" / "mongod.log"
    (uri,) = uris(document(with_input(report, str(target))))
    assert uri.startswith("file:///") and " " not in uri
    from urllib.parse import unquote, urlparse

    assert Path(unquote(urlparse(uri).path)) == target
