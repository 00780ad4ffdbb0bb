"""``analyze --dask-scheduler``: the same report as a local run, for paths every worker sees and for s3:// URLs;
nothing of Dask or fsspec imported without it."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from idxadvisor.cli import run
from tests.conftest import FIXTURES_DIR, REPO_ROOT
from tests.helpers import json_line

DEMO_LOG = FIXTURES_DIR / "demo" / "shop.log"
BLOCK = "65536"  # the demo log in 26 blocks, so that pairing and intervals cross many block boundaries


def pairing_log(step_ms: int = 7) -> str:
    """Update statements and their command entries a few bytes apart: many pairs straddle a 4 KiB block boundary."""
    lines = []
    for number in range(400):
        second, millis = divmod(number * step_ms, 1000)
        ts = f"2026-11-02T10:{second // 60:02d}:{second % 60:02d}.{millis:03d}+00:00"
        later = f"2026-11-02T10:{second // 60:02d}:{second % 60:02d}.{millis + 2:03d}+00:00"
        connection = f"conn{number % 5}"
        lines.append(json_line({"type": "update", "ns": "shop.orders", "command": {"q": {"_id": number},
                                "u": {"$set": {"a": 1}}}, "planSummary": "IDHACK", "keysExamined": 1,
                                "docsExamined": 1, "durationMillis": 101}, ctx=connection, component="WRITE", ts=ts))
        lines.append(json_line({"type": "command", "ns": "shop.$cmd", "command": {"update": "orders",
                                "ordered": True}, "durationMillis": 102}, ctx=connection, ts=later))
    return "\n".join(lines) + "\n"


def analyze(capsys: pytest.CaptureFixture[str], *arguments: str) -> tuple[int, dict, str]:
    code = run(["analyze", *arguments, "--format", "json", "--fail-on", "never", "--jobs", "1"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out), captured.err


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("cluster")
    (root / "pairs.log").write_text(pairing_log(), encoding="utf-8")
    data = DEMO_LOG.read_bytes()
    lines = data.split(b"\n")  # a line over --max-line-bytes in the middle: a range of its own, never read
    overlong = lines[100][:-1] + b"x" * 5000 + b"}"
    (root / "overlong.log").write_bytes(b"\n".join([*lines[:100], overlong, *lines[101:300]]))
    (root / "older.log.gz").write_bytes(gzip.compress(data[: len(data) // 3]))
    workload = root / "day0.json"
    assert run(["analyze", str(root / "pairs.log"), "--save-workload", str(workload), "--format", "json",
                "--fail-on", "never"]) == 0
    return {"pairs": root / "pairs.log", "gz": root / "older.log.gz", "workload": workload, "root": root,
            "overlong": root / "overlong.log"}


def test_paths_every_worker_sees_give_the_local_report(capsys: pytest.CaptureFixture[str], dask_scheduler: str,
                                                       inputs: dict[str, Path]) -> None:
    arguments = [str(DEMO_LOG), str(inputs["pairs"]), str(inputs["gz"]), str(inputs["workload"]),
                 str(inputs["overlong"]), str(inputs["root"] / "missing.log"), "--max-line-bytes", "2048"]
    local = analyze(capsys, *arguments)
    on_cluster = analyze(capsys, *arguments, "--dask-scheduler", dask_scheduler, "--dask-block-size", "4096")
    assert local[0] == on_cluster[0] == 2  # the missing file, on both
    assert on_cluster[1] == local[1]
    assert on_cluster[2] == local[2]
    pairs = next(item for item in on_cluster[1]["inputs"] if item["path"] == str(inputs["pairs"]))
    assert (pairs["operations"], pairs["paired"]) == (400, 400)  # each statement and its entry, one operation
    overlong = next(item for item in on_cluster[1]["inputs"] if item["path"] == str(inputs["overlong"]))
    assert overlong["problems"] == 1 and overlong["problem_examples"][0]["line"] == 101


def test_s3_urls_give_the_local_report(capsys: pytest.CaptureFixture[str], dask_scheduler: str,
                                       s3_client, inputs: dict[str, Path]) -> None:  # noqa: ANN001
    s3_client.create_bucket(Bucket="mongo-logs")
    s3_client.upload_file(str(DEMO_LOG), "mongo-logs", "rs0/member1/mongod.log")
    s3_client.upload_file(str(inputs["gz"]), "mongo-logs", "rs0/member2/mongod.log.gz")
    s3_client.upload_file(str(inputs["pairs"]), "mongo-logs", "rs0/member3/mongod.log")
    local = analyze(capsys, str(DEMO_LOG), str(inputs["gz"]), str(inputs["pairs"]))[1]
    code, remote, err = analyze(capsys, "s3://mongo-logs/rs0/", "--dask-scheduler", dask_scheduler,
                                "--dask-block-size", BLOCK)
    assert (code, err) == (0, "")
    assert [item["path"] for item in remote["inputs"]] == ["s3://mongo-logs/rs0/member1/mongod.log",
                                                           "s3://mongo-logs/rs0/member2/mongod.log.gz",
                                                           "s3://mongo-logs/rs0/member3/mongod.log"]
    for item in (*local["inputs"], *remote["inputs"]):
        item.pop("path")
    assert remote == local
    code, globbed, _ = analyze(capsys, "s3://mongo-logs/rs0/*/mongod.log", "--dask-scheduler", dask_scheduler)
    assert [item["operations"] for item in globbed["inputs"]] == [local["inputs"][0]["operations"], 400]


def test_a_missing_url_is_an_input_error_and_the_rest_is_read(capsys: pytest.CaptureFixture[str],
                                                              dask_scheduler: str, s3_client) -> None:  # noqa: ANN001
    s3_client.create_bucket(Bucket="other-logs")
    s3_client.upload_file(str(DEMO_LOG), "other-logs", "mongod.log")
    code, report, err = analyze(capsys, "s3://other-logs/mongod.log", "s3://other-logs/nope.log",
                                "--dask-scheduler", dask_scheduler)
    demo_operations = analyze(capsys, str(DEMO_LOG))[1]["summary"]["operations"]
    assert code == 2 and report["inputs"][0]["operations"] == demo_operations
    assert err == "idxadvisor: error: s3://other-logs/nope.log: no such file or directory\n"


def test_without_a_scheduler_urls_are_refused_and_nothing_of_dask_is_imported(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["analyze", "s3://mongo-logs/rs0/"]) == 2
    assert capsys.readouterr().err.startswith("idxadvisor: error: s3://mongo-logs/rs0/: URLs are read on a Dask "
                                              "cluster (--dask-scheduler")
    script = ("import sys; from idxadvisor.cli import run; "
              f"code = run(['analyze', {str(DEMO_LOG)!r}, '--format', 'json', '--fail-on', 'never']); "
              "print([name for name in sys.modules if name.split('.')[0] in "
              "('dask', 'distributed', 'fsspec', 's3fs', 'boto3', 'botocore') "
              "or name.startswith('idxadvisor.cluster')])")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=REPO_ROOT,
                            check=True)
    assert result.stdout.strip().splitlines()[-1] == "[]"


def test_stdin_cannot_go_to_a_cluster(capsys: pytest.CaptureFixture[str], dask_scheduler: str) -> None:
    assert run(["analyze", "-", "--dask-scheduler", dask_scheduler]) == 2
    assert "stdin cannot be read on a Dask cluster" in capsys.readouterr().err


def test_an_unreachable_scheduler_is_a_connection_error(capsys: pytest.CaptureFixture[str],
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    import idxadvisor.cluster

    monkeypatch.setattr(idxadvisor.cluster, "CONNECT_TIMEOUT", "1s")
    assert run(["analyze", str(DEMO_LOG), "--dask-scheduler", "tcp://127.0.0.1:9"]) == 3
    assert capsys.readouterr().err.startswith("idxadvisor: error: cannot reach the Dask scheduler at "
                                              "tcp://127.0.0.1:9: ")


def test_an_existing_workload_file_is_extended_here_not_on_a_cluster(
        capsys: pytest.CaptureFixture[str], dask_scheduler: str, inputs: dict[str, Path]) -> None:
    before = inputs["workload"].read_bytes()
    assert run(["analyze", str(DEMO_LOG), "--save-workload", str(inputs["workload"]), "--dask-scheduler",
                dask_scheduler]) == 2
    assert capsys.readouterr().err == (f"idxadvisor: error: --save-workload: {inputs['workload']} exists, and adding "
                                       "to a workload file is done here, not on a Dask cluster: save to a new file "
                                       "and merge the two with 'idxadvisor merge'\n")
    assert inputs["workload"].read_bytes() == before


def test_a_directory_on_a_cluster_leaves_out_its_files_that_are_not_logs_as_a_local_run_does(
        capsys: pytest.CaptureFixture[str], dask_scheduler: str, s3_client,  # noqa: ANN001
        tmp_path: Path) -> None:
    folder = tmp_path / "logs"
    folder.mkdir()
    (folder / "mongod.log").write_bytes(DEMO_LOG.read_bytes())
    (folder / "README").write_text("Logs of the shop cluster.\nRotate daily.\n" * 40, encoding="utf-8")
    (folder / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8)
    local = analyze(capsys, str(folder))
    on_cluster = analyze(capsys, str(folder), "--dask-scheduler", dask_scheduler, "--dask-block-size", "4096")
    assert on_cluster == local
    code, report, err = on_cluster
    assert (code, err) == (0, "")
    assert sorted(report["inputs_skipped"]) == [str(folder / "README"), str(folder / "logo.png")]  # listed once
    assert [item["path"] for item in report["inputs"]] == [str(folder / "mongod.log")]
    assert report["summary"]["problems"] == 0
    s3_client.create_bucket(Bucket="mixed-logs")
    for name in ("mongod.log", "README", "logo.png"):
        s3_client.upload_file(str(folder / name), "mixed-logs", f"rs0/{name}")
    code, report, err = analyze(capsys, "s3://mixed-logs/rs0/", "--dask-scheduler", dask_scheduler)
    assert (code, err) == (0, "")
    assert sorted(report["inputs_skipped"]) == ["s3://mixed-logs/rs0/README", "s3://mixed-logs/rs0/logo.png"]
    assert [item["path"] for item in report["inputs"]] == ["s3://mixed-logs/rs0/mongod.log"]
    # named on the command line, a file that is not a log is an input error, on a cluster as here
    assert run(["analyze", str(folder / "README"), "--dask-scheduler", dask_scheduler]) == 2
    assert capsys.readouterr().err.startswith(f"idxadvisor: error: {folder / 'README'}: not a MongoDB log")


def test_a_naive_concatenation_on_the_cluster_gives_the_local_report(capsys: pytest.CaptureFixture[str],
                                                                     dask_scheduler: str, tmp_path: Path) -> None:
    """One day's log three times over (time goes back four minutes at each copy), cut into tasks of several blocks
    each: the workers read their own ranges, the client settles pairing at the tasks' edges, as one local process
    does."""
    path = tmp_path / "naive.log"
    path.write_text(pairing_log(step_ms=600) * 3, encoding="utf-8")
    local = analyze(capsys, str(path))
    on_cluster = analyze(capsys, str(path), "--dask-scheduler", dask_scheduler, "--dask-block-size", "4096")
    assert (local[1]["inputs"][0]["operations"], local[1]["inputs"][0]["paired"]) == (1_200, 1_200)
    assert on_cluster[1] == local[1]


def test_a_task_is_a_run_of_consecutive_ranges_and_an_overlong_line_is_one_of_its_own() -> None:
    from idxadvisor.cluster import _tasks
    from idxadvisor.ingest.sources import ByteRange

    ranges = [ByteRange(0, 40), ByteRange(40, 90), ByteRange(90, 120), ByteRange(120, 500, overlong=True),
              ByteRange(500, 530), ByteRange(530, 600), ByteRange(600, 610)]
    tasks = _tasks(ranges, task_size=60)
    assert [[(part.start, part.end) for part in task] for task in tasks] == [
        [(0, 40), (40, 90)], [(90, 120)], [(120, 500)], [(500, 530), (530, 600)], [(600, 610)]]
    assert [part for task in tasks for part in task] == ranges
