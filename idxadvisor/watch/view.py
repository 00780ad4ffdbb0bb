"""The live view on a terminal: a Rich ``Live`` screen redrawn every refresh, with keys to sort and pause.

Log text (namespaces, shapes, messages) is never read as Rich markup: every cell is a ``Text``, and every control
character, newline and bidi control in it is shown as its escape (``terminal_text``), never obeyed.
"""

from __future__ import annotations

from typing import Any

from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from idxadvisor.report.readable import terminal_text
from idxadvisor.units import human_impact
from idxadvisor.watch.run import read_keys
from idxadvisor.watch.snapshot import SORTS, FindingRow, ShapeRow, Snapshot

_SORT_WORDS = {name: words for name, words in SORTS.values()}
_SEVERITY_STYLE = {"error": "red", "warning": "yellow", "info": "cyan"}
#: Lines the view needs besides the rows of its two shape tables (header, titles, table heads, findings, indexes).
_FIXED_LINES = 24
MAX_FINDINGS = 6
MAX_INDEXES = 4


class LiveDisplay:
    """The Rich live view on ``console``; ``key_fd``: the terminal to read keys from (None: no keys)."""

    def __init__(self, console: Console, key_fd: int | None) -> None:
        self.console = console
        self.key_fd = key_fd
        self._live = Live(console=console, screen=True, auto_refresh=False, redirect_stdout=False,
                          redirect_stderr=False)
        self._terminal_mode: Any = None

    def start(self) -> None:
        if self.key_fd is not None:
            self._terminal_mode = _cbreak(self.key_fd)
            if self._terminal_mode is None:
                self.key_fd = None
        self._live.start()
        self._live.update(Text("idxadvisor watch: reading …"), refresh=True)

    def show(self, snapshot: Snapshot) -> None:
        self._live.update(render(snapshot, self.console.size.height, keys=self.key_fd is not None), refresh=True)

    def keys(self) -> str:
        return read_keys(self.key_fd) if self.key_fd is not None else ""

    def stop(self) -> None:
        try:
            self._live.stop()
        finally:
            if self._terminal_mode is not None and self.key_fd is not None:
                import termios

                termios.tcsetattr(self.key_fd, termios.TCSADRAIN, self._terminal_mode)
                self._terminal_mode = None


def _cbreak(fd: int) -> Any:
    """Put the terminal in cbreak mode (keys without Enter; Ctrl-C still sends SIGINT) and return its mode before;
    None when that cannot be done (no termios, as on Windows, or not a terminal after all): then there are no keys."""
    try:
        import termios
        import tty
    except ImportError:
        return None
    try:
        mode = termios.tcgetattr(fd)
        tty.setcbreak(fd)
    except (termios.error, OSError):
        return None
    return mode


