"""Contracts a CI job relies on: what is (not) a kimi journal, severity words, sessions for
explain, stdin for replay/explain, the replay shape, whole rule names in a pipe, Ctrl-C and EPIPE."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.rules import RULES
from transcript_doctor.schema import errors as schema_errors
from transcript_doctor.stores import kinds

from .kimi.builders import Journal, seed_case, text, think

runner = CliRunner()
ROOT = Path(__file__).resolve().parent.parent
OPENCODE_DB = ROOT / "fixtures" / "opencode" / "opencode.db"
HERMES_DB = ROOT / "fixtures" / "hermes" / "hermes-state-v30.db"
EMPTY_AT_1 = "400 the message at position 1 with role 'assistant' must not be empty"


def tdoc(*args: str, **kw) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "transcript_doctor", *args], capture_output=True, text=True,
                          env=env, timeout=120, cwd=ROOT, **kw)  # fmt: skip


def poisoned(path: Path) -> Path:
    return Journal().user("u1").step("s1", [think("")]).user("u2").step("s2", [text("ok")]).write(path)


# --------------------------------------------------------------------------- what is a kimi journal

SNIFF_CASES = [
    ("pretty-printed JSON object", b'{\n  "type": "context.append_message",\n  "turn.prompt": 1\n}\n', False),
    ("JSON Schema naming kimi record types", b'{\n  "$id": "x",\n  "enum": ["context.append_message"]\n}\n', False),
    ("text line then kimi records", b'hello\n{"type":"context.append_message","message":{}}\n', False),
    ("a JSON array first line", b'[1, 2]\n{"type":"context.append_message"}\n', False),
    ("metadata header", b'{"type":"metadata","protocol_version":"1.4"}\n', True),
    ("headerless record with a kimi type", b'{"type":"context.append_message","message":{}}\n', True),
]


@pytest.mark.parametrize(("label", "head", "is_kimi"), SNIFF_CASES, ids=[c[0] for c in SNIFF_CASES])
def test_a_journal_starts_with_a_whole_json_record(tmp_path: Path, label: str, head: bytes, is_kimi: bool) -> None:
    path = tmp_path / "x.jsonl"
    path.write_bytes(head)
    assert kinds()["kimi-wire"].sniff(path, head) is is_kimi, label


def test_tdocs_own_schemas_are_not_stores() -> None:
    proc = tdoc("scan", "transcript_doctor/schemas/", "--skip-unrecognised")
    assert proc.returncode == 0, proc.stderr
    named = tdoc("scan", *sorted(str(p) for p in (ROOT / "transcript_doctor/schemas").glob("*.json")),
                 "--skip-unrecognised", "-f", "json")  # fmt: skip
    assert named.returncode == 0 and json.loads(named.stdout)["summary"]["files"] == 0


# --------------------------------------------------------------------------- human severity


def test_human_output_names_the_severity_and_says_when_context_changed_it(tmp_path: Path) -> None:
    seed = seed_case().write(tmp_path / "seed.jsonl")  # W101 at info: its step is no longer live
    live = poisoned(tmp_path / "live.jsonl")  # W101 at its default error
    out = runner.invoke(app, ["scan", str(seed), str(live), "--color", "never"]).stdout
    lines = {line.split()[0]: line for line in out.splitlines() if " W101 " in line}
    seed_line = next(v for k, v in lines.items() if "seed" in k)
    live_line = next(v for k, v in lines.items() if "live" in k)
    assert " info " in seed_line and "lowered from W101's default error by context" in seed_line
    assert " error " in live_line and "default" not in live_line
    assert RULES["W101"].severity == "error"


# --------------------------------------------------------------------------- explain --error and sessions


def test_explain_on_a_multi_session_store_asks_for_the_session() -> None:
    result = runner.invoke(app, ["explain", "--error", EMPTY_AT_1, str(OPENCODE_DB)])
    assert result.exit_code == 2
    assert "--session" in result.output and "ses_0391ce5bfffeYxMT3gWDcEwIVi" in result.output


@pytest.mark.parametrize("store", [OPENCODE_DB, HERMES_DB])
def test_explain_with_an_unknown_session_is_an_error(store: Path) -> None:
    result = runner.invoke(app, ["explain", "--error", EMPTY_AT_1, str(store), "--session", "nope"])
    assert result.exit_code == 2 and "no session 'nope'" in result.output


def test_explain_with_a_known_session_maps_into_it() -> None:
    result = runner.invoke(app, ["explain", "--error", EMPTY_AT_1, str(OPENCODE_DB), "--session",
                                 "ses_0391ce5bfffeYxMT3gWDcEwIVi", "-f", "json"])  # fmt: skip
    assert result.exit_code == 0
    assert all(f["session"] == "ses_0391ce5bfffeYxMT3gWDcEwIVi" for f in json.loads(result.stdout)["findings"])


def test_explain_error_reads_the_store_from_stdin(tmp_path: Path) -> None:
    journal = poisoned(tmp_path / "p.jsonl")
    proc = tdoc("explain", "--error", EMPTY_AT_1, "-", "-f", "json", input=journal.read_text())
    assert proc.returncode == 0, proc.stderr
    diagnosis = json.loads(proc.stdout)
    assert diagnosis["mapping"] == "mapped" and diagnosis["record"]["line"] == 3


# --------------------------------------------------------------------------- replay


def test_replay_reads_stdin_like_the_file(tmp_path: Path) -> None:
    journal = poisoned(tmp_path / "p.jsonl")
    from_stdin = tdoc("replay", "-", input=journal.read_text())
    from_file = tdoc("replay", str(journal))
    assert from_stdin.returncode == 0 and json.loads(from_stdin.stdout) == json.loads(from_file.stdout)


REPLAY_SHAPES = [
    ("kimi journal: one session", "journal", [], dict),
    ("database: one object per session", str(OPENCODE_DB), [], list),
    ("database, one session chosen", str(OPENCODE_DB), ["--session", "ses_0391ce5bfffeYxMT3gWDcEwIVi"], dict),
    ("eve stream: one session", str(ROOT / "fixtures/eve/support-chat.v26.ndjson"), [], dict),
]


@pytest.mark.parametrize(("label", "path", "extra", "shape"), REPLAY_SHAPES, ids=[c[0] for c in REPLAY_SHAPES])
def test_replay_shape_follows_the_store_kind_and_validates(tmp_path, label, path, extra, shape) -> None:
    if path == "journal":
        path = str(poisoned(tmp_path / "p.jsonl"))
    result = runner.invoke(app, ["replay", path, *extra])
    assert result.exit_code == 0, result.output
    value = json.loads(result.stdout)
    assert isinstance(value, shape), label
    assert schema_errors("replay", value) == []


def test_replay_unknown_session_is_an_error() -> None:
    result = runner.invoke(app, ["replay", str(OPENCODE_DB), "--session", "nope"])
    assert result.exit_code == 2


ONE_SESSION_STORES = [  # (a store of one session, its format)
    ("fixtures/codex/real/simonw-sample_codex_session-0.77.jsonl", "codex-rollout"),
    ("fixtures/claude-code/real/entirecli-069f0cb7b375-0.jsonl", "claude-code"),
    ("fixtures/eve/support-chat.v26.ndjson", "eve-stream"),
    ("fixtures/opencode/export-ses_02488099fffeZjgcBOIdRab2kX.json", "opencode-export"),
]


@pytest.mark.parametrize(("path", "fmt"), ONE_SESSION_STORES, ids=[c[1] for c in ONE_SESSION_STORES])
def test_a_one_session_store_replays_only_its_own_session(path: str, fmt: str) -> None:
    """`--session` names the session to replay: a store of one session replays it for its own id
    and refuses any other (exit 2), instead of printing its session under a name it does not hold."""
    store = str(ROOT / path)
    whole = runner.invoke(app, ["replay", store])
    assert whole.exit_code == 0, whole.output
    own = json.loads(whole.stdout).get("session")
    assert isinstance(own, str) and own, f"{fmt}: the replay names no session"
    chosen = runner.invoke(app, ["replay", store, "--session", own])
    assert chosen.exit_code == 0 and json.loads(chosen.stdout) == json.loads(whole.stdout)
    other = runner.invoke(app, ["replay", store, "--session", own + "-not-this-one"])
    assert other.exit_code == 2
    assert f"not '{own}-not-this-one'" in other.output and own in other.output
    assert other.stdout.strip() == "" or not other.stdout.lstrip().startswith(("{", "["))


# --------------------------------------------------------------------------- pipes


def test_rules_in_a_pipe_keep_every_name_whole() -> None:
    proc = tdoc("rules")  # stdout is a pipe, as in `tdoc rules | grep`
    assert proc.returncode == 0
    by_code = {line.split()[0]: line.split() for line in proc.stdout.splitlines()[1:]}
    assert set(by_code) == set(RULES)
    for code, rule in RULES.items():
        assert by_code[code][1] == rule.name and rule.summary in " ".join(by_code[code])


EPIPE_CASES = [
    (["rules"], 0), (["schema", "report"], 0), (["scan", "SEED", "-f", "json"], 1), (["scan", "SEED"], 1),
    (["scan", "SEED", "--exit-zero"], 0), (["replay", "SEED", "-f", "human"], 0), (["explain", "W101"], 0),
    (["sessions", "SEED"], 0), (["replay", "SEED", "-f", "html"], 0),
]  # fmt: skip


@pytest.mark.parametrize(("args", "code"), EPIPE_CASES)
def test_a_closed_stdout_exits_quietly_with_the_commands_code(tmp_path: Path, args: list[str], code: int) -> None:
    args = [str(seed_case().write(tmp_path / "s.jsonl")) if a == "SEED" else a for a in args]
    read, write = os.pipe()
    os.close(read)  # the reader is gone before tdoc writes: every write is EPIPE
    try:
        proc = subprocess.run([sys.executable, "-m", "transcript_doctor", *args], stdout=write,
                              stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                              timeout=120, cwd=ROOT)  # fmt: skip
    finally:
        os.close(write)
    assert proc.returncode == code and proc.stderr == ""


# Runs `tdoc` with the scan of one input held inside a worker: the worker opens a FIFO (named by
# TDOC_TEST_HOLD) for reading and blocks there until the test opens its other end. The inputs
# themselves are ordinary files (a FIFO named as an input is refused, never opened). With
# TDOC_TEST_MAIN_BLOCKS_SIGINT set, the main thread blocks SIGINT before tdoc starts and a helper
# thread started first does not: the kernel must then hand Ctrl-C to a thread other than the main
# one, which is what it may do on its own on a busy machine. The driver puts SIGINT's default
# handler back first: a test run started in the background (`cmd &` in a script) inherits SIGINT
# ignored, and so would tdoc, which keeps an ignored SIGINT ignored as every program does.
_HOLDING_DRIVER = """
import os, signal, sys, threading, time
signal.signal(signal.SIGINT, signal.default_int_handler)  # a terminal's foreground job, whatever this test inherited
from transcript_doctor import parallel
real = parallel.scan_one
def held(path, display, config, *shard):
    if path.name == "held.jsonl":
        with open(os.environ["TDOC_TEST_HOLD"], "rb") as fifo:
            fifo.read()
    return real(path, display, config, *shard)
