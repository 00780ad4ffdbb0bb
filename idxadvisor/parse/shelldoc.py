"""Parse documents printed in mongo-shell syntax into relaxed Extended JSON v2 values.

MongoDB up to 4.2 writes the documents of its text log with ``BSONObj::toString``, and profiler dumps made with the
shell's ``printjson`` use the shell's own syntax. Neither is JSON. This module turns both into the plain Python values
that ``orjson.loads`` gives for the same document in a 4.4+ JSON log line (relaxed Extended JSON v2), so that one query
logged by a 4.2 server and by an 8.0 server compares equal.

Accepted syntax and the value produced
--------------------------------------
===============================================================  ====================================================
text                                                             value
===============================================================  ====================================================
``{ a: 1, b.c: "x", "q": 2, 'q2': 3 }`` (keys unquoted up to     ``dict``; key order kept, a repeated key keeps the
``:``, double- or single-quoted); trailing commas; newlines      last value (as ``orjson.loads`` does)
``[ 1, 2 ]``, ``{}``, ``[]``                                     ``list``, ``dict``
``1``, ``-5``, ``5908578361554239489`` (any size)                ``int``
``1.0``, ``-0.5``, ``.5``, ``1.5e-07``, ``1e+20.0``              ``float``
``inf``, ``-inf``, ``inf.0``, ``nan``, ``nan.0``, ``NaN``,       ``{"$numberDouble": "Infinity" | "-Infinity" |
``Infinity``, ``-Infinity``                                      "NaN"}``
``NumberLong(5)``, ``NumberLong("5")``, ``NumberInt(3)``,        ``int``
``Long("5")``, ``Int32(3)`` (mongosh)
``NumberDecimal("1.50")``, ``NumberDecimal(1.5)``,               ``{"$numberDecimal": "<the text as written>"}``
``Decimal128("1.5")``; a bare number with an upper-case ``E``
(``1E+3``) or a trailing fractional zero (``1.50``)
``"str"`` (backslash escapes ``\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX``),  ``str``
``'str'``
``true``, ``false``, ``null``                                    ``True``, ``False``, ``None``
``undefined``                                                    ``{"$undefined": True}``
``MinKey``, ``MaxKey``                                           ``{"$minKey": 1}``, ``{"$maxKey": 1}``
``ObjectId('5c03…')``, ``ObjectId("…")``                         ``{"$oid": "<24 lower-case hex>"}``
``new Date(1592924486000)``, ``Date(…)``, ``ISODate("…")``,      ``{"$date": "YYYY-MM-DDTHH:MM:SS.mmmZ"}`` from
``new Date("…")`` (offsets ``Z``, ``+0100``, ``+01:00``)         1902-01-01 up to 3000-12-31T23:59:59 (UTC),
                                                                 else ``{"$date": {"$numberLong": "<ms>"}}``
``Timestamp(1592924486, 119)``, ``Timestamp({ t: 1, i: 2 })``,   ``{"$timestamp": {"t": 1592924486, "i": 119}}``
``Timestamp 1375698319000|2`` (≤3.4: milliseconds|increment)
``BinData(0, 6BDF…)`` (server: hex), ``BinData(0, "AAAA==")``    ``{"$binary": {"base64": "…", "subType": "<hex>"}}``
(shell: base64), ``HexData(4, "…")``,                            (``{"$uuid": "…"}`` for subtype 4 of 16 bytes)
``Binary.createFromBase64("…", 0)``
``UUID("71240b17-…")``, ``UUID('…')``                            ``{"$uuid": "<lower-case, dashed>"}``
``/^abc/i`` (the pattern runs to the last ``/`` that is          ``{"$regularExpression": {"pattern": "^abc",
followed by flags and a separator)                               "options": "i"}}`` (options sorted)
``DBRef('coll',5c03…)`` (server, BSON type 0x0C)                 ``{"$ref": "coll", "$id": "5c03…"}``
``DBRef("coll", <value>[, "db"])`` (shell, a plain document)     ``{"$ref": "coll", "$id": <value>[, "$db": "db"]}``
``Code("…")``, ``Symbol("…")``, ``function (…) { … }``           ``{"$code": "…"}``, ``{"$symbol": "…"}``
an unquoted word (``63a7dc66…``, written by anonymisers such as  ``str``
mtools' ``mlogfilter --mask``; never by a server)
===============================================================  ====================================================

Elision. :attr:`ShellValue.elided` is set when the server left content out: an element printed as ``...`` (dropped,
in objects and arrays), ``BinData(0, <70 bytes of hex>...)`` (the prefix is kept), a bare ``BinData`` (servers before
2.0 printed no payload), code cut to 70 bytes + ``...``, ``{ $msg: "query not recording (too large)" }`` (≤2.6) and
any document holding a ``$truncated`` key (profiler). These dicts are kept as parsed. A string the server cut at 150
bytes (``"aaaa..."``) is returned as it stands and does not set the flag, because the cut cannot be told apart from a
string that ends in ``...``.

Strings. The server writes string bytes unescaped (``"say "hi""``, ``"^a\\.b"``); the shell escapes them. By default
escapes are decoded (shell semantics); pass ``raw_strings=True`` for server log text so that backslashes stay literal.
In both modes a ``"`` inside a value string ends it only when a separator (``,`` ``}`` ``]`` ``)`` or the end of the
text) follows, so the server's unescaped quotes survive.

What the server printed, as read (mongodb/mongo): ``src/mongo/bson/bsonelement.cpp`` and the older
``src/mongo/bson/bson-inl.h`` (``BSONElement::toString``: ``new Date(<ms>)``; ``Timestamp <ms>|<inc>`` until it became
``Timestamp(<secs>, <inc>)``; ``BinData(<decimal subtype>, <upper-case hex>)`` cut after 70 bytes with ``...)`` when
longer than 80; ``UUID("…")`` for subtype 4 of 16 bytes; raw ``/pattern/flags``; strings raw and cut to 150 bytes
+ ``..."`` when 160 bytes or more; code cut to 70 bytes + ``...``; Decimal128 bare, as ``Decimal128::toString``;
``MinKey``/``MaxKey``/``undefined``; ``DBRef('<ns>',<hex>)``; an element nested deeper than 100 levels printed as
``...``), ``src/mongo/bson/bsonobj.cpp`` (``BSONObj::toString``: ``{ a: 1, b: 2 }``, ``[ 1, 2 ]``, ``{}``),
``src/mongo/bson/util/builder.h`` (``StringBuilder::appendDoubleNice``: ``%.16g`` plus ``.0`` when the result has no
``.``, ``E`` or ``N``, hence ``1.0``, ``1e+20.0``, ``inf.0``, ``nan.0``), ``src/mongo/db/curop.cpp`` (``$msg: "query
not recording (too large)"``). What the 4.4+ JSON log holds: ``src/mongo/bson/generator_extended_relaxed_2_0_0.h`` and
``generator_extended_canonical_2_0_0.h`` (``subType`` as lower-case hex without padding, ``$uuid`` for subtype 4 of
16 bytes, ``$date`` as an ISO string only when ``Date_t::isFormattable()``, the DBRef type's ``$id`` as a bare hex
string, non-finite doubles as ``$numberDouble``) and ``src/mongo/util/time_support.cpp`` (``Date_t::isFormattable``:
from 1902-01-01 and before 3000-12-31T23:59:59Z).

Limits: what the text cannot tell. A bare Decimal128 without an upper-case ``E`` or a trailing fractional zero reads
as a double or an integer (and its ``NaN``/``Infinity`` as a double). A double printed with 16 significant digits may
differ in its last bit from the JSON log's shortest round trip. The JSON logger writes an integral double as ``1``, so
``orjson`` gives ``int`` where this gives ``float`` (the two compare equal). Symbols print as strings. BinData subtype
2 prints without its inner length prefix, which the JSON keeps. Not recovered: keys holding ``:`` ``,`` ``{`` ``}``
or outer spaces; a ``"`` inside a server string followed by a separator; a ``/`` inside a pattern followed by letters
and a separator; in shell mode, a string ending in a backslash. Nesting deeper than :data:`MAX_DEPTH` is refused.
"""

