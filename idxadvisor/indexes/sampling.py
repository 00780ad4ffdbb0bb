"""What a data sample tells about a collection's fields: which paths hold arrays, and how selective they are."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any


def path_values(document: Mapping[str, Any], path: str) -> tuple[list[Any], bool]:
    """The values a dotted path reaches in a document, as an index would key them, and whether an array was crossed."""
    values: list[Any] = [document]
    through_array = False
    for part in path.split("."):
        reached: list[Any] = []
        for value in values:
            if isinstance(value, list):
                through_array = True
                for element in value:
                    if isinstance(element, Mapping) and part in element:
                        reached.append(element[part])
                    elif part.isdigit() and int(part) < len(value):
                        reached.append(value[int(part)])
            elif isinstance(value, Mapping) and part in value:
                reached.append(value[part])
        values = reached
    flattened: list[Any] = []
    for value in values:
        if isinstance(value, list):
            through_array = True
            flattened.extend(value)
        else:
            flattened.append(value)
    return flattened, through_array


def array_prefixes(document: Mapping[str, Any], path: str) -> set[str]:
    """The prefixes of a dotted path (``items``, ``items.sizes``) at which the document holds an array."""
    parts = path.split(".")
    found: set[str] = set()
    frontier: list[Any] = [document]
    for depth, part in enumerate(parts):
        reached: list[Any] = []
        for value in frontier:
            if isinstance(value, Mapping):
                if part in value:
                    reached.append(value[part])
            elif isinstance(value, list):
                found.add(".".join(parts[:depth]))
                reached.extend(element[part] for element in value if isinstance(element, Mapping) and part in element)
        frontier = reached
    if any(isinstance(value, list) for value in frontier):
        found.add(path)
    return found


def _nested(outer: str, inner: str) -> bool:
    return outer == inner or inner.startswith(outer + ".") or outer.startswith(inner + ".")


def parallel_pairs(document: Mapping[str, Any], fields: Sequence[str]) -> list[tuple[str, str]]:
    """The pairs of ``fields`` that go through different, unnested arrays in this document: an index on both cannot
    hold it (``cannot index parallel arrays``). Paths under one array (``items.sku``, ``items.qty``) are fine."""
    arrays = [(name, array_prefixes(document, name)) for name in fields]
    return [(first, second)
            for position, (first, first_arrays) in enumerate(arrays)
            for second, second_arrays in arrays[position + 1:]
            if any(not _nested(a, b) for a in first_arrays for b in second_arrays)]


def _hashable(value: Any) -> Any:
    if isinstance(value, (dict, list)):
        return repr(value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value


class SampleStatistics:
    """Field facts from sample documents; computed per path on first use."""

    def __init__(self, documents: Sequence[Mapping[str, Any]], average_document_size: float | None = None,
                 documents_seen: int | None = None, origin: str = "the sample file",
                 write_operations: int | None = None, counted_at: datetime | None = None) -> None:
        self.documents = documents
        self.origin = origin  # what ``documents_seen`` counts: the sample file, or the collection on the server
        self.average_document_size = average_document_size
        self.documents_seen = documents_seen if documents_seen is not None else len(documents)
        # the collection's write operations since the server began counting ($collStats latencyStats), and when
        self.write_operations = write_operations
        self.counted_at = counted_at
        self._arrays: dict[str, bool] = {}
        self._selectivity: dict[str, float | None] = {}

    def __len__(self) -> int:
        return len(self.documents)

    def is_array(self, path: str) -> bool:
        """True when the path is multikey in at least one sampled document."""
        if path not in self._arrays:
            self._arrays[path] = any(path_values(document, path)[1] for document in self.documents)
        return self._arrays[path]

    def parallel_arrays(self, fields: Sequence[str]) -> list[tuple[str, str]]:
        """The pairs of ``fields`` that are parallel arrays in at least one sampled document."""
        candidates = [name for name in fields if self.is_array(name)]
        if len(candidates) < 2:
            return []
        pairs: dict[tuple[str, str], None] = {}
        for document in self.documents:
            pairs.update(dict.fromkeys(parallel_pairs(document, candidates)))
        return list(pairs)

    def selectivity(self, path: str) -> float | None:
        """The expected share of documents an equality on ``path`` matches, for a value drawn as queries draw it
        (in proportion to how often it occurs); None for an empty sample."""
        if path not in self._selectivity:
            self._selectivity[path] = self._measure(path)
        return self._selectivity[path]

    def _measure(self, path: str) -> float | None:
        if not self.documents:
            return None
        frequency: Counter[Any] = Counter()
        for document in self.documents:
            values, _ = path_values(document, path)
            keys = {_hashable(value) for value in values} or {None}  # a missing field is keyed as null
            frequency.update(keys)
        total = sum(frequency.values())
        return sum(count * count for count in frequency.values()) / (len(self.documents) * total)

