#!/bin/sh
# Download the wheels benchmarks/device_scaling.sh installs on a machine without network (CPython 3.12, x86_64
# manylinux): what idxadvisor and its Dask path need beyond what that machine has (rich, typer, click, PyYAML, psutil,
# cloudpickle, toolz, msgpack, sortedcontainers, Jinja2, fsspec, packaging). Run from the repository root, with
# network; the wheels go to .whl/ (git-ignored through .git/info/exclude, never committed; about 10 MB).
set -eu
cd "$(dirname "$0")/.."
mkdir -p .whl
exclude="$(git rev-parse --git-path info/exclude)"
grep -qx '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >> "$exclude"
grep -qx '/bench-seed/' "$exclude" 2>/dev/null || echo '/bench-seed/' >> "$exclude"
python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux_2_28_x86_64 \
    --platform linux_x86_64 --platform any -d .whl \
    orjson==3.13.0 \
    pydantic==2.14.4 pydantic_core==2.50.5 annotated-types==0.8.0 typing_extensions==4.16.0 \
    typing-inspection==0.4.5 \
    pymongo==4.20.1 dnspython==2.9.2 \
    mongomock==4.3.0 sentinels==1.1.1 pytz==2026.6 \
    dask==2026.7.1 distributed==2026.7.1 tornado==6.6.1 zict==3.0.0 tblib==3.2.2 partd==1.4.2 locket==1.0.0 \
    urllib3==2.8.0
du -sh .whl