from __future__ import annotations

import base64
import binascii
import functools
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

__all__ = ["MAX_DEPTH", "ShellSyntaxError", "ShellValue", "iter_shell_documents", "parse_shell_value"]

MAX_DEPTH = 200

# Date_t::isFormattable(): the JSON log writes an ISO string only inside [1902-01-01, 3000-12-31T23:59:59Z).
_DATE_MIN_MS = -2_145_916_800_000
_DATE_MAX_MS = 32_535_215_999_000
_TOO_LARGE = "query not recording (too large)"


class ShellSyntaxError(ValueError):
    """The text is not a shell-syntax value; ``position`` is the offset where parsing stopped."""

    def __init__(self, reason: str, position: int) -> None:
        super().__init__(f"{reason} at offset {position}")
        self.reason = reason
        self.position = position


@dataclass(slots=True)
class ShellValue:
    """One parsed value: the relaxed EJSON structure, the offset just past it, and whether the server elided content."""

    value: Any
    end: int
    elided: bool


# --- the grammar ------------------------------------------------------------------------------------------------------

_SEP = r"\s*+(?:[,}\])]|\Z)"  # what may follow a value
_DQ_ESCAPED = r'[^"\\]*+(?:\\[\s\S][^"\\]*+)*+'
_SQ_ESCAPED = r"[^'\\]*+(?:\\[\s\S][^'\\]*+)*+"
# A value string ends at the first quote followed by a separator, so the server's unescaped inner quotes are content.
_DQ_VALUE_ESCAPED = rf'[^"\\]*+(?:(?:\\[\s\S]|"(?!{_SEP}))[^"\\]*+)*+'
_DQ_VALUE_RAW = rf'[^"]*+(?:"(?!{_SEP})[^"]*+)*+'
_Q = r"""['"]"""
_INT = r"[0-9]++"

