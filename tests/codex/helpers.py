"""Shared helpers for the Codex tests: fixture paths, a library scan, a rollout writer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.model import Finding
from transcript_doctor.stores import Options, open_store
from transcript_doctor.stores.options import CodexOptions

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "codex"
SYNTHETIC = FIXTURES / "synthetic"


def scan(path: Path, target: str | None = None, select: list[str] | None = None) -> list[Finding]:
    config = ScanConfig(select=select, options=Options(settings=(CodexOptions(target or "codex"),)))
    store = open_store(path, str(path), config.options)
    try:
        return check_store(store, config)
    finally:
        store.close()


def replay(path: Path, target: str | None = None) -> dict[str, Any]:
    options = Options(settings=(CodexOptions(target or "codex"),), full_replay=True)
    store = open_store(path, str(path), options)
    try:
        return store.replay(options)
    finally:
        store.close()


def request_summary(doc: dict[str, Any]) -> list[tuple[int, str, str | None, int, str]]:
    """(input index, item type, role or call id, line, source) of every item Codex sends."""
    return [(e["position"], e["item"]["type"], e["item"].get("role") or e["item"].get("call_id"), e["line"],
             e["source"]) for e in doc["request"]]


def envelope(kind: str, payload: dict[str, Any], n: int = 0) -> dict[str, Any]:
    return {"timestamp": f"2026-05-01T10:00:{n % 60:02d}.000Z", "type": kind, "payload": payload}


def write_rollout(path: Path, lines: list[dict[str, Any]]) -> Path:
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.writelines(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n" for line in lines)
    return path


def line_offsets(data: bytes) -> list[int]:
    """The byte offset at which every line starts."""
    offsets, at = [], 0
    for raw in data.splitlines(keepends=True):
        offsets.append(at)
        at += len(raw)
    return offsets
