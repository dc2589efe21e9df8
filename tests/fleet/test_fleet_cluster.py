"""Fleet scans on real Dask clusters: in-process, local worker processes, a hand-started scheduler.

Every run must give the bytes a local `-j 1` scan gives; a worker killed mid-scan loses no store.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.fleet.conftest import PYTHON, build_tree, json_report, tdoc_env
from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.fleet import fleet_scan
from transcript_doctor.fleet.cluster import DaskExecutor
from transcript_doctor.fleet.run import FleetRun


def _tdoc(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([PYTHON, "-m", "transcript_doctor", *args], capture_output=True,
                          env=env or tdoc_env(), timeout=600, check=False)


@pytest.fixture(scope="module")
def tree() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="tdoc-fleet-tree-") as tmp:
        build_tree(Path(tmp) / "sessions", 6)
        yield Path(tmp) / "sessions"


def test_in_process_cluster_gives_the_local_report(tree: Path) -> None:
    from distributed import LocalCluster

    local = json_report(scan([str(tree)], ScanConfig(jobs=1)))
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None) as cluster:
        got = json_report(fleet_scan([str(tree)], ScanConfig(jobs=1), cluster=cluster.scheduler_address))
    assert got == local


def test_cli_local_worker_processes_give_the_bytes_of_a_serial_scan(tree: Path) -> None:
    serial = _tdoc("scan", str(tree), "-j", "1", "--format", "json")
    fleet = _tdoc("scan", str(tree), "--cluster", "local:2", "--format", "json")
    assert serial.returncode == fleet.returncode == 1, fleet.stderr.decode()[-2000:]
    assert fleet.stdout == serial.stdout
    assert json.loads(fleet.stdout)["summary"]["files"] == 6 * 8
    assert b"Traceback" not in fleet.stderr


def test_hand_started_scheduler_and_two_workers(tree: Path, tmp_path: Path) -> None:
    env = tdoc_env()
    info = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([PYTHON, "-m", "distributed.cli.dask_scheduler", "--host", "127.0.0.1",
                               "--port", "0", "--no-dashboard", "--scheduler-file", str(info)],
                              env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)]
    try:
        address = _scheduler_address(info, procs[0])
        for _ in range(2):
            procs.append(subprocess.Popen([PYTHON, "-m", "distributed.cli.dask_worker", address, "--nworkers", "1",
                                           "--nthreads", "1", "--no-dashboard", "--host", "127.0.0.1"],
                                          env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        _wait_for_workers(address, 2)
        serial = _tdoc("scan", str(tree), "-j", "1", "--format", "ndjson")
        fleet = _tdoc("scan", str(tree), "--cluster", address, "--format", "ndjson")
        assert fleet.stdout == serial.stdout and fleet.returncode == serial.returncode, fleet.stderr.decode()[-2000:]
    finally:
        for proc in reversed(procs):
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _scheduler_address(info: Path, proc: subprocess.Popen[bytes]) -> str:
    for _ in range(600):  # the scheduler writes its file once it listens; poll its existence, not a clock
        if info.exists() and info.stat().st_size:
            try:
                return str(json.loads(info.read_text())["address"])
            except (ValueError, KeyError):
                pass
        if proc.poll() is not None:
            pytest.fail("the dask scheduler exited before it listened")
        time.sleep(0.1)
    pytest.fail("the dask scheduler never wrote its address")


def _wait_for_workers(address: str, n: int) -> None:
    from distributed import Client

    with Client(address, timeout="60s") as client:
        client.wait_for_workers(n, timeout=120)


def test_a_worker_killed_mid_scan_loses_no_store(tmp_path: Path) -> None:
    from distributed import Client, LocalCluster

    made = build_tree(tmp_path / "many", 250)  # 2,000 stores
    assert len(made) == 2000

    class KillOnce:
        """After the first batch comes back, SIGKILL one worker process (its nanny restarts it)."""

        def __init__(self, client: Client) -> None:
            self.client, self.killed = client, False

        def start(self, files: int, total_bytes: int) -> None:
            self.total = files

        def advance(self, files: int, nbytes: int) -> None:
            if not self.killed:
                self.killed = True
                pids = self.client.run(os.getpid)
                os.kill(next(iter(pids.values())), signal.SIGKILL)

        def stop(self) -> None:
            pass

    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        progress = KillOnce(client)
        results = FleetRun(DaskExecutor(client), ScanConfig(jobs=1), progress=progress).scan([str(tmp_path / "many")])
    assert progress.killed
    assert sorted(r.path for r in results) == sorted(str(p) for p in made)
    lost = [r for r in results if r.error and "died" in r.error]
    assert lost == []  # Dask reschedules the dead worker's batches; none ends as a worker death
