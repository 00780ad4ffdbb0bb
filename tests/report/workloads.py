"""Logs for the HTML report's tests and benchmark: many shapes, and names and values written to break a page.

``many_shapes_log`` writes a 4.4+ JSON log with ``shapes`` distinct query shapes over 40 collections and two hours:
finds with 2-6 executions each (some scanning the collection, so there are findings), and every 25th shape a
polled aggregation whose runs overlap. ``hostile_log`` names a collection, fields, a plan and an app with markup,
quotes, ``</script>`` and ``<!--``; its literal values are markup too (seen with ``--show-values``).
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta, timezone
from pathlib import Path

from tests.helpers import json_line, slow_attr

START = datetime(2026, 3, 2, 8, 0, tzinfo=timezone.utc)
#: What a hostile name tries: leave the JSON script, open a comment, break out of an attribute, inject markup.
HOSTILE_NS = "shop.</script><script>window.pwned=1</script><!--"
HOSTILE_FIELD = "\"'><img src=x onerror=\"window.pwned=2\">"
HOSTILE_PLAN = "IXSCAN { <b>bold</b>: 1 }"
HOSTILE_VALUE = "</script><svg onload=window.pwned=3>"


def _ts(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}+00:00"


def many_shapes_log(path: Path, shapes: int, seed: int = 15) -> Path:
    """Write the log to ``path``: every shape has its own field, so there are exactly ``shapes`` shapes."""
    rng = random.Random(seed)
    lines = []
    for number in range(shapes):
        collection = f"c{number % 40:02d}"
        if number % 25 == 0:
            lines += _polled_aggregation(rng, number, collection)
            continue
        collscan = number % 7 == 0
        for _ in range(rng.randint(2, 6)):
            moment = START + timedelta(seconds=rng.uniform(0, 7200))
            returned = rng.randint(0, 50)
            attr = slow_attr({"find": collection, "filter": {f"field{number}": rng.randint(0, 9), "status": "A"},
                              "limit": 50}, ns=f"app.{collection}",
                             planSummary="COLLSCAN" if collscan else "IXSCAN { status: 1 }",
                             keysExamined=0 if collscan else returned * 4, docsExamined=rng.randint(5_000, 90_000)
                             if collscan else returned * 4, nreturned=returned,
                             durationMillis=int(rng.lognormvariate(4.5, 1.0)) + 1)
            lines.append((moment, json_line(attr, ts=_ts(moment), ctx=f"conn{rng.randint(1, 60)}")))
    lines.sort(key=lambda item: item[0])
    path.write_text("\n".join(line for _, line in lines) + "\n", encoding="utf-8")
    return path


def _polled_aggregation(rng: random.Random, number: int, collection: str) -> list[tuple[datetime, str]]:
    """Every 20 s for ten minutes, runs of 15-45 s: they overlap, up to three at once."""
    lines = []
    for run in range(30):
        started = START + timedelta(seconds=20 * run)
        duration = rng.randint(15_000, 45_000)
        moment = started + timedelta(milliseconds=duration)
        command = {"aggregate": collection, "pipeline": [{"$match": {f"field{number}": "x"}},
                                                         {"$group": {"_id": "$type", "n": {"$sum": 1}}}],
                   "cursor": {}}
        attr = slow_attr(command, ns=f"app.{collection}", planSummary="COLLSCAN", keysExamined=0,
                         docsExamined=400_000, nreturned=4, durationMillis=duration)
        lines.append((moment, json_line(attr, ts=_ts(moment), ctx=f"conn{run % 3 + 1}")))
    return lines


def hostile_log(path: Path) -> Path:
    """A collection scan on a hostile field of a hostile namespace, often enough for a finding and an index."""
    lines = []
    for number in range(6):
        moment = START + timedelta(minutes=number)
        attr = slow_attr({"find": HOSTILE_NS.split(".", 1)[1], "filter": {HOSTILE_FIELD: HOSTILE_VALUE},
                          "$db": "shop"}, ns=HOSTILE_NS, planSummary=HOSTILE_PLAN, keysExamined=0,
                         docsExamined=80_000, nreturned=1, durationMillis=300 + number,
                         appName="<i>reporting</i>")
        lines.append(json_line(attr, ts=_ts(moment)))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path
