"""A fake server holding a small shop: ``shop.orders`` with documents, one index, and a profiler that saw a slow
collection scan on two equality fields (IX001 proposes ``{status: 1, region: 1}``)."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta, timezone

import pytest

from tests.fakeserver import FakeServer

NOW = datetime.now(timezone.utc).replace(microsecond=0)
STATUSES = ("new", "paid", "shipped", "delivered")
REGIONS = ("north", "south", "east", "west", "islands")


def shop_documents(count: int = 400) -> list[dict]:
    return [{"_id": n, "status": STATUSES[n % 4], "region": REGIONS[n % 5], "total": n % 97,
             "createdAt": NOW - timedelta(minutes=n)} for n in range(count)]


def profiled_scan(minutes_ago: int, status: str = "paid", region: str = "islands") -> dict:
    return {"op": "query", "ns": "shop.orders", "command": {"find": "orders", "filter": {"status": status,
                                                                                           "region": region},
                                                             "$db": "shop"},
            "keysExamined": 0, "docsExamined": 4000, "nreturned": 20, "millis": 180, "planSummary": "COLLSCAN",
            "ts": NOW - timedelta(minutes=minutes_ago), "client": "10.0.0.1", "appName": "shop-api"}


@pytest.fixture(scope="session")
def running_fake() -> Iterator[FakeServer]:
    """One fake server for the session (stopping one takes a second); each test gets it with a fresh state."""
    server = FakeServer()
    server.uri = server.start()  # type: ignore[attr-defined]
    yield server
    server.stop()


@pytest.fixture
def fake(running_fake: FakeServer) -> FakeServer:
    running_fake.reset(databases={"shop": {"orders": shop_documents(), "audit": [{"_id": 1}]}},
                       indexes={"shop.orders": [{"v": 2, "key": {"createdAt": -1}, "name": "createdAt_-1"}]},
                       profile={"shop": [profiled_scan(minutes) for minutes in range(1, 9)]})
    return running_fake
