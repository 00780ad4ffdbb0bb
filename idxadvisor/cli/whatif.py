"""``idxadvisor whatif``: predict explain("executionStats") for one query over a data sample, with no server."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from idxadvisor.cli.app import command, examples
from idxadvisor.cli.common import FLAG, refuse_server_uris
from idxadvisor.errors import UsageError
from idxadvisor.exitcodes import ExitCode


@command(epilog=examples(
    "idxadvisor whatif --data shop.orders=fixtures/demo/data --query '{filter: {status: \"delivered\"}, "
    "sort: {createdAt: -1}, limit: 20}' --index '{status: 1, createdAt: -1}'"))
def whatif(
    data: Annotated[str, typer.Option(
        metavar="[NS=]PATH", help="A sample of the collection: Extended JSON (an array or one document per line) or "
        "a mongodump .bson file, optionally compressed; or a directory of <db>.<coll>.json samples (as analyze "
        "--data reads it), with NS= naming the collection when it holds several.", show_default=False)],
    query: Annotated[str, typer.Option(
        metavar="JSON", help='The request, in Extended JSON or mongosh syntax: {"command": "find"|"count"|"distinct"|"aggregate", '
        '"filter": {...}, "sort": {...}, "projection": {...}, "limit": N, "skip": N, "collation": {...}, '
        '"hint": NAME|{...}, "min": {...}, "max": {...}, "key": FIELD (distinct), "pipeline": \\[...] (aggregate)}. '
        'A field or command the model does not know is answered "unsupported".', show_default=False)],
    index: Annotated[Optional[list[str]], typer.Option(
        metavar="JSON", help='An index (JSON or mongosh syntax): a key pattern {"a": 1, "b": -1, "h": "hashed"} or an index document '
        '{"key": {...}, "name": ..., "sparse": true, "unique": true, "partialFilterExpression": {...}, '
        '"collation": {...}} (repeatable). The _id index always exists.')] = None,
    hint: Annotated[Optional[str], typer.Option(
        metavar="INDEX", help='Force this index, as hint() does: a key pattern {"a": 1}, an index name, or '
        '{"$natural": 1}. It wins over the query\'s "hint".')] = None,
    format: Annotated[str, typer.Option(
        "--format", "-f", metavar="FORMAT", help="text or json. \\[default: text]", show_default=False)] = "text",
    server_version: Annotated[str, typer.Option(
        metavar="X.Y", help="The server behaviour to model (8.0, 8.1, 7.0 …). \\[default: 8.0]",
        show_default=False)] = "8.0",
    sample_size: Annotated[int, typer.Option(
        metavar="N", help="Documents kept from the data file (a reservoir sample). \\[default: 10000]",
        show_default=False)] = 10_000,
    debug: Annotated[bool, typer.Option("--debug", metavar=FLAG, help="Show tracebacks.")] = False,
) -> int:
    """Predict explain("executionStats") for a query over a data sample, with the indexes you give: no server."""
    from idxadvisor.whatif import render_text, run_whatif

    if format not in ("text", "json"):
        raise UsageError(f"--format must be text or json, not {format!r}")
    refuse_server_uris("--data ", [data], "give a sample file: Extended JSON or a mongodump .bson")
    result = run_whatif(data=data, query=query, indexes=index or [], hint=hint, server_version=server_version,
                        sample_size=sample_size)
    if format == "json":
        from bson import json_util

        print(json_util.dumps(result, json_options=json_util.RELAXED_JSON_OPTIONS, indent=2))
    else:
        print(render_text(result))
    return ExitCode.OK
