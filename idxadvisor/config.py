"""Settings: ``[tool.idxadvisor]`` in ``pyproject.toml``, or ``.idxadvisor.toml``, then command-line options on top.

Names may be written ``min-ms`` or ``min_ms``. Every value is validated; a bad or unknown setting is a
``UsageError`` naming it, which the command line reports in one line with exit code 2.
"""

from __future__ import annotations

import re
import tomllib
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from idxadvisor.errors import UsageError

#: A server version as buildInfo prints it: 8.0, 7.0.5, 8.0.0-rc1 (only the major and minor numbers change behaviour).
_SERVER_VERSION = re.compile(r"^(\d+)\.(\d+)(?:\.\d+)?(?:-[0-9A-Za-z][0-9A-Za-z.-]*)?$")


def server_version_of(text: str) -> tuple[int, int] | None:
    """(major, minor) of a version such as 7.0, 7.0.5 or 8.0.0-rc1; None when the text is not a version."""
    match = _SERVER_VERSION.match(str(text).strip())
    return (int(match.group(1)), int(match.group(2))) if match else None

CONFIG_FILE = ".idxadvisor.toml"
PYPROJECT = "pyproject.toml"

OutputFormat = Literal["text", "json", "markdown", "sarif", "html"]
SortKey = Literal["total", "count", "mean", "p95", "max", "docs-examined", "ratio"]
FailOn = Literal["info", "warning", "error", "never"]
IndexSelection = Literal["workload", "per-finding"]
#: What one index key written costs, in keys or documents examined: the default of --write-cost-factor.
DEFAULT_WRITE_COST_FACTOR = 10.0
#: Its largest value: beyond it any index write outweighs every read of a real workload, and costs stay finite.
MAX_WRITE_COST_FACTOR = 1_000_000.0
#: Server seconds per hour of log below which no index is suggested: the default of --min-saving.
DEFAULT_MIN_SAVING = 0.5


class Settings(BaseModel):
    """Everything ``analyze`` can be told, whichever way it was told."""

    model_config = ConfigDict(extra="forbid", validate_assignment=True, allow_inf_nan=False)

    format: OutputFormat = "text"
    output: Path | None = None
    top: int | None = Field(default=None, ge=1)
    sort_by: SortKey = "total"
    min_ms: float = Field(default=0.0, ge=0)
    ns: list[str] = Field(default_factory=list)
    exclude_ns: list[str] = Field(default_factory=list)
    app: list[str] = Field(default_factory=list)  # only operations of applications (appName) matching these globs
    include_internal: bool = False
    since: datetime | None = None
    until: datetime | None = None
    show_values: bool = False
    verbose: bool = False
    jobs: int | None = Field(default=None, ge=1)
    fail_on: FailOn = "warning"
    select: list[str] = Field(default_factory=list)
    ignore: list[str] = Field(default_factory=list)
    rules: dict[str, dict[str, Any]] = Field(default_factory=dict)
    min_count: int = Field(default=3, ge=1)
    data: list[str] = Field(default_factory=list)
    indexes: list[str] = Field(default_factory=list)  # [NS=]FILE arguments (one file name is accepted too)
    min_savings_pct: float = Field(default=50.0, ge=0, le=100)
    sample_size: int = Field(default=10_000, ge=1)
    server_version: str = "8.0"
    max_line_bytes: int = Field(default=64 * 1024 * 1024, ge=1024)
    uri: str | None = None  # a live source server, read only (--uri)
    db: list[str] = Field(default_factory=list)
    query_stats: bool = False
    replay: bool = False
    scratch_db: str | None = None
    scratch_uri: str | None = None
    regression_pct: float = Field(default=20.0, gt=0)  # compare: growth of mean or p95 that is a regression
    min_executions: int = Field(default=10, ge=1)  # compare: executions on each side before a shape is judged
    dask_scheduler: str | None = None  # read the inputs on this Dask cluster (tcp://host:8786)
    dask_block_size: int = Field(default=32 * 1024 * 1024, ge=4096)  # bytes of a plain log per Dask task
    index_selection: IndexSelection = "workload"  # the best set per collection, or today's one index per finding
    max_new_indexes: int | None = Field(default=None, ge=0)  # per collection; None: no limit but the server's 64
    write_cost_factor: float = Field(default=DEFAULT_WRITE_COST_FACTOR, ge=0, le=MAX_WRITE_COST_FACTOR)
    min_saving: float = Field(default=DEFAULT_MIN_SAVING, ge=0, le=3_600_000)  # server seconds per hour of log

    @field_validator("indexes", mode="before")
    @classmethod
    def _index_files(cls, value: Any) -> Any:
        """``indexes = "file.json"`` (one file, as before the option was repeatable) is a list of one."""
        return [str(value)] if isinstance(value, (str, Path)) else value
    shard_keys: dict[str, dict[str, Any]] = Field(default_factory=dict)  # namespace -> shard key pattern

    @field_validator("since", "until")
    @classmethod
    def _aware(cls, value: datetime | None) -> datetime | None:
        """A time without a zone is UTC, like the server's own log times."""
        if value is not None and value.tzinfo is None:
            return value.replace(tzinfo=timezone.utc)
        return value

    @field_validator("server_version")
    @classmethod
    def _version(cls, value: str) -> str:
        if server_version_of(value) is None:
            raise ValueError("must look like 8.0, 7.0.5 or 8.0.0-rc1")
        return value


