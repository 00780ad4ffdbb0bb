from __future__ import annotations

from typing import Any

import pytest
from bson import Int64

from idxadvisor.indexes.model import IndexSpec
from idxadvisor.models.values import as_int
from idxadvisor.rules.ix006_unused_index import server_uses
from tests.server.replies import INDEX_STATS


@pytest.mark.parametrize(("value", "expected"), [
    (5, 5), (Int64(1204), 1204), (True, 1), (7.0, 7), ("12", 12), ({"$numberLong": "9"}, 9), (float("nan"), None),
    ("many", None), (None, None), ([3], None),
])
def test_a_counter_from_any_spelling_of_a_number(value: Any, expected: int | None) -> None:
    result = as_int(value)
    assert result == expected and (result is None or type(result) is int)


def test_the_uses_index_stats_counted_as_pymongo_returns_them() -> None:
    specs = {stats["name"]: IndexSpec.from_document({**stats["spec"], "accesses": stats["accesses"]})
             for stats in INDEX_STATS}
    assert server_uses(specs["item_1_quantity_1"]) == (1, "since 2020-02-10 21:11 UTC")
    assert server_uses(specs["_id_"]) == (0, "since 2020-02-10 21:11 UTC")
    assert server_uses(IndexSpec.from_document({"key": {"a": 1}, "name": "a_1"})) is None
