"""Where `--output` writes: a regular file is replaced atomically (through a symlink, the file it
names, keeping its mode; a new one gets the umask's), a FIFO or device is written into and never
replaced, a directory or a scanned store is refused; `heal --output` takes regular files only."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app

ROOT = Path(__file__).resolve().parent.parent
STREAM = ROOT / "fixtures/eve/support-chat.v26.ndjson"
JOURNAL = ROOT / "fixtures/kimi-code/golden/c01_legacy_compaction_after_vacuous.jsonl"
runner = CliRunner()


def _scan_to(target: Path) -> object:
    return runner.invoke(app, ["scan", str(STREAM), "-f", "json", "-o", str(target)])


def test_scan_output_into_a_fifo_writes_into_it(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # (a reader is there: the writer's open returns)
    try:
        result = _scan_to(fifo)
        data = os.read(reader, 1 << 20)
    finally:
        os.close(reader)
    assert result.exit_code == 1, result.output  # the stream has error findings
    assert stat.S_ISFIFO(os.stat(fifo).st_mode), "the FIFO was replaced by a file"
    assert json.loads(data)["summary"]["findings"] == 6


def test_scan_output_through_a_symlink_replaces_the_file_it_names(tmp_path: Path) -> None:
    real = tmp_path / "real.json"
    real.write_text("old")
    os.chmod(real, 0o640)
    link = tmp_path / "link.json"
    link.symlink_to(real.name)
    assert _scan_to(link).exit_code == 1
    assert link.is_symlink() and json.loads(real.read_text())["summary"]["findings"] == 6
    assert stat.S_IMODE(os.stat(real).st_mode) == 0o640


def test_a_new_report_file_gets_the_umask_mode(tmp_path: Path) -> None:
    old = os.umask(0o027)
    try:
        assert _scan_to(tmp_path / "new.json").exit_code == 1
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(tmp_path / "new.json").st_mode) == 0o640  # 0o666 & ~0o027, not mkstemp's 0o600


def test_scan_output_naming_a_directory_or_a_scanned_store_is_refused(tmp_path: Path) -> None:
    assert _scan_to(tmp_path).exit_code == 2
    store = tmp_path / "s.ndjson"
    store.write_bytes(STREAM.read_bytes())
    result = runner.invoke(app, ["scan", str(tmp_path), "-o", str(store)])
    assert result.exit_code == 2 and "one of the scanned stores" in result.output
    assert store.read_bytes() == STREAM.read_bytes()
    other = runner.invoke(app, ["scan", str(store), "-o", str(tmp_path / "report.txt")])  # near miss
    assert other.exit_code == 1 and (tmp_path / "report.txt").exists()


def test_heal_output_takes_only_a_regular_file(tmp_path: Path) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    result = runner.invoke(app, ["heal", str(JOURNAL), "--output", str(fifo)])
    assert result.exit_code == 2 and "not a regular file" in result.output
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)
    real = tmp_path / "healed.jsonl"
    real.write_text("")
    link = tmp_path / "link.jsonl"
    link.symlink_to(real.name)
    assert runner.invoke(app, ["heal", str(JOURNAL), "--output", str(link)]).exit_code == 0
    assert link.is_symlink() and real.stat().st_size > 0


def test_a_config_file_that_is_not_utf8_is_a_clear_error(tmp_path: Path) -> None:
    config = tmp_path / "tdoc.toml"
    config.write_bytes(b'[tool.tdoc]\nselect = ["W1\xff"]\n')
    result = runner.invoke(app, ["scan", str(STREAM), "--config", str(config)])
    assert result.exit_code == 2 and "not UTF-8" in result.output and str(config) in result.output
    assert "internal error" not in result.output


@pytest.mark.parametrize(("name", "code"), [("missing.jsonl", 2), ("notes.txt", 2), (None, 0)])
def test_sessions_exits_2_for_an_input_it_cannot_read(tmp_path: Path, name: str | None, code: int) -> None:
    paths = [str(STREAM)]
    if name == "notes.txt":
        (tmp_path / name).write_text("hello\n")
    if name is not None:
        paths.append(str(tmp_path / name))
    result = runner.invoke(app, ["sessions", *paths])
    assert result.exit_code == code, result.output


def test_a_human_report_not_on_the_terminal_still_says_on_stderr_what_could_not_be_read(tmp_path: Path) -> None:
    import subprocess
    import sys

    missing = tmp_path / "missing.jsonl"
    to_file = subprocess.run([sys.executable, "-m", "transcript_doctor", "scan", str(missing), "-o", str(tmp_path / "r.txt")],
                             capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert to_file.returncode == 2 and str(missing) in to_file.stderr
    piped = subprocess.run([sys.executable, "-m", "transcript_doctor", "scan", str(missing)],
                           capture_output=True, text=True, cwd=ROOT)  # fmt: skip
    assert piped.returncode == 2 and str(missing) in piped.stderr and str(missing) in piped.stdout


CODEX = ROOT / "fixtures/codex/real/simonw-sample_codex_session-0.77.jsonl"


@pytest.mark.parametrize("damage", [b"\xef\xbb\xbf", b'{"type": "metad\n'], ids=["byte-order-mark", "torn-first-line"])
def test_a_store_damaged_at_its_start_is_reported_by_a_directory_scan_not_skipped(tmp_path: Path, damage: bytes) -> None:
    """A walk takes files by content; a file with the name its runtime gives a store (wire.jsonl)
    whose first records no kind recognises is reported, with the way to read it anyway."""
    journal = tmp_path / "agents" / "main" / "wire.jsonl"
    journal.parent.mkdir(parents=True)
    journal.write_bytes(damage + JOURNAL.read_bytes())
    (tmp_path / "notes.json").write_text("hello\n")  # near miss: junk under no runtime's name is skipped
    result = runner.invoke(app, ["scan", str(tmp_path), "-f", "json"])
    assert result.exit_code == 2, result.output
    files = json.loads(result.stdout)["files"]
    assert [Path(f["path"]).name for f in files] == ["wire.jsonl"]
    assert "named like a kimi-wire store" in files[0]["error"] and "--input-format kimi-wire" in files[0]["error"]
    forced = runner.invoke(app, ["scan", str(journal), "--input-format", "kimi-wire", "-f", "json"])
    assert forced.exit_code == 1 and json.loads(forced.stdout)["findings"]


def test_a_rollout_whose_first_line_has_a_byte_order_mark_is_still_read(tmp_path: Path) -> None:
    """Near miss of the above: the Codex sniffer reads past a broken first line, so the rollout is
    taken by content and only that line is reported (F502, naming the byte-order mark)."""
    rollout = tmp_path / "sessions" / "rollout-2025-12-28T12-18-30-x.jsonl"
    rollout.parent.mkdir(parents=True)
    rollout.write_bytes(b"\xef\xbb\xbf" + CODEX.read_bytes())
    report = json.loads(runner.invoke(app, ["scan", str(tmp_path), "-f", "json"]).stdout)
    assert [f["format"] for f in report["files"]] == ["codex-rollout"] and report["files"][0]["error"] is None
    (f502,) = [f for f in report["findings"] if f["code"] == "F502"]
    assert f502["location"]["line"] == 1 and "byte-order mark" in f502["message"]


def test_output_dash_is_standard_output(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["scan", str(STREAM), "-f", "json", "-o", "-"])
    assert result.exit_code == 1 and json.loads(result.stdout)["summary"]["findings"] == 6
    assert not (tmp_path / "-").exists()


@pytest.mark.parametrize("flags", [["heal", str(JOURNAL), "--backup-dir", "BK", "--no-backup"],
                                   ["scan", str(STREAM), "--config", "CFG", "--no-config"]], ids=["backup", "config"])
def test_flags_that_exclude_each_other_are_a_usage_error(tmp_path: Path, flags: list[str]) -> None:
    config = tmp_path / "tdoc.toml"
    config.write_text("[tool.tdoc]\n")
    argv = [str(tmp_path / "bk") if a == "BK" else str(config) if a == "CFG" else a for a in flags]
    result = runner.invoke(app, argv)
    assert result.exit_code == 2 and "exclude each other" in result.output