_KEY = (
    r"(?:(?P<k>[^\s\"',:{}\[\]][^\s,:{}]*+(?:[ \t]++[^\s,:{}]++)*+)"
    rf'|"(?P<kq>{_DQ_ESCAPED})"|\'(?P<ks>{_SQ_ESCAPED})\')\s*+:\s*+'
)


def _rare_alternatives(fallback_body: str) -> str:
    """The less frequent value forms, each in a named group that names its converter in :data:`_CONVERTERS`."""
    return "|".join(
        [
            rf"(?P<oid>ObjectId\(\s*+{_Q}(?P<oid_v>[0-9a-fA-F]{{24}}){_Q}\s*+\))",
            rf"(?P<uuid>UUID\(\s*+{_Q}(?P<uuid_v>[0-9a-fA-F-]*+){_Q}\s*+\))",
            rf"(?P<ts>Timestamp\(\s*+(?P<ts_t>{_INT})\s*+,\s*+(?P<ts_i>{_INT})\s*+\))",
            rf"(?P<tsobj>Timestamp\(\s*+\{{\s*+t\s*+:\s*+(?P<tsobj_t>{_INT})\s*+,\s*+i\s*+:\s*+(?P<tsobj_i>{_INT})"
            r"\s*+\}\s*+\))",
            rf"(?P<tsms>Timestamp (?P<tsms_ms>{_INT})\|(?P<tsms_i>{_INT}))",
            rf"(?P<bin>BinData\(\s*+(?P<bin_t>{_INT})\s*+,\s*+(?:{_Q}(?P<bin_b64>[A-Za-z0-9+/=\s]*+){_Q}"
            r"|(?P<bin_hex>[0-9A-Fa-f]*+)(?P<bin_cut>\.\.\.)?)\s*+\))",
            rf"(?P<datems>(?:new\s++)?Date\(\s*+(?P<datems_v>-?{_INT})\s*+\))",
            rf"(?P<iso>(?:ISODate|(?:new\s++)?Date)\(\s*+{_Q}(?P<iso_v>[^'\"\n]*+){_Q}\s*+\))",
            rf"(?P<long>(?:NumberLong|NumberInt|Long|Int32)\(\s*+(?:{_Q}(?P<long_v>-?{_INT}){_Q}|(?P<long_b>-?{_INT}))"
            r"\s*+\))",
            rf"(?P<dec>(?:NumberDecimal|Decimal128)\(\s*+(?:{_Q}(?P<dec_v>[^'\"\n]*+){_Q}|(?P<dec_b>[^'\"\s()]++))"
            r"\s*+\))",
            r"(?P<special>-?(?:inf|Infinity|nan)(?:\.0)?|NaN)(?![\w.$])",
            r"(?P<undefined>undefined)(?![\w$])",
            r"(?P<minkey>MinKey)(?:\(\s*+\))?(?![\w$])",
            r"(?P<maxkey>MaxKey)(?:\(\s*+\))?(?![\w$])",
            rf"(?P<regex>/(?P<regex_p>[^/\\\n]*+(?:(?:\\.|/(?![a-z]*+{_SEP}))[^/\\\n]*+)*+)/(?P<regex_f>[a-z]*+))"
            rf"(?={_SEP})",
            rf"(?P<hexdata>HexData\(\s*+(?P<hexdata_t>{_INT})\s*+,\s*+{_Q}(?P<hexdata_v>[0-9A-Fa-f]*+){_Q}\s*+\))",
            rf"(?P<binb64>Binary\.createFromBase64\(\s*+{_Q}(?P<binb64_v>[A-Za-z0-9+/=]*+){_Q}"
            rf"\s*+(?:,\s*+(?P<binb64_t>{_INT})\s*+)?\))",
            r"(?P<binbare>BinData)(?![\w$(])",
            r"(?P<dbref>DBRef\(\s*+'(?P<dbref_ns>[^'\n]*+)'\s*+,\s*+(?P<dbref_id>[0-9a-fA-F]{24})\s*+\))",
            r"(?P<dbrefdoc>DBRef\(\s*+(?:\"(?P<dbrefdoc_ns>[^\"\n]*+)\"|'(?P<dbrefdoc_ns2>[^'\n]*+)')\s*+,)",
            rf'(?P<code>(?P<code_k>Code|Symbol)\(\s*+"(?P<code_v>{_DQ_ESCAPED})"\s*+\))',
            r"(?P<func>function)(?=\s*+\()",
            rf"'(?P<sq>{_SQ_ESCAPED})'",
            rf'"(?P<s2>{fallback_body})"',
            r"(?P<ellv>\.\.\.)",
            # Last resort: an unquoted word. No server prints one, but anonymisers do (mtools' mlogfilter --mask
            # writes hashes in place of string values), and such logs are shared for exactly this kind of analysis.
            rf"(?P<bare>[A-Za-z0-9_$][\w.$-]*+)(?={_SEP})",
        ]
    )


