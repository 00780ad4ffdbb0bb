"""Who is asking: an operation's application (its ``appName``) says what kind of traffic it is.

* **bulk tools** (mongorestore, mongoimport, mongodump, mongoexport, mongosync, mongomirror): one-off loads and
  copies. Their writes are not the collection's write rate, and their reads are not queries to index.
* **interactive tools** (MongoDB Compass, mongosh and the legacy shell, Atlas Data Explorer, Studio 3T, …): a person
  typing. A shape such a tool ran a few times within minutes is ad hoc: reported, not indexed.
* **applications**: everything else (drivers name themselves after the application, or not at all).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache

BULK = "bulk tool"
INTERACTIVE = "interactive tool"
APPLICATION = "application"

#: appName prefixes (case-insensitive) of the bulk tools; each tool sets its own name as appName.
BULK_TOOLS = ("mongorestore", "mongoimport", "mongodump", "mongoexport", "mongosync", "mongomirror", "mongofiles")
#: appName prefixes (case-insensitive) of the interactive tools.
INTERACTIVE_TOOLS = ("mongodb compass", "mongosh", "mongodb shell", "atlas data explorer", "mongodb atlas data explorer",
                     "data explorer", "studio 3t", "robo 3t", "robomongo", "nosqlbooster", "mongodb for vs code",
                     "mongodb-vscode", "datagrip", "navicat", "mongodb charts")

#: Ad hoc: at most this many executions …
AD_HOC_MAX_EXECUTIONS = 20
#: … within this many minutes, from interactive tools.
AD_HOC_MAX_MINUTES = 60.0


def app_kind(app: str | None) -> str:
    """The kind of traffic of an application name."""
    if not app:
        return APPLICATION
    name = app.casefold().strip()
    if name.startswith(BULK_TOOLS):
        return BULK
    if name.startswith(INTERACTIVE_TOOLS):
        return INTERACTIVE
    return APPLICATION


@lru_cache(maxsize=1024)  # a log has a few application names: the digest asks once per write
def is_bulk_tool(app: str) -> bool:
    return app_kind(app) == BULK


def kind_shares(apps: Mapping[str, int], executions: int) -> dict[str, float]:
    """The share of ``executions`` from each kind of traffic (operations without an appName count as applications)."""
    counts = {BULK: 0, INTERACTIVE: 0, APPLICATION: 0}
    for app, count in apps.items():
        counts[app_kind(app)] += count
    counts[APPLICATION] += max(0, executions - sum(apps.values()))
    total = max(executions, sum(counts.values()), 1)
    return {kind: count / total for kind, count in counts.items()}


def bulk_share(apps: Mapping[str, int], executions: int) -> float:
    """The share of a shape's executions from bulk tools (mongorestore, …)."""
    return kind_shares(apps, executions)[BULK]


def ad_hoc_reason(apps: Mapping[str, int], executions: int, first: datetime | None, last: datetime | None) -> str | None:
    """Why a shape is ad hoc (None when it is not): interactive tools ran it, a few times, within minutes."""
    if not apps or executions > AD_HOC_MAX_EXECUTIONS or kind_shares(apps, executions)[INTERACTIVE] < 0.9:
        return None
    minutes = (last - first).total_seconds() / 60 if first is not None and last is not None else 0.0
    if minutes > AD_HOC_MAX_MINUTES:
        return None
    tools = ", ".join(sorted(app for app in apps if app_kind(app) == INTERACTIVE))
    span = f"within {minutes:,.0f} minute{'s' if round(minutes) != 1 else ''}" if minutes >= 1 else "within a minute"
    return (f"ad hoc: {executions} run{'s' if executions != 1 else ''} from {tools} {span}: reported, not indexed "
            f"(a person trying a query; more than {AD_HOC_MAX_EXECUTIONS} runs or over {AD_HOC_MAX_MINUTES:g} "
            "minutes would count)")