parallel.scan_one = held
if os.environ.get("TDOC_TEST_MAIN_BLOCKS_SIGINT"):
    import multiprocessing
    parallel._context = lambda: multiprocessing.get_context("fork")  # workers that keep `held` (the helper only sleeps)
    threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
from transcript_doctor.cli import main
sys.argv = ["tdoc", *sys.argv[1:]]
main()
"""
GUARD = 120  # seconds: a guard against a hang, never a timing assertion


def _held_scan(tmp_path: Path, **env: str) -> tuple[subprocess.Popen[str], Path]:
    """`tdoc scan held.jsonl other.jsonl -j 2` in a session of its own, once a worker holds an input."""
    fifo = tmp_path / "hold.fifo"
    os.mkfifo(fifo)  # a worker opening it blocks until this test opens the other end: the scan is running
    held = seed_case().write(tmp_path / "held.jsonl")
    other = seed_case().write(tmp_path / "other.jsonl")
    proc = subprocess.Popen([sys.executable, "-c", _HOLDING_DRIVER, "scan", str(held), str(other), "-j", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT), "TDOC_TEST_HOLD": str(fifo), **env},
                            start_new_session=True)  # fmt: skip
    return proc, fifo


def _open_when_held(proc: subprocess.Popen[str], fifo: Path) -> int | None:
    """The FIFO's write end, opened once a worker has opened it for reading (None: it never did)."""
    deadline = time.monotonic() + GUARD
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            return os.open(fifo, os.O_WRONLY | os.O_NONBLOCK)  # succeeds once a worker reads it
        except OSError:
            time.sleep(0.05)
    return None


