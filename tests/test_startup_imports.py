"""Start-up budget (issue 20): what a small scan and `tdoc --version` import, in a real process.

Detection must not import a store family whose sniffer did not match, schema validation loads
only when a fast check is unsure, argument parsing does without pydantic, the root command builds
only the command that was named, rich loads only where it draws (a terminal, colour, a progress
bar), and worker-pool, heal, hashing and SQLite machinery loads only when used. Checked by module
names, never by timing (`bench/bench_startup.py` times it).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.cli_help import COMMANDS
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
                         "concurrent.futures", "sqlite3", "hashlib", "zipfile", "importlib.resources", "tomllib",
                         "transcript_doctor.heal", "transcript_doctor.healing", "transcript_doctor.schema",
                         "transcript_doctor.explain",
                         "transcript_doctor.cli_heal", "transcript_doctor.cli_docs", "transcript_doctor.cli_replay",
                         "transcript_doctor.reporters.sarif", "transcript_doctor.reporters.github",
                         "transcript_doctor.reporters.html")  # fmt: skip
# Everything of tdoc that `tdoc --version` may load: the root command and what it is made of.
VERSION_MODULES = {"transcript_doctor", "transcript_doctor.cli", "transcript_doctor.cli_help",
                   "transcript_doctor.cli_params", "transcript_doctor.cli_output", "transcript_doctor.errors",
                   "transcript_doctor.reporters", "transcript_doctor.reporters.options"}  # fmt: skip

PROBE = """
import sys
from transcript_doctor import cli
try:
    cli.main(sys.argv[1:])
except SystemExit:
    pass
sys.stderr.write("\\n".join(sorted(sys.modules)))
"""


# What a small scan builds at import beyond modules: dataclasses (their methods are generated as
# source and compiled, 2-4 M instructions a class) and regexes with a class above U+00FF (millions
# of instructions to compile; `text.compiled` builds them for the first text that needs one).
BUILT_PROBE = """
import dataclasses, re, sys
compile_pattern = re.compile
def spy(pattern, flags=0):
    caller = sys._getframe(1).f_globals.get("__name__", "")
    if caller.startswith("transcript_doctor"):
        sys.stderr.write(f"compiled {caller}\\n")
        if isinstance(pattern, str) and max(pattern, default="") > "\\xff":
            sys.stderr.write(f"pattern {caller} {ascii(pattern)}\\n")
    return compile_pattern(pattern, flags)
re.compile = spy
""" + PROBE.replace("sys.stderr.write", "modules = ") + """
for name in sorted(m for m in modules if m.startswith("transcript_doctor")):
    for value in list(vars(sys.modules[name]).values()):
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name:
            sys.stderr.write(f"dataclass {name}.{value.__qualname__}\\n")
