"""The store files shipped under fixtures/, for tests that run over all of them."""

from __future__ import annotations

from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def store_files() -> list[str]:
    """Every store file under fixtures/ (expected outputs and docs excluded), relative to the repo."""
    out = []
    for path in sorted(FIXTURES.rglob("*")):
        if path.suffix in (".jsonl", ".ndjson", ".db") or (path.suffix == ".json" and path.name.startswith("export-")):
            out.append(str(path.relative_to(ROOT)))
    return out
