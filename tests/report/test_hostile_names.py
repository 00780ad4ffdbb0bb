"""Names are data: namespaces, field names, plan summaries and file names taken from a hostile log reach every
report format as text, never as a forged line, a terminal command, reordered text, Markdown or HTML."""

from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from idxadvisor.cli import run
from idxadvisor.report.readable import md_code, md_fence, md_text
from idxadvisor.units import printable
from tests.helpers import json_line, slow_attr

FORGED = "FORGED: all good, no findings"
NAMESPACES = [f"shop.c\n{FORGED}", "shop.<img src=x onerror=alert(1)>", "shop.a`b``c|d\u202eevil\x1b[2J",
              "shop.x\u2066y\u200fz\r\u2028w"]
FIELDS = [f"st\n{FORGED}", "<b>bold</b>", "a``b|c", "s\u202e`"]
RAW = ["\x1b", "\u202e", "\u2066", "\u200f", "\u2028", "\r"]  # never printed as they are, in text or Markdown
MARKDOWN = MarkdownIt("commonmark").enable("table")


def hostile_log(path: Path) -> None:
    lines = []
    for ns in NAMESPACES:
        database, collection = ns.split(".", 1)
        for n in range(30):
            command = {"find": collection, "filter": {FIELDS[0]: n, FIELDS[1]: "x", FIELDS[2]: 1},
                       "sort": {FIELDS[3]: -1}, "$db": database}
            lines.append(json_line(slow_attr(command, ns=ns, planSummary=f"IXSCAN {{ {FIELDS[3]}: -1 }}",
                                             keysExamined=100_000, docsExamined=100_000, durationMillis=300 + n,
                                             appName=f"app\n{FORGED}")))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("hostile")
    log = folder / f"evil\n{FORGED}\u202e.log"
    hostile_log(log)
    indexes = folder / "indexes.json"  # an existing index with a hostile name, made redundant by the new one
    indexes.write_text(json.dumps({ns: [{"v": 2, "key": {"_id": 1}, "name": "_id_"},
                                        {"v": 2, "key": {FIELDS[0]: 1}, "name": f"{FIELDS[0]}_1<i>x</i>\u202e"}]
                                   for ns in NAMESPACES}), encoding="utf-8")
    written = {}
    for format in ("text", "markdown", "json", "sarif", "html"):
        target = folder / f"report.{format}"
        assert run(["analyze", str(log), "--indexes", str(indexes), "--verbose", "--format", format, "-o",
                    str(target), "--fail-on", "never"]) == 0
        written[format] = target.read_text(encoding="utf-8")
    return written


@pytest.mark.parametrize("format", ["text", "markdown"])
def test_no_name_forges_a_line_or_reaches_the_terminal_raw(reports: dict[str, str], format: str) -> None:
    report = reports[format]
    assert not [line for line in report.splitlines() if line.lstrip(" |*`-").startswith("FORGED")]
    assert [character for character in RAW if character in report] == []
    assert "c\\nFORGED" in report and "\\u202e" in report  # the names are there, shown with their escapes


def test_markdown_renders_every_name_as_text(reports: dict[str, str]) -> None:
    rendered = MARKDOWN.render(reports["markdown"])
    tags = set(re.findall(r"<(/?[a-z0-9]+)", rendered))
    assert tags <= {"h2", "/h2", "h3", "/h3", "p", "/p", "table", "/table", "thead", "/thead", "tbody", "/tbody",
                    "tr", "/tr", "th", "/th", "td", "/td", "code", "/code", "strong", "/strong", "ul", "/ul", "li",
                    "/li", "pre", "/pre"}, tags  # no <img>, no <b> from a name
    text = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    for name in ("shop.<img src=x onerror=alert(1)>", "<b>bold</b>", "<i>x</i>\\u202e"):
        assert name in text
    heading = next(line for line in reports["markdown"].splitlines() if line.startswith("**") and "img" in line)
    assert heading.startswith("**`shop.<img src=x onerror=alert(1)>`: 1 new index")  # the name in a code span


def test_html_escapes_every_name(reports: dict[str, str]) -> None:
    assert "<img src=x" not in reports["html"] and "<b>bold</b>" not in reports["html"]
    assert "<i>x</i>" not in reports["html"] and "&lt;i&gt;x&lt;/i&gt;" in reports["html"]
    assert "&lt;img src=x onerror=alert(1)&gt;" in reports["html"]
    page = re.sub(r"<script.*?</script>", "", reports["html"], flags=re.S)  # chart data is JSON, not text
    assert "\u202e" not in page and "\u2066" not in page and "s\\u202e`" in page  # bidi controls shown, not obeyed


