"""The ``idxadvisor whatif`` entry points: parse the options, run the estimator, render text.

``run_whatif`` takes the option values as the CLI receives them (JSON text, Extended JSON allowed) and
returns the explain-style dict plus ``query``, ``sample`` and ``serverVersion``; ``render_text`` turns that
dict into a short human-readable explanation. Bad option values raise :class:`UsageError` naming the
option; unreadable data raises :class:`InputError` (from the sample loader).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from idxadvisor.config import server_version_of
from idxadvisor.errors import UsageError
from idxadvisor.indexes.model import IndexSpec, IndexSpecError, key_pattern
from idxadvisor.ingest.datasets import COLLECTION_STATS_FILE, resolve_data_arguments
from idxadvisor.ingest.samples import BAD_DOCUMENT, MAX_NESTING, decode_extended_json, load_sample, too_deep
from idxadvisor.parse.shelldoc import ShellSyntaxError, parse_shell_value
from idxadvisor.runtime import collector_paused
from idxadvisor.units import printable
from idxadvisor.whatif.estimator import Estimator, WhatIfQuery, json_safe


def parse_server_version(text: str) -> tuple[int, int]:
    version = server_version_of(text)
    if version is None:
        raise UsageError(f"--server-version must look like 8.0, 7.0.5 or 8.0.0-rc1, not {text!r}")
    return version


class OptionTooDeep(UsageError):
    """An option's JSON is nested too deeply to decode (far beyond BSON's 100 levels)."""


def _decode_option(option: str, text: str) -> Any:
    """Extended JSON, or a document in mongosh syntax (``{status: "A", _id: ObjectId("…")}``) as ``--shard-key``
    takes it."""
    try:
        return decode_extended_json(text)
    except RecursionError:
        raise OptionTooDeep(f"{option} is nested deeper than BSON's {MAX_NESTING} levels") from None
    except BAD_DOCUMENT as exc:
        shell = _shell_document(text)
        if shell is not None:
            return shell
        first_line = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        if isinstance(exc, KeyError):  # a wrapper without one of its members: str() gives the bare name
            first_line = f"a wrapper without its {first_line}"
        raise UsageError(f"{option} is not valid (Extended) JSON: {first_line} (nor mongosh syntax)") from None


def _shell_document(text: str) -> Any | None:
    """A document or array in mongosh syntax as BSON-typed values, or None when the text is not one."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        parsed = parse_shell_value(stripped)
    except ShellSyntaxError:
        return None
    if parsed.end != len(stripped) or parsed.elided:
        return None
    try:  # the parser gives relaxed Extended JSON values: decode their wrappers as a JSON option's
        return decode_extended_json(json.dumps(parsed.value))
    except RecursionError:
        raise OptionTooDeep(f"the option is nested deeper than BSON's {MAX_NESTING} levels") from None
    except BAD_DOCUMENT:
        return None


def parse_index_option(text: str) -> IndexSpec:
    value = _decode_option("--index", text)
    if not isinstance(value, Mapping):
        raise UsageError(f"--index must be a JSON object (a key pattern or an index document), not {text!r}")
    try:
        return IndexSpec.parse(value)
    except IndexSpecError as exc:
        raise UsageError(f"--index {text}: {exc}") from None


def parse_hint_option(text: str) -> tuple[tuple[str, Any], ...] | str | dict[str, int]:
    """A key pattern (``{"a": 1}``), ``{"$natural": 1}``, or an index name (bare or as a JSON string)."""
    stripped = text.strip()
    if stripped and not stripped.startswith(("{", "[", '"')):
        return stripped  # an index name
    value = _decode_option("--hint", text)
    if isinstance(value, str) and value:
        return value
    if not isinstance(value, Mapping):
        raise UsageError(f"--hint must be an index name or a key pattern object, not {text!r}")
    if list(value) == ["$natural"] and value["$natural"] in (1, -1):
        return {"$natural": int(value["$natural"])}
    try:
        return key_pattern(value)
    except IndexSpecError as exc:
        raise UsageError(f"--hint {text}: {exc}") from None


def parse_query_option(text: str) -> WhatIfQuery:
    value = _decode_option("--query", text)
    if not isinstance(value, Mapping):
        raise UsageError("--query must be a JSON object (command, filter, sort, projection, limit, skip, collation, "
                         "hint, min, max, key, pipeline)")
    try:
        return WhatIfQuery.from_json(value)
    except UsageError as exc:
        raise UsageError(f"--query: {exc}") from None


def sample_file(argument: str) -> Path:
    """The sample ``--data [NS=]PATH`` names: a file, or in a directory of ``<db>.<coll>.json`` samples (as
    ``analyze --data`` reads it) the one of NS, or the only one."""
    ns, separator, rest = argument.partition("=")
    named = bool(separator) and "." in ns and not Path(argument).exists()
    path = Path(rest if named else argument)
    if not path.exists():
        raise UsageError(f"--data {argument}: no such file or directory")
    if not path.is_dir():
        return path
    if named:
        found = resolve_data_arguments([str(path)], [ns]).get(ns)
        if found is None:
            raise UsageError(f"--data {argument}: {path} holds no sample of {ns} (<db>.<collection>.json)")
        return found
    samples = sorted(item for item in path.iterdir() if item.is_file() and not item.name.startswith(".")
                     and item.name != COLLECTION_STATS_FILE)
    if len(samples) == 1:
        return samples[0]
    if not samples:
        raise UsageError(f"--data {argument}: the directory holds no sample")
    names = ", ".join(item.name for item in samples[:6]) + (", …" if len(samples) > 6 else "")
    raise UsageError(f"--data {argument}: the directory holds samples of several collections ({names}); name one, "
                     f"such as --data {_stem_namespace(samples[0])}={argument}")


