"""Builders for synthetic OpenCode stores used by the test_opencode_* modules (no tests here).

The schema is copied from the fixture database, so synthetic stores have exactly the tables,
columns and indexes of a real `opencode.db`.
"""

from __future__ import annotations

import itertools
import json
import shutil
import sqlite3
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from transcript_doctor.core import ScanConfig, check_store
from transcript_doctor.model import Finding
from transcript_doctor.stores import Options, open_store

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "opencode"
FIXTURE_DB = FIXTURES / "opencode.db"
T0 = 1_786_000_000_000
ZERO_TOKENS = {"total": 0, "input": 0, "output": 0, "reasoning": 0, "cache": {"read": 0, "write": 0}}


def fixture_schema() -> list[str]:
    conn = sqlite3.connect(f"file:{FIXTURE_DB}?immutable=1", uri=True)
    try:
        return [r[0] for r in conn.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")]
    finally:
        conn.close()


def copy_fixture_db(tmp: Path) -> Path:
    """The fixture database in a writable directory (opening a WAL database creates files beside it)."""
    dest = tmp / "opencode.db"
    shutil.copyfile(FIXTURE_DB, dest)
    dest.chmod(0o644)
    return dest


def text(t: str, **extra: Any) -> dict[str, Any]:
    return {"type": "text", "text": t, **extra}


def reasoning(t: str = "", signature: str | None = None) -> dict[str, Any]:
    part: dict[str, Any] = {"type": "reasoning", "text": t, "time": {"start": T0, "end": T0 + 1}}
    if signature is not None:
        part["metadata"] = {"anthropic": {"signature": signature}}
    return part


def tool(status: str = "completed", call: str = "call_1", name: str = "bash", **state: Any) -> dict[str, Any]:
    body: dict[str, Any] = {"status": status, "input": {"command": "ls"}}
    if status == "completed":
        body.update(output="ok", title=name, metadata={}, time={"start": T0, "end": T0 + 1})
    elif status == "error":
        body.update(error="boom", time={"start": T0, "end": T0 + 1})
    body.update(state)
    return {"type": "tool", "callID": call, "tool": name, "state": body}


def step_start() -> dict[str, Any]:
    return {"type": "step-start"}


def step_finish(reason: str = "stop") -> dict[str, Any]:
    return {"type": "step-finish", "reason": reason, "cost": 0, "tokens": ZERO_TOKENS}


def assistant_info(parent: str, *, finish: Any = "stop", tokens: Any = "work", cost: Any = 0.01,
                   completed: bool = True, error: Any = None, model: str = "claude-sonnet-5",
                   **extra: Any) -> dict[str, Any]:
    if tokens == "work":
        tokens = {"total": 110, "input": 100, "output": 10, "reasoning": 0, "cache": {"read": 0, "write": 0}}
    elif tokens == "zero":
        tokens = ZERO_TOKENS
    info: dict[str, Any] = {
        "role": "assistant", "time": {"created": T0}, "parentID": parent, "modelID": model,
        "providerID": "anthropic", "mode": "build", "agent": "build", "path": {"cwd": "/p", "root": "/p"},
    }
    if cost is not None:
        info["cost"] = cost
    if tokens is not None:
        info["tokens"] = tokens
    if finish is not None:
        info["finish"] = finish
    if completed:
        info["time"]["completed"] = T0 + 1
    if error is not None:
        info["error"] = error
    info.update(extra)
    return info


@dataclass
class Db:
    """A synthetic opencode.db, written message by message."""

    path: Path
    conn: sqlite3.Connection = field(init=False)
    counter: itertools.count = field(default_factory=lambda: itertools.count(1))

    def __post_init__(self) -> None:
        self.conn = sqlite3.connect(self.path)
        for sql in fixture_schema():
            self.conn.execute(sql)
        self.conn.execute(
            "INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('p1', '/p', 0, 0, '[]')"
        )

    def _id(self, prefix: str) -> str:
        return f"{prefix}_{next(self.counter):012d}"

    def session(self, sid: str = "ses_test", title: str = "t") -> str:
        self.conn.execute(
            "INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated) "
            "VALUES (?, 'p1', 's', '/p', ?, '1', ?, ?)",
            (sid, title, T0, T0),
        )
        return sid

    def message(self, sid: str, info: dict[str, Any], parts: list[dict[str, Any]], mid: str | None = None) -> str:
        mid = mid or self._id("msg")
        n = int(mid.split("_")[-1]) if mid.split("_")[-1].isdigit() else 0
        self.conn.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
            (mid, sid, T0 + n, T0 + n, json.dumps(info)),
        )
        for part in parts:
            self.conn.execute(
                "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
                (self._id("prt"), mid, sid, T0, T0, json.dumps(part)),
            )
        return mid

    def user(self, sid: str, prompt: str = "do it", parts: list[dict[str, Any]] | None = None,
             model: str = "claude-sonnet-5") -> str:
        info = {"role": "user", "time": {"created": T0}, "agent": "build",
                "model": {"providerID": "anthropic", "modelID": model}}
        return self.message(sid, info, parts if parts is not None else [text(prompt)])

    def assistant(self, sid: str, parent: str, parts: list[dict[str, Any]], **info: Any) -> str:
        return self.message(sid, assistant_info(parent, **info), parts)

    def close(self) -> Path:
        self.conn.commit()
        self.conn.close()
        return self.path


def scan(path: Path, **options: Any) -> list[Finding]:
    store = open_store(path, str(path), Options(**options))
    try:
        return check_store(store, ScanConfig())
    finally:
        store.close()


def codes(findings: list[Finding], session: str | None = None) -> list[str]:
    return sorted(f.code for f in findings if session is None or f.session == session)
