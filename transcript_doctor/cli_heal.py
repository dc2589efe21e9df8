"""`tdoc heal` and `tdoc restore`: rewrite stores safely, and put a backup back."""

# No `from __future__ import annotations` here: typer reads the parameters' annotations every time
# it builds a command, and string annotations would be compiled and evaluated anew each time.

import sys
from pathlib import Path
from typing import Annotated

import typer

from .cli_help import command_registry, say, stderr_console
from .cli_options import ConfigOpt, DocFormat, IgnoreOpt, InputFormatOpt, NoConfigOpt, SelectOpt, settings, split_codes
from .errors import TdocError

commands = command_registry()


@commands.command("heal")
def heal_cmd(
    paths: Annotated[list[str], typer.Argument(help="Files, directories or globs.")],
    in_place: Annotated[bool, typer.Option("--in-place", help="Rewrite the store (with a backup).")] = False,
    output: Annotated[Path | None, typer.Option("--output", "-o", help="Write the healed copy here.")] = None,
    diff: Annotated[
        bool, typer.Option("--diff", help="Print the change as a patch (git apply) / SQL plan; summary to stderr.")
    ] = False,
    unsafe_fixes: Annotated[
        bool | None, typer.Option("--unsafe-fixes/--no-unsafe-fixes", help="Also apply unsafe fixes.")
    ] = None,
    select: SelectOpt = None,
    ignore: IgnoreOpt = None,
    backup_dir: Annotated[Path | None, typer.Option("--backup-dir", help="Where backups go.")] = None,
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
    from .core import ScanConfig
    from .fleet import reject_remote
    from .healing import heal_paths, render_heal
    from .stores import HealOptions
    from .stores.options import RowHealOptions

    reject_remote(paths, "heal")
    if in_place and output:
        raise TdocError("--in-place and --output exclude each other")
    if no_backup and backup_dir is not None:
        raise TdocError("--backup-dir and --no-backup exclude each other")
    resolved = settings(config_file, no_config, select=split_codes(select), ignore=split_codes(ignore),
                        unsafe_fixes=unsafe_fixes, backup_dir=backup_dir)  # fmt: skip
    mode = "in-place" if in_place else "output" if output else "dry-run"
    options = HealOptions(
        mode=mode,
        output=output,
        diff=diff,
        unsafe_fixes=resolved.unsafe_fixes,
        backup_dir=resolved.backup_dir,
        backup=not no_backup,
        force=force,
        settings=(RowHealOptions(purge=purge),),
    )
    config = ScanConfig(
        select=resolved.select,
        ignore=resolved.ignore,
        input_format=input_format,
        per_path_ignores=resolved.per_path_ignores,
        root=resolved.root,
    )
    results, code = heal_paths(paths, config, options)
    render_heal(results, format.value, sys.stdout, stderr_console(), diff=diff)
    raise typer.Exit(code)


@commands.command("restore")
def restore_cmd(
    path: Annotated[Path, typer.Argument(help="The store file to put back.")],
    backup: Annotated[Path | None, typer.Option("--backup", help="This backup (default: the newest).")] = None,
    backup_dir: Annotated[Path | None, typer.Option("--backup-dir", help="Where heal put the backups.")] = None,
    force: Annotated[bool, typer.Option("--force", help="Restore even while another process has it open.")] = False,
    no_backup: Annotated[bool, typer.Option("--no-backup", help="Do not back up the state the restore replaces.")] = False,
    config_file: ConfigOpt = None,
    no_config: NoConfigOpt = False,
) -> None:
    """Put a backup made by `tdoc heal --in-place` back in place, atomically (what it replaces is
    backed up first)."""
    from .heal.restore import restore

    if no_backup and backup_dir is not None:
        raise TdocError("--backup-dir and --no-backup exclude each other")
    resolved = settings(config_file, no_config, backup_dir=backup_dir)
    done = restore(path, backup=backup, backup_dir=resolved.backup_dir, force=force, keep=not no_backup)
    kept = f"; the state it replaced is kept at {done.replaced}" if done.replaced is not None else ""
    say(f"{path}: restored from {done.backup}{kept}")