def _stem_namespace(path: Path) -> str:
    name = path.name
    for suffix in (".gz", ".bz2", ".xz"):
        name = name.removesuffix(suffix)
    return name.rsplit(".", 1)[0] if "." in name else name


def run_whatif(*, data: Path | str, query: str, indexes: Sequence[str], hint: str | None,
               server_version: str = "8.0", sample_size: int = 10_000) -> dict[str, Any]:
    """Load the sample, explain the query with the given indexes, and describe the inputs."""
    version = parse_server_version(server_version)
    what_if: WhatIfQuery | None = None
    try:
        what_if = parse_query_option(query)
    except OptionTooDeep:
        pass  # answered as unsupported below, after the other options and the sample are checked
    specs = [parse_index_option(text) for text in indexes]
    hint_key = parse_hint_option(hint) if hint is not None else None
    with collector_paused():  # the sample's documents and their index keys: a third of the time went to collections
        sample = load_sample(sample_file(str(data)), sample_size=sample_size)
        estimator = Estimator(sample.documents, server_version=version)
        if what_if is None:
            result: Mapping[str, Any] = {"unsupported": f"the query is nested deeper than BSON's {MAX_NESTING} levels"}
        else:
            result = estimator.explain(what_if, specs, hint_key)
    out: dict[str, Any] = dict(result)
    shown = what_if is not None and not any(
        too_deep(part) for part in (what_if.filter, what_if.sort, what_if.projection, what_if.pipeline)
        if part is not None)
    out["query"] = None if what_if is None or not shown else json_safe(what_if.to_json())
    out["sample"] = {
        "path": str(sample.path),
        "documents": len(sample.documents),
        "documentsSeen": sample.documents_seen,
        "sampled": sample.sampled,
        "problems": sample.problems,
    }
    out["serverVersion"] = f"{version[0]}.{version[1]}"
    return out


def render_text(result: Mapping[str, Any]) -> str:
    """A compact explanation: plan, stages, bounds, counters, covered/blocking sort, the winning index. The query's
    fields and values, index names and the sample's path are the user's or a file's text: each line is escaped for
    a terminal (``units.printable``), so a newline or an escape sequence in a name never starts a line of its own."""
    lines: list[str] = []
    sample = result.get("sample")
    if isinstance(sample, Mapping):
        sampled = " (reservoir sample)" if sample.get("sampled") else ""
        skipped = f", {sample['problems']:,} unreadable skipped" if sample.get("problems") else ""
        lines.append(f"sample: {sample.get('documents')} of {sample.get('documentsSeen')} documents{sampled}"
                     f" from {sample.get('path')}{skipped}")
    if "serverVersion" in result:
        lines.append(f"server version modelled: {result['serverVersion']} (classic engine)")
    if "unsupported" in result:
        lines.append(f"not estimated: {result['unsupported']}")
        return _joined(lines)
    if "error" in result:
        error = result["error"]
        if "index" in result:
            lines.append(f"index {result['index']} cannot be built on this sample: "
                         f"{error.get('message')} (code {error.get('code')}, {error.get('codeName')})")
        else:
            lines.append(f"the server refuses this request: {error.get('message')} (code {error.get('code')}, "
                         f"{error.get('codeName')})")
        return _joined(lines)
    lines.append(f"plan: {result.get('planSummary')}")
    lines.append("stages: " + " -> ".join(result.get("stages", [])))
    if result.get("pipeline"):
        lines.append("pipeline: " + " -> ".join(result["pipeline"]) + " (the query layer runs $cursor)")
    if result.get("collation"):
        lines.append(f"collation: {json.dumps(result['collation'])}")
    bounds = result.get("indexBounds")
    if bounds:
        lines.append("bounds: " + ", ".join(f"{name} {' U '.join(intervals) or '(empty)'}"
                                            for name, intervals in bounds.items()))
    key_range = result.get("keyRange")
    if key_range:
        lines.append(f"key range: min {json.dumps(key_range['startKey'], default=str)} (inclusive) to max "
                     f"{json.dumps(key_range['endKey'], default=str)} (exclusive)")
    counted = " counted: {}".format(result["nCounted"]) if "nCounted" in result else ""
    lines.append(f"keys examined: {result.get('totalKeysExamined')}  documents examined: "
                 f"{result.get('totalDocsExamined')}  returned: {result.get('nReturned')}{counted}")
    flags = [f"covered: {'yes' if result.get('covered') else 'no'}",
             f"blocking sort: {'yes' if result.get('blockingSort') else 'no'}"]
    if result.get("isMultiKey"):
        flags.append("multikey index")
    lines.append("  ".join(flags))
    candidates = result.get("candidates") or []
    if candidates:
        lines.append("candidates (trial until 101 results or EOF, most results per work unit wins):")
        for item in candidates:
            mark = "won: " if item.get("won") else "lost:"
            eof = ", reached the end" if item.get("reachedEOF") else ""
            lines.append(f"  {mark} {item['plan']} ({item['advancedInTrial']} results in "
                         f"{item['trialWorks']} work units{eof})")
    for note in result.get("notes", []):
        lines.append(f"note: {note}")
    return _joined(lines)


def _joined(lines: list[str]) -> str:
    return "\n".join(printable(line) for line in lines)
