from __future__ import annotations

from pathlib import Path

from idxadvisor.ingest.sources import OpenedInput
from idxadvisor.models.events import JSON_LOG
from idxadvisor.parse.block import BlockOptions
from idxadvisor.parse.run import TASKS_PER_WORKER, RunOptions, Runner
from idxadvisor.shapes.digest import Digest

REFERENCE_YEAR = 2024


def _task_sizes(path: Path, jobs: int, block_size: int) -> list[int]:
    runner = Runner(RunOptions(BlockOptions(REFERENCE_YEAR), jobs=jobs, block_size=block_size), Digest)
    runner._workers = jobs  # as run() sets it when a pool parses the tasks
    opened = OpenedInput(str(path), path=path, size=path.stat().st_size)
    return [task.size for task in runner._tasks(opened, JSON_LOG)]


def test_tasks_cover_the_file_and_are_as_even_as_blocks_allow(tmp_path: Path) -> None:
    line = b'{"t":{"$date":"2024-01-01T00:00:00.000Z"},"s":"I","c":"NETWORK","id":22943,"msg":"x"}\n'
    path = tmp_path / "mongod.log"
    path.write_bytes(line * 2_000)  # 13.8 blocks of 12,500 bytes: four tasks of whole blocks cannot be equal
    block_size = 12_500
    sizes = _task_sizes(path, jobs=2, block_size=block_size)
    assert sum(sizes) == path.stat().st_size
    assert len(sizes) == 2 * TASKS_PER_WORKER
    # within a block of each other: 3, 4, 3 and 3.8 blocks (cutting where a run passes its share: 4, 4, 4, 1.8)
    assert max(sizes) - min(sizes) <= block_size + len(line)


def test_one_job_reads_a_file_as_one_task(tmp_path: Path) -> None:
    path = tmp_path / "mongod.log"
    path.write_bytes(b'{"t":{"$date":"2024-01-01T00:00:00.000Z"},"s":"I","id":1,"msg":"x"}\n' * 1_000)
    assert _task_sizes(path, jobs=1, block_size=4_096) == [path.stat().st_size]
