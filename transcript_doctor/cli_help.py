"""The CLI's command group: TdocError as one line and its exit code, readable help placeholders."""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.text import Text
from typer.core import TyperGroup

from .model import TdocError

err = Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)
METAVARS = {"select": "CODES", "ignore": "CODES", "session": "ID", "input_format": "FORMAT", "backup_dir": "DIR",
            "output": "FILE", "config_file": "FILE", "jobs": "N", "error": "TEXT", "paths": "PATH",
            "path": "PATH", "rule": "CODE|NAME", "name": "NAME"}  # fmt: skip


class Group(TyperGroup):
    """Turns TdocError into one line on stderr and its exit code, under CliRunner too; gives every
    parameter a readable placeholder in the help (PATH..., CODES, N) instead of a Python type."""

    def invoke(self, ctx: Any) -> object:
        try:
            return super().invoke(ctx)
        except TdocError as exc:
            err.print(Text(f"tdoc: error: {exc}"))
            raise typer.Exit(exc.exit_code) from None

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is not None:
            readable_help(command)
        return command


def readable_help(command: Any) -> None:
    """Placeholders such as PATH, CODES and N in place of typer's `<list[str]>`; the known format ids
    in --input-format's help (read from the store registry when help is shown, so never stale)."""
    for param in command.params:
        descriptor = getattr(param, "type_descriptor", None)
        if param.metavar is None and not getattr(param, "is_flag", False) \
                and not getattr(descriptor, "is_choice", False):  # fmt: skip
            param.metavar = METAVARS.get(param.name or "", "TEXT")
        if param.param_type_name == "argument":
            param.display_type_rich = lambda ctx: None  # the placeholder says it all
        if param.name == "input_format" and "Known:" not in (param.help or ""):
            param.help = f"{param.help} Known: {', '.join(_format_ids())}."


def _format_ids() -> list[str]:
    from .stores import kinds

    return list(kinds())
