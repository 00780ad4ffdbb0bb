#!/bin/bash
# One prepared run on a many-core machine without network: how `analyze` scales with --jobs and on a local Dask
# cluster, on an 800 MB JSON log built from the seed. Run from the repository root with .whl/ (benchmarks/
# device_wheels.sh) and bench-seed/ (corpus_logs.py --write-seed) carried along; writes $OUT/scaling.txt.
#
#   bash benchmarks/device_scaling.sh        # the 16-core run, under 7 minutes: carry .whl and bench-seed, $OUT set
#   SIZE_MB=40 JOBS=1,2 DASK_WORKERS=2 REPEAT=1 bash benchmarks/device_scaling.sh   # a small try on 2 cores
#   PHASES=16 JOBS=none bash benchmarks/device_scaling.sh    # only where --jobs 16 spends its time (bench_phases.py)
set -euo pipefail
cd "$(dirname "$0")/.."
PYTHON=${PYTHON:-python3}
SIZE_MB=${SIZE_MB:-800}
JOBS=${JOBS:-1,2,4,8,16}
DASK_WORKERS=${DASK_WORKERS:-16}
REPEAT=${REPEAT:-3}
PHASES=${PHASES:-}  # a --jobs value: first time the main process's phases with it (benchmarks/bench_phases.py)
OUT=${OUT:-/tmp/scaling-out}
SITE=${SITE:-/tmp/site}
SEED=${SEED:-bench-seed/json-day.log.gz}
WHEELS=${WHEELS:-.whl}  # a folder without wheels (WHEELS=none) installs nothing: where the packages are there already
LOG=${LOG:-/tmp/scaling-json-${SIZE_MB}mb.log}
mkdir -p "$OUT"
started=$(date +%s)
stage() { echo "== $1 ($(( $(date +%s) - started )) s)"; }

stage "wheels"
if ls "$WHEELS"/*.whl >/dev/null 2>&1; then
    "$PYTHON" -m pip install --quiet --no-index --no-deps --upgrade --target "$SITE" "$WHEELS"/*.whl
fi
export PYTHONPATH="$PWD:$SITE${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=
"$PYTHON" -c "import orjson, pydantic, bson, dask, distributed; print('imports ok')"

stage "extension"
suffix=$("$PYTHON" -c "import sysconfig; print(sysconfig.get_config_var('EXT_SUFFIX'))")
include=$("$PYTHON" -c "import sysconfig; print(sysconfig.get_paths()['include'])")
gcc -O3 -DNDEBUG -fPIC -shared -I"$include" idxadvisor/_speedups.c -o "idxadvisor/_speedups$suffix" \
    || echo "the extension did not build: the runs below are the Python path's"
"$PYTHON" -c "from idxadvisor.parse import accel; print('reading core:', accel.described())" | tee "$OUT/core.txt"
"$PYTHON" -m compileall -q idxadvisor >/dev/null || true

stage "log"
if [ ! -s "$LOG" ]; then
    "$PYTHON" benchmarks/corpus_logs.py json "$LOG" --size-mb "$SIZE_MB" --seed "$SEED"
fi
ls -l "$LOG"

if [ -n "$PHASES" ]; then  # where the main process's time goes with this many jobs
    stage "phases"
    timeout 150 "$PYTHON" benchmarks/bench_phases.py --repeat "$REPEAT" -- analyze "$LOG" --jobs "$PHASES" \
        --format json --output /tmp/phases-report.json --fail-on never | tee "$OUT/phases.txt"
fi
if [ "$JOBS" != none ]; then
    stage "runs"
    timeout 420 "$PYTHON" benchmarks/device_scaling.py "$LOG" --jobs "$JOBS" --dask-workers "$DASK_WORKERS" \
        --repeat "$REPEAT" --out "$OUT"
fi
stage "done"
