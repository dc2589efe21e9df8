"""Whether a file is a kimi-code journal (or an export zip of them), by its first bytes.

Imported by the package at discovery, before any file has matched: standard library and orjson only.
"""

from __future__ import annotations

from pathlib import Path

import orjson

# Record types only kimi-code journals carry; a header-less journal is recognised by these.
KIMI_TYPES = (b'"context.append_message"', b'"context.append_loop_event"', b'"turn.prompt"', b'"config.update"')


def sniff_wire(path: Path, head: bytes) -> bool:
    if head.startswith(b"PK\x03\x04"):
        return zip_has_journal(path)
    first = first_line(head)
    if first is None:
        return False
    try:
        obj = orjson.loads(first)
    except orjson.JSONDecodeError:
        return False  # a journal's first line is always a whole JSON record (pretty JSON is not)
    if not isinstance(obj, dict):
        return False
    if obj.get("type") == "metadata" and "protocol_version" in obj:
        return True
    return isinstance(obj.get("type"), str) and any(t in head for t in KIMI_TYPES)


def first_line(head: bytes) -> bytes | None:
    for line in head.split(b"\n"):
        if line.strip():
            return line.strip()
    return None


def journal_members(names: list[str]) -> list[str]:
    """The `agents/<id>/wire.jsonl` members of an export zip, in order."""
    return sorted(n for n in names if n.endswith("/wire.jsonl") and "/agents/" in f"/{n}" and not n.startswith("__MACOSX"))


def zip_has_journal(path: Path) -> bool:
    import zipfile

    try:
        with zipfile.ZipFile(path) as zf:
            names = zf.namelist()
            return "manifest.json" in names and bool(journal_members(names))
    except (zipfile.BadZipFile, OSError):
        return False