def _signal_state(pid: int) -> str:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return "(no /proc status)"
    return " ".join(line for line in status.splitlines() if line.startswith(("State", "SigBlk", "SigIgn", "SigCgt")))


def _end_session(proc: subprocess.Popen[str], writer: int | None) -> None:
    """Whatever happened: release the held worker and kill what is left of tdoc's session (its
    workers too), so that no process outlives the test or keeps its pipe open."""
    if writer is not None:
        os.close(writer)
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    try:
        proc.communicate(timeout=GUARD)
    except subprocess.TimeoutExpired:
        pass


@pytest.mark.parametrize("main_blocks_sigint", [False, True], ids=["any-thread", "not-the-main-thread"])
def test_ctrl_c_during_a_parallel_scan_exits_130_without_a_traceback(tmp_path: Path, main_blocks_sigint: bool) -> None:
    proc, fifo = _held_scan(tmp_path, **({"TDOC_TEST_MAIN_BLOCKS_SIGINT": "1"} if main_blocks_sigint else {}))
    writer = None
    try:
        writer = _open_when_held(proc, fifo)
        assert writer is not None, "no worker opened the input"
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole process group
        try:
            _, stderr = proc.communicate(timeout=GUARD)
        except subprocess.TimeoutExpired:
            pytest.fail(f"tdoc did not end after Ctrl-C: {_signal_state(proc.pid)}")
    finally:
        _end_session(proc, writer)
    assert proc.returncode == 130
    assert "Traceback" not in stderr and "tdoc: interrupted" in stderr


