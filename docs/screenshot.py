"""Rebuild the screenshots of the demo workload's HTML report in docs/report.md: ``python docs/screenshot.py``.

Renders ``idxadvisor analyze fixtures/demo/shop.log --indexes fixtures/demo/indexes.json --data fixtures/demo/data
--format html`` and photographs it in headless Chromium (as the browser tests do) at a laptop's 1366 pixels:
``html-report.png`` is the top of the page, ``html-report-shape.png`` the first shape's charts.
"""

from __future__ import annotations

import io
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from idxadvisor.api import analyze  # noqa: E402
from idxadvisor.config import Settings  # noqa: E402
from idxadvisor.report import render  # noqa: E402
from tests.report.browser import CHARTS_SETTLED, VIEWPORT, launch  # noqa: E402

DEMO = Path("fixtures") / "demo"  # relative, as the README's command prints it
DOCS = ROOT / "docs"


def main() -> None:
    from playwright.sync_api import sync_playwright

    os.chdir(ROOT)
    settings = Settings(format="html", indexes=DEMO / "indexes.json", data=[str(DEMO / "data")], jobs=1)
    out = io.StringIO()
    render(analyze([str(DEMO / "shop.log")], settings), out, format="html")
    with tempfile.TemporaryDirectory() as folder, sync_playwright() as playwright:
        page_path = Path(folder) / "demo.html"
        page_path.write_text(out.getvalue(), encoding="utf-8")
        browser = launch(playwright)
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(page_path.as_uri())
        page.wait_for_function(CHARTS_SETTLED)
        page.screenshot(path=DOCS / "html-report.png")
        shape = page.locator("details.shape").first
        top = shape.bounding_box()
        figures = shape.locator(".figures").bounding_box()
        assert top is not None and figures is not None
        page.screenshot(path=DOCS / "html-report-shape.png", full_page=True, clip={
            "x": top["x"] - 8, "y": top["y"] - 8, "width": top["width"] + 16,
            "height": figures["y"] + figures["height"] - top["y"] + 16})
        browser.close()
    print(f"wrote {DOCS / 'html-report.png'} and {DOCS / 'html-report-shape.png'}")


if __name__ == "__main__":
    main()
