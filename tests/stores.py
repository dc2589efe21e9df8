"""The store files shipped under fixtures/, for tests that run over all of them."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def store_files() -> list[str]:
    """Every store file under fixtures/, relative to the repo: expected outputs and docs are left
    out, except `opencode/export-*.expected.json`, which is named like an export. It stays in as
    the one input the tests over every fixture must refuse (exit 2, "not a store"); a test that
    wants stores only leaves out names ending `.expected.json` (tests/test_unplaced.py)."""
    out = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in (".jsonl", ".ndjson", ".db") or (path.suffix == ".json" and path.name.startswith("export-")):
            out.append(str(path.relative_to(ROOT)))
    return out
