"""Shared pieces of the fleet tests: a tree of stores of every kind, an S3 endpoint, a clean AWS env.

The fleet extra (dask/distributed, fsspec, s3fs) is optional: without it these tests are skipped
with the install hint. The S3 endpoint is moto's server on 127.0.0.1 with a port the OS picks.
"""

from __future__ import annotations

import io
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.stores import FIXTURES, ROOT, store_files

pytest.importorskip("distributed", reason="fleet tests need the fleet extra: pip install '.[fleet]'")
pytest.importorskip("fsspec", reason="fleet tests need the fleet extra: pip install '.[fleet]'")

# One store of every kind, plus a file no store kind recognises (a directory scan leaves it out).
KINDS = [
    "fixtures/eve/support-chat.v26.ndjson",
    "fixtures/eve/nightly-report.v27.ndjson",
    "fixtures/hermes/hermes-state-v21.db",
    "fixtures/hermes/hermes-export-v21.jsonl",
    "fixtures/opencode/opencode.db",
    "fixtures/opencode/export-ses_02488099fffeZjgcBOIdRab2kX.json",
    "fixtures/kimi-code/golden/c01_legacy_compaction_after_vacuous.jsonl",
    "fixtures/kimi-code/golden/case-342.jsonl",
]


def build_tree(root: Path, copies: int) -> list[Path]:
    """`copies` machines, each a folder holding one store of every kind (and a stray note)."""
    made = []
    for i in range(copies):
        machine = root / f"machine-{i:04d}"
        machine.mkdir(parents=True)
        for rel in KINDS:
            src = ROOT / rel
            dest = machine / src.name
            shutil.copyfile(src, dest)
            made.append(dest)
        (machine / "notes.json").write_text('{"not": "a store"}\n')
    return made


def all_kinds_present() -> None:
    shipped = set(store_files())
    missing = [k for k in KINDS if k not in shipped]
    assert not missing, f"fleet test stores missing from fixtures/: {missing}"


@pytest.fixture
def clean_aws_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No credentials from the machine, and never the instance metadata service (off-machine)."""
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE",
                 "AWS_DEFAULT_PROFILE", "AWS_ENDPOINT_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")


@pytest.fixture
def s3_endpoint(clean_aws_env: None) -> Iterator[str]:
    """An S3-compatible endpoint on 127.0.0.1 (moto's server), stopped after the test."""
    server_mod = pytest.importorskip("moto.server", reason="S3 tests need moto[server] (test extra)")
    pytest.importorskip("s3fs", reason="S3 tests need s3fs (fleet extra)")
    server = server_mod.ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    endpoint = f"http://127.0.0.1:{server._server.server_port}"
    import urllib.request

    urllib.request.urlopen(urllib.request.Request(endpoint + "/moto-api/reset", method="POST"), timeout=30).close()
    try:
        yield endpoint
    finally:
        server.stop()


def s3_options(endpoint: str) -> dict[str, object]:
    return {"endpoint_url": endpoint, "key": "testing", "secret": "testing"}


def upload_tree(local_root: Path, endpoint: str, bucket: str, prefix: str) -> None:
    import s3fs

    fs = s3fs.S3FileSystem(**s3_options(endpoint))
    fs.mkdir(bucket)
    for path in sorted(local_root.rglob("*")):
        if path.is_file():
            fs.put_file(str(path), f"{bucket}/{prefix}/{path.relative_to(local_root).as_posix()}")
    fs.invalidate_cache()


def json_report(report: object) -> str:
    from transcript_doctor.reporters import REPORTERS

    out = io.StringIO()
    REPORTERS["json"](report, out)
    return out.getvalue()


def tdoc_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """The environment for a `python -m transcript_doctor` (and dask worker) subprocess."""
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = str(ROOT) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env.update(extra or {})
    return env


PYTHON = sys.executable
__all__ = ["FIXTURES", "KINDS", "PYTHON", "build_tree", "json_report", "s3_options", "tdoc_env", "upload_tree"]