def _scalar_alternatives(string_body: str, rare: str) -> str:
    """The frequent scalar forms, then every rare form as one group: fewer groups make each match cheaper."""
    return "|".join(
        [
            rf'"(?P<s>{string_body})"',
            rf"(?P<int>-?{_INT})(?![\w.])",
            r"(?P<true>true)(?![\w$])",
            r"(?P<false>false)(?![\w$])",
            r"(?P<null>null)(?![\w$])",
            rf"(?P<fexp>-?{_INT}[eE][+-]?{_INT})\.0(?![0-9])",  # appendDoubleNice adds ".0" after an exponent
            # %.16g never writes an upper-case E or a trailing fractional zero: this is a bare Decimal128.
            rf"(?P<decbare>-?{_INT}(?:\.[0-9]*+)?E[+-]?{_INT}|-?{_INT}\.{_INT}(?<=[0-9]0))(?![\w.$])",
            rf"(?P<float>-?(?:{_INT}(?:\.[0-9]*+)?|\.{_INT})(?:[eE][+-]?{_INT})?)(?![\w.$])",
            # The server's exact spelling of the types every 3.6+ command carries; variants go through "rare".
            r"(?P<hoid>ObjectId\(['\"][0-9a-fA-F]{24}['\"]\))",
            r'(?P<huuid>UUID\("[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}"\))',
            rf"(?P<hts>Timestamp\({_INT}, {_INT}\))",
            rf"(?P<hbin>BinData\({_INT}, (?:[0-9A-F][0-9A-F])*+\))",
            rf"(?P<hdate>new Date\(-?{_INT}\))",
            "(?P<rare>" + re.sub(r"\(\?P<\w+>", "(?:", rare) + ")",
        ]
    )


class _Grammar(NamedTuple):
    top: Callable[[str, int], re.Match[str] | None]
    obj_first: Callable[[str, int], re.Match[str] | None]
    obj_next: Callable[[str, int], re.Match[str] | None]
    arr_first: Callable[[str, int], re.Match[str] | None]
    arr_next: Callable[[str, int], re.Match[str] | None]
    rare: Callable[[str, int], re.Match[str] | None]
    escapes: bool


def _grammar(escapes: bool) -> _Grammar:
    if escapes:
        rare = _rare_alternatives(_DQ_ESCAPED)
        scalar = _scalar_alternatives(_DQ_VALUE_ESCAPED, rare)
    else:
        rare = _rare_alternatives(r'[^"]*+')
        scalar = _scalar_alternatives(_DQ_VALUE_RAW, rare)
    value = rf"(?P<lbrace>\{{)|(?P<lbrack>\[)|{scalar}"

    def rx(pattern: str) -> Callable[[str, int], re.Match[str] | None]:
        return re.compile(pattern, re.ASCII).match

    obj_item = rf"(?P<ell>\.\.\.)(?=\s*+[,}}])|{_KEY}(?:{value})"
    arr_item = rf"(?P<ell>\.\.\.)(?=\s*+[,\]])|{value}"
    return _Grammar(
        top=rx(rf"\s*+(?:{value})"),
        obj_first=rx(rf"\s*+(?:(?P<close>\}})|{obj_item})"),
        obj_next=rx(rf"\s*+(?:(?P<close>,?+\s*+\}})|,\s*+(?:{obj_item}))"),
        arr_first=rx(rf"\s*+(?:(?P<close>\])|{arr_item})"),
        arr_next=rx(rf"\s*+(?:(?P<close>,?+\s*+\])|,\s*+(?:{arr_item}))"),
        rare=rx(rare),
        escapes=escapes,
    )


@functools.cache
def _compiled(escapes: bool) -> _Grammar:
    """The grammar, compiled on first use: a JSON-only run never pays for it."""
    return _grammar(escapes)

_ESCAPE = re.compile(
    r"\\(?:u([dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|([\"\\/bfnrt']))"
)
_SIMPLE_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "'": "'"}
_ISO = re.compile(
    r"(?P<y>[+-]?[0-9]{4,6})-?(?P<mo>[0-9]{2})-?(?P<d>[0-9]{2})"
    r"(?:[T ](?P<h>[0-9]{2})(?::?(?P<mi>[0-9]{2})(?::?(?P<s>[0-9]{2})(?:\.(?P<f>[0-9]+))?)?)?)?"
    r"(?P<tz>Z|(?P<tz_sign>[+-])(?P<tz_h>[0-9]{2})(?::?(?P<tz_m>[0-9]{2}))?)?",
    re.ASCII,
)
_DBREF_TAIL = re.compile(r"""\s*+(?:,\s*+(?:"(?P<db>[^"\n]*+)"|'(?P<db2>[^'\n]*+)')\s*+)?\)""")
_BRACES = re.compile(r"[{}]")
_WHITESPACE = re.compile(r"\s*+")
_KEY_AT = re.compile(rf"\s*+(?P<comma>,\s*+)?{_KEY}", re.ASCII).match
# Arrays of plain scalars, read whole; the closing bracket is left to the element loop.
_SIMPLE_ARRAY = re.compile(
    r"\s*+(?:(?P<ints>(?:-?[0-9]++\s*+,\s*+)*+-?[0-9]++)"
    r'|(?P<strs>(?:"[^"\\]*+"\s*+,\s*+)*+"[^"\\]*+")'
    r"|(?P<oids>(?:ObjectId\('[0-9a-fA-F]{24}'\)\s*+,\s*+)*+ObjectId\('[0-9a-fA-F]{24}'\)))"
    r"(?=\s*+\])",
    re.ASCII,
).match
_STRING_ITEMS = re.compile(r'"([^"]*+)"').findall
_OID_ITEMS = re.compile(r"([0-9a-fA-F]{24})").findall


