"""Fleet scans of an S3 bucket (moto's server on 127.0.0.1): same report as a local copy, no writes."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from tests.fleet.conftest import PYTHON, build_tree, s3_options, tdoc_env, upload_tree
from transcript_doctor.core import ScanConfig
from transcript_doctor.fleet import fleet_scan

BUCKET = "fleet"


def _tdoc(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([PYTHON, "-m", "transcript_doctor", *args], capture_output=True, env=tdoc_env(),
                          timeout=600, check=False)


def _bucket_listing(endpoint: str) -> dict[str, int]:
    import s3fs

    fs = s3fs.S3FileSystem(**s3_options(endpoint))
    fs.invalidate_cache()
    return {name: info["size"] for name, info in fs.find(BUCKET, detail=True).items()}


def test_s3_prefix_on_a_local_cluster_reports_like_a_local_copy(s3_endpoint: str, tmp_path: Path) -> None:
    local_root = tmp_path / "sessions"
    build_tree(local_root, 40)  # 320 stores of eight kinds, and 40 files that are not stores
    upload_tree(local_root, s3_endpoint, BUCKET, "sessions")
    before = _bucket_listing(s3_endpoint)
    options = [f"endpoint_url={s3_endpoint}", "key=testing", "secret=testing"]
    remote = _tdoc("scan", f"s3://{BUCKET}/sessions/", "--cluster", "local:2", "--format", "json",
                   *[arg for o in options for arg in ("--storage-option", o)])
    local = _tdoc("scan", str(local_root), "-j", "1", "--format", "json")
    assert remote.returncode == local.returncode == 1, remote.stderr.decode()[-2000:]
    got = json.loads(remote.stdout.decode().replace(f"s3://{BUCKET}/sessions", str(local_root)))
    assert got == json.loads(local.stdout)
    assert got["summary"]["files"] == 320
    assert _bucket_listing(s3_endpoint) == before  # scan never writes to the bucket


def test_s3_inline_and_glob(s3_endpoint: str, tmp_path: Path) -> None:
    local_root = tmp_path / "sessions"
    build_tree(local_root, 2)
    upload_tree(local_root, s3_endpoint, BUCKET, "sessions")
    report = fleet_scan([f"s3://{BUCKET}/sessions/machine-*/*.db"], ScanConfig(jobs=1),
                        storage_options=s3_options(s3_endpoint))
    paths = [fr.path for fr in report.files]
    assert paths == sorted(paths) and len(paths) == 4  # two .db stores on each of two machines
    assert all(p.startswith(f"s3://{BUCKET}/sessions/machine-") and p.endswith(".db") for p in paths)
    assert all(fr.error is None and fr.format for fr in report.files)


def test_missing_credentials_are_a_clear_error(s3_endpoint: str) -> None:
    result = _tdoc("scan", f"s3://{BUCKET}/sessions/", "--storage-option", f"endpoint_url={s3_endpoint}")
    assert result.returncode == 2
    stderr = result.stderr.decode()
    assert "credentials" in stderr and f"s3://{BUCKET}/sessions/" in stderr
    assert "Traceback" not in stderr
