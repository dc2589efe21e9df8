"""`tdoc scan` and `tdoc sessions`: read stores, report what is poisoned."""

# No `from __future__ import annotations` here: typer reads the parameters' annotations every time
# it builds a command, and string annotations would be compiled and evaluated anew each time.

import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TextIO

import typer

from .cli_help import command_registry, say, stderr_console, stderr_is_terminal
from .cli_options import (
    Color,
    ColorOpt,
    ConfigOpt,
    DocFormat,
    Engine,
    EngineOpt,
    FailOn,
    IgnoreOpt,
    InputFormatOpt,
    JobsOpt,
    NoConfigOpt,
    ScanFormat,
    SelectOpt,
    TargetOpt,
    settings,
    split_codes,
)
from .cli_output import deliver, json_text
from .errors import TdocError
from .reporters import REPORTERS, RenderOptions

if TYPE_CHECKING:  # imported where used (start-up, issue 20)
    from .core import Report, ScanConfig

commands = command_registry()


class _NothingToScan(Exception):
    pass


def _default_paths(quiet: bool) -> list[str]:
    """No path given: every agent's default location that exists on this machine."""
    from .locations import default_locations

    places = default_locations()
    found = [str(loc.path) for loc in places if loc.exists()]
    if not found:
        looked = ", ".join(sorted({f"{loc.path} (${loc.variable})" for loc in places}))
        raise _NothingToScan(f"tdoc: no agent session stores in the default locations; looked in {looked}")
    if not quiet:
        say("tdoc: scanning the default locations: " + ", ".join(found))
    return found


@commands.command("scan")
def scan_cmd(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Files, directories (searched), globs or - (stdin). Without a path: every agent's "
                       "default location (see `tdoc sessions --help`)."),  # fmt: skip
    ] = None,
    format: Annotated[ScanFormat, typer.Option("--format", "-f", help="Output format.")] = "human",  # type: ignore[assignment]
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the output to this file.")] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    fail_on: Annotated[
        FailOn | None, typer.Option("--fail-on", help="Lowest severity that exits 1 [default: error].")
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
        str | None,
        typer.Option("--cluster", metavar="ADDRESS",
                     help="Scan on a Dask cluster: tcp://host:8786, or local[:N] for N local workers "
                          "(needs the fleet extra)."),
    ] = None,
    storage_option: Annotated[
        list[str] | None,
        typer.Option("--storage-option", metavar="KEY=VALUE",
                     help="fsspec storage option for s3://, gs://, ... URLs (endpoint_url=..., key=..., secret=...)."),
    ] = None,
) -> None:
    """Report what is poisoned in session stores (local paths, globs, or s3:// and other fsspec URLs)."""
    from .core import ScanConfig
    from .stores import Options
    from .stores.options import CodexOptions, KimiOptions, SqliteOptions

    fmt = ScanFormat(format).value
    if statistics and fmt not in ("human", "json"):
        raise TdocError("--statistics prints a table (--format human) or a list (--format json)")
    try:
        targets = paths or _default_paths(quiet)
    except _NothingToScan as exc:
        say(str(exc))
        raise typer.Exit(0) from None
    resolved = settings(config_file, no_config, select=split_codes(select), ignore=split_codes(ignore),
                        fail_on=fail_on.value if fail_on else None)  # fmt: skip
    config = ScanConfig(
        select=resolved.select,
        ignore=resolved.ignore,
        fail_on=resolved.fail_on,
        input_format=input_format,
        options=Options(settings=(KimiOptions(engine.value), SqliteOptions(deep), CodexOptions(target or "codex"))),
        per_path_ignores=resolved.per_path_ignores,
        root=resolved.root,
        jobs=jobs or 0,
        # the default locations may hold nothing yet, or other programs' files: neither is an error
        skip_unrecognised=skip_unrecognised or not paths,
    )
    report = _scan_reporting_usage(targets, config, fmt, output, quiet, cluster, storage_option)
    if output is not None:
        _refuse_an_input_as_output(output, report)
    deliver(_report_writer(report, fmt, statistics, RenderOptions(color.value, quiet, config)), output)
    if fmt in ("human", "github"):  # the formats a person reads in the job log
        from .reporters.step_summary import append_summary

        append_summary(report)
    # an input that could not be read is said on stderr too, unless the human report showing it is on this terminal
    shown_here = fmt == "human" and output is None and _stdout_is_terminal()
    for fr in report.files:
        if fr.error and not shown_here:
            _say_unreadable(fr.path, fr.error)
    code = report.exit_code(config.fail_on)
    raise typer.Exit(0 if exit_zero and code == 1 else code)