def render(snapshot: Snapshot, height: int, *, keys: bool) -> Group:
    rows = max(3, min(len(snapshot.total) or 3, (height - _FIXED_LINES) // 2))
    parts: list[Any] = [_header(snapshot, keys)]
    window_title = (f"Last {_duration(snapshot.window_seconds)}"
                    + (f" (watching for {_duration(snapshot.window_covered)})"
                       if snapshot.window_covered < snapshot.window_seconds else "")
                    + f": {snapshot.window_operations:,} operations")
    parts.append(_shape_table(window_title, snapshot.window[:rows], snapshot.sort))
    total_title = f"Since start ({_duration(snapshot.elapsed)}): {snapshot.total_operations:,} operations"
    parts.append(_shape_table(total_title, snapshot.total[:rows], snapshot.sort))
    parts.append(_findings_table(snapshot))
    parts.append(_index_table(snapshot))
    return Group(*parts)


def _header(snapshot: Snapshot, keys: bool) -> Text:
    text = Text()
    text.append("idxadvisor watch ", style="bold")
    text.append(terminal_text(snapshot.source))
    text.append(f"  ·  {snapshot.lines:,} lines, {snapshot.operations:,} operations")
    if snapshot.problems:
        text.append(f", {snapshot.problems:,} problem lines", style="yellow")
    text.append(f"  ·  sorted by {_SORT_WORDS.get(snapshot.sort, snapshot.sort)}")
    if snapshot.paused:
        text.append("  PAUSED ", style="reverse bold")
    if snapshot.status:
        text.append(f"\n{terminal_text(snapshot.status)}", style="yellow")
    if keys:
        text.append("\nkeys: ", style="dim")
        text.append("  ".join(f"{key} {words}" for key, (_, words) in SORTS.items())
                    + "  space pause  q quit (with the report)  Ctrl-C report", style="dim")
    return text


def _number(value: float | None, digits: int = 1) -> str:
    if value is None:
        return "-"
    return f"{value:,.{digits}f}" if value < 1000 else f"{value:,.0f}"


def _shape_table(title: str, rows: list[ShapeRow], sort: str) -> Table:
    table = Table(title=Text(title, style="bold"), title_justify="left", box=box.SIMPLE_HEAD, expand=True,
                  pad_edge=False)
    # the shape's text starts with its operation and namespace: it needs no columns of their own
    headers = (("shape", "left", None), ("count", "right", "count"), ("/s", "right", None),
               ("total ms", "right", "total"), ("p95 ms", "right", "p95"), ("docs/ret", "right", "ratio"),
               ("keys/ret", "right", None))
    for header, justify, key in headers:
        style = "bold underline" if key == sort else ""
        table.add_column(Text(header, style=style), justify=justify,  # type: ignore[arg-type]
                         no_wrap=True, overflow="ellipsis", ratio=1 if header == "shape" else None,
                         min_width=24 if header == "shape" else None)
    for row in rows:
        table.add_row(Text(terminal_text(row.shape)), f"{row.count:,}", _number(row.rate, 2), _number(row.total_ms, 0),
                      _number(row.p95_ms, 0), _number(row.docs_per_returned), _number(row.keys_per_returned))
    if not rows:
        table.add_row(Text("no operation yet", style="dim"), "", "", "", "", "", "")
    return table


def _findings_table(snapshot: Snapshot) -> Table:
    findings = snapshot.findings
    new = len(snapshot.new_findings)
    age = "" if snapshot.advice_age is None else f", as of {_duration(snapshot.advice_age)} ago"
    title = f"Findings: {len(findings)}" + (f", {new} new" if new else "") + age
    table = Table(title=Text(title, style="bold"), title_justify="left", box=box.SIMPLE_HEAD, expand=True,
                  pad_edge=False, show_header=False)
    for name in ("new", "severity", "rule", "ns", "message"):
        table.add_column(name, no_wrap=True, overflow="ellipsis", ratio=4 if name == "message" else None)
    shown: list[FindingRow] = sorted(findings, key=lambda row: not row.new)[:MAX_FINDINGS]
    for row in shown:
        finding = row.finding
        style = "bold yellow" if row.new else ""
        table.add_row(Text("NEW" if row.new else "", style="reverse bold yellow" if row.new else ""),
                      Text(finding.severity, style=_SEVERITY_STYLE.get(finding.severity, "")),
                      Text(finding.rule, style=style), Text(terminal_text(finding.ns), style=style),
                      Text(terminal_text(finding.message), style=style))
    if not findings:
        table.add_row("", "", "", "", Text("none so far", style="dim"))
    return table


def _index_table(snapshot: Snapshot) -> Table:
    table = Table(title=Text(f"Suggested indexes so far: {len(snapshot.suggested)}", style="bold"),
                  title_justify="left", box=box.SIMPLE_HEAD, expand=True, pad_edge=False, show_header=False)
    table.add_column("command", no_wrap=True, overflow="ellipsis", ratio=4)
    table.add_column("saves", justify="right", no_wrap=True)
    for index in snapshot.suggested[:MAX_INDEXES]:
        table.add_row(Text(terminal_text(index.command)), Text(f"{', '.join(index.rules)} · "
                                                f"{human_impact(index.impact, index.impact_unit)}"))
    if not snapshot.suggested:
        table.add_row(Text("none so far", style="dim"), "")
    return table


def _duration(seconds: float) -> str:
    seconds = int(round(seconds))
    if seconds < 60:
        return f"{seconds}s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes}m{seconds:02d}s" if seconds else f"{minutes}m"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"
