"""Every file of ../shared/corpus: lines and entries exactly as its MANIFEST counted them (DESIGN.md definitions)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from idxadvisor.config import Settings
from idxadvisor.ingest.sources import expand_sources
from idxadvisor.api import read_workload

pytestmark = pytest.mark.corpus

_ROW = re.compile(r"^\| `(?P<path>[^`]+)` \|(?P<cells>.*)\|\s*$")
EXPECTED_FORMAT = {"text-log": "text-log", "json-log (gzip)": "json-log", "profile (JSON array)": "profile",
                   "explain": "explain"}


def manifest_rows(corpus: Path) -> dict[str, dict[str, str]]:
    """path -> {format, lines, entries} from the MANIFEST's per-file table."""
    rows = {}
    for line in (corpus / "MANIFEST.md").read_text(encoding="utf-8").splitlines():
        match = _ROW.match(line)
        if match is None:
            continue
        cells = [cell.strip() for cell in match["cells"].split("|")]
        if len(cells) < 9 or not cells[6].isdigit():
            continue
        rows[match["path"]] = {"format": cells[4], "lines": cells[6], "entries": cells[7]}
    return rows


@pytest.fixture(scope="module")
def manifest(corpus_dir: Path) -> dict[str, dict[str, str]]:
    rows = manifest_rows(corpus_dir)
    assert len(rows) >= 74, "the MANIFEST table could not be read"
    return rows


@pytest.fixture(scope="module")
def summaries(corpus_dir: Path, manifest: dict[str, dict[str, str]]) -> dict[str, object]:
    paths = [str(corpus_dir / path) for path in manifest]
    _, found = read_workload(expand_sources(paths), Settings(jobs=1))
    return {str(Path(summary.path).relative_to(corpus_dir)): summary for summary in found}


def test_every_data_file_of_the_corpus_is_in_the_manifest(corpus_dir: Path, manifest: dict) -> None:
    data_files = {str(path.relative_to(corpus_dir)) for path in corpus_dir.rglob("*")
                  if path.is_file() and not path.name.startswith(("LICENSE", "NOTICE", "MANIFEST"))}
    assert data_files == set(manifest)


def test_lines_and_entries_match_the_manifest_for_every_file(manifest: dict, summaries: dict) -> None:
    mismatches = []
    for path, row in manifest.items():
        summary = summaries[path]
        got = (summary.lines, summary.entries)
        want = (int(row["lines"]), int(row["entries"]))
        if got != want:
            mismatches.append(f"{path}: lines/entries {got}, manifest {want}")
    assert not mismatches, "\n".join(mismatches)


def test_every_file_is_read_in_its_format_and_without_error(manifest: dict, summaries: dict) -> None:
    for path, row in manifest.items():
        summary = summaries[path]
        assert summary.error is None, path
        want = next((fmt for label, fmt in EXPECTED_FORMAT.items() if row["format"].startswith(label)), None)
        if want is None:  # json-log (uncompressed, ...) and the like
            want = "json-log" if row["format"].startswith("json-log") else row["format"]
        if summary.entries:
            assert summary.format == want, path


def test_the_only_problem_lines_are_the_corrupt_ones(summaries: dict) -> None:
    """Real server logs read without problems; the deliberately corrupted fixture reports its bad lines."""
    with_problems = {path: summary.problems for path, summary in summaries.items() if summary.problems}
    assert with_problems == {
        "mtools/mongod_225.log": 1,  # '=== a line without a datetime ==='
        "mtools/mongod_26_corrupt.log": 2,  # a cut line ('2014-04-0 [conn48] buil') and a '****' line
    }


def test_truncated_entries_are_the_ones_the_server_cut(summaries: dict) -> None:
    atlas = "mongo-log-parser/cluster0-shard-00-01.ufghn.mongodb.net_2025-08-17T19_50_00_2025-08-18T19_55_21_MONGODB.log.gz"
    assert summaries[atlas].truncated == 10  # the MANIFEST: 10 entries whose attr.command was truncated
    assert summaries["mtools/mongod_26.log"].truncated == 1  # splitChunk { $msg: "query not recording (too large)" }
    assert summaries["mtools/mongod_4.0.10_storagestats.log"].truncated == 2  # the edited 'command: insert {...}'
    assert summaries["keyhole/mongod.log"].truncated == 0


def test_statement_entries_and_their_command_entries_count_once(summaries: dict) -> None:
    keyhole = summaries["keyhole/mongod.log"]
    assert keyhole.paired == 35 + 24  # every remove and update statement is followed by its delete/update command
    assert keyhole.operations == keyhole.entries - keyhole.paired


def test_server_versions_come_from_the_logs(summaries: dict) -> None:
    assert summaries["keyhole/mongod.log"].versions == {"4.0.3"}
    assert summaries["mtools/mongod_225.log"].versions == {"2.2.5"}
    assert summaries["GOindiaRIDE/mongod-verify.log"].versions == {"8.2.5"}
