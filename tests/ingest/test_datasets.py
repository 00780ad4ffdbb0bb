"""Which collection each --data argument samples."""

from __future__ import annotations

from pathlib import Path

import pytest

from idxadvisor.errors import UsageError
from idxadvisor.ingest.datasets import resolve_data_arguments

WORKLOAD = {"shop.orders", "shop.customers", "archive.events"}


def touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}\n")
    return path


def test_ns_equals_file_names_the_collection(tmp_path: Path) -> None:
    sample = touch(tmp_path / "anything.json")
    assert resolve_data_arguments([f"shop.orders={sample}"], WORKLOAD) == {"shop.orders": sample}


def test_a_file_named_db_dot_collection_belongs_to_it_even_outside_the_workload(tmp_path: Path) -> None:
    named = touch(tmp_path / "shop.customers.json")
    elsewhere = touch(tmp_path / "other.things.ndjson")
    resolved = resolve_data_arguments([str(named), str(elsewhere)], WORKLOAD)
    assert resolved == {"shop.customers": named, "other.things": elsewhere}


def test_a_file_named_after_the_collection_alone_is_found_through_any_compression(tmp_path: Path) -> None:
    sample = touch(tmp_path / "events.json.gz")
    assert resolve_data_arguments([str(sample)], WORKLOAD) == {"archive.events": sample}


def test_a_collection_name_in_two_databases_is_ambiguous(tmp_path: Path) -> None:
    sample = touch(tmp_path / "orders.json")
    with pytest.raises(UsageError, match=r"several databases \(archive.orders, shop.orders\); write NS=FILE"):
        resolve_data_arguments([str(sample)], {"shop.orders", "archive.orders"})


def test_an_unnamed_file_belongs_to_the_only_collection_of_the_workload(tmp_path: Path) -> None:
    sample = touch(tmp_path / "sample.json")
    assert resolve_data_arguments([str(sample)], {"shop.orders"}) == {"shop.orders": sample}


def test_an_unnamed_file_with_several_collections_is_an_error_that_says_how_to_fix_it(tmp_path: Path) -> None:
    sample = touch(tmp_path / "sample.json")
    with pytest.raises(UsageError, match="cannot tell which collection it samples; name it"):
        resolve_data_arguments([str(sample)], WORKLOAD)


def test_a_directory_holds_one_named_file_per_collection_and_hidden_files_are_ignored(tmp_path: Path) -> None:
    orders = touch(tmp_path / "data" / "orders.json")
    customers = touch(tmp_path / "data" / "shop.customers.bson")
    touch(tmp_path / "data" / ".DS_Store")
    (tmp_path / "data" / "nested").mkdir()
    resolved = resolve_data_arguments([str(tmp_path / "data")], WORKLOAD)
    assert resolved == {"shop.orders": orders, "shop.customers": customers}


def test_an_unnamed_file_in_a_directory_is_not_guessed_even_for_a_single_collection(tmp_path: Path) -> None:
    touch(tmp_path / "data" / "dump.json")
    with pytest.raises(UsageError, match="dump.json: cannot tell"):
        resolve_data_arguments([str(tmp_path / "data")], {"shop.orders"})


@pytest.mark.parametrize("argument", ["missing.json", "shop.orders=missing.json"])
def test_a_missing_file_is_one_clear_error(tmp_path: Path, argument: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UsageError, match=f"--data {argument}: no such file or directory"):
        resolve_data_arguments([argument], WORKLOAD)


def test_a_file_whose_name_contains_an_equals_sign_is_read_as_a_file(tmp_path: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    touch(tmp_path / "run=2.json")
    assert resolve_data_arguments(["run=2.json"], {"shop.orders"}) == {"shop.orders": Path("run=2.json")}