def _say_unreadable(path: str, error: str) -> None:
    """One line on stderr for an input that could not be read (its path once)."""
    say(f"tdoc: {'' if error.startswith(path) else f'{path}: '}{error}")


def _stdout_is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # replaced or closed
        return False


def _refuse_an_input_as_output(output: Path, report: "Report") -> None:
    """`-o` naming a store the scan read would replace that store with the report."""
    if not output.exists():
        return
    for fr in report.files:
        try:
            same = os.path.samefile(fr.path, output)
        except (OSError, ValueError):
            continue
        if same:
            raise TdocError(f"--output {output} is one of the scanned stores; the report would replace it")


def _scan_reporting_usage(targets: list[str], config: "ScanConfig", fmt: str, output: Path | None, quiet: bool,
                          cluster: str | None = None, storage_option: list[str] | None = None) -> "Report":
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
    """The progress bar on stderr when it is a terminal; rich.progress loads only if a bar is drawn."""
    if not stderr_is_terminal():
        return None
    from .progress_bar import ProgressBar

    return ProgressBar(stderr_console())


def _run_scan(paths: list[str], config: "ScanConfig", cluster: str | None, storage_option: list[str] | None,
              progress: Any) -> "Report":  # fmt: skip
    """A local scan, or a fleet scan when a cluster or a storage URL is named."""
    from .core import scan

    if cluster is None and not storage_option and not _names_a_url(paths):
        return scan(paths, config, progress=progress)
    from .fleet import fleet_scan, parse_storage_options

    def dashboard(link: str) -> None:
        say(f"tdoc: Dask dashboard: {link}")

    return fleet_scan(paths, config, cluster=cluster, storage_options=parse_storage_options(storage_option),
                      progress=progress, on_dashboard=dashboard)


def _names_a_url(paths: list[str]) -> bool:
    """Whether a path is an fsspec URL; only one holding "://" can be, so the fleet machinery
    loads only then (start-up, issue 20)."""
    if not any("://" in p for p in paths):
        return False
    from .fleet.uris import is_url

    return any(is_url(p) for p in paths)


def _report_writer(report: "Report", fmt: str, statistics: bool, options: RenderOptions) -> Callable[[TextIO], object]:
    if statistics:
        from .reporters import statistics as stats

        return lambda out: (stats.render_json if fmt == "json" else stats.render_human)(report, out)
    return lambda out: REPORTERS[fmt](report, out, options)


@commands.command("sessions")
def sessions_cmd(
    paths: Annotated[
        list[str] | None,
        typer.Argument(help="Stores, directories or globs. Without a path: the default locations of every agent tdoc knows "
                       "(kimi-code $KIMI_CODE_HOME, Hermes $HERMES_HOME, OpenCode $XDG_DATA_HOME/opencode, "
                       "Claude Code $CLAUDE_CONFIG_DIR, Codex $CODEX_HOME)."),  # fmt: skip
    ] = None,
    format: Annotated[DocFormat, typer.Option("--format", "-f", help="Output format.")] = DocFormat.human,
    jobs: JobsOpt = None,
) -> None:
    """List sessions: id, agent, last activity, size and findings by severity, newest first."""
    from .core import ScanConfig
    from .reporters.plain_table import plain_table
    from .sessions import as_table, list_sessions

    try:
        targets = paths or _default_paths(quiet=format is DocFormat.json)
    except _NothingToScan as exc:
        say(str(exc))
        targets = []
    rows = list_sessions(targets, ScanConfig(jobs=jobs or 0, skip_unrecognised=not paths)) if targets else []
    if format is DocFormat.json:
        deliver(lambda out: out.write(json_text({"schema_version": 1, "sessions": [r.as_dict() for r in rows]})))
    else:
        headers, body = as_table(rows)
        deliver(lambda out: out.write(plain_table(headers, body) if body else "No sessions found.\n"))
    unreadable = [(r.path, r.error) for r in rows if r.error]
    for path, error in unreadable:
        _say_unreadable(path, error)
    if unreadable:  # an input that could not be read is exit 2, as for scan
        raise typer.Exit(2)
