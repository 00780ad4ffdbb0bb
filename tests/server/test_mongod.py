"""Live tests against a real server, run only when IDXADVISOR_TEST_URI names one (docs/development.md: "Live tests").

They create a source database of their own (``idxadvisor_live_<random>``), profile a workload on it, and drop it at
the end; the tool itself only reads it and writes to its own scratch database."""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Iterator
from typing import Any

import pytest

from idxadvisor.cli import run

URI = os.environ.get("IDXADVISOR_TEST_URI")
pytestmark = [pytest.mark.mongod, pytest.mark.skipif(not URI, reason="IDXADVISOR_TEST_URI is not set")]


@pytest.fixture
def source() -> Iterator[tuple[Any, str]]:
    from pymongo import MongoClient

    client: Any = MongoClient(URI, serverSelectionTimeoutMS=5000)
    name = f"idxadvisor_live_{secrets.token_hex(3)}"
    database = client[name]
    database.orders.insert_many([{"status": ("new", "paid", "shipped")[n % 3], "region": f"r{n % 25}",
                                  "total": n % 1000} for n in range(20_000)])
    database.orders.create_index("total")
    database.command("profile", 2)
    for region in ("r3", "r7", "r11", "r3"):
        list(database.orders.find({"status": "paid", "region": region}))
    database.command("profile", 0)
    try:
        yield client, name
    finally:
        client.drop_database(name)
        client.close()


def test_replay_measures_what_the_estimator_predicted(capsys: pytest.CaptureFixture[str],
                                                      source: tuple[Any, str]) -> None:
    client, name = source
    before = set(client.list_database_names())
    code = run(["analyze", "--uri", URI, "--db", name, "--replay", "--min-count", "2", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code in (0, 1)
    replayed = [f for f in report["findings"] if f.get("evidence") and f["evidence"]["evaluator"] == "server"]
    assert replayed, report["skipped"]
    evidence = replayed[0]["evidence"]
    assert evidence["estimate"]["evaluator"] == "estimator" and evidence["calibration"]
    rows = {(row["plan"], row["counter"]): row for row in evidence["calibration"]}
    assert rows[("after", "nReturned")]["agree"], rows  # the same documents match, whatever the planner does
    assert report["server"]["scratch"]["dropped"] is True
    assert set(client.list_database_names()) == before  # the scratch database is gone


def test_indexes_reads_usage(capsys: pytest.CaptureFixture[str], source: tuple[Any, str]) -> None:
    _, name = source
    assert run(["indexes", "--uri", URI, "--db", name]) == 0
    document = json.loads(capsys.readouterr().out)
    names = [index["name"] for index in document[f"{name}.orders"]]
    assert names[:1] == ["_id_"] and "total_1" in names
    assert all("accesses" in index for index in document[f"{name}.orders"])
