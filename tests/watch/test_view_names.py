"""The live view of ``idxadvisor watch`` prints names from the log (namespaces, shapes, messages, index commands) and
the path it follows: each is shown with its control characters, newlines and bidi controls escaped, never obeyed."""

from __future__ import annotations

import io
from datetime import datetime, timezone

from rich.console import Console

from idxadvisor.models.report import Finding, SuggestedIndex
from idxadvisor.watch.snapshot import FindingRow, ShapeRow, Snapshot
from idxadvisor.watch.view import render

FORGED = "FORGED: all good"
HOSTILE = f"shop.c\n{FORGED}\x1b[2J\u202e"
RAW = ["\x1b", "\u202e"]


def test_the_live_view_escapes_every_name() -> None:
    row = ShapeRow("f1", HOSTILE, "find", f"find {HOSTILE} {{a\n{FORGED}: 1}}", 3, 1.0, 30.0, 12.0, 5.0, 5.0)
    finding = Finding.model_construct(rule="IX001", severity="warning", fingerprint="f1", ns=HOSTILE,
                                      message=f"a scan on {HOSTILE}")
    index = SuggestedIndex.model_construct(ns=HOSTILE, command=f'db.getSiblingDB("shop").c.createIndex({{"a\\n": 1}})'
                                           f"\n{FORGED}\x1b[2J", rules=["IX001"], impact=10.0, impact_unit="docs")
    snapshot = Snapshot(datetime.now(timezone.utc), 5.0, f"mongod\n{FORGED}\u202e.log", f"rotated\n{FORGED}", 10, 3,
                        0, 60.0, 5.0, 3, 3, [row], [row], [FindingRow(finding, new=True)], [index], 1.0, "total")
    out = io.StringIO()
    Console(file=out, width=400, height=60, color_system=None, force_terminal=False).print(render(snapshot, 60,
                                                                                                    keys=False))
    text = out.getvalue()
    assert not [line for line in text.splitlines() if line.lstrip(" │|").startswith("FORGED")], text
    assert [character for character in RAW if character in text] == []
    assert "shop.c\\nFORGED" in text and "mongod\\nFORGED: all good\\u202e.log" in text and "rotated\\nFORGED" in text