# --- public API -------------------------------------------------------------------------------------------------------


def parse_shell_value(text: str, pos: int = 0, *, raw_strings: bool = False) -> ShellValue:
    """Parse one value (normally a document ``{ ... }``) starting at ``text[pos]`` after optional whitespace.

    ``raw_strings=True`` reads strings as the ≤4.2 server writes them, unescaped; the default decodes the shell's
    backslash escapes. Raises :class:`ShellSyntaxError` and nothing else.
    """
    if not 0 <= pos <= len(text):
        raise ShellSyntaxError("start position outside the text", max(0, min(pos, len(text))))
    try:
        value, end, elided = _parse(text, pos, _compiled(not raw_strings), MAX_DEPTH)
    except RecursionError:  # only nested shell DBRef() recurse, and only a caller already deep in its stack gets here
        raise ShellSyntaxError("nesting too deep for the Python stack", pos) from None
    return ShellValue(value, end, elided)


def iter_shell_documents(text: str) -> Iterator[ShellValue]:
    """Yield consecutive top-level documents separated by whitespace (a ``printjson`` dump).

    Stops with :class:`ShellSyntaxError` at anything that is not a document.
    """
    pos = 0
    while True:
        pos = _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]  # always matches
        if pos == len(text):
            return
        if text[pos] != "{":
            raise ShellSyntaxError("expected '{'", pos)
        parsed = parse_shell_value(text, pos)
        yield parsed
        pos = parsed.end


# --- the parser -------------------------------------------------------------------------------------------------------


def _parse(text: str, pos: int, g: _Grammar, budget: int) -> tuple[Any, int, bool]:
    """Parse one value at ``pos`` with an explicit stack; ``budget`` is the nesting depth still allowed."""
    m = g.top(text, pos)
    if m is None:
        raise ShellSyntaxError("expected a value", _skip_ws(text, pos))
    kind = m.lastgroup
    try:
        if kind == "lbrace" or kind == "lbrack":
            if budget < 1:
                raise ShellSyntaxError(f"nesting deeper than {MAX_DEPTH}", m.start(kind))
            return _parse_container(text, m.end(), g, budget, {} if kind == "lbrace" else [])
        value, end, elided = _CONVERTERS[kind](m, g, budget)  # type: ignore[index]
    except ShellSyntaxError:
        raise
    except ValueError as exc:  # int() beyond its digit limit: the literal is malformed
        raise ShellSyntaxError(f"malformed literal ({exc})", pos) from None
    if value is _ELIDED:
        raise ShellSyntaxError("an elided '...' is not a value on its own", m.start(kind))  # type: ignore[arg-type]
    return value, end, elided


def _parse_container(text: str, pos: int, g: _Grammar, budget: int, root: Any) -> tuple[Any, int, bool]:
    """The hot loop: one regex match per element (separator, key and value together), objects and arrays apart."""
    obj_first, obj_next, arr_first, arr_next, escapes = g.obj_first, g.obj_next, g.arr_first, g.arr_next, g.escapes
    stack: list[tuple[Any, bool]] = []
    cur = root
    is_obj = isinstance(root, dict)
    if not is_obj:
        pos = _fill_simple_array(text, pos, cur)
    rx = obj_first if is_obj else arr_first
    elided = False
    while True:
        m = rx(text, pos)
        if m is None:
            raise _element_error(text, pos, is_obj, rx is obj_first or rx is arr_first)
        pos = m.end()
        kind = m.lastgroup
        if is_obj:
            rx = obj_next
            if kind == "s":
                key, v = m.group("k", "s")
                if escapes and "\\" in v:
                    v = _unescape(v)
                cur[key if key is not None else _quoted_key(m, escapes)] = v
                continue
            if kind == "int":
                key, v = m.group("k", "int")
                cur[key if key is not None else _quoted_key(m, escapes)] = int(v)
                continue
            if kind == "close":
                if "$truncated" in cur or cur.get("$msg") == _TOO_LARGE:
                    elided = True
                if not stack:
                    return root, pos, elided
                cur, is_obj = stack.pop()
                rx = obj_next if is_obj else arr_next
                continue
            if kind == "ell":
                elided = True
                continue
            key = m.group("k")
            if key is None:
                key = _quoted_key(m, escapes)
        else:
            rx = arr_next
            if kind == "s":
                v = m.group("s")
                cur.append(_unescape(v) if escapes and "\\" in v else v)
                continue
            if kind == "int":
                cur.append(int(m.group("int")))
                continue
            if kind == "close":
                if not stack:
                    return root, pos, elided
                cur, is_obj = stack.pop()
                rx = obj_next if is_obj else arr_next
                continue
            if kind == "ell":
                elided = True
                continue
        if kind == "lbrace" or kind == "lbrack":
            if len(stack) + 1 >= budget:
                raise ShellSyntaxError(f"nesting deeper than {MAX_DEPTH}", m.start(kind))
            child: Any = {} if kind == "lbrace" else []
            if is_obj:
                cur[key] = child
            else:
                cur.append(child)
            stack.append((cur, is_obj))
            cur = child
            if kind == "lbrace":
                is_obj, rx = True, obj_first
            else:
                is_obj, rx = False, arr_first
                pos = _fill_simple_array(text, pos, child)
            continue
        if kind == "true" or kind == "false":
            v = kind == "true"
        else:
            v, pos, cut = _CONVERTERS[kind](m, g, budget - len(stack) - 1)  # type: ignore[index]
            if cut:
                elided = True
            if v is _ELIDED:
                continue
        if is_obj:
            cur[key] = v
        else:
            cur.append(v)


