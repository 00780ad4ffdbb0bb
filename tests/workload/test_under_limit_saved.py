"""A workload file keeps what the limited queries matched (the executions under their limit and what they returned);
a file written before it existed reads back as no such execution."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.errors import InputError
from idxadvisor.models.events import Event
from idxadvisor.shapes.digest import Digest
from idxadvisor.workload import load_workload, save_workload


def limited_digest() -> Digest:
    digest = Digest()
    for limit, returned in ((10, 3), (10, 10), (20, 7)):
        digest.add(Event("shop.orders", "find", command={"find": "orders", "filter": {"a": 1}, "limit": limit},
                         duration_ms=5, docs_examined=1000, keys_examined=0, nreturned=returned))
    return digest


def saved_shape(tmp_path: Path) -> tuple[Path, dict]:
    path = tmp_path / "w.json"
    save_workload(path, limited_digest(), [])
    document = json.loads(path.read_text(encoding="utf-8"))
    assert len(document["shapes"]) == 1
    return path, document


def test_what_limited_queries_matched_is_saved_and_read_back(tmp_path: Path) -> None:
    path, _ = saved_shape(tmp_path)
    (stats,) = load_workload(path).digest.shapes.values()
    assert (stats.under_limit, stats.under_limit_returned) == (2, 10)


def test_a_file_written_before_the_counters_reads_back_as_none_under_the_limit(tmp_path: Path) -> None:
    path, document = saved_shape(tmp_path)
    for shape in document["shapes"]:
        del shape["under_limit"], shape["under_limit_returned"]
    path.write_text(json.dumps(document), encoding="utf-8")
    (stats,) = load_workload(path).digest.shapes.values()
    assert (stats.count, stats.under_limit, stats.under_limit_returned) == (3, 0, 0)


def test_a_negative_count_under_the_limit_is_damage(tmp_path: Path) -> None:
    path, document = saved_shape(tmp_path)
    document["shapes"][0]["under_limit"] = -1
    path.write_text(json.dumps(document), encoding="utf-8")
    with pytest.raises(InputError, match="under_limit"):
        load_workload(path)
