"""The real headless Chromium the HTML tests share: one browser for the session, a fresh context per test.

Locally these tests skip without Playwright or a chromium; .ci/run sets IDXADVISOR_REQUIRE_BROWSER=1 so that there
they fail instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.report.browser import REQUIRE_BROWSER, VIEWPORT, chromium_path, launch

#: navigator.clipboard.writeText, recorded (headless Chromium has no clipboard to read back)
RECORD_CLIPBOARD = """window.__copied = [];
Object.defineProperty(navigator, 'clipboard', {value: {writeText: text => { window.__copied.push(text);
                                                                           return Promise.resolve(); }}});"""


def _unavailable(reason: str) -> None:
    if os.environ.get(REQUIRE_BROWSER) == "1":
        pytest.fail(f"{REQUIRE_BROWSER}=1 but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("Playwright is not installed (pip install -e '.[test]')")
    if chromium_path() is None:
        _unavailable("no chromium (apt-get install chromium)")
    with sync_playwright() as playwright:
        chromium = launch(playwright)
        yield chromium
        chromium.close()


@pytest.fixture
def context(browser: Any) -> Iterator[Any]:
    context = browser.new_context(viewport=VIEWPORT)
    context.add_init_script(RECORD_CLIPBOARD)
    yield context
    context.close()
