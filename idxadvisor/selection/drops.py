"""What the chosen set lets go: every existing index to hide first (``hideIndex``) and drop once nothing slowed down.

* **redundant**: a strict prefix of a new index of the set, or of another index the collection keeps (IX005's
  judgement: ``rules.ix005_redundant_index.redundant_prefixes``);
* **unused**: no operation of the log used it, over a long enough log (IX006's judgement:
  ``rules.ix006_unused_index.unused_indexes``, with IX006's options);
* **superseded**: the shapes whose plans used it are all served by a new index of the set.

Never the ``_id`` index, a unique, TTL, partial or hidden index, one that carries the shard key, nor a text, geo,
hashed or wildcard index (their plans are not all in a log): the rules' own protection (``protected``).
"""

from __future__ import annotations

from dataclasses import dataclass

from idxadvisor.indexes.model import IndexSpec, KeyPattern
from idxadvisor.indexes.plans import parse_plan_summary
from idxadvisor.rules.base import RuleContext
from idxadvisor.rules.ix005_redundant_index import protected, redundant_prefixes
from idxadvisor.rules.ix006_unused_index import UnusedIndex, server_uses, slow_only_caveat, unused_indexes
from idxadvisor.units import human_count


@dataclass
class Letting:
    """An existing index the set lets go, and why."""

    index: IndexSpec
    reason: str
    because: frozenset[KeyPattern] = frozenset()  # the new indexes that make it go
    replacement: KeyPattern | None = None  # the longer index that takes its queries (a redundant prefix)


def lettings(ns: str, existing: list[IndexSpec], new: list[IndexSpec], served_by_new: dict[str, KeyPattern],
             context: RuleContext) -> list[Letting]:
    """The existing indexes to hide then drop once ``new`` is built; ``served_by_new`` maps the fingerprint of each
    shape the set serves with a new index to that index's key."""
    found: dict[str, Letting] = {}
    for shorter, longer in redundant_prefixes(existing, new, ns, context):
        found[shorter.name] = Letting(shorter, f"redundant: a prefix of the new index {longer}, which serves every "
                                               "query it serves", frozenset({longer.key}), longer.key)
    kept = [index for index in existing if index.name not in found]
    for shorter, longer in redundant_prefixes(kept, kept, ns, context):
        found.setdefault(shorter.name, Letting(shorter, f"redundant: a prefix of {longer.name} {longer} (IX005)",
                                               replacement=longer.key))
    needed = {item.replacement for item in found.values()}  # a longer index that takes a prefix's queries stays
    candidates = [index for index in existing if index.name not in found and index.key not in needed]
    options = UnusedIndex(context.settings.rules.get("IX006")).options
    for unused in unused_indexes(ns, context, options["min_span_hours"], candidates):
        notes = "".join(f"; {note}" for note in (unused.caveat, unused.server_note) if note)
        found[unused.index.name] = Letting(unused.index, f"unused: no operation of the log used it, {unused.evidence} "
                                                         f"(IX006){notes}")
    for index in candidates:
        if index.name in found or protected(index, ns, context) or not index.is_btree:
            continue
        users = [stats.shape.fingerprint for stats in context.shapes_of(ns)
                 if any(index.key in parse_plan_summary(plan).indexes for plan in stats.plans)]
        if users and all(fingerprint in served_by_new for fingerprint in users):
            keys = {served_by_new[fingerprint] for fingerprint in users}
            by = ", ".join(str(IndexSpec(key=key)) for key in sorted(keys))
            counted = server_uses(index)
            caveat = (f"$indexStats counted {human_count(counted[0])} use{'s' if counted[0] != 1 else ''} {counted[1]}: "
                      "some may be operations the log does not show" if counted and counted[0]
                      else slow_only_caveat(context))
            found[index.name] = Letting(index, f"superseded: the {len(users)} shape{'s' if len(users) != 1 else ''} "
                                               f"whose plans used it {'are' if len(users) != 1 else 'is'} served by "
                                               f"{by} in the set{'; ' + caveat if caveat else ''}", frozenset(keys))
    return [found[index.name] for index in existing if index.name in found]