def _normalise_keys(table: dict[str, Any]) -> dict[str, Any]:
    return {key.replace("-", "_"): value for key, value in table.items()}


def read_config_file(path: Path) -> dict[str, Any]:
    """The settings table of a config file (``[tool.idxadvisor]`` of a pyproject, or a whole .idxadvisor.toml)."""
    try:
        document = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise UsageError(f"cannot read config file {path}: {exc.strerror or exc}") from None
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise UsageError(f"config file {path} is not valid TOML: {exc}") from None
    if path.name == PYPROJECT:
        table = document.get("tool", {}).get("idxadvisor", {})
    else:
        table = document.get("tool", {}).get("idxadvisor", document) if "tool" in document else document
    if not isinstance(table, dict):
        raise UsageError(f"config file {path}: the idxadvisor settings must be a table")
    return _normalise_keys(table)


def find_config_file(directory: Path) -> Path | None:
    """``.idxadvisor.toml``, else a ``pyproject.toml`` with a ``[tool.idxadvisor]`` table, in ``directory``."""
    candidate = directory / CONFIG_FILE
    if candidate.is_file():
        return candidate
    pyproject = directory / PYPROJECT
    if pyproject.is_file():
        try:
            document = tomllib.loads(pyproject.read_text(encoding="utf-8"))
        except (OSError, tomllib.TOMLDecodeError, UnicodeDecodeError):
            return None
        if "idxadvisor" in document.get("tool", {}):
            return pyproject
    return None


def load_settings(overrides: dict[str, Any], config_path: Path | None = None, directory: Path | None = None,
                  defaults: dict[str, Any] | None = None) -> Settings:
    """Settings from the config file (the given one, or the one found in ``directory``) with ``overrides`` on top.

    ``overrides`` holds only the options the user actually gave (None values are dropped); ``defaults`` are a
    command's own defaults, below the config file (``check`` fails on errors only unless told otherwise).
    """
    path = config_path if config_path is not None else find_config_file(directory or Path.cwd())
    values: dict[str, Any] = dict(defaults or {})
    values.update(read_config_file(path) if path is not None else {})
    values.update({key: value for key, value in overrides.items() if value is not None})
    try:
        return Settings.model_validate(values)
    except ValidationError as exc:
        raise UsageError(describe_validation_error(exc, path)) from None


def describe_validation_error(exc: ValidationError, path: Path | None) -> str:
    origin = f" (from {path})" if path is not None else ""
    lines = []
    for error in exc.errors():
        location = ".".join(str(part) for part in error["loc"]).replace("_", "-")
        message = "unknown setting" if error["type"] == "extra_forbidden" else error["msg"]
        lines.append(f"setting '{location}'{origin}: {message}")
    return "; ".join(lines)
