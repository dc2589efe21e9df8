"""The `tdoc` command line: parse options, call the library, print, exit. No logic of its own.

This module builds the root command and runs it; each command lives in a `cli_*` module of its
concern (`cli_help.COMMANDS`), loaded when the command is named, so `tdoc --version` and a small
`tdoc scan` pay only for what they run (start-up, issue 20).
"""

# No `from __future__ import annotations` here: typer reads the parameters' annotations every time
# it builds a command, and string annotations would be compiled and evaluated anew each time.

import sys
from typing import Annotated

import typer

from . import __version__
from .cli_help import Group, say
from .cli_output import silence_stdout

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
            say(f"tdoc: error: {exc}")
        code = getattr(exc, "exit_code", 2)
    except BrokenPipeError:
        silence_stdout()
        code = 0
    except OSError as exc:  # the file system said no where no store caught it (output, temporaries)
        from .errors import os_failure

        where = exc.filename if exc.filename is not None else "standard output"
        say(f"tdoc: error: {os_failure(where, exc, 'write' if where == 'standard output' else 'use')}")
        code = 2
    except Exception as exc:  # an SQLite failure no store mapped to its file, or a bug
        code = _unexpected(exc)
    if code == EXIT_INTERRUPTED:  # ours, or typer's own handling of Ctrl-C (it returns 130)
        _quiet_interrupt()
        say("tdoc: interrupted")
    sys.exit(code if isinstance(code, int) else 0)


def _unexpected(exc: Exception) -> int:
    """An SQLite failure no store mapped to its file says so (exit 2, or 3 when locked); a bug says
    what, without the transcript (exit 2)."""
    from .errors import is_sqlite_error, sqlite_failure

    if is_sqlite_error(exc):
        failure = sqlite_failure("database", exc)
        say(f"tdoc: error: {failure}")
        return failure.exit_code
    say(f"tdoc: internal error: {type(exc).__name__}: {str(exc)[:200]}")
    return 2


def _quiet_interrupt() -> None:
    """A second Ctrl-C while shutting down must not print a traceback either."""
    import signal

    try:
        signal.signal(signal.SIGINT, signal.SIG_IGN)
    except (ValueError, OSError):  # not the main thread
        pass
