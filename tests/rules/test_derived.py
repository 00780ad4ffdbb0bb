"""What rules work out once and share: a shape's roles and filter fields, and the fields $lookups join on."""

from __future__ import annotations

from idxadvisor.config import Settings
from idxadvisor.rules.base import RuleContext, analyze_shape
from idxadvisor.rules.ix006_unused_index import _joined_fields, _lookups
from idxadvisor.shapes.shape import IN, NE
from tests.helpers import digest_block, json_line, slow_attr


def _shapes(*commands: tuple[str, dict]) -> list:
    log = "\n".join(json_line(slow_attr(command, ns=ns)) for ns, command in commands) + "\n"
    _, digest = digest_block(log, "json")
    return list(digest.shapes.values())


def test_roles_are_worked_out_once_per_shape_and_again_for_new_shapes() -> None:
    shapes = _shapes(("shop.orders", {"find": "orders", "filter": {"status": "A", "total": {"$gt": 5}}}))
    context = RuleContext(Settings(), shapes=shapes)
    roles = context.roles(shapes[0])
    assert roles.equality == ("status",) and roles.range == ("total",)
    assert context.roles(shapes[0]) is roles
    context.shapes = list(shapes)  # another list of shapes: worked out again
    assert context.roles(shapes[0]) is not roles and context.roles(shapes[0]) == roles


def test_an_analysis_names_the_fields_with_an_operator_class() -> None:
    shapes = _shapes(("shop.orders", {"find": "orders", "filter": {"b": {"$ne": 1}, "a": {"$in": [1, 2]},
                                                                     "c": {"$ne": 2}}}))
    analysis = analyze_shape(shapes[0], RuleContext(Settings(), shapes=shapes))
    assert analysis.fields_with(NE) == ["b", "c"]
    assert analysis.fields_with(IN, NE) == ["a", "b", "c"]
    assert analysis.fields_with("regex-unanchored") == []


def test_joined_fields_come_from_lookups_of_the_same_database() -> None:
    lookup = {"aggregate": "orders", "cursor": {}, "pipeline": [
        {"$lookup": {"from": "lines", "localField": "_id", "foreignField": "orderId", "as": "lines"}}]}
    graph = {"aggregate": "people", "cursor": {}, "pipeline": [
        {"$graphLookup": {"from": "people", "startWith": "$boss", "connectFromField": "boss",
                          "connectToField": "_id", "as": "chain"}}]}
    lookups = _lookups(_shapes(("shop.orders", lookup), ("hr.people", graph)))
    assert _joined_fields("shop.lines", lookups) == {"orderId"}
    assert _joined_fields("shop.orders", lookups) == set()
    assert _joined_fields("other.lines", lookups) == set()  # another database's collection of that name
    assert _joined_fields("hr.teams", lookups) == {"*"}  # a $graphLookup may join any collection of its database
