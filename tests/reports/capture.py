"""Write the JSON scan report of every shipped fixture store to tests/reports/snapshots/.

The snapshots pin the scan's output: `tests/test_report_snapshots.py` re-scans each fixture and
compares the JSON byte for byte. Run `python -m tests.reports.capture` from the repository root
only when a change of output is intended, and say why in the commit.
"""

from __future__ import annotations

import io
from pathlib import Path

from transcript_doctor.core import ScanConfig, scan
from transcript_doctor.parallel import known_store
from transcript_doctor.reporters.json_report import render

ROOT = Path(__file__).resolve().parents[2]
SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
SKIP_SUFFIXES = (".md", ".expected.json", ".meta.json", ".v1.json", ".v2.json")


def fixture_stores() -> list[Path]:
    """Every file under fixtures/ that a store kind recognises (relative to the repository root)."""
    found = []
    for path in sorted((ROOT / "fixtures").rglob("*")):
        if path.is_file() and not path.name.endswith(SKIP_SUFFIXES):
            rel = path.relative_to(ROOT)
            if known_store(path, str(rel)):
                found.append(rel)
    return found


def report_json(rel: Path) -> str:
    """The `tdoc scan -f json` document for one fixture, scanned from the repository root."""
    out = io.StringIO()
    render(scan(str(ROOT / rel), ScanConfig(jobs=1, root=ROOT)), out)
    return out.getvalue().replace(str(ROOT) + "/", "")


def snapshot_path(rel: Path) -> Path:
    return SNAPSHOTS / (str(rel).replace("/", "__") + ".json")


def main() -> None:
    SNAPSHOTS.mkdir(exist_ok=True)
    for rel in fixture_stores():
        snapshot_path(rel).write_text(report_json(rel))


if __name__ == "__main__":
    main()
