"""The change ``check`` judges: the baseline index set and the proposed one, from an index file or migration scripts.

``--proposed-indexes`` names the proposed set: one index file (DESIGN.md's format), or migration scripts (files or directories
of them) whose calls are applied in order to the baseline. The baseline is ``--indexes`` (today's), or, without it,
the indexes the workload's plan summaries name.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from idxadvisor.errors import InputError, UsageError
from idxadvisor.gate.indexfile import read_index_file
from idxadvisor.gate.scripts import COMMAND_METHODS, SCRIPT_SUFFIXES, Call, read_script_calls, script_files
from idxadvisor.indexes.catalog import IndexCatalog
from idxadvisor.indexes.change import (
    ID_INDEX,
    IndexChange,
    IndexEvent,
    RefusedIndex,
    diff_catalogs,
    inferred_catalog,
)
from idxadvisor.indexes.model import IndexSpec, IndexSpecError, key_pattern
from idxadvisor.indexes.sampling import SampleStatistics
from idxadvisor.shapes.digest import ShapeStats

MAX_INDEXES = 64  # per collection, the _id index included: the server refuses the 65th (CannotCreateIndex)


def is_script_argument(argument: str) -> bool:
    path = Path(argument)
    return path.is_dir() or path.suffix in SCRIPT_SUFFIXES


def read_change(indexes: Sequence[str], baseline_indexes: Path | None, database: str | None,
                shapes: Iterable[ShapeStats]) -> IndexChange:
    """The change from the baseline (``baseline_indexes``, else what the plans show) to the proposed set."""
    if not indexes:
        raise UsageError("--proposed-indexes: name the proposed indexes (an index file, or migration scripts)")
    scripts = [argument for argument in indexes if is_script_argument(argument)]
    files = [argument for argument in indexes if argument not in scripts]
    if scripts and files or len(files) > 1:
        raise UsageError("--proposed-indexes: give one index file, or migration scripts, not both")
    if baseline_indexes is not None:
        baseline = read_index_file(baseline_indexes, "--baseline-indexes").catalog
        known = True
    else:
        baseline, known = inferred_catalog(shapes), False
    if files:
        located = read_index_file(Path(files[0]), "--proposed-indexes")
        proposed = {**baseline, **located.catalog}
        events = diff_catalogs(baseline, located.catalog, known, located.locations, located.namespace_locations)
        change = IndexChange(baseline, proposed, events, known, located.locations, located.namespace_locations)
        _refuse_over_the_limit(change)
        return change
    paths = [path for argument in scripts for path in script_files(argument)]
    if not paths:
        raise UsageError(f"--proposed-indexes: {', '.join(scripts)} holds no migration script (.js, .mjs, .cjs)")
    applier = _Applier(baseline, known, database)
    for path in paths:
        for call in read_script_calls(path):
            applier.apply(call)
    return IndexChange(baseline, applier.current, applier.events, known, applier.locations, {}, applier.notes,
                       applier.refused)


def _refuse_over_the_limit(change: IndexChange) -> None:
    """An index file that gives a collection more than ``MAX_INDEXES`` indexes: the ones it creates past the limit,
    in the file's order, are refused (a script's calls are refused one by one as they are applied)."""
    for ns, indexes in change.proposed.items():
        total = len(indexes)
        created = [event for event in change.events if event.ns == ns and event.action == "created"]
        for event in created[MAX_INDEXES - total:] if total > MAX_INDEXES else []:
            change.events.remove(event)
            indexes.remove(event.index)
            change.refused.append(RefusedIndex(
                ns, f"{event.index.name} {event.index}", f"{ns} would have {total} indexes, over the "
                f"{MAX_INDEXES} a collection may have, the _id index included (CannotCreateIndex)", event.location,
                event.index))


def refuse_parallel_arrays(change: IndexChange, samples: Mapping[str, SampleStatistics]) -> None:
    """Moves out of the proposed set every index the change creates over two fields that sampled documents hold as
    arrays side by side: the server refuses to build it (error 171, cannot index parallel arrays), so it will not
    serve a query, and the change is refused at its call."""
    for event in list(change.events):
        sample = samples.get(event.ns)
        if event.action != "created" or sample is None or len(event.index.key) < 2:
            continue
        pairs = sample.parallel_arrays(event.index.fields)
        if not pairs:
            continue
        first, second = pairs[0]
        change.events.remove(event)
        indexes = change.proposed.get(event.ns, [])
        if event.index in indexes:
            indexes.remove(event.index)
        change.refused.append(RefusedIndex(
            event.ns, f"{event.index.name} {event.index}",
            f"{first} and {second} are arrays side by side in sampled documents, and an index cannot hold parallel "
            "arrays (error 171, CannotIndexParallelArrays)", event.location, event.index))


class _Applier:
    """Applies script calls, in order, to a copy of the baseline."""

    def __init__(self, baseline: IndexCatalog, known: bool, database: str | None) -> None:
        self.current: IndexCatalog = {ns: list(indexes) for ns, indexes in baseline.items()}
        self.known = known
        self.database = database
        self.events: list[IndexEvent] = []
        self.locations: dict = {}
        self.notes: list[str] = []
        self.refused: list[RefusedIndex] = []

    def apply(self, call: Call) -> None:
        if call.method in COMMAND_METHODS:
            self._command(call)
            return
        ns = self._namespace(call, call.collection)
        arguments = call.arguments
        if call.method in ("createIndex", "ensureIndex"):
            keys = arguments[0] if arguments else None
            options = arguments[1] if len(arguments) > 1 else {}
            self._create(call, ns, self._spec(call, ns, {**_document(call, options, "options"), "key": keys}))
        elif call.method == "createIndexes":
            listed = arguments[0] if arguments else None
            options = _document(call, arguments[1], "options") if len(arguments) > 1 else {}
            if type(listed) is not list:
                raise _error(call, "createIndexes() needs a list of indexes")
            for item in listed:
                document = item if type(item) is dict and type(item.get("key")) is dict else {"key": item}
                self._create(call, ns, self._spec(call, ns, {**options, **document}))
        elif call.method == "dropIndex":
            if len(arguments) != 1:
                raise _error(call, "dropIndex() needs an index name or key pattern")
            self._drop(call, ns, arguments[0])
        elif call.method == "dropIndexes":
            selectors = arguments[0] if arguments else "*"
            for selector in selectors if type(selectors) is list else [selectors]:
                self._drop(call, ns, selector)
        elif call.method in ("hideIndex", "unhideIndex"):
            if len(arguments) != 1:
                raise _error(call, f"{call.method}() needs an index name or key pattern")
            self._hide(call, ns, arguments[0], call.method == "hideIndex")
        elif call.method == "drop":
            for index in self.current.pop(ns, [ID_INDEX] if self.known else []):
                self.events.append(IndexEvent("dropped", ns, index, call.location))

    def _command(self, call: Call) -> None:
        command = call.arguments[0] if call.arguments else None
        if type(command) is not dict or not command:
            raise _error(call, f"{call.method}() needs a command document")
        name, collection = next(iter(command.items()))
        if name not in ("createIndexes", "dropIndexes", "collMod", "drop"):
            return  # a command that changes no index
        if type(collection) is not str:
            raise _error(call, f"{name}: the collection name must be a string")
        ns = self._namespace(call, collection)
        if name == "createIndexes":
            if type(command.get("indexes")) is not list:
                raise _error(call, "createIndexes needs a list of indexes")
            for document in command["indexes"]:
                self._create(call, ns, self._spec(call, ns, _document(call, document, "an index")))
        elif name == "dropIndexes":
            selectors = command.get("index", "*")
            for selector in selectors if type(selectors) is list else [selectors]:
                self._drop(call, ns, selector)
        elif name == "drop":
            for index in self.current.pop(ns, [ID_INDEX] if self.known else []):
                self.events.append(IndexEvent("dropped", ns, index, call.location))
        elif type(command.get("index")) is dict and "hidden" in command["index"]:
            index = command["index"]
            selector = index.get("name", index.get("keyPattern"))
            self._hide(call, ns, selector, bool(index["hidden"]))

    def _namespace(self, call: Call, collection: str | None) -> str:
        database = call.database or self.database
        if database is None:
            raise _error(call, "the database of this call is not known: add 'use <database>' to the script, or "
                               "pass --db")
        return f"{database}.{collection}"

    def _spec(self, call: Call, ns: str, document: dict[str, Any]) -> IndexSpec | None:
        """The index the call creates; None, and the call refused, when the server would reject its specification."""
        if type(document.get("key")) is not dict:
            reason = "the index key must be a document such as { status: 1 }"
        else:
            try:
                return IndexSpec.from_document(document)
            except IndexSpecError as exc:
                reason = str(exc)
        name = document.get("name")
        shown = f"{name} {_shown(document.get('key'))}" if type(name) is str else _shown(document.get("key"))
        self.refused.append(RefusedIndex(ns, shown, f"its specification is invalid: {reason}", call.location))
        return None

    def _indexes(self, ns: str) -> list[IndexSpec]:
        return self.current.setdefault(ns, [ID_INDEX])

    def _find(self, call: Call, ns: str, selector: Any) -> IndexSpec | None:
        if type(selector) is str:
            return next((index for index in self._indexes(ns) if index.name == selector), None)
        if type(selector) is dict:
            try:
                key = key_pattern(selector)
            except IndexSpecError as exc:
                raise _error(call, f"{call.method}(): {exc}") from None
            return next((index for index in self._indexes(ns) if index.key == key), None)
        raise _error(call, f"{call.method}(): an index is named by its name or its key pattern")

    def _create(self, call: Call, ns: str, spec: IndexSpec | None) -> None:
        if spec is None:
            return  # refused by _spec
        indexes = self._indexes(ns)
        same_name = next((index for index in indexes if index.name == spec.name), None)
        if same_name is not None:
            if same_name.key != spec.key or same_name.unique != spec.unique:
                self.refused.append(RefusedIndex(
                    ns, f"{spec.name} {spec}", f"an index of that name exists with another definition, {same_name.name} "
                    f"{same_name} "
                    "(IndexKeySpecsConflict)", call.location, spec))
            return  # createIndex of an index that exists is a no-op
        if len(indexes) >= MAX_INDEXES:
            self.refused.append(RefusedIndex(
                ns, f"{spec.name} {spec}", f"{ns} would have {len(indexes) + 1} indexes, over the {MAX_INDEXES} a "
                "collection may have, the _id index included (CannotCreateIndex)",
                call.location, spec))
            return
        indexes.append(spec)
        self.locations[ns, spec.name] = call.location
        self.events.append(IndexEvent("created", ns, spec, call.location))

    def _drop(self, call: Call, ns: str, selector: Any) -> None:
        indexes = self._indexes(ns)
        if selector == "*":
            for index in [index for index in indexes if not index.is_id_index]:
                indexes.remove(index)
                self.events.append(IndexEvent("dropped", ns, index, call.location))
            return
        index = self._find(call, ns, selector)
        if index is None:
            where = "the baseline indexes have" if self.known else "the workload's plans show"
            self.notes.append(f"{call.location}: {call.method} names {selector!r}, which no index of {ns} that "
                              f"{where} is{'' if self.known else ': its use cannot be checked'}")
            return
        indexes.remove(index)
        self.events.append(IndexEvent("dropped", ns, index, call.location))

    def _hide(self, call: Call, ns: str, selector: Any, hidden: bool) -> None:
        index = self._find(call, ns, selector)
        if index is None:
            self.notes.append(f"{call.location}: {call.method} names {selector!r}, which is no index of {ns} known "
                              "here")
            return
        if index.hidden == hidden:
            return
        indexes = self._indexes(ns)
        changed = replace(index, hidden=hidden)
        indexes[indexes.index(index)] = changed
        self.events.append(IndexEvent("hidden" if hidden else "unhidden", ns, changed, call.location))


def _document(call: Call, value: Any, what: str) -> dict[str, Any]:
    if type(value) is not dict:
        raise _error(call, f"{call.method}(): {what} must be a document")
    return value


def _shown(key: Any) -> str:
    """A key pattern as the call wrote it, when it is not one the server accepts."""
    if type(key) is not dict:
        return "(no key pattern)" if key is None else repr(key)
    return "{ " + ", ".join(f"{name}: {value!r}" for name, value in key.items()) + " }"


def _error(call: Call, message: str) -> InputError:
    return InputError(f"{call.location}: {message}")
