"""The `tdoc` command line: parse options, call the library, print, exit. No logic of its own."""

from __future__ import annotations

import sqlite3
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, Optional, TextIO

import typer
from rich.text import Text

from . import __version__
from .cli_help import Group, err
from .cli_output import deliver, json_text, silence_stdout
from .config import Settings, load_config, resolve
from .core import Report, ScanConfig, scan
from .model import TdocError
from .reporters import REPORTERS, RenderOptions
from .stores import Options
from .stores.options import CodexOptions, KimiOptions, SqliteOptions

EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for Ctrl-C


app = typer.Typer(
    name="tdoc",
    cls=Group,
    help="tdoc, the transcript doctor: find and heal poisoned AI-agent session histories.\n\n"
    "Exit codes: 0 clean (or healed), 1 findings at or above --fail-on remain (dry-run heal: "
    "something to fix), 2 usage/unreadable input/internal error, 3 refused (store in use or "
    "changed while tdoc worked), 130 interrupted.",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
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


class PageFormat(str, Enum):
    json = "json"
    human = "human"
    html = "html"


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


SelectOpt = Annotated[
    Optional[list[str]],
    typer.Option("--select", help="Only these rules: codes, prefixes (W1, S) or names; comma-separated."),
]
IgnoreOpt = Annotated[
    Optional[list[str]], typer.Option("--ignore", help="Skip these rules (same forms as --select).")
]
TargetOpt = Annotated[
    Optional[str],
    typer.Option("--target", help="Codex: judge the request for 'codex' (default, with its repairs) or the raw 'responses' API."),
]
EngineOpt = Annotated[Engine, typer.Option("--engine", help="kimi-code replay engine (auto = both).")]
InputFormatOpt = Annotated[
    Optional[str], typer.Option("--input-format", help="Read every input as this format instead of detecting it.")
]
ConfigOpt = Annotated[
    Optional[Path],
    typer.Option("--config", help="Read settings from this file (tdoc.toml, or pyproject.toml's [tool.tdoc])."),
]
NoConfigOpt = Annotated[
    bool, typer.Option("--no-config", help="Do not look for tdoc.toml / pyproject.toml configuration.")
]
ColorOpt = Annotated[Color, typer.Option("--color", help="Colour the human output: auto (on a terminal), always, never.")]
JobsOpt = Annotated[
    Optional[int],
    typer.Option("--jobs", "-j", min=0, help="Worker processes, at most one per CPU (default or 0: decide by the work)."),
]


def _split(values: list[str] | None) -> list[str] | None:
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def _settings(config_file: Path | None, no_config: bool, **flags: object) -> Settings:
    """Flags over the configuration file over defaults."""
    file = load_config(config_file, discover=not no_config)
    return resolve(file, **flags)


def _default_paths(quiet: bool) -> list[str]:
    """No path given: every agent's default location that exists on this machine."""
    from .locations import default_locations

    places = default_locations()
    found = [str(loc.path) for loc in places if loc.exists()]
    if not found:
        looked = ", ".join(sorted({f"{loc.path} (${loc.variable})" for loc in places}))
        raise _NothingToScan(f"tdoc: no agent session stores in the default locations; looked in {looked}")
    if not quiet:
        err.print(Text("tdoc: scanning the default locations: " + ", ".join(found)))
    return found


class _NothingToScan(Exception):
    pass


@app.command("scan")
def scan_cmd(
    paths: Annotated[
        Optional[list[str]],
        typer.Argument(help="Files, directories (searched), globs or - (stdin). Without a path: every agent's "
                       "default location (see `tdoc sessions --help`)."),  # fmt: skip
    ] = None,
    format: Annotated[ScanFormat, typer.Option("--format", "-f", help="Output format.")] = "human",  # type: ignore[assignment]
    output: Annotated[Optional[Path], typer.Option("--output", "-o", help="Write the output to this file.")] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    fail_on: Annotated[
        Optional[FailOn], typer.Option("--fail-on", help="Lowest severity that exits 1 [default: error].")
    ] = None,
    exit_zero: Annotated[bool, typer.Option("--exit-zero", help="Exit 0 even when there are findings.")] = False,
    statistics: Annotated[
        bool, typer.Option("--statistics", help="Print the number of findings per rule instead (human or json).")
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="Findings only: no summary, no progress.")] = False,
    color: ColorOpt = Color.auto,
    engine: EngineOpt = Engine.auto,
    deep: Annotated[bool, typer.Option("--deep", help="SQLite: full integrity_check.")] = False,
    target: TargetOpt = None,
    input_format: InputFormatOpt = None,
    jobs: JobsOpt = None,
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
    fmt = ScanFormat(format).value
    if statistics and fmt not in ("human", "json"):
        raise TdocError("--statistics prints a table (--format human) or a list (--format json)")
    try:
        targets = paths or _default_paths(quiet)
    except _NothingToScan as exc:
        err.print(Text(str(exc)))
        raise typer.Exit(0) from None
    settings = _settings(config_file, no_config, select=_split(select), ignore=_split(ignore),
                         fail_on=fail_on.value if fail_on else None)  # fmt: skip
    config = ScanConfig(
        select=settings.select,
        ignore=settings.ignore,
        fail_on=settings.fail_on,
        input_format=input_format,
        options=Options(settings=(KimiOptions(engine.value), SqliteOptions(deep), CodexOptions(target or "codex"))),
        per_path_ignores=settings.per_path_ignores,
        root=settings.root,
        jobs=jobs or 0,
        skip_unrecognised=skip_unrecognised,
    )
    report = _scan_reporting_usage(targets, config, fmt, output, quiet, cluster, storage_option)
    deliver(_report_writer(report, fmt, statistics, RenderOptions(color.value, quiet, config)), output)
    if fmt in ("human", "github"):  # the formats a person reads in the job log
        from .reporters.step_summary import append_summary

        append_summary(report)
    for fr in report.files:
        if fr.error and fmt != "human":
            where = "" if fr.error.startswith(fr.path) else f"{fr.path}: "
            err.print(Text(f"tdoc: {where}{fr.error}"))
    code = report.exit_code(config.fail_on)
    raise typer.Exit(0 if exit_zero and code == 1 else code)


def _scan_reporting_usage(targets: list[str], config: ScanConfig, fmt: str, output: Path | None, quiet: bool,
                          cluster: str | None = None, storage_option: list[str] | None = None) -> Report:
    """Scan; with --format sarif a usage error (a bad selector, no input) still writes a valid SARIF
    log with the error as a notification, so an upload step reports the cause."""
    try:
        return _run_scan(targets, config, cluster, storage_option, None if quiet else _progress())
    except TdocError as exc:
        if fmt == "sarif":
            from .reporters.sarif import failed_run

            message = str(exc)
            deliver(lambda out: failed_run(message, out), output)
        raise


def _progress() -> Any:
    if not err.is_terminal:
        return None
    from .progress_bar import ProgressBar

    return ProgressBar(err)


def _run_scan(paths: list[str], config: ScanConfig, cluster: str | None, storage_option: list[str] | None,
              progress: Any) -> Report:  # fmt: skip
    """A local scan, or a fleet scan when a cluster or a storage URL is named."""
    from .fleet.uris import is_url

    if cluster is None and not storage_option and not any(is_url(p) for p in paths):
        return scan(paths, config, progress=progress)
    from .fleet import fleet_scan, parse_storage_options

    def dashboard(link: str) -> None:
        err.print(Text(f"tdoc: Dask dashboard: {link}"))

    return fleet_scan(paths, config, cluster=cluster, storage_options=parse_storage_options(storage_option),
                      progress=progress, on_dashboard=dashboard)


def _report_writer(report: Report, fmt: str, statistics: bool, options: RenderOptions) -> Callable[[TextIO], object]:
    if statistics:
        from .reporters import statistics as stats

        return lambda out: (stats.render_json if fmt == "json" else stats.render_human)(report, out)
    return lambda out: REPORTERS[fmt](report, out, options)


@app.command("sessions")
def sessions_cmd(
    paths: Annotated[
        Optional[list[str]],
        typer.Argument(help="Stores, directories or globs. Without a path: the default locations of every agent tdoc knows "
                       "(kimi-code $KIMI_CODE_HOME, Hermes $HERMES_HOME, OpenCode $XDG_DATA_HOME/opencode, "
                       "Claude Code $CLAUDE_CONFIG_DIR, Codex $CODEX_HOME)."),  # fmt: skip
    ] = None,
    format: Annotated[DocFormat, typer.Option("--format", "-f", help="Output format.")] = DocFormat.human,
    jobs: JobsOpt = None,
) -> None:
    """List sessions: id, agent, last activity, size and findings by severity, newest first."""
    from .reporters.plain_table import plain_table
    from .sessions import as_table, list_sessions

    try:
        targets = paths or _default_paths(quiet=format is DocFormat.json)
    except _NothingToScan as exc:
        err.print(Text(str(exc)))
        targets = []
    rows = list_sessions(targets, ScanConfig(jobs=jobs or 0)) if targets else []
    if format is DocFormat.json:
        deliver(lambda out: out.write(json_text({"schema_version": 1, "sessions": [r.as_dict() for r in rows]})))
    else:
        headers, body = as_table(rows)
        deliver(lambda out: out.write(plain_table(headers, body) if body else "No sessions found.\n"))


@app.command("replay")
def replay_cmd(
    path: Annotated[str, typer.Argument(help="One store file, or - for standard input.")],
    engine: Annotated[Engine, typer.Option("--engine", help="kimi-code engine.")] = Engine.v2,
    session: Annotated[Optional[str], typer.Option("--session", help="Only this session (its id).")] = None,
    target: TargetOpt = None,
    format: Annotated[PageFormat, typer.Option("--format", "-f", help="Output format.")] = PageFormat.json,
    color: ColorOpt = Color.auto,
    input_format: InputFormatOpt = None,
) -> None:
    """Print the history the runtime would rebuild from a store (html: the request as a page)."""
    from .fleet import reject_remote
    from .replay_view import render_human, replay_html, replay_path

    reject_remote([path], "replay")
    options = Options(session=session, settings=(KimiOptions(engine.value), CodexOptions(target or "codex")))
    if format is PageFormat.html:
        deliver(lambda out: replay_html(path, options, input_format, out))
        return
    value = replay_path(path, options, input_format)
    if format is PageFormat.json:
        deliver(lambda out: out.write(json_text(value)))
    else:
        from .reporters.options import console_for

        deliver(lambda out: render_human(value, console_for(out, color.value)))


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
    """List the rule catalogue (one line per rule; never wrapped or cut, so `| grep` sees whole names)."""
    from .explain import rules_lines
    from .rules import RULES

    if format is DocFormat.json:
        deliver(lambda out: out.write(json_text([r.as_dict() for r in sorted(RULES.values(), key=lambda r: r.code)])))
    else:
        deliver(lambda out: out.write(rules_lines()))


@app.command("explain")
def explain_cmd(
    rule: Annotated[Optional[str], typer.Argument(help="A rule code or name.")] = None,
    path: Annotated[Optional[str], typer.Argument(help="With --error: the store to map the error to (- for stdin).")] = None,
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
        codes: list[int] = []
        deliver(lambda out: codes.append(explain_error(error, store_path, format.value, out, session)))
        raise typer.Exit(codes[0] if codes else 0)
    if not rule:
        raise TdocError("name a rule (code or name), or pass --error TEXT")
    deliver(lambda out: explain_rule(rule, format.value, out))


@app.command("schema")
def schema_cmd(
    name: Annotated[str, typer.Argument(help="report, finding, replay, heal or sessions.")] = "report",
) -> None:
    """Print the JSON Schema of a machine output."""
    from .schema import OUTPUT_SCHEMAS, bundled

    if name not in OUTPUT_SCHEMAS:
        raise TdocError(f"unknown schema {name!r}; choose one of {', '.join(OUTPUT_SCHEMAS)}")
    deliver(lambda out: out.write(json_text(bundled(name))))


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
    """Console entry point. Usage errors exit 2, Ctrl-C 130; a bug prints one line, never locals."""
    try:
        code = app(args=argv, standalone_mode=False, prog_name="tdoc")
    except typer.Exit as exc:
        code = exc.exit_code
    except (typer.Abort, KeyboardInterrupt):
        code = EXIT_INTERRUPTED
    except typer.TyperException as exc:  # usage errors (typer's own click)
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            err.print(Text(f"tdoc: error: {exc}"))
        code = getattr(exc, "exit_code", 2)
    except BrokenPipeError:
        silence_stdout()
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
    if code == EXIT_INTERRUPTED:  # ours, or typer's own handling of Ctrl-C (it returns 130)
        _quiet_interrupt()
        err.print(Text("tdoc: interrupted"))
    sys.exit(code if isinstance(code, int) else 0)


def _quiet_interrupt() -> None:
    """A second Ctrl-C while shutting down must not print a traceback either."""
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):  # not the main thread
        pass
