"""The `tdoc` command line: parse options, call the core, print, exit. No logic of its own."""

from __future__ import annotations

import sqlite3
import sys
from enum import Enum
from pathlib import Path
from typing import Annotated, Optional

import typer
from typer.core import TyperGroup
from rich.console import Console
from rich.progress import (
    BarColumn,
    DownloadColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)
from rich.text import Text

from . import __version__
from .config import Settings, load_config, resolve
from .core import ScanConfig, scan
from .encode import dumps
from .model import TdocError
from .reporters import REPORTERS
from .stores import Options
from .stores.options import KimiOptions, SqliteOptions

err = Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)


class _Group(TyperGroup):
    """Turns TdocError into one line on stderr and its exit code, under CliRunner too."""

    def invoke(self, ctx: typer.Context) -> object:
        try:
            return super().invoke(ctx)
        except TdocError as exc:
            err.print(Text(f"tdoc: error: {exc}"))
            raise typer.Exit(exc.exit_code) from None


app = typer.Typer(
    name="tdoc",
    cls=_Group,
    help="tdoc, the transcript doctor: find and heal poisoned AI-agent session histories.\n\n"
    "Exit codes: 0 clean (or healed), 1 findings at or above --fail-on remain (dry-run heal: "
    "something to fix), 2 usage/unreadable input/internal error, 3 refused (store in use or "
    "changed while tdoc worked).",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_show_locals=False,
    rich_markup_mode=None,
)


ScanFormat = Enum("ScanFormat", {name: name for name in REPORTERS}, type=str)  # type: ignore[misc]


class FailOn(str, Enum):
    error = "error"
    warning = "warning"
    info = "info"


class Engine(str, Enum):
    auto = "auto"
    v1 = "v1"
    v2 = "v2"


class DocFormat(str, Enum):
    human = "human"
    json = "json"


SelectOpt = Annotated[
    Optional[list[str]],
    typer.Option("--select", help="Only these rules: codes, prefixes (W1, S) or names; comma-separated."),
]
IgnoreOpt = Annotated[
    Optional[list[str]], typer.Option("--ignore", help="Skip these rules (same forms as --select).")
]
EngineOpt = Annotated[Engine, typer.Option("--engine", help="kimi-code replay engine (auto = both).")]
InputFormatOpt = Annotated[
    Optional[str], typer.Option("--input-format", help="Override content detection (e.g. kimi-wire).")
]
ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", help="Read settings from this file (tdoc.toml, or pyproject.toml's [tool.tdoc])."),
]
NoConfigOpt = Annotated[
    bool, typer.Option("--no-config", help="Do not look for tdoc.toml / pyproject.toml configuration.")
]


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _emit_json(value: object) -> None:
    sys.stdout.write(dumps(value, indent=True) + "\n")


@app.command("scan")
def scan_cmd(
    paths: Annotated[list[str], typer.Argument(help="Files, directories (searched) or globs.")],
    format: Annotated[ScanFormat, typer.Option("--format", "-f", help="Output format.")] = "human",
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    fail_on: Annotated[
        Optional[FailOn], typer.Option("--fail-on", help="Lowest severity that exits 1 [default: error].")
    ] = None,
    engine: EngineOpt = Engine.auto,
    deep: Annotated[bool, typer.Option("--deep", help="SQLite: full integrity_check.")] = False,
    input_format: InputFormatOpt = None,
    jobs: Annotated[
        Optional[int],
        typer.Option("--jobs", "-j", min=0, help="Worker processes (default or 0: the number of CPUs)."),
    ] = None,
    config_file: ConfigOpt = None,
    no_config: NoConfigOpt = False,
    skip_unrecognised: Annotated[
        bool,
        typer.Option("--skip-unrecognised", help="Leave out named files that are not session stores (pre-commit)."),
    ] = False,
    cluster: Annotated[
        Optional[str],
        typer.Option("--cluster", metavar="ADDRESS",
                     help="Scan on a Dask cluster: tcp://host:8786, or local[:N] for N local workers "
                          "(needs the fleet extra)."),
    ] = None,
    storage_option: Annotated[
        Optional[list[str]],
        typer.Option("--storage-option", metavar="KEY=VALUE",
                     help="fsspec storage option for s3://, gs://, ... URLs (endpoint_url=..., key=..., secret=...)."),
    ] = None,
) -> None:
    """Report what is poisoned in session stores (local paths, globs, or s3:// and other fsspec URLs)."""
    settings = _settings(config_file, no_config, select=_split(select), ignore=_split(ignore),
                         fail_on=fail_on.value if fail_on else None)  # fmt: skip
    config = ScanConfig(
        select=settings.select,
        ignore=settings.ignore,
        fail_on=settings.fail_on,
        input_format=input_format,
        options=Options(settings=(KimiOptions(engine.value), SqliteOptions(deep))),
        per_path_ignores=settings.per_path_ignores,
        root=settings.root,
        jobs=jobs or 0,
        skip_unrecognised=skip_unrecognised,
    )
    report = _run_scan(paths, config, cluster, storage_option)
    fmt = ScanFormat(format).value
    REPORTERS[fmt](report, sys.stdout)
    for fr in report.files:
        if fr.error and fmt != "human":
            where = "" if fr.error.startswith(fr.path) else f"{fr.path}: "
            err.print(Text(f"tdoc: {where}{fr.error}"))
    raise typer.Exit(report.exit_code(config.fail_on))