@pytest.mark.parametrize("format", ["text", "markdown"])
def test_compare_reports_names_as_data(tmp_path: Path, format: str) -> None:
    log = tmp_path / "a.log"
    hostile_log(log)
    target = tmp_path / f"compare.{format}"
    run(["compare", str(log), str(log), "--format", format, "-o", str(target)])
    report = target.read_text(encoding="utf-8")
    assert not [line for line in report.splitlines() if line.lstrip(" |*`-").startswith("FORGED")]
    assert [character for character in RAW if character in report] == []
    if format == "markdown":
        rendered = MARKDOWN.render(report)
        assert "<img" not in rendered and "<b>" not in rendered


@pytest.mark.parametrize("format", ["json", "sarif"])
def test_json_and_sarif_keep_names_exactly(reports: dict[str, str], format: str) -> None:
    strings: list[str] = []

    def collect(value: object) -> None:
        if isinstance(value, str):
            strings.append(value)
        elif isinstance(value, dict):
            for item in value.values():
                collect(item)
        elif isinstance(value, list):
            for item in value:
                collect(item)

    collect(json.loads(reports[format]))
    assert any(NAMESPACES[0] in text for text in strings)  # serialised as it is, not escaped for a terminal


NAMES = st.text(alphabet=st.sampled_from("ab `|<>*_[]()!&#\\\n\u202e\x1b.$"), max_size=12)


@given(NAMES)
def test_a_code_span_holds_any_name_whole(name: str) -> None:
    rendered = MARKDOWN.renderInline(f"x {md_code(name)} y") if name else ""
    if name:
        codes = re.findall(r"<code>(.*?)</code>", rendered, re.S)
        assert len(codes) == 1 and html.unescape(codes[0]) == printable(name).replace("|", "\\|")


@given(NAMES)
def test_escaped_prose_renders_as_the_text_itself(name: str) -> None:
    rendered = MARKDOWN.renderInline(f"x {md_text(name)} y")
    assert "<" not in rendered.replace("&lt;", "")  # no element at all: no code, emphasis, link or HTML
    assert html.unescape(rendered) == f"x {printable(name)} y"


@given(NAMES)
def test_a_code_block_fence_outlasts_any_run_in_it(name: str) -> None:
    fence = md_fence(name)
    rendered = MARKDOWN.render(f"{fence}js\n{printable(name)}\n{fence}\n")
    assert rendered.count("<pre>") == 1 and rendered.endswith("</code></pre>\n")


# -- autolinks, chart data, and the report lines of log context (traffic, index inventory, time breakdown) ------------

LINKED = ["www.evil.com", "http://x", "user@evil.com"]  # GFM autolinks: www., a scheme, an e-mail address
CONTEXT_NS = "www.evil.com"  # database "www", collection "evil.com"
CONTEXT_APPS = [f"mongosh\n{FORGED}\u202e", "shop <img src=x> http://x", "MongoDB Compass user@evil.com"]
CONTEXT_INDEX = f"st_1\n{FORGED}<i>x</i>\u202e http://x"


def linkify() -> MarkdownIt:
    pytest.importorskip("linkify_it")
    return MarkdownIt("gfm-like", {"linkify": True}).enable("table")


def context_log(path: Path) -> None:
    """Hostile names in the lines the log's context adds: application names (the traffic line, tools beside
    applications), an index built during the log (the inventory, without --indexes), waits (the time breakdown)."""
    from idxadvisor.testing.logwriter import json_entry
    from tests.indexes.test_inventory import START

    lines = []
    for n in range(60):
        command = {"find": "evil.com", "filter": {"http://x": n, "user@evil.com": 1}, "$db": "www"}
        lines.append(json_line(slow_attr(command, ns=CONTEXT_NS, keysExamined=0, docsExamined=100_000,
                                         durationMillis=300 + n, workingMillis=20, appName=CONTEXT_APPS[n % 3],
                                         queues={"execution": {"totalTimeQueuedMicros": 250_000, "admissions": 1}}),
                               ts=f"2026-01-05T09:{n:02d}:00.000+00:00"))
    attr = {"namespace": CONTEXT_NS, "properties": {"v": 2, "key": {"http://x": 1}, "name": CONTEXT_INDEX}}
    lines.append(json_entry(START, "INDEX", 20384, "conn7", "Index build: starting", attr))
    lines.append(json_entry(START, "INDEX", 20345, "conn7", "Index build: done building",
                            {"namespace": CONTEXT_NS, "index": CONTEXT_INDEX}))
    path.write_text("\n".join(sorted(lines)) + "\n", encoding="utf-8")


