"""Recorded workloads: a digest of shapes and their statistics saved to a file, read back beside logs.

``analyze --save-workload FILE`` writes one (``file.py``); ``analyze`` and ``check`` read workload files wherever they
read logs, and merge them into the digest of the logs. No literal query value is ever written (``redact.py``).
"""

from idxadvisor.workload.file import (
    SCHEMA_VERSION,
    Workload,
    check_filters,
    is_workload_file,
    load_workload,
    save_workload,
    workload_document,
    workload_lock,
)
from idxadvisor.workload.redact import REDACTED, redact_command

__all__ = ["REDACTED", "SCHEMA_VERSION", "Workload", "check_filters", "is_workload_file", "load_workload",
           "redact_command", "save_workload", "workload_document", "workload_lock"]
