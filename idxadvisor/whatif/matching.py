"""The residual-filter matcher: mongomock's, with ``$type`` as MongoDB evaluates it.

mongomock's own ``$type`` confuses ``int`` with ``long`` and ``bool`` with numbers, refuses ``null`` and type
arrays; the model builds ``$type`` conditions as :class:`~idxadvisor.whatif.bsontypes.TypeSet` values and matches
them here. A private filterer is used so that mongomock's module-level one stays as the library ships it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mongomock import filtering

from idxadvisor.whatif.bsontypes import TypeSet, TypeSetError, value_matches


def _type_operator(value: Any, types: Any) -> bool:
    if value is filtering.NOTHING:
        return False
    if not isinstance(types, TypeSet):
        raise NotImplementedError("$type conditions are built as type sets")
    try:
        return value_matches(value, types)
    except TypeSetError as exc:
        raise NotImplementedError(str(exc)) from None


_FILTERER = filtering._Filterer()
_FILTERER._operator_map["$type"] = _type_operator


def filter_applies(search_filter: Mapping[str, Any], document: Mapping[str, Any]) -> bool:
    """Whether ``document`` matches ``search_filter`` (mongomock's ``filter_applies`` with the fixed ``$type``)."""
    return bool(_FILTERER.apply(search_filter, document))