"""
# Modules whose regexes serve what a small kimi scan never meets (a long first line, a heal).
REGEXES_ON_FIRST_USE = {f"transcript_doctor.stores.{m}" for m in ("claude_code.sniff", "eve.sniff", "hermes.sniff",
                                                                  "kimi.replay.step_edits")}  # fmt: skip
# Dataclasses a small scan still creates, in modules other work owns; none may be added.
DATACLASSES_ON_A_SMALL_SCAN = {f"transcript_doctor.stores.kimi.read.reader.{c}" for c in
                               ("Header", "LineProblem", "ReadStats", "Record")} | {
    f"transcript_doctor.stores.kimi.replay.driver.{c}" for c in ("KimiReplay", "LegacyCompaction")}  # fmt: skip


def _modules(tmp_path: Path, *argv: str) -> set[str]:
    """The modules loaded by `tdoc ARGV` in a fresh process, stdout and stderr not terminals."""
    done = subprocess.run([sys.executable, "-c", PROBE, *argv], cwd=tmp_path, capture_output=True, text=True,
                          env={"PYTHONPATH": str(ROOT), "PATH": ""}, timeout=120, check=False)  # fmt: skip
    return set(done.stderr.splitlines())


def _loaded(modules: set[str], prefix: str) -> list[str]:
    return sorted(m for m in modules if m == prefix or m.startswith(prefix + "."))


@pytest.fixture
def journal(tmp_path: Path) -> Path:
    path = tmp_path / "wire.jsonl"
    path.write_bytes(JOURNAL)
    return path


@pytest.mark.parametrize("fmt", ["human", "json"])
def test_small_kimi_scan_imports_only_the_kimi_family(journal: Path, fmt: str) -> None:
    modules = _modules(journal.parent, "scan", str(journal), "-f", fmt)
    assert "transcript_doctor.stores.kimi.store" in modules  # the scan ran
    for name in NEVER_ON_A_SMALL_SCAN:
        assert _loaded(modules, name) == [], name
    for family in ("eve", "hermes", "opencode", "claude_code", "codex"):
        package = f"transcript_doctor.stores.{family}"
        assert _loaded(modules, package) == [package, f"{package}.sniff"]
    reporters = _loaded(modules, "transcript_doctor.reporters")
    assert ("transcript_doctor.reporters.human" in reporters) == (fmt == "human")
    assert ("transcript_doctor.reporters.json_report" in reporters) == (fmt == "json")


@pytest.mark.parametrize("fmt", ["human", "json"])
def test_small_scan_builds_no_dataclass_and_no_wide_regex(journal: Path, fmt: str) -> None:
    done = subprocess.run([sys.executable, "-c", BUILT_PROBE, "scan", str(journal), "-f", fmt], cwd=journal.parent,
                          capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": ""}, timeout=120,
                          check=False)  # fmt: skip
    built = [line.split(" ", 1) for line in done.stderr.splitlines()
             if line.startswith(("dataclass ", "pattern ", "compiled "))]  # fmt: skip
    assert "C203" in done.stdout  # the scan ran
    assert [what for kind, what in built if kind == "pattern"] == []
    compiling = {what for kind, what in built if kind == "compiled"}
    assert compiling and compiling.isdisjoint(REGEXES_ON_FIRST_USE)
    dataclasses = {what for kind, what in built if kind == "dataclass"}
    assert dataclasses <= DATACLASSES_ON_A_SMALL_SCAN, "write value classes by hand (transcript_doctor/value_types.py)"


def test_small_human_scan_to_a_pipe_does_not_load_rich_console(journal: Path) -> None:
    """Not a terminal: the human report is written without rich (`tests/test_human_plain.py` pins
    the bytes), and no progress bar is drawn."""
    modules = _modules(journal.parent, "scan", str(journal))
    assert "transcript_doctor.reporters.human" in modules
    assert [m for m in modules if m.startswith("rich.")] == []


def test_colour_forced_loads_rich_where_it_draws(journal: Path) -> None:
    modules = _modules(journal.parent, "scan", str(journal), "--color", "always")
    assert "rich.console" in modules and "rich.progress" not in modules


def test_version_loads_the_root_command_only(tmp_path: Path) -> None:
    modules = _modules(tmp_path, "--version")
    assert "transcript_doctor.cli" in modules  # the probe ran
    assert set(_loaded(modules, "transcript_doctor")) <= VERSION_MODULES
    for name in ("rich.console", "rich.text", "sqlite3", "hashlib", *NEVER_ON_A_SMALL_SCAN):
        assert _loaded(modules, name) == [], name


def test_a_command_loads_its_own_module_only(tmp_path: Path) -> None:
    modules = _modules(tmp_path, "schema", "finding")
    assert "transcript_doctor.cli_docs" in modules
    assert {"transcript_doctor.cli_scan", "transcript_doctor.cli_heal", "transcript_doctor.cli_replay"}.isdisjoint(modules)


def test_every_command_is_declared_where_the_table_says() -> None:
    """`COMMANDS` and the command modules agree both ways, so `tdoc --help` lists every command."""
    declared = {}
    for module in sorted(set(COMMANDS.values())):
        for info in importlib.import_module(f"transcript_doctor.{module}").commands.registered_commands:
            declared[info.name] = module
    assert declared == COMMANDS
    rows = CliRunner().invoke(app, ["--help"]).output.split("Commands:")[1].splitlines()
    assert [row.split()[0] for row in rows if row.startswith("  ") and not row.startswith("   ")] == list(COMMANDS)


def test_a_misspelt_command_is_still_suggested() -> None:
    result = CliRunner().invoke(app, ["scna"])
    assert result.exit_code == 2 and "No such command 'scna'. Did you mean 'scan', 'schema'?" in result.output


def test_each_lazy_kind_declares_what_its_store_kind_is() -> None:
    lazy = [k for k in kinds().values() if isinstance(k, LazyKind)]
    assert {k.format for k in lazy} >= {"kimi-wire", "hermes-db", "hermes-export", "eve-stream", "opencode-db",
                                        "opencode-export", "claude-code", "codex-rollout"}  # fmt: skip
    for kind in lazy:
        real = kind.kind
        assert not isinstance(real, LazyKind)
        assert (kind.format, kind.system, kind.jsonl) == (real.format, real.system, real.jsonl)
        assert type(real).__module__ == kind.module


def _zip(comment: bytes = b"", prefix: bytes = b"") -> bytes:
    import io
    import zipfile

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as zf:
        zf.writestr("agents/a/wire.jsonl", JOURNAL)
        zf.comment = comment
    return prefix + buffer.getvalue()


@pytest.mark.parametrize("content", [
    JOURNAL, b"", b"PK\x05\x06", _zip(), _zip(prefix=b"#!/bin/sh\n" * 10), _zip(comment=b"c" * 65535),
    _zip(comment=b"c" * 65535) + b"x", JOURNAL + b"PK\x05\x06" + b"\x00" * 18, b"x" * 70000 + _zip()[-22:],
], ids=["journal", "empty", "bare-signature", "zip", "prefixed-zip", "longest-comment", "trailing-byte",
        "journal-with-signature", "end-record-only"])  # fmt: skip
def test_the_kimi_zip_check_answers_as_zipfile(tmp_path: Path, content: bytes) -> None:
    """The kimi store asks zipfile only when the end-of-zip signature is where zipfile looks."""
    import zipfile

    from transcript_doctor.stores.kimi.store import _is_zipfile

    path = tmp_path / "store"
    path.write_bytes(content)
    assert _is_zipfile(path) == zipfile.is_zipfile(path)
    assert not _is_zipfile(tmp_path / "missing")
