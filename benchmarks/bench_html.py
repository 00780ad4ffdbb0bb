"""Benchmark the HTML report: the size of a 2,000-shape page and the time a headless Chromium takes to show it.

Usage: ``python benchmarks/bench_html.py [--shapes N] [--repeat R]``  (needs ``pip install -e '.[test]'`` and
Debian's ``chromium``)

Generates a log of N distinct shapes (default 2,050, so that the page holds the html default of 2,000), analyses it
once, then prints:

* the page's size, and how much of it is the charting library, the chart data and the markup;
* writing the page against writing the JSON report of the same report, in the same run (medians of R);
* in the browser (medians of R fresh pages): the load event, the first chart drawn and every visible chart drawn,
  all from the start of navigation; opening a closed shape and drawing its charts; sorting the 2,000 rows.
"""

from __future__ import annotations

import argparse
import io
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from idxadvisor.api import analyze  # noqa: E402
from idxadvisor.config import Settings  # noqa: E402
from idxadvisor.report import render  # noqa: E402
from idxadvisor.report.html import charting_library, shape_anchor  # noqa: E402
from tests.report.browser import CHARTS_SETTLED, launch  # noqa: E402
from tests.report.workloads import many_shapes_log  # noqa: E402

FIRST_DRAWN = "() => document.querySelector('figure.chart[data-state=drawn]') !== null"
NOW = "performance.now()"


def median_seconds(action, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        action()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", type=int, default=2050)
    parser.add_argument("--repeat", type=int, default=5)
    options = parser.parse_args()

    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as folder:
        log = many_shapes_log(Path(folder) / "many.log", options.shapes)
        report = analyze([str(log)], Settings(format="html"))
        charting_library()  # the bundle is made once per process (1 s or so): not part of writing a page

        def write(fmt: str) -> str:
            out = io.StringIO()
            render(report, out, format=fmt)
            return out.getvalue()

        page = write("html")
        json_seconds = median_seconds(lambda: write("json"), options.repeat)
        html_seconds = median_seconds(lambda: write("html"), options.repeat)
        path = Path(folder) / "report.html"
        path.write_text(page, encoding="utf-8")

        library = len(charting_library().script.encode())
        data = re.search(r'<script type="application/json" id="idxadvisor-charts">(.*?)</script>', page, re.S)
        data_bytes = len(data.group(1).encode()) if data else 0
        size = len(page.encode())
        print(f"{len(report.shapes):,} shapes on the page ({report.summary.shapes:,} in the log), "
              f"{sum(1 for _ in re.finditer('<figure class=', page)):,} charts")
        print(f"page size        {size / 1e6:6.2f} MB: charting library {library / 1e6:.2f} MB, chart data "
              f"{data_bytes / 1e6:.2f} MB, markup, style and script {(size - library - data_bytes) / 1e6:.2f} MB")
        print(f"writing          html {html_seconds:.2f} s, json {json_seconds:.2f} s "
              f"(x{html_seconds / json_seconds:.1f})")

        with sync_playwright() as playwright:
            browser = launch(playwright)
            loads, firsts, drawns, opens, sorts = [], [], [], [], []
            last = shape_anchor(report.shapes[-1].fingerprint)
            for _ in range(options.repeat):
                tab = browser.new_page(viewport={"width": 1366, "height": 900})
                tab.goto(path.as_uri())
                tab.wait_for_function(FIRST_DRAWN, timeout=120_000)
                firsts.append(tab.evaluate(NOW))
                tab.wait_for_function(CHARTS_SETTLED, timeout=120_000)
                drawns.append(tab.evaluate(NOW))
                loads.append(tab.evaluate("performance.getEntriesByType('navigation')[0].loadEventEnd"))
                started = tab.evaluate(NOW)
                tab.evaluate(f"location.hash = '{last}'")
                tab.wait_for_function(CHARTS_SETTLED, timeout=120_000)
                opens.append(tab.evaluate(NOW) - started)
                sorts.append(tab.evaluate("""() => { const started = performance.now();
                    document.querySelector('#shapes-table th:nth-child(8) button').click();
                    return performance.now() - started; }"""))
                tab.close()
            browser.close()
        print(f"browser (median of {options.repeat}, ms from navigation): load event {statistics.median(loads):,.0f}, "
              f"first chart {statistics.median(firsts):,.0f}, visible charts drawn {statistics.median(drawns):,.0f}")
        print(f"browser (median, ms): open a closed shape and draw its charts {statistics.median(opens):,.0f}, "
              f"sort {len(report.shapes):,} rows {statistics.median(sorts):,.0f}")


if __name__ == "__main__":
    main()
