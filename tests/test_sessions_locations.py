"""Path-less `tdoc scan` and `tdoc sessions`: the default location of every agent, under a fake
$HOME holding one store of each kind, each agent's home variable honoured."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.locations import default_locations
from transcript_doctor.schema import errors as schema_errors
from transcript_doctor.stores import kinds

from .kimi.builders import Journal, text, think

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"
HOME_VARIABLES = ("KIMI_CODE_HOME", "HERMES_HOME", "XDG_DATA_HOME", "OPENCODE_DB", "CLAUDE_CONFIG_DIR", "CODEX_HOME")
runner = CliRunner()


def _kimi(target: Path) -> None:
    Journal().user("u1").step("s1", [think("")]).user("u2").step("s2", [text("ok")]).write(target)


def _copy(source: Path) -> Callable[[Path], None]:
    def place(target: Path) -> None:
        shutil.copyfile(source, target)

    return place


@dataclass
class Agent:
    format: str
    variable: str  # the agent's home variable
    default: str  # where the store goes under $HOME when the variable is unset
    moved: str  # where it goes under the variable's directory
    place: Callable[[Path], None]
    sessions: int  # sessions the store holds


AGENTS = [
    Agent("kimi-wire", "KIMI_CODE_HOME", ".kimi-code/sessions/wd_proj_1a2b/sess-k1/agents/main/wire.jsonl",
          "sessions/wd_proj_1a2b/sess-k1/agents/main/wire.jsonl", _kimi, 1),
    Agent("hermes-db", "HERMES_HOME", ".hermes/state.db", "state.db", _copy(FIXTURES / "hermes/hermes-state-v30.db"), 2),
    Agent("opencode-db", "XDG_DATA_HOME", ".local/share/opencode/opencode.db", "opencode/opencode.db",
          _copy(FIXTURES / "opencode/opencode.db"), 10),
]  # fmt: skip
def _first(directory: Path) -> Path | None:
    found = sorted(directory.glob("*.jsonl")) if directory.is_dir() else []
    return found[0] if found else None


# Stores whose readers land separately: in the fake home as soon as their kind and fixtures exist.
for _format, _variable, _default, _moved, _fixtures in (
    ("claude-code", "CLAUDE_CONFIG_DIR", ".claude/projects/-home-u-proj/SESSION.jsonl",
     "projects/-home-u-proj/SESSION.jsonl", FIXTURES / "claude-code" / "real"),
    ("codex-rollout", "CODEX_HOME", ".codex/sessions/2026/01/02/rollout-2026-01-02T10-00-00-SESSION.jsonl",
     "sessions/2026/01/02/rollout-2026-01-02T10-00-00-SESSION.jsonl", FIXTURES / "codex" / "real"),
):  # fmt: skip
    _source = _first(_fixtures)
    if _source is not None:
        AGENTS.append(Agent(_format, _variable, _default, _moved, _copy(_source), 1))

PRESENT = [a for a in AGENTS if a.format in kinds()]


def clean_env(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in HOME_VARIABLES}
    return {**env, "HOME": str(home), **extra}


@pytest.fixture
def fake_home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    for agent in PRESENT:
        target = home / agent.default
        target.parent.mkdir(parents=True, exist_ok=True)
        agent.place(target)
    return home


def test_every_agent_has_a_default_location_and_variable(tmp_path: Path) -> None:
    places = default_locations(clean_env(tmp_path))
    assert {p.agent for p in places} == {"kimi-code", "hermes", "opencode", "claude-code", "codex"}
    assert {p.variable for p in places} >= {"KIMI_CODE_HOME", "HERMES_HOME", "XDG_DATA_HOME", "CLAUDE_CONFIG_DIR",
                                            "CODEX_HOME"}  # fmt: skip
    assert all(str(p.path).startswith(str(tmp_path)) for p in places)


@pytest.mark.parametrize("agent", PRESENT, ids=[a.format for a in PRESENT])
def test_the_home_variable_moves_the_agent(tmp_path: Path, agent: Agent) -> None:
    moved = tmp_path / "elsewhere"
    target = moved / agent.moved
    target.parent.mkdir(parents=True)
    agent.place(target)
    env = clean_env(tmp_path / "empty-home", **{agent.variable: str(moved)})
    found = [p.path for p in default_locations(env) if p.exists()]
    assert found and all(str(p).startswith(str(moved)) for p in found)
    decoy = clean_env(tmp_path / "empty-home")  # near miss: without the variable, nothing there
    assert not [p for p in default_locations(decoy) if p.exists()]


def test_opencode_db_variable_names_the_database(tmp_path: Path) -> None:
    db = tmp_path / "custom.db"
    _copy(FIXTURES / "opencode/opencode.db")(db)
    places = [p for p in default_locations(clean_env(tmp_path, OPENCODE_DB=str(db))) if p.agent == "opencode"]
    assert [p.path for p in places] == [db]


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "transcript_doctor", *args], capture_output=True, text=True,
                          env={**env, "PYTHONPATH": str(ROOT), "NO_COLOR": "1"}, cwd=ROOT, timeout=300)  # fmt: skip


def test_pathless_scan_finds_every_store_in_the_fake_home(fake_home: Path) -> None:
    proc = _run(clean_env(fake_home), "scan", "-f", "json")
    report = json.loads(proc.stdout)
    assert proc.returncode == (1 if report["summary"]["by_severity"]["error"] else 0), proc.stderr
    assert sorted(f["format"] for f in report["files"]) == sorted(a.format for a in PRESENT)
    assert "default locations" in proc.stderr
    assert schema_errors("report", report) == []


@pytest.mark.parametrize("command", ["scan", "sessions"])
def test_pathless_run_over_an_empty_default_location_is_exit_0(tmp_path: Path, command: str) -> None:
    """A fresh `~/.claude/projects` (there, but empty) or one holding another program's file is
    nothing to scan, as no location at all is: exit 0, not 'no input files found' (exit 2)."""
    (tmp_path / ".claude" / "projects").mkdir(parents=True)
    (tmp_path / ".codex" / "sessions").mkdir(parents=True)
    (tmp_path / ".codex" / "sessions" / "notes.txt").write_text("not a rollout\n")
    proc = _run(clean_env(tmp_path), command)
    assert proc.returncode == 0, proc.stderr
    assert "No store to scan." in proc.stdout if command == "scan" else "No sessions found." in proc.stdout


def test_pathless_scan_with_nothing_there_says_where_it_looked(tmp_path: Path) -> None:
    proc = _run(clean_env(tmp_path), "scan")
    assert proc.returncode == 0 and proc.stdout == ""
    assert ".kimi-code" in proc.stderr and ".claude" in proc.stderr and "$CODEX_HOME" in proc.stderr


def test_sessions_lists_each_session_with_agent_time_size_and_findings(fake_home: Path) -> None:
    proc = _run(clean_env(fake_home), "sessions", "-f", "json")
    assert proc.returncode == 0, proc.stderr
    listing = json.loads(proc.stdout)
    assert schema_errors("sessions", listing) == []
    rows = listing["sessions"]
    by_format: dict[str, list[dict]] = {}
    for row in rows:
        by_format.setdefault(row["format"], []).append(row)
    for agent in PRESENT:
        assert len([r for r in by_format[agent.format] if r["id"] != "-"]) == agent.sessions, agent.format
    kimi = by_format["kimi-wire"][0]
    assert kimi["id"] == "sess-k1" and kimi["findings"]["error"] >= 1 and kimi["size_unit"] == "bytes"
    assert kimi["size"] == (fake_home / AGENTS[0].default).stat().st_size
    times = [r["last_activity"] for r in rows]
    assert times == sorted(times, reverse=True)  # newest first


def test_sessions_findings_match_the_scan(fake_home: Path) -> None:
    env = clean_env(fake_home)
    report = json.loads(_run(env, "scan", "-f", "json").stdout)
    rows = json.loads(_run(env, "sessions", "-f", "json").stdout)["sessions"]
    for severity in ("error", "warning", "info"):
        assert sum(r["findings"][severity] for r in rows) == report["summary"]["by_severity"][severity]


def test_sessions_table_has_one_line_per_session(fake_home: Path) -> None:
    proc = _run(clean_env(fake_home), "sessions")
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:3] == ["session", "agent", "last"]
    assert len(lines) - 1 == sum(a.sessions for a in PRESENT)


def test_sessions_of_a_named_path(tmp_path: Path) -> None:
    result = runner.invoke(app, ["sessions", str(FIXTURES / "hermes/hermes-state-v30.db"), "-f", "json"])
    assert result.exit_code == 0
    ids = {r["id"] for r in json.loads(result.stdout)["sessions"]}
    assert ids == {"20260825_083000_4f5061", "20260826_120000_506172"}


ONE_SESSION_FILES = [  # (a file that is one session, the id its records give it)
    ("codex/real/simonw-sample_codex_session-0.77.jsonl", "019b64e5-57fa-7463-b644-fba7e456f905"),
    ("eve/support-chat.v26.ndjson", "wrun_01K2T0C8R3N5W7Y9B2D4F6H8JA"),
    ("claude-code/real/entirecli-069f0cb7b375-0.jsonl", "377c739d-2463-4e96-a4bc-d06fbb4c3e3e"),
]


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_sessions_names_a_file_by_the_session_id_replay_accepts(tmp_path: Path, jobs: str) -> None:
    """The id `tdoc sessions` shows is the one scan findings carry and `replay --session` takes,
    not the file's name (a Codex rollout is named `rollout-<time>-<id>`), also from worker processes."""
    for rel, _ in ONE_SESSION_FILES:
        shutil.copy(FIXTURES / rel, tmp_path / f"copy-of-{Path(rel).name}")
    result = runner.invoke(app, ["sessions", str(tmp_path), "-f", "json", "-j", jobs])
    assert result.exit_code == 0, result.output
    rows = {Path(r["path"]).name: r for r in json.loads(result.stdout)["sessions"]}
    for rel, sid in ONE_SESSION_FILES:
        row = rows[f"copy-of-{Path(rel).name}"]
        assert row["id"] == sid and row["size_unit"] == "bytes"
        replay = runner.invoke(app, ["replay", row["path"], "--session", row["id"]])
        assert replay.exit_code == 0, replay.output


