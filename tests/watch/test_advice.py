"""The rules on the total digest while watching: run only when new lines came and the last run is old enough."""

from __future__ import annotations

from idxadvisor.config import Settings
from idxadvisor.watch.follow import InputStart, Lines
from idxadvisor.watch.session import WatchSession
from idxadvisor.watch.snapshot import Advisor, take_snapshot
from tests.helpers import json_line, slow_attr


def scans(count: int, start: int = 0) -> bytes:
    return "".join(json_line(slow_attr({"find": "orders", "filter": {"status": number}}, docsExamined=5000,
                                       nreturned=2), ctx=f"conn{number}") + "\n"
                   for number in range(start, start + count)).encode()


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_the_advice_waits_for_new_lines_and_for_its_interval() -> None:
    clock = Clock()
    session = WatchSession(Settings(), 300.0, 2.0, 0.0)
    advisor = Advisor(Settings(), 2.0, clock)
    session.feed([InputStart("-", True), Lines(scans(5))])
    assert advisor.run_if_due(session)
    assert [finding.rule for finding in advisor.findings] == ["IX004"]
    clock.now = 5.0
    assert not advisor.run_if_due(session)  # nothing new was read
    session.feed([Lines(scans(1, start=10))])
    clock.now = 5.5
    assert advisor.run_if_due(session)  # the last run is older than an interval
    session.feed([Lines(scans(1, start=20))])
    clock.now = 6.0
    assert not advisor.run_if_due(session)  # half an interval after the last run
    clock.now = 7.6
    assert advisor.run_if_due(session)


def test_a_finding_is_new_only_in_the_refresh_after_it_appeared() -> None:
    clock = Clock()
    session = WatchSession(Settings(), 300.0, 2.0, 0.0)
    advisor = Advisor(Settings(), 2.0, clock)
    session.feed([InputStart("-", True), Lines(scans(2))])
    clock.now = 1.0
    advisor.run_if_due(session)
    assert advisor.findings == []  # two executions: below --min-count
    session.feed([Lines(scans(3, start=2))])
    clock.now = 3.0
    advisor.run_if_due(session)
    first = take_snapshot(session, advisor, now=3.0, started=0.0, since=1.0, sort="total", limit=5, source="-",
                          status="")
    later = take_snapshot(session, advisor, now=5.0, started=0.0, since=3.0, sort="total", limit=5, source="-",
                          status="")
    assert [row.finding.rule for row in first.new_findings] == ["IX004"]
    assert later.new_findings == [] and len(later.findings) == 1
    assert first.total[0].count == 5 and first.total[0].docs_per_returned == 2500.0
