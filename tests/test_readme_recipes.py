"""The README's CI recipes, run as written: the GitHub Actions workflow's shell steps under
`bash -eo pipefail` (GitHub's `shell: bash`), with the GitHub-only actions stood in for by checks of
what they need; the pre-commit snippet against the shipped hooks; every jq line under pipefail.
The recipes are read from README.md, so a wrong README fails here."""

from __future__ import annotations

import json
import os
import re
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from jsonschema import Draft4Validator

from .kimi.builders import Journal, seed_case, text, think

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
SARIF = Draft4Validator(json.loads((ROOT / "tests" / "data" / "sarif-schema-2.1.0.json").read_text()))
JQ = shutil.which("jq")


def block(heading: str, lang: str) -> str:
    """The first ```lang block after `heading` in the README."""
    start = README.index(heading)
    match = re.compile(rf"```{lang}\n(.*?)```", re.S).search(README, start)
    assert match, f"no {lang} block after {heading!r}"
    return match.group(1)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    """A checkout with a `tdoc` on PATH that runs this tree."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "tdoc"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m transcript_doctor "$@"\n')
    shim.chmod(shim.stat().st_mode | stat.S_IXUSR)
    work = tmp_path / "checkout"
    work.mkdir()
    return work


def env_for(work: Path, **extra: str) -> dict[str, str]:
    drop = ("GITHUB_STEP_SUMMARY", "NO_COLOR", "FORCE_COLOR")
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {**env, "PATH": f"{work.parent / 'bin'}:{env.get('PATH', '')}", "PYTHONPATH": str(ROOT), **extra}


def wedged(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return Journal().user("u1").step("s1", [think("")]).user("u2").step("s2", [text("ok")]).write(path)


def clean(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    return Journal().user("u1").step("s1", [text("fine")]).write(path)


# --------------------------------------------------------------------------- GitHub Actions


def run_workflow(work: Path, env: dict[str, str]) -> tuple[bool, list[dict]]:
    """Run the workflow's steps as a GitHub runner would; returns (job succeeded, step records)."""
    workflow = yaml.safe_load(block("### GitHub Actions", "yaml"))
    assert workflow["defaults"]["run"]["shell"] == "bash"
    [job] = workflow["jobs"].values()
    failed = False
    records = []
    for step in job["steps"]:
        runs = not failed or "always()" in str(step.get("if", ""))
        record = {"step": step, "ran": runs}
        if runs and "run" in step and not step["run"].lstrip().startswith("pip install"):
            proc = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", step["run"]],
                                  cwd=work, env=env, capture_output=True, text=True, timeout=300)  # fmt: skip
            record.update(code=proc.returncode, stdout=proc.stdout, stderr=proc.stderr)
            failed = failed or proc.returncode != 0
        elif runs and str(step.get("uses", "")).startswith("github/codeql-action/upload-sarif"):
            sarif = work / step["with"]["sarif_file"]
            record["uploaded"] = sarif.exists() and not list(SARIF.iter_errors(json.loads(sarif.read_text())))
            failed = failed or not record["uploaded"]
        records.append(record)
    return not failed, records


def _upload(records: list[dict]) -> dict:
    return next(r for r in records if "upload-sarif" in str(r["step"].get("uses", "")))


def test_workflow_uploads_sarif_and_then_fails_when_there_are_findings(workdir: Path, tmp_path: Path) -> None:
    wedged(workdir / "recorded-sessions" / "a" / "wire.jsonl")
    summary = tmp_path / "summary.md"
    ok, records = run_workflow(workdir, env_for(workdir, GITHUB_STEP_SUMMARY=str(summary)))
    assert not ok
    assert _upload(records)["ran"] and _upload(records)["uploaded"]
    annotations = next(r for r in records if "--format github" in str(r["step"].get("run", "")))
    assert annotations["code"] == 0 and "::error file=recorded-sessions/a/wire.jsonl" in annotations["stdout"]
    assert records[-1]["code"] == 1  # the last step fails the job with the saved code
    assert summary.read_text().count("## tdoc scan") == 1  # one job summary, from the annotation step
    results = json.loads((workdir / "tdoc.sarif").read_text())["runs"][0]["results"]
    assert [r["ruleId"] for r in results] == ["W101"]


def test_workflow_passes_on_clean_sessions(workdir: Path) -> None:
    clean(workdir / "recorded-sessions" / "a" / "wire.jsonl")
    ok, records = run_workflow(workdir, env_for(workdir))
    assert ok and _upload(records)["uploaded"] and records[-1]["code"] == 0


