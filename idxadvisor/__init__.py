"""idxadvisor: a MongoDB query and index advisor for the command line.

The package is laid out as the pipeline it runs (see ``shared/docs/DESIGN.md``)::

    cli -> api -> report -> whatif, rules -> indexes -> shapes -> parse -> ingest -> models

Imports only ever point down that chain. The library never prints; only ``cli`` writes to a terminal.
"""

__version__ = "0.1.0.dev0"