def _run_scan(paths: list[str], config: ScanConfig, cluster: str | None, storage_option: list[str] | None):
    """A local scan, or a fleet scan when a cluster or a storage URL is named."""
    from .fleet.uris import is_url

    if cluster is None and not storage_option and not any(is_url(p) for p in paths):
        return scan(paths, config, progress=_progress())
    from .fleet import fleet_scan, parse_storage_options

    def dashboard(link: str) -> None:
        err.print(Text(f"tdoc: Dask dashboard: {link}"))

    return fleet_scan(paths, config, cluster=cluster, storage_options=parse_storage_options(storage_option),
                      progress=_progress(), on_dashboard=dashboard)


def _settings(config_file: Path | None, no_config: bool, **flags: object) -> Settings:
    """Flags over the configuration file over defaults."""
    file = load_config(config_file, discover=not no_config)
    return resolve(file, **flags)


def _progress() -> _ProgressBar | None:
    return _ProgressBar() if err.is_terminal else None


class _ProgressBar:
    """A progress bar on stderr, shown only for work big enough to wait for."""

    MIN_FILES = 20
    MIN_BYTES = 64 * 1024 * 1024

    def __init__(self) -> None:
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        self._done = 0
        self._files = 0

    def start(self, files: int, total_bytes: int) -> None:
        if files < self.MIN_FILES and total_bytes < self.MIN_BYTES:
            return
        self._files = files
        self._bar = Progress(
            SpinnerColumn(),
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            TimeElapsedColumn(),
            console=err,
            transient=True,
        )
        self._task = self._bar.add_task(self._label(), total=max(total_bytes, 1))
        self._bar.start()

    def advance(self, files: int, nbytes: int) -> None:
        if self._bar is not None and self._task is not None:
            self._done += files
            self._bar.update(self._task, advance=nbytes, description=self._label())

    def stop(self) -> None:
        if self._bar is not None:
            self._bar.stop()
            self._bar = None

    def _label(self) -> str:
        return f"scanning {self._done}/{self._files} files"


@app.command("replay")
def replay_cmd(
    path: Annotated[str, typer.Argument(help="One store file.")],
    engine: Annotated[Engine, typer.Option("--engine", help="kimi-code engine.")] = Engine.v2,
    session: Annotated[Optional[str], typer.Option("--session", help="Session id (databases).")] = None,
    format: Annotated[DocFormat, typer.Option("--format", "-f", help="Output format.")] = DocFormat.json,
    input_format: InputFormatOpt = None,
) -> None:
    """Print the history the runtime would rebuild from a store."""
    from .fleet import reject_remote
    from .replay_view import replay_path, render_human

    reject_remote([path], "replay")
    value = replay_path(path, Options(session=session, settings=(KimiOptions(engine.value),)), input_format)
    if format is DocFormat.json:
        _emit_json(value)
    else:
        render_human(value, Console(highlight=False, markup=False, emoji=False, soft_wrap=True))