def _fill_simple_array(text: str, pos: int, out: list[Any]) -> int:
    """Read a whole array of plain integers, strings or ObjectIds (a large ``$in``) with one match; else leave it."""
    m = _SIMPLE_ARRAY(text, pos)
    if m is None:
        return pos
    kind = m.lastgroup
    if kind == "ints":
        out.extend(map(int, m.group("ints").split(",")))
    elif kind == "strs":
        out.extend(_STRING_ITEMS(m.group("strs")))
    else:
        out.extend({"$oid": h.lower()} for h in _OID_ITEMS(m.group("oids")))
    return m.end()


def _element_error(text: str, pos: int, is_obj: bool, fresh: bool) -> ShellSyntaxError:
    at = _skip_ws(text, pos)
    if is_obj:
        key = _KEY_AT(text, pos)
        if key is not None and (key.group("comma") is None) == fresh:
            return ShellSyntaxError("expected a value", key.end())
        return ShellSyntaxError("expected a key or '}'" if fresh else "expected ',' or '}'", at)
    return ShellSyntaxError("expected a value or ']'" if fresh else "expected ',' or ']'", at)


def _skip_ws(text: str, pos: int) -> int:
    return _WHITESPACE.match(text, pos).end()  # type: ignore[union-attr]  # always matches


def _quoted_key(m: re.Match[str], escapes: bool) -> str:
    key = m.group("kq")
    if key is None:
        key = m.group("ks")
    return _unescape(key) if escapes and "\\" in key else key


def _unescape(s: str) -> str:
    """Decode JSON-style escapes; an unknown escape such as ``\\.`` keeps its backslash."""
    return _ESCAPE.sub(_unescape_one, s)


def _unescape_one(m: re.Match[str]) -> str:
    high, low, code, simple = m.groups()
    if simple is not None:
        return _SIMPLE_ESCAPES[simple]
    if code is not None:
        value = int(code, 16)
        # half of a surrogate pair alone is no character: as a decoder replaces a byte that is none, or the text
        # could not be written out (a report of it ended in an internal error)
        return "\ufffd" if 0xD800 <= value <= 0xDFFF else chr(value)
    return chr(0x10000 + ((int(high, 16) - 0xD800) << 10) + (int(low, 16) - 0xDC00))


# --- converters: (match, grammar, depth budget) -> (value, end, elided) -----------------------------------------------

_ELIDED = object()  # a `key: ...` value: the element is dropped
_Converted = tuple[Any, int, bool]


