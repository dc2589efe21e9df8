"""Start-up budget (issue 20): what a small scan and `tdoc --version` import, in a real process.

Detection must not import a store family whose sniffer did not match, schema validation loads
only when a fast check is unsure, argument parsing does without pydantic, and worker-pool and
progress-bar machinery loads only when used. Checked by module names, never by timing.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from transcript_doctor.stores import kinds
from transcript_doctor.stores.lazy import LazyKind

ROOT = Path(__file__).resolve().parent.parent
JOURNAL = (
    b'{"type": "metadata", "protocol_version": "1.4", "created_at": 1}\n'
    b'{"type": "context.append_message", "message": {"role": "user", "content": [{"type": "text", '
    b'"text": "hello"}], "toolCalls": [], "origin": {"kind": "user"}}, "time": 101}\n'
    b'{"type": "context.append_loop_event", "event": {"type": "step.begin", "uuid": "s1", "turnId": "1", '
    b'"step": 1}, "time": 102}\n'
)
NEVER_ON_A_SMALL_SCAN = ("pydantic", "jsonschema", "referencing", "rich.progress", "multiprocessing",
                         "concurrent.futures")  # fmt: skip

PROBE = """
import sys
from transcript_doctor import cli
try:
    cli.main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("\\n".join(sorted(sys.modules)))
"""


def _modules(tmp_path: Path, *argv: str) -> set[str]:
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""}, timeout=120, check=False)  # fmt: skip
    return set(done.stderr.splitlines())


def _loaded(modules: set[str], prefix: str) -> list[str]:
    return sorted(m for m in modules if m == prefix or m.startswith(prefix + "."))


@pytest.mark.parametrize("fmt", ["human", "json"])
def test_small_kimi_scan_imports_only_the_kimi_family(tmp_path: Path, fmt: str) -> None:
    journal = tmp_path / "wire.jsonl"
    journal.write_bytes(JOURNAL)
    modules = _modules(tmp_path, "scan", str(journal), "-f", fmt)
    assert "transcript_doctor.stores.kimi.store" in modules  # the scan ran
    for name in NEVER_ON_A_SMALL_SCAN:
        assert _loaded(modules, name) == [], name
    for family, light in (("eve", ()), ("hermes", ()), ("opencode", ()), ("claude_code", ("records",)),
                         ("codex", ("items",))):
        package = f"transcript_doctor.stores.{family}"
        assert _loaded(modules, package) == sorted([package, f"{package}.sniff", *(f"{package}.{m}" for m in light)])


def test_version_loads_neither_the_scan_nor_a_store(tmp_path: Path) -> None:
    modules = _modules(tmp_path, "--version")
    for name in ("transcript_doctor.core", "transcript_doctor.rules", "transcript_doctor.config",
                 "transcript_doctor.stores.kimi", *NEVER_ON_A_SMALL_SCAN):  # fmt: skip
        assert _loaded(modules, name) == [], name


def test_each_lazy_kind_declares_what_its_store_kind_is() -> None:
    lazy = [k for k in kinds().values() if isinstance(k, LazyKind)]
    assert {k.format for k in lazy} >= {"kimi-wire", "hermes-db", "hermes-export", "eve-stream", "opencode-db",
                                        "opencode-export", "claude-code", "codex-rollout"}  # fmt: skip
    for kind in lazy:
        real = kind.kind
        assert not isinstance(real, LazyKind)
        assert (kind.format, kind.system, kind.jsonl) == (real.format, real.system, real.jsonl)
        assert type(real).__module__ == kind.module
