"""Shard keys, which the index file does not say: the shard-keys setting and --shard-key NS=PATTERN."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from idxadvisor.cli import run
from idxadvisor.testing import operation_entries

INDEXES = {"shop.orders": [{"key": {"_id": 1}, "name": "_id_"}, {"key": {"customerId": 1}, "name": "customerId_1"},
                           {"key": {"customerId": 1, "at": -1}, "name": "customerId_1_at_-1"}]}


def workload(tmp_path: Path) -> list[str]:
    log = tmp_path / "orders.log"
    operation = {"ns": "shop.orders", "command": {"find": "orders", "filter": {"customerId": 7}},
                 "plan": "IXSCAN { customerId: 1 }", "nreturned": 5, "repeat": 5}
    log.write_text("\n".join(operation_entries([operation])["json"]) + "\n")
    indexes = tmp_path / "indexes.json"
    indexes.write_text(json.dumps(INDEXES))
    return [str(log), "--indexes", str(indexes), "--format", "json", "--select", "IX005"]


def redundant(capsys: pytest.CaptureFixture[str], arguments: list[str]) -> list[str]:
    assert run(["analyze", *arguments, "--fail-on", "never"]) == 0
    return [finding["index"]["name"] for finding in json.loads(capsys.readouterr().out)["findings"]]


def test_an_index_that_carries_the_shard_key_is_never_redundant(capsys: pytest.CaptureFixture[str],
                                                                 tmp_path: Path) -> None:
    arguments = workload(tmp_path)
    assert redundant(capsys, arguments) == ["customerId_1"]
    assert redundant(capsys, [*arguments, "--shard-key", "shop.orders={customerId: 1}"]) == []
    assert redundant(capsys, [*arguments, "--shard-key", 'shop.other={"customerId": "hashed"}']) == ["customerId_1"]
    (tmp_path / ".idxadvisor.toml").write_text('shard-keys = {"shop.orders" = {customerId = 1}}\n')
    assert redundant(capsys, [*arguments, "--config", str(tmp_path / ".idxadvisor.toml")]) == []


@pytest.mark.parametrize(("option", "setting", "message"), [
    (["--shard-key", "shop.orders"], None, "--shard-key shop.orders: expected NS=PATTERN"),
    (["--shard-key", "shop.orders={customerId: 0}"], None, "index direction 0 is not valid"),
    ([], 'shard-keys = {"orders" = {a = 1}}', "setting 'shard-keys': 'orders' is not a namespace"),
    ([], 'shard-keys = {"shop.orders" = {a = "up"}}', "setting 'shard-keys': shop.orders: unknown index direction"),
])
def test_a_bad_shard_key_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path, option: list[str],
                                                setting: str | None, message: str) -> None:
    arguments = workload(tmp_path) + option
    if setting is not None:
        (tmp_path / "bad.toml").write_text(setting + "\n")
        arguments += ["--config", str(tmp_path / "bad.toml")]
    assert run(["analyze", *arguments]) == 2
    err = capsys.readouterr().err
    assert err.startswith("idxadvisor: error: ") and message in err and err.count("\n") == 1