@pytest.fixture(scope="module")
def context_reports(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    folder = tmp_path_factory.mktemp("context")
    log = folder / "mongod.log"
    context_log(log)
    written = {}
    for format in ("text", "markdown", "html"):
        target = folder / f"report.{format}"
        assert run(["analyze", str(log), "--verbose", "--format", format, "-o", str(target), "--fail-on", "never",
                    "--jobs", "1"]) == 0
        written[format] = target.read_text(encoding="utf-8")
    return written


def test_the_log_context_lines_are_there(context_reports: dict[str, str]) -> None:
    """The lines these tests are about are in the reports: else the escaping tests below would prove nothing."""
    text = context_reports["text"]
    assert "traffic: " in text and "Indexes the log shows" in text and "queued for execution" in text
    assert "mongosh\\nFORGED: all good, no findings\\u202e" in text  # an application name, escaped
    assert "st_1\\nFORGED: all good, no findings<i>x</i>\\u202e http://x" in text  # the built index's name


@pytest.mark.parametrize("format", ["text", "markdown"])
def test_the_log_context_lines_forge_nothing(context_reports: dict[str, str], format: str) -> None:
    report = context_reports[format]
    assert not [line for line in report.splitlines() if line.lstrip(" |*`-").startswith("FORGED")]
    assert [character for character in RAW if character in report] == []


def test_markdown_turns_no_name_into_a_link(reports: dict[str, str], context_reports: dict[str, str]) -> None:
    """A namespace, field, application or index name like www.evil.com, http://x or user@evil.com is a GFM autolink
    in prose: escaped, it renders as text, in a rule's message, the traffic line and the inventory alike."""
    renderer = linkify()
    rendered = renderer.render(context_reports["markdown"])
    assert "<a " not in rendered and "<img" not in rendered and "<i>" not in rendered
    text = html.unescape(re.sub(r"<[^>]+>", "", rendered))
    for name in (*LINKED, "shop <img src=x> http://x", "MongoDB Compass user@evil.com"):
        assert name in text
    assert "<a " not in renderer.render(reports["markdown"])


@pytest.mark.parametrize("name", [*LINKED, "see evil.com/path now", "HTTPS://X.ORG", "mailto:a@b.c", "ftp://a.b",
                                  "пример.рф", "WWW.X.Y", "a_b.com", "xn--e1a.com"])
def test_escaped_prose_is_never_a_link(name: str) -> None:
    rendered = linkify().renderInline(f"x {md_text(name)} y")
    assert "<a" not in rendered and html.unescape(rendered) == f"x {name} y"


LINKY = st.text(alphabet=st.sampled_from("wW.:/@ac-_1 <>`*[]()\u202e"), max_size=16)


@given(LINKY)
def test_escaped_prose_with_a_linkifier_renders_as_the_text_itself(name: str) -> None:
    rendered = linkify().renderInline(f"x {md_text(name)} y")
    assert "<" not in rendered.replace("&lt;", "")  # no element at all: no link, code, emphasis or HTML
    assert html.unescape(rendered) == f"x {printable(name)} y"


def chart_strings(page: str) -> list[str]:
    data = json.loads(re.search(r'<script type="application/json" id="idxadvisor-charts">(.*?)</script>', page,
                                re.S).group(1))
    return [value for chart in data["charts"].values() for row in chart["rows"] for value in row
            if isinstance(value, str)]


def test_chart_data_shows_control_characters_as_escapes(reports: dict[str, str]) -> None:
    """Vega draws chart data as SVG text and tooltips: a bidi control there reorders a name, a newline or an escape
    has no place; each is shown as its escape, as on the rest of the page."""
    strings = chart_strings(reports["html"])
    assert any("shop.c\\nFORGED" in value for value in strings)  # the names are in the charts, escaped
    assert [value for value in strings if any(character in value for character in [*RAW, "\n"])] == []


def test_html_escapes_the_log_context_names(context_reports: dict[str, str]) -> None:
    page = context_reports["html"]
    assert "<img src=x" not in page and "<i>x</i>" not in page and "&lt;i&gt;x&lt;/i&gt;" in page
    text = re.sub(r"<script.*?</script>", "", page, flags=re.S)
    assert "\u202e" not in text and "\\u202e" in text
    assert [value for value in chart_strings(page) if "\u202e" in value or "\n" in value] == []
