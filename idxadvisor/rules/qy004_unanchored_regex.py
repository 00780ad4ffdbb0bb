from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from idxadvisor.rules.base import Quiet, Rule, RuleContext, ShapeAnalysis, Verdict, query_filter
from idxadvisor.rules.ix001_missing_compound_index import efficiency_reason, wasteful
from idxadvisor.shapes.shape import REGEX_UNANCHORED, regex_prefix
from idxadvisor.units import counted


class UnanchoredRegex(Rule):
    """A query filters with a regex an index cannot seek into (no `^` prefix, or case-insensitive) and scans for it.

    ## What it does
    Flags a query shape whose filter has an unanchored or case-insensitive regex (`/smith/`, `/^smith/i`) when it
    examines many documents or index keys for each one it returns. From the logged query (never printed) it tells a
    substring search from a case-insensitive prefix, and advises for each.

    ## Why is this bad?
    An index can only seek to the literal prefix of a regex anchored with `^` and without the `i` flag. Any other
    regex is tested against every key of the index (at best) or every document of the collection: the cost grows with
    the collection, whatever the regex matches.

    ## Example
    ```js
    db.customers.find({ lastName: /silva/i })   // every document, for a handful of customers
    ```

    ## Fix
    For a case-insensitive prefix, a case-insensitive index and the same collation on the query:
    ```js
    db.customers.createIndex({ lastName: 1 }, { collation: { locale: "en", strength: 2 } })
    db.customers.find({ lastName: { $gte: "silva", $lt: "silvb" } }).collation({ locale: "en", strength: 2 })
    ```
    or store a lower-cased copy of the field and anchor the regex on it (`{ lastNameLower: /^silva/ }`). For a
    search inside the text, Atlas Search or a text index; anchor the regex when the application means a prefix.

    ## Options
    - `min_docs_per_returned` (10): documents (or keys) examined per document returned before the rule fires.
    - `min_wasted_per_execution` (500): documents examined beyond those returned, per execution.

    ## References
    - https://www.mongodb.com/docs/manual/reference/operator/query/regex/#index-use
    - https://www.mongodb.com/docs/manual/core/index-case-insensitive/
    """

    code = "QY004"
    name = "unanchored-regex"
    category = "query"
    severity = "warning"
    defaults = {"min_docs_per_returned": 10.0, "min_wasted_per_execution": 500.0}

    def check(self, analysis: ShapeAnalysis, context: RuleContext) -> Verdict | Quiet | None:
        fields = analysis.fields_with(REGEX_UNANCHORED)
        if not fields:
            return None
        if analysis.executions < context.settings.min_count:
            return Quiet(f"too few executions ({analysis.executions} < --min-count {context.settings.min_count})")
        if not analysis.examined_measured:
            return Quiet("the log does not show what it examined")
        keys = analysis.keys_per_returned or 0.0
        if keys > (analysis.docs_per_returned or 0.0) and keys >= self.options["min_docs_per_returned"] and \
                analysis.wasted_per_execution >= self.options["min_wasted_per_execution"]:
            examined = (f"examines {keys:,.0f} index keys per document returned "
                        f"({analysis.wasted_per_execution:,.0f} wasted per execution)")  # the regex runs on each key
        elif wasteful(analysis, self.options["min_docs_per_returned"], self.options["min_wasted_per_execution"]):
            examined = analysis.examination()
        else:
            return Quiet(f"another predicate narrows the scan: it {efficiency_reason(analysis)}")
        message = (f"{analysis.shape.op} filters {', '.join(fields)} with a regex no index can seek into (no ^ prefix "
                   f"or case-insensitive), and {examined}, {counted(analysis.executions, 'execution')}.")
        representative = analysis.stats.representative
        kinds = regex_kinds(query_filter(representative.op if representative else analysis.shape.op,
                                         representative.command if representative else None))
        details = [_ADVICE[kind] for kind in ("case-insensitive prefix", "substring") if kind in kinds]
        return Verdict(message, details=details or [_ADVICE["substring"]])


_ADVICE = {
    "case-insensitive prefix": "a case-insensitive prefix (/^…/i): give the field an index with a case-insensitive "
                               "collation ({ locale: \"en\", strength: 2 }) and query a range with that collation, or "
                               "store a lower-cased copy of the field and anchor the regex on it (/^…/, no i flag)",
    "substring": "a search inside the value (no ^): no index narrows it; anchor it with ^ if a prefix is meant, or "
                 "use Atlas Search or a text index to search words",
}


def regex_kinds(document: Any) -> set[str]:
    """What the regexes of a filter that no index can seek into ask for: ``case-insensitive prefix`` (``/^a/i``) or
    ``substring`` (anything else); regexes with a prefix an index seeks to are left out."""
    kinds = set()
    for pattern, options in _regexes(document):
        if regex_prefix(pattern, options):
            continue
        anchored = pattern.startswith(("^", "\\A")) and "|" not in pattern
        kinds.add("case-insensitive prefix" if anchored and "i" in options else "substring")
    return kinds


def _regexes(value: Any) -> Iterator[tuple[str, str]]:
    """(pattern, options) of every regex in a filter: ``/a/i``, ``{"$regex": "a", "$options": "i"}``."""
    if isinstance(value, list):
        for item in value:
            yield from _regexes(item)
    elif isinstance(value, dict):
        regex = value.get("$regularExpression")
        if isinstance(regex, dict) and isinstance(regex.get("pattern"), str):
            yield regex["pattern"], str(regex.get("options", ""))
            return
        if "$regex" in value:
            pattern, options = value["$regex"], value.get("$options", "")
            if isinstance(pattern, dict):
                yield from _regexes(pattern)
            elif isinstance(pattern, str):
                yield pattern, str(options)
            return
        for item in value.values():
            yield from _regexes(item)