@app.command("heal")
def heal_cmd(
    paths: Annotated[list[str], typer.Argument(help="Files, directories or globs.")],
    in_place: Annotated[bool, typer.Option("--in-place", help="Rewrite the store (with a backup).")] = False,
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the healed copy here.")] = None,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print the change as a patch (git apply) / SQL plan; summary to stderr.")
    ] = False,
    unsafe_fixes: Annotated[
        Optional[bool], typer.Option("--unsafe-fixes/--no-unsafe-fixes", help="Also apply unsafe fixes.")
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    backup_dir: Annotated[Optional[Path], typer.Option("--backup-dir", help="Where backups go.")] = None,
    no_backup: Annotated[bool, typer.Option("--no-backup", help="Do not keep a backup.")] = False,
    purge: Annotated[bool, typer.Option("--purge", help="Databases: delete rows instead of deactivating.")] = False,
    force: Annotated[
        bool, typer.Option("--force", help="Rewrite a file with other hard links or another process writing it.")
    ] = False,
    format: Annotated[DocFormat, typer.Option("--format", "-f", help="Output format.")] = DocFormat.human,
    input_format: InputFormatOpt = None,
    config_file: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """Apply the fixes of the findings: a dry run unless --in-place or --output."""
    from .fleet import reject_remote
    from .healing import heal_paths, render_heal
    from .stores import HealOptions
    from .stores.options import RowHealOptions

    reject_remote(paths, "heal")
    if in_place and output:
        raise TdocError("--in-place and --output exclude each other")
    settings = _settings(config_file, no_config, select=_split(select), ignore=_split(ignore),
                         unsafe_fixes=unsafe_fixes, backup_dir=backup_dir)  # fmt: skip
    mode = "in-place" if in_place else "output" if output else "dry-run"
    options = HealOptions(
        mode=mode,
        output=output,
        diff=diff,
        unsafe_fixes=settings.unsafe_fixes,
        backup_dir=settings.backup_dir,
        backup=not no_backup,
        force=force,
        settings=(RowHealOptions(purge=purge),),
    )
    config = ScanConfig(
        select=settings.select,
        ignore=settings.ignore,
        input_format=input_format,
        per_path_ignores=settings.per_path_ignores,
        root=settings.root,
    )
    results, code = heal_paths(paths, config, options)
    render_heal(results, format.value, sys.stdout, err, diff=diff)
    raise typer.Exit(code)


@app.command("restore")
def restore_cmd(
    path: Annotated[Path, typer.Argument(help="The store file to put back.")],
    backup: Annotated[Optional[Path], typer.Option("--backup", help="This backup (default: the newest).")] = None,
    backup_dir: Annotated[Optional[Path], typer.Option("--backup-dir", help="Where heal put the backups.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Restore even while another process has it open.")] = False,
    config_file: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """Put a backup made by `tdoc heal --in-place` back in place, atomically."""
    from .heal.restore import restore

    settings = _settings(config_file, no_config, backup_dir=backup_dir)
    used = restore(path, backup=backup, backup_dir=settings.backup_dir, force=force)
    err.print(Text(f"{path}: restored from {used}"))


@app.command("rules")
def rules_cmd(
    format: Annotated[DocFormat, typer.Option("--format", "-f", help="Output format.")] = DocFormat.human,
) -> None:
    """List the rule catalogue."""
    from .explain import rules_table
    from .rules import RULES

    if format is DocFormat.json:
        _emit_json([r.as_dict() for r in sorted(RULES.values(), key=lambda r: r.code)])
    else:
        Console(highlight=False).print(rules_table())


@app.command("explain")
def explain_cmd(
    rule: Annotated[Optional[str], typer.Argument(help="A rule code or name.")] = None,
    path: Annotated[Optional[str], typer.Argument(help="With --error: the store to map the error to.")] = None,
    error: Annotated[Optional[str], typer.Option("--error", help="A pasted provider error message.")] = None,
    session: Annotated[Optional[str], typer.Option("--session", help="With --error PATH: the session id.")] = None,
    format: Annotated[DocFormat, typer.Option("--format", "-f", help="Output format.")] = DocFormat.human,
) -> None:
    """Print a rule's documentation, or say which rule a provider error points at.

    With --error: exit 0 when the error is a structural rejection tdoc knows, 1 when not.
    """
    from .explain import explain_error, explain_rule

    if error is not None:
        if rule and path:
            raise TdocError("with --error, give at most one PATH")
        store_path = path or rule  # `tdoc explain --error TEXT PATH`
        code = explain_error(error, store_path, format.value, sys.stdout, session)
        raise typer.Exit(code)
    if not rule:
        raise TdocError("name a rule (code or name), or pass --error TEXT")
    explain_rule(rule, format.value, sys.stdout)


@app.command("schema")
def schema_cmd(
    name: Annotated[str, typer.Argument(help="report, finding, replay or heal.")] = "report",
) -> None:
    """Print the JSON Schema of a machine output."""
    from .schema import OUTPUT_SCHEMAS, load

    if name not in OUTPUT_SCHEMAS:
        raise TdocError(f"unknown schema {name!r}; choose one of {', '.join(OUTPUT_SCHEMAS)}")
    _emit_json(load(name))


def _version_callback(value: bool) -> None:
    if value:
        print(f"tdoc {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version_callback, is_eager=True, help="Show the version.")
    ] = False,
) -> None:
    """tdoc, the transcript doctor."""


def main(argv: list[str] | None = None) -> None:
    """Console entry point. Usage errors exit 2; a bug prints one line, never locals."""
    try:
        code = app(args=argv, standalone_mode=False)
    except typer.Exit as exc:
        code = exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        err.print(Text("tdoc: aborted"))
        code = 2
    except typer.TyperException as exc:  # usage errors (typer's own click)
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            err.print(Text(f"tdoc: error: {exc}"))
        code = getattr(exc, "exit_code", 2)
    except BrokenPipeError:
        code = 0
    except OSError as exc:  # the file system said no where no store caught it (output, temporaries)
        from .errors import os_failure

        where = exc.filename if exc.filename is not None else "standard output"
        err.print(Text(f"tdoc: error: {os_failure(where, exc, 'write' if where == 'standard output' else 'use')}"))
        code = 2
    except sqlite3.Error as exc:  # an SQLite failure no store mapped to its file
        from .errors import sqlite_failure

        failure = sqlite_failure("database", exc)
        err.print(Text(f"tdoc: error: {failure}"))
        code = failure.exit_code
    except Exception as exc:  # a bug: say what, without the transcript
        err.print(Text(f"tdoc: internal error: {type(exc).__name__}: {str(exc)[:200]}"))
        code = 2
    sys.exit(code if isinstance(code, int) else 0)