def _gone(pid: int) -> bool:
    """Whether the process has ended (a zombie no one reaps counts as ended)."""
    try:
        return Path(f"/proc/{pid}/status").read_text().split("State:", 1)[1].split()[0] in ("Z", "X")
    except (OSError, IndexError):
        return True


def test_workers_end_when_tdoc_is_killed(tmp_path: Path) -> None:
    """SIGKILL gives tdoc no chance to stop its workers: each one notices its parent is gone and ends,
    instead of waiting on the pool's queue for ever."""
    driver = (
        "import os, sys, time\n"
        "from transcript_doctor import parallel\n"
        "pool = parallel._executor(2)\n"
        "pids = {pool.submit(os.getpid).result() for _ in range(8)}\n"
        "print(' '.join(map(str, sorted(pids))), flush=True)\n"
        "time.sleep(3600)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", driver], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                            text=True, cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)}, start_new_session=True)
    try:
        assert proc.stdout is not None
        workers = [int(p) for p in proc.stdout.readline().split()]
        assert workers and all(not _gone(pid) for pid in workers)
        proc.kill()
        proc.wait(timeout=GUARD)
        deadline = time.monotonic() + GUARD
        while time.monotonic() < deadline and not all(_gone(pid) for pid in workers):
            time.sleep(0.1)
        assert all(_gone(pid) for pid in workers), "a worker outlived tdoc"
    finally:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.communicate(timeout=GUARD)