def test_workflow_reports_an_unreadable_input_in_the_upload_and_fails(workdir: Path) -> None:
    clean(workdir / "recorded-sessions" / "a" / "wire.jsonl")
    (workdir / "recorded-sessions" / "gone.jsonl").symlink_to(workdir / "deleted.jsonl")  # cannot be read
    ok, records = run_workflow(workdir, env_for(workdir))
    assert not ok and _upload(records)["ran"] and _upload(records)["uploaded"]
    assert (workdir / "tdoc.exit").read_text().strip() == "2"
    log = json.loads((workdir / "tdoc.sarif").read_text())
    notes = log["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert any("gone.jsonl" in n["message"]["text"] for n in notes)


# --------------------------------------------------------------------------- pre-commit


def test_pre_commit_snippet_names_shipped_hooks_and_pins_a_commit(workdir: Path) -> None:
    config = yaml.safe_load(block("### pre-commit", "yaml"))
    [repo] = config["repos"]
    assert not re.fullmatch(r"v\d+(\.\d+)*", str(repo["rev"]))  # no release tag exists to name
    assert "pin a full commit SHA" in block("### pre-commit", "yaml")
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert {h["id"] for h in repo["hooks"]} <= set(hooks)
    staged = [wedged(workdir / "s" / "wire.jsonl"), workdir / "package.json"]
    staged[1].write_text('{\n  "name": "not a store"\n}\n')
    proc = subprocess.run(["bash", "-c", f'{hooks["tdoc"]["entry"]} "$@"', "hook", *map(str, staged)],
                          cwd=workdir, env=env_for(workdir), capture_output=True, text=True, timeout=120)  # fmt: skip
    assert proc.returncode == 1 and "W101" in proc.stdout  # the store fails the hook; package.json is left alone
    only_other = subprocess.run(["bash", "-c", f'{hooks["tdoc"]["entry"]} "$@"', "hook", str(staged[1])],
                                cwd=workdir, env=env_for(workdir), capture_output=True, text=True, timeout=120)  # fmt: skip
    assert only_other.returncode == 0


# --------------------------------------------------------------------------- jq


def jq_recipes() -> list[tuple[str, str]]:
    """(comment, command) for every recipe of the jq block."""
    recipes, comment = [], ""
    for line in block("### jq", "bash").splitlines():
        if line.startswith("#"):
            comment = line.lstrip("# ")
        elif line.strip():
            recipes.append((comment, line))
    return recipes


def run_jq(work: Path, command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "--noprofile", "--norc", "-o", "pipefail", "-c", command], cwd=work,
                          env=env_for(work), capture_output=True, text=True, timeout=300)  # fmt: skip


def test_every_jq_recipe_runs_under_pipefail(workdir: Path) -> None:
    if JQ is None:
        pytest.skip("jq is not installed")
    (workdir / "sessions").mkdir()
    seed_case().write(workdir / "sessions" / "seed.jsonl")
    wedged(workdir / "sessions" / "w" / "wire.jsonl")
    (workdir / "runs").mkdir()
    shutil.copyfile(ROOT / "fixtures" / "opencode" / "opencode.db", workdir / "runs" / "opencode.db")
    recipes = jq_recipes()
    assert len(recipes) >= 7
    for comment, command in recipes:
        proc = run_jq(workdir, command)
        expected = 1 if comment.startswith("Fail only on wedges") else 0  # there is a wedge in sessions/
        assert proc.returncode == expected, (comment, proc.stderr)
        if not comment.startswith(("Fail only", "Files tdoc could not read")):
            assert proc.stdout.strip(), (comment, "printed nothing")


def test_wedge_recipe_passes_without_wedges_and_lists_unreadable_files(workdir: Path) -> None:
    if JQ is None:
        pytest.skip("jq is not installed")
    (workdir / "sessions").mkdir()
    seed_case().write(workdir / "sessions" / "seed.jsonl")  # findings, but no W error (W101 here is info)
    recipes = dict(jq_recipes())
    wedges = next(cmd for c, cmd in recipes.items() if c.startswith("Fail only on wedges"))
    unreadable = next(cmd for c, cmd in recipes.items() if c.startswith("Files tdoc could not read"))
    assert run_jq(workdir, wedges).returncode == 0
    assert run_jq(workdir, unreadable).stdout == ""  # near miss: every file readable
    (workdir / "sessions" / "gone.jsonl").symlink_to(workdir / "deleted.jsonl")
    listed = run_jq(workdir, unreadable)
    assert listed.returncode == 0 and listed.stdout.startswith("sessions/gone.jsonl: ")
