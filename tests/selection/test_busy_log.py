"""The shared busy 8.0 log (1,812 operations in 47 minutes): what its own evidence decides about the suggestions —
the values its queries repeat and what its limited queries matched."""

from __future__ import annotations

from pathlib import Path

import pytest

from idxadvisor.api import analyze
from idxadvisor.config import Settings
from idxadvisor.models.report import Report

pytestmark = pytest.mark.corpus

BUSY = "mongo-log-parser/cluster0-shard-00-01.ufghn.mongodb.net_2025-08-17T19_50_00_2025-08-18T19_55_21_MONGODB.log.gz"


@pytest.fixture(scope="module")
def report(corpus_dir: Path) -> Report:
    return analyze([str(corpus_dir / BUSY)], Settings(jobs=1))


def suggested(report: Report, collection: str) -> list[list[tuple]]:
    return [[tuple(part) for part in item.key] for item in report.suggested_indexes
            if item.ns.endswith("." + collection)]


def left_out(report: Report, collection: str) -> dict[tuple, str]:
    (index_set,) = [index_set for index_set in report.index_sets if index_set.ns.endswith("." + collection)]
    return {tuple(map(tuple, item.key)): item.reason for item in index_set.left_out}


def test_a_field_of_few_values_follows_the_field_of_more(report: Report) -> None:
    # borough takes 5 values in 29 queries (12 in one shape): cuisine leads, and serves the count by cuisine too
    restaurants = suggested(report, "restaurants")
    assert [("cuisine", 1), ("borough", 1)] in restaurants and [("cuisine", 1)] not in restaurants
    assert [("borough", 1), ("cuisine", 1)] not in restaurants
    assert "borough takes 5 values in 29 queries" in left_out(report, "restaurants")[(("borough", 1), ("cuisine", 1))]


def test_limited_queries_under_their_limit_give_the_figures_for_comments(report: Report) -> None:
    # 22 of 25 finds by date returned under their limit, 1.0 document each: { date: 1 } serves the shapes fixing date
    comments = suggested(report, "comments")
    assert [("date", 1)] in comments and [("movie_id", 1), ("date", 1)] not in comments
    reason = left_out(report, "comments")[(("date", 1), ("movie_id", 1))]
    assert "(22 of 25 executions returned under their limit)" in reason


def test_the_indexes_a_dba_would_build_are_still_suggested(report: Report) -> None:
    keys = {(item.ns.split(".")[-1], tuple(map(tuple, item.key))) for item in report.suggested_indexes}
    assert {("zips", (("state", 1), ("pop", 1))), ("routes", (("dst_airport", 1),)), ("movies", (("title", 1),)),
            ("grades", (("class_id", 1), ("student_id", 1)))} <= keys
    (grades,) = [item for item in report.suggested_indexes if item.ns.endswith(".grades")]
    assert grades.replaces == "class_id_1"
