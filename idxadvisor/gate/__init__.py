"""``idxadvisor check``: gate a change of index definitions against a recorded workload.

``change.py`` reads the change (the proposed index file or migration scripts, applied to the baseline indexes),
``indexfile.py`` and ``scripts.py`` the files with the position of everything they hold, ``baseline.py`` the
accepted findings, and ``run.py`` judges the change: the rules run against the proposed set, and, with baseline
indexes, against the baseline too, so that only what the change makes worse counts.
"""
