"""What a reporter may be told besides the report: colour and verbosity; where rich is needed."""

from __future__ import annotations

import builtins
import os
import sys
from functools import cache
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console

COLOR_CHOICES = ("auto", "always", "never")


class RenderOptions:
    """What a reporter may be told besides the report."""

    __slots__ = ("color", "quiet", "scan_config")

    def __init__(self, color: str = "auto", quiet: bool = False, scan_config: Any = None) -> None:
        self.color = color  # auto: when the stream is a terminal and NO_COLOR is unset
        self.quiet = quiet  # human: the findings only, no summary
        self.scan_config = scan_config  # html: the ScanConfig of the scan (engine, selection) to rebuild requests with


def console_for(out: TextIO, color: str = "auto") -> Console:
    """A rich Console on `out` that never interprets markup, coloured as `color` says. A closed
    pipe raises BrokenPipeError (rich's default exits 1), so the caller keeps its exit code."""
    _check(color)
    common: dict[str, Any] = {"file": out, "highlight": False, "markup": False, "emoji": False, "soft_wrap": True}
    console = _pipe_console()
    if color == "always":
        return console(force_terminal=True, color_system="standard", **common)
    if color == "never":
        return console(no_color=True, color_system=None, **common)
    return console(**common)


def _check(color: str) -> None:
    if color not in COLOR_CHOICES:
        raise ValueError(f"color must be one of {COLOR_CHOICES}, not {color!r}")


@cache
def _pipe_console() -> type[Console]:
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return PipeConsole


def may_be_terminal(stream: object) -> bool:
    """False only where rich's `Console.is_terminal` is False for a console on `stream` (no
    colour system, no escape code): the same environment variables (TTY_COMPATIBLE, FORCE_COLOR)
    and `isatty()`, read without loading rich. True means "ask rich"."""
    tty_compatible = os.environ.get("TTY_COMPATIBLE", "")
    if tty_compatible in ("0", "1"):
        return tty_compatible == "1"
    force_color = os.environ.get("FORCE_COLOR")
    if force_color is not None:
        return force_color != ""
    isatty = getattr(getattr(stream, "rich_proxied_file", stream), "isatty", None)
    try:
        return isatty is not None and bool(isatty())
    except ValueError:  # a closed stream: rich says "not a terminal" too
        return False


def writes_plain(out: TextIO, color: str = "auto") -> bool:
    """Whether `console_for(out, color)` is sure to write text exactly as given, without colour,
    style or escape code: `never`, or `auto` on a stream that is not a terminal. Unsure cases
    (Jupyter, Windows consoles, a terminal, `always`) answer False and go through rich."""
    _check(color)
    if color == "always" or sys.platform == "win32" or hasattr(builtins, "get_ipython"):
        return False
    return color == "never" or not may_be_terminal(out)
