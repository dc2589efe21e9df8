"""Configuration files: `[tool.tdoc]` in pyproject.toml, `tdoc.toml`, or the file `--config` names.

Discovery walks up from the working directory; in each directory `tdoc.toml` wins over a
`pyproject.toml` that has a `[tool.tdoc]` table, and the first directory with either wins.
Command-line flags override the file key by key. Relative paths in a file (`backup-dir`,
`per-path-ignores` globs) are relative to the directory holding that file. Unknown keys and bad
values are configuration errors (exit 2), named with the file they came from.

```toml
[tool.tdoc]
select = ["W", "C201"]
ignore = ["S304"]
fail-on = "warning"
unsafe-fixes = false
backup-dir = ".tdoc-backups"

[tool.tdoc.per-path-ignores]
"fixtures/**" = ["F501"]
"*.db" = ["T403"]
```
"""

from __future__ import annotations

import sys
from fnmatch import fnmatchcase
from pathlib import Path, PurePosixPath
from typing import Any

from .model import SEVERITY_RANK, TdocError
from .rules.registry import expand_selector

KEYS = ("select", "ignore", "fail-on", "unsafe-fixes", "backup-dir", "per-path-ignores")


class FileConfig:
    """The settings one configuration file holds (None: the file does not set it)."""

    __slots__ = ("source", "root", "select", "ignore", "fail_on", "unsafe_fixes", "backup_dir", "per_path_ignores")

    def __init__(self, source: Path | None = None, root: Path | None = None, select: list[str] | None = None,
                 ignore: list[str] | None = None, fail_on: str | None = None, unsafe_fixes: bool | None = None,
                 backup_dir: Path | None = None,
                 per_path_ignores: list[tuple[str, list[str]]] | None = None) -> None:  # fmt: skip
        self.source = source
        self.root: Path = Path.cwd() if root is None else root
        self.select = select
        self.ignore = ignore
        self.fail_on = fail_on
        self.unsafe_fixes = unsafe_fixes
        self.backup_dir = backup_dir
        self.per_path_ignores: list[tuple[str, list[str]]] = [] if per_path_ignores is None else per_path_ignores


class Settings:
    """Effective settings: flags over the file over defaults."""

    __slots__ = ("select", "ignore", "fail_on", "unsafe_fixes", "backup_dir", "per_path_ignores", "root", "source")

    def __init__(self, select: list[str] | None = None, ignore: list[str] | None = None, fail_on: str = "error",
                 unsafe_fixes: bool = False, backup_dir: Path | None = None,
                 per_path_ignores: list[tuple[str, list[str]]] | None = None, root: Path | None = None,
                 source: Path | None = None) -> None:  # fmt: skip
        self.select = select
        self.ignore = ignore
        self.fail_on = fail_on
        self.unsafe_fixes = unsafe_fixes
        self.backup_dir = backup_dir
        self.per_path_ignores: list[tuple[str, list[str]]] = [] if per_path_ignores is None else per_path_ignores
        self.root: Path = Path.cwd() if root is None else root
        self.source = source


def find_config(start: Path | None = None) -> Path | None:
    """The nearest tdoc.toml, or pyproject.toml with a [tool.tdoc] table, from `start` upward."""
    here = (start or Path.cwd()).resolve()
    for directory in (here, *here.parents):
        candidate = directory / "tdoc.toml"
        if candidate.is_file():
            return candidate
        candidate = directory / "pyproject.toml"
        if candidate.is_file() and _tool_table(_read_toml(candidate), candidate) is not None:
            return candidate
    return None


def load_config(path: Path | None = None, *, discover: bool = True, start: Path | None = None) -> FileConfig:
    """Read the named file, or the discovered one; an empty FileConfig when there is none."""
    if path is None:
        path = find_config(start) if discover else None
        if path is None:
            return FileConfig(root=(start or Path.cwd()).resolve())
    elif not path.is_file():
        raise TdocError(f"config file {path} not found")
    data = _read_toml(path)
    table = data if path.name != "pyproject.toml" else _tool_table(data, path)
    if path.name == "tdoc.toml" and isinstance(table.get("tool"), dict) and "tdoc" in table["tool"]:
        table = _tool_table(data, path) or {}
    return parse_table(table or {}, path)


