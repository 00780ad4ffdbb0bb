"""``idxadvisor watch``: follow a live log (a file like ``tail -F``, or stdin) and show the costly shapes as they
happen, then end with the full ``analyze`` report of everything read.

``follow`` hands on complete lines across rotations, ``session`` feeds them through ``analyze``'s parse, shape and
digest pipeline (and keeps the window of the last minutes), ``snapshot`` works out what a refresh shows (with the
rules and index advice, throttled), and ``run`` is the loop; ``view`` (Rich, on a terminal) and ``ndjson`` (one JSON
object per refresh otherwise) display it. Nothing here writes to stdout but the display it is given.
"""

from idxadvisor.watch.run import Display, Watch, WatchOptions, check_workload_target

__all__ = ["Display", "Watch", "WatchOptions", "check_workload_target"]
