"""Connecting to a server: a pymongo client from the user's URI, with time limits, and errors as one line.

Defaults the URI may override: ``serverSelectionTimeoutMS`` 5 s (an unreachable server is exit 3 within seconds),
``connectTimeoutMS`` 5 s, ``socketTimeoutMS`` 60 s; ``appname=idxadvisor`` so the server's own log and
``currentOp`` say who is reading. TLS, authentication and the read preference come from the URI. Every message
masks the password of the URI.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qsl

from idxadvisor.errors import ServerError, UsageError
from idxadvisor.units import mask_secrets

SERVER_SELECTION_TIMEOUT_MS = 5_000
CONNECT_TIMEOUT_MS = 5_000
SOCKET_TIMEOUT_MS = 60_000
MAX_TIME_MS = 30_000  # every command's maxTimeMS: a read that runs longer is stopped by the server
APP_NAME = "idxadvisor"
_DEFAULTS = {"serverSelectionTimeoutMS": SERVER_SELECTION_TIMEOUT_MS, "connectTimeoutMS": CONNECT_TIMEOUT_MS,
             "socketTimeoutMS": SOCKET_TIMEOUT_MS, "appname": APP_NAME}


def is_server_uri(text: str) -> bool:
    return text.lower().startswith(("mongodb://", "mongodb+srv://"))


def uri_options(uri: str) -> set[str]:
    """The option names the URI sets (lower case, as pymongo compares them)."""
    return {name.lower() for name, _ in parse_qsl(uri.partition("?")[2])}


def host_label(uri: str) -> str:
    """``mongodb://db1:27017,db2:27017`` without credentials, path or options: how reports name the server."""
    scheme, separator, rest = uri.partition("://")
    if not separator:  # a URI too damaged to have a scheme (refused before use, but named in that error): hosts only
        scheme, rest = "mongodb", uri
    hosts = rest.split("?", 1)[0].rpartition("@")[2].split("/", 1)[0]  # a password may hold an unencoded / or @
    return mask_secrets(f"{scheme}://{hosts}")


def check_uri(option: str, uri: str) -> None:
    """A usage error naming ``option`` (password masked) when ``uri`` is not a MongoDB URI pymongo can read: checked
    before the run connects anywhere, so a bad ``--scratch-uri`` is refused before the source server is read. An SRV
    URI is only checked for its scheme here (reading it resolves DNS; ``connect`` reports what fails)."""
    named = f"{option} {mask_secrets(uri)}" if option else mask_secrets(uri)
    if not is_server_uri(uri):
        raise UsageError(f"{named}: not a MongoDB URI (mongodb:// or mongodb+srv://)")
    if uri.lower().startswith("mongodb+srv://"):
        return
    from pymongo.errors import ConfigurationError, InvalidURI
    from pymongo.uri_parser import parse_uri

    try:
        parse_uri(uri)
    except (ConfigurationError, InvalidURI, ValueError, TypeError) as exc:
        raise UsageError(f"{named}: {mask_secrets(str(exc))}") from None


def connect(uri: str, **overrides: Any) -> Any:
    """A ``MongoClient`` for ``uri`` (pymongo is imported here: only runs that name a server need it). Nothing is
    sent until the first command; a URI pymongo cannot read is a usage error."""
    check_uri("", uri)
    from pymongo import MongoClient
    from pymongo.errors import ConfigurationError, InvalidURI

    given = uri_options(uri)
    options = {name: value for name, value in _DEFAULTS.items() if name.lower() not in given}
    options.update(overrides)
    try:
        return MongoClient(uri, connect=False, **options)
    except (ConfigurationError, InvalidURI, ValueError, TypeError) as exc:
        raise UsageError(f"{mask_secrets(uri)}: {mask_secrets(str(exc))}") from None


def describe_failure(exc: BaseException, what: str, uri: str) -> ServerError:
    """A pymongo error as one line: which command, on what, and why (password masked)."""
    from pymongo.errors import (
        ConnectionFailure,
        ExecutionTimeout,
        OperationFailure,
        ServerSelectionTimeoutError,
    )

    label = host_label(uri)
    if isinstance(exc, ServerSelectionTimeoutError):
        reason = str(exc).split(", Timeout:")[0].split(" (configured timeouts")[0]
        return ServerError(f"cannot reach {label} ({what}): {mask_secrets(reason)}")
    if isinstance(exc, ExecutionTimeout):
        return ServerError(f"{what} on {label} took longer than its maxTimeMS ({MAX_TIME_MS:,} ms) and was stopped")
    if isinstance(exc, OperationFailure):
        details = exc.details or {}
        name = details.get("codeName") or f"code {exc.code}"
        message = details.get("errmsg") or str(exc)
        return CommandRefused(f"{label} refused {what}: {mask_secrets(str(message))} ({name})", code=exc.code)
    if isinstance(exc, ConnectionFailure):
        return ServerError(f"lost the connection to {label} during {what}: {mask_secrets(str(exc))}")
    return ServerError(f"{what} on {label} failed: {type(exc).__name__}: {mask_secrets(str(exc))}")


class CommandRefused(ServerError):
    """The server answered a command with an error (not authorised, not enabled, unknown command …)."""

    def __init__(self, message: str, code: int | None = None) -> None:
        super().__init__(message)
        self.code = code