@pytest.mark.parametrize("rel", ["codex/real/simonw-sample_codex_session-0.77.jsonl",
                                 "claude-code/real/entirecli-069f0cb7b375-0.jsonl"])
def test_a_copied_session_file_is_as_recent_as_its_last_record(tmp_path: Path, rel: str) -> None:
    """Last activity is the last recorded timestamp (Codex rollout, Claude Code transcript), not
    when the file was copied."""
    source = FIXTURES / rel
    stamps = [json.loads(line).get("timestamp") for line in source.read_bytes().splitlines() if line.strip()]
    last = [s for s in stamps if isinstance(s, str)][-1]
    shutil.copy(source, tmp_path / "s.jsonl")
    result = runner.invoke(app, ["sessions", str(tmp_path / "s.jsonl"), "-f", "json"])
    (row,) = json.loads(result.stdout)["sessions"]
    assert row["last_activity"] == last[:19] + "Z"


ISO_CASES = [  # (a recorded timestamp, Unix seconds or None): the same under every CPython from 3.10
    ("2025-12-28T12:18:30.533Z", 1766924310.533),  # JavaScript's toISOString
    ("2025-12-28T12:18:30Z", 1766924310.0),
    ("2025-12-28T12:18:30.5Z", 1766924310.5),
    ("2025-12-28T12:18:30.123456789Z", 1766924310.123456),  # nanoseconds: cut to microseconds
    ("2025-12-28T12:18:30.533z", 1766924310.533),  # RFC 3339 allows a lowercase z
    ("2025-12-28T12:18:30,25+00:00", 1766924310.25),
    ("2025-12-28T12:18:30.533+00:00", 1766924310.533),
    ("2025-12-28T12:18:30+01:00", 1766920710.0),
    ("2025-12-28T12:18:30.5", None),  # a fraction but no zone: still no instant
    ("2025-12-28T12:18Z", 1766924280.0),
    ("2025-12-28T12:18:30", None),  # no zone: names no instant
    ("yesterday", None),
    (1766924310, None),
    ("", None),
]


@pytest.mark.parametrize(("value", "seconds"), ISO_CASES, ids=[repr(c[0]) for c in ISO_CASES])
def test_iso_seconds(value: object, seconds: float | None) -> None:
    from transcript_doctor.text import iso_seconds

    got = iso_seconds(value)
    assert got == pytest.approx(seconds) if seconds is not None else got is None