def _string(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    kind = m.lastgroup or ""
    v = m.group(kind)
    if (g.escapes or kind == "sq") and "\\" in v:
        v = _unescape(v)
    return v, m.end(), False


def _integer(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    if m.lastgroup == "int":
        return int(m.group("int")), m.end(), False
    v = m.group("long_v")
    return int(v if v is not None else m.group("long_b")), m.end(), False


def _rare(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    """Match the rare form again with its detail groups and convert it."""
    detail = g.rare(m.string, m.start("rare"))
    if detail is None:  # cannot happen: the same alternatives, with groups
        raise ShellSyntaxError("internal grammar mismatch", m.start("rare"))
    return _CONVERTERS[detail.lastgroup](detail, g, budget)  # type: ignore[index]


def _constant(value: Any) -> Callable[[re.Match[str], _Grammar, int], _Converted]:
    def convert(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
        return value, m.end(), False

    return convert


def _wrapper(key: str, inner: Any) -> Callable[[re.Match[str], _Grammar, int], _Converted]:
    """A fresh ``{key: inner}`` per value, so callers may mutate what they get."""

    def convert(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
        return {key: inner}, m.end(), False

    return convert


def _float(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    v = float(m.group(m.lastgroup))  # type: ignore[arg-type]
    if v - v != 0.0:  # a literal beyond the double range became infinite
        return {"$numberDouble": "Infinity" if v > 0 else "-Infinity"}, m.end(), False
    return v, m.end(), False


def _bare_decimal(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    return {"$numberDecimal": m.group("decbare")}, m.end(), False


def _special(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    tok = m.group("special")
    if "a" in tok:
        name = "NaN"
    else:
        name = "-Infinity" if tok[0] == "-" else "Infinity"
    return {"$numberDouble": name}, m.end(), False


def _decimal(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    v = m.group("dec_v")
    return {"$numberDecimal": v if v is not None else m.group("dec_b")}, m.end(), False


# The exact server spellings, sliced instead of matched again.


def _hot_oid(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    return {"$oid": m.group("hoid")[10:34].lower()}, m.end(), False


def _hot_uuid(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    return {"$uuid": m.group("huuid")[6:42].lower()}, m.end(), False


def _hot_timestamp(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    t, _, i = m.group("hts")[10:-1].partition(",")
    return {"$timestamp": {"t": int(t), "i": int(i)}}, m.end(), False


def _hot_bindata(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    subtype, _, digits = m.group("hbin")[8:-1].partition(",")
    return _binary(bytes.fromhex(digits), int(subtype), m.start("hbin")), m.end(), False


def _hot_date(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    return _date(int(m.group("hdate")[9:-1])), m.end(), False


def _oid(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    return {"$oid": m.group("oid_v").lower()}, m.end(), False


def _uuid(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    digits = m.group("uuid_v").replace("-", "")
    if len(digits) != 32:
        raise ShellSyntaxError("a UUID needs 32 hex digits", m.start("uuid"))
    return {"$uuid": _dashed(digits.lower())}, m.end(), False


def _dashed(hex32: str) -> str:
    return f"{hex32[:8]}-{hex32[8:12]}-{hex32[12:16]}-{hex32[16:20]}-{hex32[20:]}"


def _timestamp(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    kind = m.lastgroup
    if kind == "tsms":  # ≤3.4 printed Timestamp <milliseconds>|<increment>
        t, i = int(m.group("tsms_ms")) // 1000, int(m.group("tsms_i"))
    else:
        t, i = int(m.group(f"{kind}_t")), int(m.group(f"{kind}_i"))
    return {"$timestamp": {"t": t, "i": i}}, m.end(), False


def _date_ms(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    return _date(int(m.group("datems_v"))), m.end(), False


def _date_iso(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    iso = _ISO.fullmatch(m.group("iso_v"))
    ms = _iso_millis(iso) if iso is not None else None
    if ms is None:
        raise ShellSyntaxError("not an ISO-8601 date", m.start("iso_v"))
    return _date(ms), m.end(), False


def _iso_millis(iso: re.Match[str]) -> int | None:
    y, mo, d = int(iso["y"]), int(iso["mo"]), int(iso["d"])
    h, mi, s = (int(iso[name] or 0) for name in ("h", "mi", "s"))
    if not (1 <= mo <= 12 and 1 <= d <= 31 and h <= 24 and mi <= 59 and s <= 60):
        return None
    frac = iso["f"] or ""
    ms = int((frac + "00")[:3]) if frac else 0
    offset = 0
    if iso["tz_sign"] is not None:
        offset = (int(iso["tz_h"]) * 60 + int(iso["tz_m"] or 0)) * 60_000
        if iso["tz_sign"] == "-":
            offset = -offset
    return (((_days_from_civil(y, mo, d) * 24 + h) * 60 + mi) * 60 + s) * 1000 + ms - offset


def _date(ms: int) -> dict[str, Any]:
    if not _DATE_MIN_MS <= ms < _DATE_MAX_MS:
        return {"$date": {"$numberLong": str(ms)}}
    days, rem = divmod(ms, 86_400_000)
    h, rem = divmod(rem, 3_600_000)
    mi, rem = divmod(rem, 60_000)
    s, frac = divmod(rem, 1000)
    return {"$date": f"{_day(days)}T{h:02d}:{mi:02d}:{s:02d}.{frac:03d}Z"}


@functools.lru_cache(maxsize=4096)
def _day(days: int) -> str:
    """``YYYY-MM-DD`` of a day number; a log's dates fall on few days, so this is cached."""
    y, mo, d = _civil_from_days(days)
    return f"{y:04d}-{mo:02d}-{d:02d}"


def _days_from_civil(y: int, m: int, d: int) -> int:
    """Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant's algorithm)."""
    y -= m <= 2
    era = y // 400
    yoe = y - era * 400
    doy = (153 * (m + (-3 if m > 2 else 9)) + 2) // 5 + d - 1
    return era * 146_097 + yoe * 365 + yoe // 4 - yoe // 100 + doy - 719_468


def _civil_from_days(z: int) -> tuple[int, int, int]:
    z += 719_468
    era = z // 146_097
    doe = z - era * 146_097
    yoe = (doe - doe // 1460 + doe // 36_524 - doe // 146_096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    m = mp + 3 if mp < 10 else mp - 9
    return yoe + era * 400 + (m <= 2), m, doy - (153 * mp + 2) // 5 + 1


def _bindata(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    subtype = int(m.group("bin_t"))
    hexdigits = m.group("bin_hex")
    if hexdigits is None:
        data = _from_base64(m.group("bin_b64"), m.start("bin_b64"))
    else:
        data = _from_hex(hexdigits, m.start("bin_hex"))
    cut = m.group("bin_cut") is not None
    return _binary(data, subtype, m.start("bin")), m.end(), cut


def _hexdata(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    data = _from_hex(m.group("hexdata_v"), m.start("hexdata_v"))
    return _binary(data, int(m.group("hexdata_t")), m.start("hexdata")), m.end(), False


def _binb64(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    data = _from_base64(m.group("binb64_v"), m.start("binb64_v"))
    return _binary(data, int(m.group("binb64_t") or 0), m.start("binb64")), m.end(), False


def _binbare(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    # Servers before 2.0 printed a bare `BinData` unless asked for the full form: the payload is unknown.
    return {"$binary": {"base64": "", "subType": "0"}}, m.end(), True


def _binary(data: bytes, subtype: int, pos: int) -> dict[str, Any]:
    if subtype > 255:
        raise ShellSyntaxError("BinData subtype above 255", pos)
    if subtype == 4 and len(data) == 16:
        return {"$uuid": _dashed(data.hex())}
    return {"$binary": {"base64": base64.b64encode(data).decode("ascii"), "subType": format(subtype, "x")}}


def _from_hex(digits: str, pos: int) -> bytes:
    if len(digits) % 2:
        raise ShellSyntaxError("odd number of hex digits", pos)
    return bytes.fromhex(digits)


def _from_base64(text: str, pos: int) -> bytes:
    try:
        return base64.b64decode("".join(text.split()), validate=True)
    except binascii.Error:
        raise ShellSyntaxError("malformed base64", pos) from None


def _regex(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    options = "".join(sorted(m.group("regex_f")))
    return {"$regularExpression": {"pattern": m.group("regex_p"), "options": options}}, m.end(), False


def _dbref(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    return {"$ref": m.group("dbref_ns"), "$id": m.group("dbref_id").lower()}, m.end(), False


def _dbref_document(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    """The shell's ``DBRef("coll", <id>[, "db"])``: a plain ``{$ref, $id[, $db]}`` document."""
    ns = m.group("dbrefdoc_ns")
    if ns is None:
        ns = m.group("dbrefdoc_ns2")
    if budget < 1:
        raise ShellSyntaxError(f"nesting deeper than {MAX_DEPTH}", m.start("dbrefdoc"))
    ident, pos, elided = _parse(m.string, m.end(), g, budget - 1)
    tail = _DBREF_TAIL.match(m.string, pos)
    if tail is None:
        raise ShellSyntaxError("expected ')' after the DBRef id", _skip_ws(m.string, pos))
    doc = {"$ref": ns, "$id": ident}
    db = tail.group("db") if tail.group("db") is not None else tail.group("db2")
    if db is not None:
        doc["$db"] = db
    return doc, tail.end(), elided


def _code(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    v = m.group("code_v")
    if g.escapes and "\\" in v:
        v = _unescape(v)
    return {"$code" if m.group("code_k") == "Code" else "$symbol": v}, m.end(), False


def _function(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    """Code printed raw by the server: the whole ``function (…) { … }``, or its first 70 bytes and ``...``."""
    text, start = m.string, m.start("func")
    if text.startswith("...", start + 70):
        return {"$code": text[start : start + 70]}, start + 73, True
    depth = 0
    for brace in _BRACES.finditer(text, start):
        depth += 1 if brace.group() == "{" else -1
        if depth == 0:
            return {"$code": text[start : brace.end()]}, brace.end(), False
        if depth < 0:
            break
    raise ShellSyntaxError("unbalanced braces in function code", start)


def _ellipsis_value(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    return _ELIDED, m.end(), True


def _bare_word(m: re.Match[str], g: _Grammar, budget: int) -> _Converted:
    return m.group("bare"), m.end(), False


_CONVERTERS: dict[str, Callable[[re.Match[str], _Grammar, int], _Converted]] = {
    "s": _string,
    "s2": _string,
    "sq": _string,
    "int": _integer,
    "long": _integer,
    "rare": _rare,
    "true": _constant(True),
    "false": _constant(False),
    "null": _constant(None),
    "fexp": _float,
    "float": _float,
    "decbare": _bare_decimal,
    "special": _special,
    "dec": _decimal,
    "undefined": _wrapper("$undefined", True),
    "minkey": _wrapper("$minKey", 1),
    "maxkey": _wrapper("$maxKey", 1),
    "hoid": _hot_oid,
    "huuid": _hot_uuid,
    "hts": _hot_timestamp,
    "hbin": _hot_bindata,
    "hdate": _hot_date,
    "oid": _oid,
    "uuid": _uuid,
    "ts": _timestamp,
    "tsobj": _timestamp,
    "tsms": _timestamp,
    "datems": _date_ms,
    "iso": _date_iso,
    "bin": _bindata,
    "hexdata": _hexdata,
    "binb64": _binb64,
    "binbare": _binbare,
    "regex": _regex,
    "dbref": _dbref,
    "dbrefdoc": _dbref_document,
    "code": _code,
    "func": _function,
    "ellv": _ellipsis_value,
    "bare": _bare_word,
}
