"""The kimi package's layers import only downward (docs/architecture.md, "The kimi package").

read -> engines -> transcript -> projection -> replay -> checks -> heal, then the boundary
(`store.py`, `__init__.py`) on top. A module may import its own layer or any layer below it;
every import counts, including the lazy ones inside functions. The imports are read with `ast`,
so nothing here depends on import order or on what happens to be loaded.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

import transcript_doctor.stores.kimi as kimi_package

PACKAGE = "transcript_doctor.stores.kimi"
ROOT = Path(kimi_package.__file__).parent
LAYERS = ("read", "engines", "transcript", "projection", "replay", "checks", "heal")
# The boundary: the package entry, the store, and (when present) a light content sniff that
# detection imports without loading the rest.
BOUNDARY = ("__init__", "store", "sniff")
RANK = {name: i for i, name in enumerate(LAYERS)} | {name: len(LAYERS) for name in BOUNDARY}

# Upward edges that exist on purpose, each with its reason. Keep this list short.
ALLOWED_UPWARD = {
    ("checks.suite", "store"): "type-only (TYPE_CHECKING): the checks take the KimiStore they scan",
    ("heal.driver", "store"): "the heal hands the pipeline a KimiStore view of the healed replay to re-scan (lazy import)",
}


@dataclass(frozen=True)
class Edge:
    importer: str  # module path inside the package, e.g. "replay.driver"
    imported: str  # the imported module or package inside the package, e.g. "engines.messages"
    line: int


def _kimi_targets(node: ast.ImportFrom | ast.Import, package: str) -> list[str]:
    """The modules inside the kimi package that one import statement names (dotted, relative to it)."""
    if isinstance(node, ast.Import):
        absolute = [alias.name for alias in node.names]
    elif node.level:
        parts = package.split(".")
        base = ".".join(parts[: len(parts) - (node.level - 1)])
        module = f"{base}.{node.module}" if node.module else base
        absolute = [module] if node.module else [f"{module}.{alias.name}" for alias in node.names]
    else:
        absolute = [node.module or ""]
    inside = [name for name in absolute if name == PACKAGE or name.startswith(PACKAGE + ".")]
    if isinstance(node, ast.ImportFrom) and not node.level and inside == [PACKAGE]:
        inside = [f"{PACKAGE}.{alias.name}" for alias in node.names]
    return [name[len(PACKAGE) + 1 :] for name in inside if name != PACKAGE]


def edges_of(source: str, module: str) -> list[Edge]:
    """Every import edge from `module` (e.g. "replay.driver", "store", "__init__") into the package."""
    is_package = module == "__init__" or module.endswith(".__init__")
    dotted = module.removesuffix("__init__").rstrip(".")
    own = f"{PACKAGE}.{dotted}" if dotted else PACKAGE
    package = own if is_package else own.rsplit(".", 1)[0]
    name = dotted or "__init__"
    return [
        Edge(name, target, node.lineno)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, (ast.Import, ast.ImportFrom))
        for target in _kimi_targets(node, package)
    ]


def layer_of(module: str) -> str:
    return module.split(".", 1)[0]


def violations(edges: list[Edge]) -> list[str]:
    out = []
    for e in edges:
        if (e.importer, e.imported) in ALLOWED_UPWARD:
            continue
        src, dst = layer_of(e.importer), layer_of(e.imported)
        if RANK[dst] > RANK[src]:
            out.append(f"{e.importer}:{e.line} imports {e.imported} ({src} may not import {dst})")
    return out


def package_edges() -> list[Edge]:
    edges: list[Edge] = []
    for path in sorted(ROOT.rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        edges.extend(edges_of(path.read_text(encoding="utf-8"), module))
    return edges


def test_no_module_imports_a_higher_layer() -> None:
    assert violations(package_edges()) == []


def test_every_module_sits_in_a_layer() -> None:
    top = {p.stem for p in ROOT.glob("*.py")}
    assert {"__init__", "store"} <= top <= set(BOUNDARY), sorted(top - set(BOUNDARY))
    subpackages = sorted(p.name for p in ROOT.iterdir() if p.is_dir() and p.name != "__pycache__")
    assert subpackages == sorted(LAYERS)
    for layer in LAYERS:
        assert (ROOT / layer / "__init__.py").is_file(), layer
        nested = [p for p in (ROOT / layer).iterdir() if p.is_dir() and p.name != "__pycache__"]
        assert not nested, f"{layer} has nested packages"


@pytest.mark.parametrize("layer", LAYERS)
def test_each_subpackage_docstring_names_its_layer(layer: str) -> None:
    doc = ast.get_docstring(ast.parse((ROOT / layer / "__init__.py").read_text(encoding="utf-8")))
    assert doc is not None and doc.startswith(f"Layer {RANK[layer] + 1}, {layer}:"), doc


def test_the_allowed_upward_edges_are_still_upward() -> None:
    for importer, imported in ALLOWED_UPWARD:
        assert RANK[layer_of(imported)] > RANK[layer_of(importer)], (importer, imported)



def _module_exists(dotted: str) -> bool:
    path = ROOT.parents[2].joinpath(*dotted.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def test_every_relative_import_resolves() -> None:
    """A merge that carries an edit into a moved module keeps its old relative depth silently;
    lazy imports would only fail when called. Every `from .x import y` must name a real module."""
    unresolved = []
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT.parents[2]).with_suffix("").parts
        package = parts if parts[-1] == "__init__" else parts[:-1]
        package = package[:-1] if package[-1:] == ("__init__",) else package
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.level:
                base = ".".join(package[: len(package) - (node.level - 1)])
                target = f"{base}.{node.module}" if node.module else base
                if not _module_exists(target):
                    unresolved.append(f"{path.relative_to(ROOT)}:{node.lineno} {target}")
    assert unresolved == []

# The checker itself, on labelled sources: (importing module, source, expected violations).
CASES = [
    ("read.reader", "from ..replay.driver import KimiReplay\n", ["read.reader:1 imports replay.driver (read may not import replay)"]),
    ("read.reader", "from .records import problems\n", []),
    ("engines.messages", "from ..read.js_stringify import js_stringify\n", []),
    ("checks.history", "from ..replay.step_edits import count_edit\n", []),
    ("checks.history", "\n\ndef f():\n    from ..heal.plan import KimiPlan\n", ["checks.history:4 imports heal.plan (checks may not import heal)"]),
    ("checks.history", "from transcript_doctor.stores.kimi.heal import plan\n", ["checks.history:1 imports heal (checks may not import heal)"]),
    ("checks.history", "import transcript_doctor.stores.kimi.heal.verify\n", ["checks.history:1 imports heal.verify (checks may not import heal)"]),
    ("projection.v1", "from .. import replay\n", ["projection.v1:1 imports replay (projection may not import replay)"]),
    ("engines.compaction", "from . import messages\nfrom ....model import Edit\n", []),
    ("replay.driver", "from ..store import KimiStore\n", ["replay.driver:1 imports store (replay may not import store)"]),
    ("store", "from .heal.driver import heal_store\nfrom .checks import suite\n", []),
    ("heal.__init__", "from ..checks.suite import conversations\n", []),
]


@pytest.mark.parametrize(("module", "source", "expected"), CASES)
def test_checker_on_labelled_sources(module: str, source: str, expected: list[str]) -> None:
    assert violations(edges_of(source, module)) == expected
