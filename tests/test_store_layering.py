"""A store never imports the pipeline above it or a front end (docs/architecture.md §Layers)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "transcript_doctor"
# The heal modules a store may use: the plan types and Spool protocol, the /proc open-file check,
# the backup copier (Codex backs up its databases beside a healed rollout).
HEAL_ALLOWED = {"heal.plan", "heal.inuse", "heal.backup"}
ABOVE = ("core", "healing", "parallel", "fleet", "cli", "reporters", "explain", "heal")


def absolute(module: Path, node: ast.ImportFrom | ast.Import) -> list[str]:
    """The transcript_doctor-relative names an import statement loads."""
    if isinstance(node, ast.Import):
        return [a.name.removeprefix("transcript_doctor.") for a in node.names if a.name.startswith("transcript_doctor")]
    if node.level == 0:
        name = node.module or ""
        return [name.removeprefix("transcript_doctor.")] if name.startswith("transcript_doctor") else []
    parts = list(module.relative_to(PACKAGE).with_suffix("").parts)[: -node.level]
    base = ".".join(parts + ([node.module] if node.module else []))
    return [base] if node.module else [f"{base}.{a.name}".lstrip(".") for a in node.names]


def violations(module: Path, source: str) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(source)):
        if not isinstance(node, (ast.Import, ast.ImportFrom)):
            continue
        for name in absolute(module, node):
            top = name.split(".")[0]
            if top.startswith("cli"):
                top = "cli"
            if top in ABOVE and not any(name == a or name.startswith(a + ".") for a in HEAL_ALLOWED):
                found.append(f"{module.relative_to(PACKAGE)}:{node.lineno} imports {name}")
    return found


STORE_MODULES = sorted((PACKAGE / "stores").rglob("*.py"))


@pytest.mark.parametrize("module", STORE_MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_a_store_module_imports_nothing_above_the_stores(module: Path) -> None:
    assert violations(module, module.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize(("source", "expected"), [
    ("from ...heal.pipeline import heal_one\n", ["imports heal.pipeline"]),
    ("from ...core import ScanConfig\n", ["imports core"]),
    ("from ... import healing\n", ["imports healing"]),
    ("import transcript_doctor.cli_scan\n", ["imports cli_scan"]),
    ("from ...reporters.human import render\n", ["imports reporters.human"]),
    ("from ...heal.plan import HealPlan\nfrom ...heal.inuse import holders\n", []),
    ("from ...rules.engine import check_conversation\nfrom ...model import Finding\n", []),
])
def test_the_check_sees_what_it_must(source: str, expected: list[str]) -> None:
    module = PACKAGE / "stores" / "codex" / "heal.py"
    got = [v.split(" ", 1)[1] for v in violations(module, source)]
    assert got == expected
