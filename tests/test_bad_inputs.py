"""A corpus of bad inputs: never a traceback; a clear error (exit 2) only where nothing could be read,
otherwise a replay or scan with the problem reported at its line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from .kimi.builders import Journal

HEADER = b'{"type":"metadata","protocol_version":"1.4","created_at":1}\n'
USER = (b'{"type":"context.append_message","message":{"role":"user","content":[{"type":"text","text":"hi"}],'
        b'"toolCalls":[],"origin":{"kind":"user"}},"time":2}\n')

# name -> (content, exit code of `tdoc scan`, what stderr or the report must mention)
CORPUS: dict[str, tuple[bytes, int, str]] = {
    "empty": (b"", 2, "empty"),
    "only-blank-lines": (b"\n\n  \n", 2, "empty"),
    "binary-garbage": (bytes(range(256)) * 40, 2, "no readable record"),
    "no-header": (USER, 1, "F503"),
    "invalid-utf8": (HEADER + USER[:-1] + b"\xff\xfe\n" + USER, 1, "F502"),
    "torn-last-line": (HEADER + USER + USER[:40], 0, "F501"),
    "deeply-nested": (HEADER + b'{"type":"context.append_message","message":' + b"[" * 5000 + b"]" * 5000
                      + b"}\n" + USER, 1, "F502"),
    "non-object-lines": (HEADER + b"[1,2,3]\n" + b'"just a string"\n' + b"42\n" + USER, 1, "F502"),
    "header-only-garbage": (b"{broken\n" + USER, 1, "F502"),
    "crlf-endings": (HEADER.replace(b"\n", b"\r\n") + USER.replace(b"\n", b"\r\n"), 0, ""),
    "unknown-record-types": (HEADER + b'{"type":"future.thing","x":1}\n' + USER, 0, ""),
    "wrong-field-types": (HEADER + b'{"type":"context.append_message","message":{"role":5,"content":"x"}}\n'
                          + b'{"type":"context.append_loop_event","event":{"type":"step.begin"}}\n'
                          + b'{"type":"context.undo","count":"two"}\n' + USER, 0, "F504"),
    "summary-object-compaction": (HEADER + USER + b'{"type":"context.apply_compaction","summary":{"role":"user",'
                                  b'"content":[{"type":"text","text":"S"}],"toolCalls":[]},"count":1}\n', 1, "C204"),
}


def run(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "transcript_doctor", *args], capture_output=True, text=True,
                          env=env, timeout=120)


@pytest.mark.parametrize("name", sorted(CORPUS))
def test_bad_input_never_tracebacks(tmp_path: Path, name: str) -> None:
    content, want_exit, mention = CORPUS[name]
    path = tmp_path / f"{name}.jsonl"
    path.write_bytes(content)
    proc = run("scan", "--format", "json", "--input-format", "kimi-wire", str(path))
    assert "Traceback" not in proc.stderr + proc.stdout
    assert proc.returncode == want_exit, (proc.stdout[-2000:], proc.stderr)
    report = json.loads(proc.stdout)
    if want_exit == 2:
        assert report["files"][0]["error"] and mention in report["files"][0]["error"]
        assert mention in proc.stderr
    else:
        codes = {f["code"] for f in report["findings"]}
        assert not mention or mention in codes, codes
    replay = run("replay", "--input-format", "kimi-wire", str(path))
    assert "Traceback" not in replay.stderr + replay.stdout
    assert replay.returncode == (2 if want_exit == 2 else 0)


def test_a_10mb_single_line_is_read(tmp_path: Path) -> None:
    big = "x" * (10 * 1024 * 1024)
    journal = Journal().user(big).user("after")
    path = journal.write(tmp_path / "big.jsonl")
    proc = run("scan", "--format", "json", str(path))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["files"][0]["records"] == 3


def test_corrupt_line_reports_line_and_byte_offset(tmp_path: Path) -> None:
    path = tmp_path / "corrupt.jsonl"
    path.write_bytes(HEADER + b"{nope\n" + USER)
    report = json.loads(run("scan", "--format", "json", str(path)).stdout)
    f502 = [f for f in report["findings"] if f["code"] == "F502"][0]
    assert f502["location"]["line"] == 2 and f502["evidence"]["byte_offset"] == len(HEADER)


def test_detection_without_forcing(tmp_path: Path) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(USER * 3)  # header-less but clearly kimi
    proc = run("scan", "--format", "json", str(path))
    assert proc.returncode == 1 and json.loads(proc.stdout)["files"][0]["format"] == "kimi-wire"
    other = tmp_path / "other.jsonl"
    other.write_bytes(b'{"a": 1}\n{"b": 2}\n')
    proc = run("scan", str(other))
    assert proc.returncode == 2 and "not a store tdoc recognises" in proc.stdout + proc.stderr


def _unrelated_db(tmp_path: Path) -> Path:
    import sqlite3

    path = tmp_path / "other.db"
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (body TEXT)")
    conn.close()
    return path


def test_a_database_locked_while_its_kind_was_sniffed_says_so(tmp_path: Path, monkeypatch) -> None:
    """Detection reads a database twice (the probe, then each kind's sniffer, which treats a
    database it cannot open as not its kind): one that becomes locked in between is refused as
    locked (exit 3), not reported as a store tdoc does not know (exit 2)."""
    from transcript_doctor import stores
    from transcript_doctor.errors import RefusedError

    path = _unrelated_db(tmp_path)
    real, calls = stores.probe, []

    def locked_later(p, display=None):
        calls.append(p)
        if len(calls) > 1:
            raise RefusedError(f"{p}: database is locked by another process (tdoc does not wait)")
        return real(p, display)

    monkeypatch.setattr(stores, "probe", locked_later)
    with pytest.raises(RefusedError, match="locked"):
        stores.detect(path)
    assert len(calls) == 2


def test_an_unrelated_database_that_stays_readable_is_not_a_store(tmp_path: Path) -> None:
    from transcript_doctor import stores
    from transcript_doctor.model import TdocError

    with pytest.raises(TdocError, match="not a store tdoc recognises") as caught:
        stores.detect(_unrelated_db(tmp_path))
    assert caught.value.exit_code == 2