def parse_table(table: dict[str, Any], source: Path) -> FileConfig:
    """Validate one `[tool.tdoc]` table (or a tdoc.toml document)."""
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise TdocError(f"{source}: unknown configuration key(s) {', '.join(map(repr, unknown))}; "
                        f"known keys: {', '.join(KEYS)}")  # fmt: skip
    cfg = FileConfig(source=source, root=source.resolve().parent)
    if "select" in table:
        cfg.select = _selectors(table["select"], "select", source)
    if "ignore" in table:
        cfg.ignore = _selectors(table["ignore"], "ignore", source)
    if "fail-on" in table:
        cfg.fail_on = _fail_on(table["fail-on"], source)
    if "unsafe-fixes" in table:
        cfg.unsafe_fixes = _bool(table["unsafe-fixes"], "unsafe-fixes", source)
    if "backup-dir" in table:
        cfg.backup_dir = cfg.root / _string(table["backup-dir"], "backup-dir", source)
    if "per-path-ignores" in table:
        cfg.per_path_ignores = _per_path(table["per-path-ignores"], source)
    return cfg


def resolve(file: FileConfig, **flags: Any) -> Settings:
    """Merge: a flag that was given (not None) wins over the file, the file over the default."""
    unknown = set(flags) - {"select", "ignore", "fail_on", "unsafe_fixes", "backup_dir"}
    if unknown:
        raise TypeError(f"unknown settings: {sorted(unknown)}")
    out = Settings(per_path_ignores=list(file.per_path_ignores), root=file.root, source=file.source)
    for key in ("select", "ignore", "fail_on", "unsafe_fixes", "backup_dir"):
        value = flags.get(key)
        if value is None:
            value = getattr(file, key)
        if value is not None:
            setattr(out, key, value)
    return out


def path_matches(pattern: str, path: str, root: Path) -> bool:
    """Whether `path` (as the user named it) matches a per-path glob relative to `root`.

    `*` and `**` match across directories; a pattern without `/` matches the file name alone
    (as in .gitignore).
    """
    absolute = Path(path).resolve()
    try:
        rel = absolute.relative_to(root.resolve()).as_posix()
    except ValueError:
        rel = absolute.as_posix()
    if "/" not in pattern:
        return fnmatchcase(PurePosixPath(rel).name, pattern)
    pattern = pattern.removeprefix("./")
    if pattern.endswith("/"):
        pattern += "**"
    return fnmatchcase(rel, pattern) or (pattern.startswith("**/") and fnmatchcase(rel, pattern[3:]))


def ignored_codes(per_path: list[tuple[str, list[str]]], path: str, root: Path) -> set[str]:
    """The rule codes the per-path ignores switch off for `path`."""
    codes: set[str] = set()
    for pattern, selectors in per_path:
        if path_matches(pattern, path, root):
            for selector in selectors:
                codes |= expand_selector(selector)
    return codes


# --------------------------------------------------------------------------- reading and checking


def _read_toml(path: Path) -> dict[str, Any]:
    if sys.version_info >= (3, 11):  # imported here: most runs find no configuration file
        import tomllib
    else:  # pragma: no cover - exercised on 3.10 only
        import tomli as tomllib
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise TdocError(f"{path}: cannot read: {exc.strerror or exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise TdocError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError as exc:  # TOML is UTF-8
        raise TdocError(f"{path}: not valid TOML: not UTF-8 at byte {exc.start}") from None


def _tool_table(data: dict[str, Any], source: Path) -> dict[str, Any] | None:
    tool = data.get("tool")
    table = tool.get("tdoc") if isinstance(tool, dict) else None
    if table is not None and not isinstance(table, dict):
        raise TdocError(f"{source}: [tool.tdoc] must be a table")
    return table


def _selectors(value: Any, key: str, source: Path) -> list[str]:
    items = value.split(",") if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise TdocError(f"{source}: {key} must be a list of rule codes, prefixes or names")
    out = [v.strip() for v in items if v.strip()]
    for selector in out:
        _check_selector(selector, key, source)
    return out


def _check_selector(selector: str, key: str, source: Path) -> None:
    try:
        expand_selector(selector)
    except KeyError:
        raise TdocError(f"{source}: {key}: unknown rule selector {selector!r} (see `tdoc rules`)") from None


def _fail_on(value: Any, source: Path) -> str:
    if not isinstance(value, str) or value not in SEVERITY_RANK:
        raise TdocError(f"{source}: fail-on must be one of {', '.join(SEVERITY_RANK)}, not {value!r}")
    return value


def _bool(value: Any, key: str, source: Path) -> bool:
    if not isinstance(value, bool):
        raise TdocError(f"{source}: {key} must be true or false, not {value!r}")
    return value


def _string(value: Any, key: str, source: Path) -> str:
    if not isinstance(value, str) or not value.strip():
        raise TdocError(f"{source}: {key} must be a non-empty string")
    return value


def _per_path(value: Any, source: Path) -> list[tuple[str, list[str]]]:
    if not isinstance(value, dict):
        raise TdocError(f"{source}: per-path-ignores must be a table of glob = [rule codes]")
    out = []
    for pattern, selectors in value.items():
        out.append((pattern, _selectors(selectors, f"per-path-ignores {pattern!r}", source)))
    return out
