"""Configuration: discovery, validation, per-path ignores and flags-over-file precedence."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from transcript_doctor.cli import app
from transcript_doctor.config import FileConfig, find_config, load_config, path_matches, resolve
from transcript_doctor.core import ScanConfig
from transcript_doctor.model import TdocError

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures"
C03 = FIXTURES / "kimi-code" / "golden" / "c03_vacuous_variants.jsonl"
runner = CliRunner()


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


# --------------------------------------------------------------------------- discovery


def test_pyproject_tool_table_is_found_from_a_subdirectory(tmp_path):
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n\n[tool.tdoc]\nignore = ["W109"]\n')
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    assert find_config(sub) == tmp_path / "pyproject.toml"
    assert load_config(start=sub).ignore == ["W109"]


def test_pyproject_without_tool_tdoc_is_skipped(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.tdoc]\nfail-on = "info"\n')
    write(tmp_path / "inner" / "pyproject.toml", '[project]\nname = "inner"\n')
    assert find_config(tmp_path / "inner") == tmp_path / "pyproject.toml"


def test_tdoc_toml_wins_over_pyproject_in_the_same_directory(tmp_path):
    write(tmp_path / "pyproject.toml", '[tool.tdoc]\nfail-on = "info"\n')
    write(tmp_path / "tdoc.toml", 'fail-on = "warning"\n')
    assert load_config(start=tmp_path).fail_on == "warning"


def test_nearest_directory_wins(tmp_path):
    write(tmp_path / "tdoc.toml", 'fail-on = "info"\n')
    write(tmp_path / "sub" / "pyproject.toml", '[tool.tdoc]\nfail-on = "warning"\n')
    assert load_config(start=tmp_path / "sub").fail_on == "warning"


def test_no_config_anywhere_gives_defaults(tmp_path):
    cfg = load_config(start=tmp_path)
    assert cfg.source is None or not str(cfg.source).startswith(str(tmp_path))


def test_discovery_can_be_switched_off(tmp_path):
    write(tmp_path / "tdoc.toml", 'fail-on = "info"\n')
    assert load_config(discover=False, start=tmp_path).fail_on is None


def test_tool_table_inside_tdoc_toml_is_accepted(tmp_path):
    path = write(tmp_path / "tdoc.toml", '[tool.tdoc]\nselect = ["W1"]\n')
    assert load_config(path).select == ["W1"]


# --------------------------------------------------------------------------- validation


@pytest.mark.parametrize(
    "body, needle",
    [
        ('ignores = ["W109"]\n', "unknown configuration key(s) 'ignores'"),
        ('select = ["W999"]\n', "unknown rule selector 'W999'"),
        ('fail-on = "fatal"\n', "fail-on must be one of"),
        ('unsafe-fixes = "yes"\n', "unsafe-fixes must be true or false"),
        ("backup-dir = 3\n", "backup-dir must be a non-empty string"),
        ('per-path-ignores = ["x"]\n', "per-path-ignores must be a table"),
        ('[per-path-ignores]\n"*.db" = ["NOPE"]\n', "unknown rule selector 'NOPE'"),
        ("select = [\n", "not valid TOML"),
    ],
)
def test_bad_files_are_configuration_errors_naming_the_file(tmp_path, body, needle):
    path = write(tmp_path / "tdoc.toml", body)
    with pytest.raises(TdocError) as exc:
        load_config(path)
    assert needle in str(exc.value) and str(path) in str(exc.value)
    assert exc.value.exit_code == 2


def test_named_file_must_exist(tmp_path):
    with pytest.raises(TdocError, match="not found"):
        load_config(tmp_path / "missing.toml")


def test_comma_separated_selectors_and_relative_backup_dir(tmp_path):
    path = write(tmp_path / "cfg" / "tdoc.toml", 'select = "W1, C201"\nbackup-dir = "backups"\n')
    cfg = load_config(path)
    assert cfg.select == ["W1", "C201"]
    assert cfg.backup_dir == (tmp_path / "cfg" / "backups").resolve()


# --------------------------------------------------------------------------- precedence


def test_flags_override_the_file_key_by_key(tmp_path):
    file = FileConfig(select=["W"], ignore=["W109"], fail_on="info", unsafe_fixes=True, backup_dir=tmp_path)
    s = resolve(file, select=["C"], ignore=None, fail_on=None, unsafe_fixes=False, backup_dir=None)
    assert (s.select, s.ignore, s.fail_on, s.unsafe_fixes, s.backup_dir) == (["C"], ["W109"], "info", False, tmp_path)


def test_defaults_when_neither_sets_a_key():
    s = resolve(FileConfig())
    assert (s.select, s.ignore, s.fail_on, s.unsafe_fixes, s.backup_dir) == (None, None, "error", False, None)


def _scan_json(args: list[str]) -> tuple[int, dict]:
    res = runner.invoke(app, ["scan", "-f", "json", *args])
    return res.exit_code, orjson.loads(res.stdout) if res.stdout.strip() else {}


def _codes(report: dict) -> set[str]:
    return {f["code"] for f in report["findings"]}


def test_cli_reads_the_discovered_file_and_flags_win(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "tdoc.toml", 'ignore = ["W101"]\nfail-on = "info"\n')
    code, report = _scan_json([str(C03)])
    assert "W101" not in _codes(report) and _codes(report)
    assert code == 1  # fail-on = info, and info findings remain
    code, report = _scan_json([str(C03), "--ignore", "W109", "--fail-on", "error"])
    assert "W101" in _codes(report) and "W109" not in _codes(report)
    assert code == 1  # W101 is an error


def test_cli_fail_on_from_file_changes_the_exit_code(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "tdoc.toml", 'select = ["W109"]\n')
    assert _scan_json([str(C03)])[0] == 0  # W109 is info; default fail-on error
    write(tmp_path / "tdoc.toml", 'select = ["W109"]\nfail-on = "info"\n')
    assert _scan_json([str(C03)])[0] == 1
    assert _scan_json([str(C03), "--fail-on", "warning"])[0] == 0


def test_cli_explicit_config_and_no_config(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "tdoc.toml", 'select = ["W109"]\n')
    other = write(tmp_path / "elsewhere" / "strict.toml", 'select = ["W101"]\n')
    assert _codes(_scan_json([str(C03)])[1]) == {"W109"}
    assert _codes(_scan_json([str(C03), "--config", str(other)])[1]) == {"W101"}
    assert len(_codes(_scan_json([str(C03), "--no-config"])[1])) > 1


def test_cli_unknown_key_is_exit_2_with_a_message(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    write(tmp_path / "pyproject.toml", "[tool.tdoc]\nfail_on = 'info'\n")
    res = runner.invoke(app, ["scan", str(C03)])
    assert res.exit_code == 2
    assert "unknown configuration key(s) 'fail_on'" in res.stderr


# --------------------------------------------------------------------------- per-path ignores


@pytest.mark.parametrize(
    "pattern, path, expected",
    [
        ("*.db", "data/state.db", True),  # no slash: the file name anywhere
        ("*.db", "data/state.jsonl", False),
        ("sessions/**", "sessions/a/b/wire.jsonl", True),
        ("sessions/", "sessions/a/wire.jsonl", True),
        ("sessions/*.jsonl", "other/sessions/x.jsonl", False),
        ("./sessions/*.jsonl", "sessions/x.jsonl", True),
        ("**/wire.jsonl", "wire.jsonl", True),
    ],
)
def test_path_matches_relative_to_the_config_directory(tmp_path, pattern, path, expected):
    assert path_matches(pattern, str(tmp_path / path), tmp_path) is expected


def test_per_path_ignores_drop_codes_for_matching_files_only(tmp_path):
    config = ScanConfig(per_path_ignores=[("golden/c03*", ["W1"])], root=C03.parent.parent)
    assert not {"W101", "W109"} & config.codes(str(C03))
    assert {"W101", "W109"} <= config.codes(str(C03.with_name("c01_legacy_compaction_after_vacuous.jsonl")))
    assert {"W101", "W109"} <= config.codes()


def test_cli_per_path_ignores(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    golden = C03.parent
    write(tmp_path / "tdoc.toml", f'[per-path-ignores]\n"{golden.as_posix()}/c03*" = ["W101"]\n')
    other = golden / "c01_legacy_compaction_after_vacuous.jsonl"
    _, report = _scan_json([str(C03), str(other)])
    by_path = {}
    for f in report["findings"]:
        by_path.setdefault(f["path"], set()).add(f["code"])
    assert "W101" not in by_path.get(str(C03), set())
    assert "W101" in by_path[str(other)]


# --------------------------------------------------------------------------- pre-commit


def test_pre_commit_hooks_name_the_scan_entry_point():
    text = (FIXTURES.parent / ".pre-commit-hooks.yaml").read_text()
    entries = [line.split(":", 1)[1].strip() for line in text.splitlines() if line.strip().startswith("entry:")]
    assert entries and all(e.startswith("tdoc scan --skip-unrecognised") for e in entries)
    assert "language: python" in text


def test_skip_unrecognised_leaves_out_other_json(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    other = write(tmp_path / "package.json", '{"name": "x"}')
    res = runner.invoke(app, ["scan", "--no-config", "-f", "json", str(other), str(C03)])
    assert res.exit_code == 2  # named but not a store: an error by default
    code, report = _scan_json(["--no-config", "--skip-unrecognised", str(other), str(C03)])
    assert [f["path"] for f in report["files"]] == [str(C03)] and code == 1
    code, report = _scan_json(["--no-config", "--skip-unrecognised", str(other)])
    assert (code, report["files"]) == (0, [])
