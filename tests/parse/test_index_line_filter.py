"""Index-build lines are looked at by their head first (``indexlog.may_give_sightings``): a line the filter skips must
be one that gives no sighting, so skipping it changes nothing but the time."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from idxadvisor.parse import indexlog, jsonlog

HEAD = '{"t":{"$date":"2025-08-18T18:59:59.356+00:00"},"s":"I",  "c":"INDEX",    "id":%d,   "ctx":"conn7",'
BUILT = HEAD + '"msg":"Index build: done building","attr":{"buildUUID":null,"namespace":"%s","index":"sku_1"}}'


def _sightings(line: str) -> list:
    entry = jsonlog.parse_line(line.encode())
    return indexlog.from_json_entry(entry, jsonlog.parse_timestamp(entry))


def test_a_user_index_built_is_read() -> None:
    line = BUILT % (indexlog.DONE_BUILDING, "shop.products")
    assert indexlog.may_give_sightings(line.encode()) and _sightings(line)


@pytest.mark.parametrize("line", [
    BUILT % (20440, "shop.products"),  # another index-build message (waiting for the build)
    BUILT % (indexlog.DONE_BUILDING, "local.startup_log"),  # the server's own collection
    BUILT % (indexlog.DONE_BUILDING, "config.system.sessions"),
])
def test_a_line_giving_no_sighting_is_not_decoded(line: str) -> None:
    assert not indexlog.may_give_sightings(line.encode()) and not _sightings(line)


def test_a_line_in_another_layout_is_decoded_and_judged_there() -> None:
    written_by_hand = ('{"id": %d, "t": {"$date": "2025-08-18T18:59:59Z"}, "msg": "Index build: done building", '
                       '"attr": {"namespace": "shop.products", "index": "sku_1"}}' % indexlog.DONE_BUILDING)
    assert indexlog.may_give_sightings(written_by_hand.encode()) and _sightings(written_by_hand)


@pytest.mark.corpus
def test_no_corpus_line_the_filter_skips_gives_a_sighting(corpus_dir: Path) -> None:
    skipped = 0
    for path in sorted(corpus_dir.rglob("*")):
        if not path.is_file() or path.suffix not in (".log", ".gz", ".json") and "log" not in path.name:
            continue
        try:
            with (gzip.open if path.suffix == ".gz" else open)(path, "rb") as handle:
                lines = [line for line in handle if any(needle in line for needle in indexlog.JSON_NEEDLES)]
        except (OSError, EOFError):
            continue
        for line in lines:
            if indexlog.may_give_sightings(line):
                continue
            skipped += 1
            entry = jsonlog.parse_line(line.strip())
            assert not indexlog.from_json_entry(entry, jsonlog.parse_timestamp(entry)), line[:200]
    assert skipped > 1000  # the corpus's 8.x logs hold thousands of such lines
