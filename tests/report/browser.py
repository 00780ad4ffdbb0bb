"""A real headless Chromium for the HTML report's tests and benchmark, driven by Playwright.

The browser is Debian's ``chromium`` (``apt-get install chromium``; never ``playwright install``), or the one
``IDXADVISOR_CHROMIUM`` names. ``open_report`` loads a page with every request other than the page itself refused and
recorded, and collects what the console and the page said, so that a test can assert the page asked for nothing
and logged nothing.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

#: The flags of a quiet, private, offline headless browser (Playwright adds a fresh --user-data-dir of its own).
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
#: Set by .ci/run: a missing browser fails the browser tests instead of skipping them.
REQUIRE_BROWSER = "IDXADVISOR_REQUIRE_BROWSER"

#: True once every chart that can be seen (not inside closed details) is drawn or failed.
CHARTS_SETTLED = """() => Array.from(document.querySelectorAll('figure.chart'))
    .filter(figure => !figure.parentElement.closest('details:not([open])'))
    .every(figure => figure.dataset.state === 'drawn' || figure.dataset.state === 'failed')"""

#: Per figure: its chart id, kind, state, the details it sits in, and how many items each named mark drew.
FIGURES = """() => Array.from(document.querySelectorAll('figure.chart')).map(figure => {
    const marks = {};
    figure.querySelectorAll('svg g.role-mark').forEach(group => {
        const name = Array.from(group.classList).find(cls => cls.endsWith('_marks'));
        if (name) marks[name.slice(0, -'_marks'.length).replace(/_/g, '-')] =
            group.querySelectorAll(':scope > path, :scope > line, :scope > text').length;
    });
    const details = figure.closest('details');
    return {chart: figure.dataset.chart, kind: figure.className.match(/chart-(\\w+)/)[1],
            state: figure.dataset.state || null, details: details ? details.id : null, marks: marks};
})"""


def chromium_path() -> str | None:
    """The browser to drive: IDXADVISOR_CHROMIUM if it names one, else chromium on the PATH; None if there is none."""
    named = os.environ.get("IDXADVISOR_CHROMIUM")
    if named:
        return shutil.which(named)
    return shutil.which("chromium") or shutil.which("chromium-browser")


def launch(playwright: Any) -> Any:
    path = chromium_path()
    if path is None:
        raise RuntimeError("no chromium: apt-get install chromium, or name one in IDXADVISOR_CHROMIUM")
    return playwright.chromium.launch(executable_path=path, headless=True, args=CHROMIUM_FLAGS)


@dataclass
class Visit:
    """A page opened by ``open_report``, and what it did."""

    page: Any
    requests: list[str] = field(default_factory=list)  # every URL asked for, the page's own included
    console: list[tuple[str, str]] = field(default_factory=list)  # (type, text)
    errors: list[str] = field(default_factory=list)  # uncaught exceptions

    def figures(self) -> list[dict[str, Any]]:
        return self.page.evaluate(FIGURES)

    def wait_for_charts(self, timeout_ms: int = 60_000) -> None:
        self.page.wait_for_function(CHARTS_SETTLED, timeout=timeout_ms)

    def settled_box(self, locator: Any) -> dict[str, float]:
        """Where ``locator`` is once the layout stops moving (the same box two frames apart): a forced click skips
        Playwright's own wait for a stable element, and aims where the element was when it looked."""
        previous = None
        for _ in range(50):
            self.page.evaluate("new Promise(done => requestAnimationFrame(() => requestAnimationFrame(done)))")
            box = locator.bounding_box()
            if box is not None and box == previous:
                return box
            previous = box
        raise AssertionError(f"{locator} kept moving")

    def complaints(self) -> list[str]:
        """Console errors and warnings, uncaught exceptions, CSP violations: all that a clean page never says."""
        violations = self.page.evaluate("window.__violations || []")
        return ([f"{kind}: {text}" for kind, text in self.console if kind in ("error", "warning")]
                + [f"exception: {error}" for error in self.errors] + [f"CSP: {item}" for item in violations])


#: A laptop screen.
VIEWPORT = {"width": 1366, "height": 900}


def open_report(context: Any, path: Path) -> Visit:
    """Open ``path`` in a new page of ``context``: other URLs are refused, and everything is recorded."""
    url = path.resolve().as_uri()
    page = context.new_page()
    visit = Visit(page)
    page.add_init_script("window.__violations = []; document.addEventListener('securitypolicyviolation', "
                         "event => window.__violations.push(event.violatedDirective + ' ' + event.blockedURI));")

    def route(request_route: Any) -> None:
        if request_route.request.url.split("#", 1)[0] == url:
            request_route.continue_()
        else:
            request_route.abort()

    page.route("**/*", route)
    page.on("request", lambda request: visit.requests.append(request.url))
    page.on("console", lambda message: visit.console.append((message.type, message.text)))
    page.on("pageerror", lambda error: visit.errors.append(str(error)))
    page.goto(url)
    visit.wait_for_charts()
    return visit
