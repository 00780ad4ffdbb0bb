"""idxadvisor: a MongoDB query and index advisor for the command line.

The package is laid out as the pipeline it runs (see ``shared/docs/DESIGN.md``)::

    cli -> api -> report -> replay -> server, selection, gate, compare -> rules, whatif, cluster
        -> indexes, workload -> shapes -> parse -> ingest -> models

Imports only ever point down that chain (``tests/test_layering.py`` holds the ranks). The library never prints; only ``cli`` writes to a terminal.
"""

__version__ = "0.1.0.dev0"
