"""The CLI's command group: commands built when named, TdocError as one line and its exit code,
readable help placeholders, and the stderr console (created when something is said).

Start-up (issue 20): `tdoc --version` builds the root group only, and `tdoc scan` the root and
`scan`; a command's module (and what it imports) loads when the command is looked up, and rich
loads when a message or a progress bar is printed, not when the CLI is built.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator, MutableMapping
from functools import cache
from typing import TYPE_CHECKING, Any

import typer
from typer.main import get_command_from_info

from .cli_params import PlainCoercionGroup, install
from .errors import TdocError
from .reporters.options import may_be_terminal

if TYPE_CHECKING:
    from rich.console import Console

# Command name -> the module under transcript_doctor that defines it (on its `commands` registry),
# in the order `tdoc --help` lists them.
COMMANDS = {"scan": "cli_scan", "sessions": "cli_scan", "replay": "cli_replay", "heal": "cli_heal",
            "restore": "cli_heal", "rules": "cli_docs", "explain": "cli_docs", "schema": "cli_docs"}  # fmt: skip
METAVARS = {"select": "CODES", "ignore": "CODES", "session": "ID", "input_format": "FORMAT", "backup_dir": "DIR",
            "output": "FILE", "config_file": "FILE", "jobs": "N", "error": "TEXT", "paths": "PATH",
            "path": "PATH", "rule": "CODE|NAME", "name": "NAME"}  # fmt: skip


def command_registry() -> typer.Typer:
    """Where a command module declares its commands (`@commands.command(NAME)`); the root group
    builds each one from here when it is named."""
    return typer.Typer(add_completion=False)


@cache
def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, highlight=False, markup=False, emoji=False, soft_wrap=True)


def say(message: str) -> None:
    """One message line on stderr (never markup)."""
    from rich.text import Text

    stderr_console().print(Text(message))


def stderr_is_terminal() -> bool:
    """rich's answer for stderr, asked only when it can be yes (rich is not loaded otherwise)."""
    return may_be_terminal(sys.stderr) and stderr_console().is_terminal


class LazyCommands(MutableMapping[str, Any]):
    """Command name -> click command; a command named in `table` is built on first lookup."""

    def __init__(self, table: dict[str, str], build: Callable[[str], Any], given: dict[str, Any]) -> None:
        self._table = table
        self._build = build
        self._built: dict[str, Any] = dict(given)

    def __getitem__(self, name: str) -> Any:
        if name not in self._built:
            if name not in self._table:
                raise KeyError(name)
            self._built[name] = self._build(name)
        return self._built[name]

    def __setitem__(self, name: str, command: Any) -> None:
        self._built[name] = command

    def __delitem__(self, name: str) -> None:
        del self._built[name]

    def __iter__(self) -> Iterator[str]:
        return iter(dict.fromkeys([*self._table, *self._built]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._table, *self._built]))

    def loaded(self) -> list[Any]:
        """The commands built so far (what the parameter conversion is installed on)."""
        return list(self._built.values())


class Group(PlainCoercionGroup):
    """Turns TdocError into one line on stderr and its exit code, under CliRunner too; builds a
    command when it is named (`COMMANDS`); gives every parameter a readable placeholder in the
    help (PATH..., CODES, N) instead of a Python type."""

    def __init__(self, *args: Any, commands: Any = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.commands = LazyCommands(COMMANDS, self._build, dict(commands or {}))

    def _build(self, name: str) -> Any:
        registry = importlib.import_module(f"{__package__}.{COMMANDS[name]}").commands
        info = next(c for c in registry.registered_commands if c.name == name)
        command = get_command_from_info(info, pretty_exceptions_short=registry.pretty_exceptions_short,
                                        rich_markup_mode=self.rich_markup_mode)  # fmt: skip
        install(command)
        readable_help(command)
        return command

    def list_commands(self, ctx: Any) -> list[str]:
        return list(self.commands)

    def invoke(self, ctx: Any) -> object:
        try:
            return super().invoke(ctx)
        except TdocError as exc:
            say(f"tdoc: error: {exc}")
            raise typer.Exit(exc.exit_code) from None


def readable_help(command: Any) -> None:
    """Placeholders such as PATH, CODES and N in place of typer's `<list[str]>`; the known format ids
    in --input-format's help (read from the store registry when the command is built, so never stale)."""
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
