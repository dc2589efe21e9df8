"""What a reporter may be told besides the report: colour and verbosity."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from rich.console import Console

COLOR_CHOICES = ("auto", "always", "never")


@dataclass
class RenderOptions:
    color: str = "auto"  # auto: when the stream is a terminal and NO_COLOR is unset
    quiet: bool = False  # human: the findings only, no summary
    scan_config: Any = None  # html: the ScanConfig of the scan (engine, selection) to rebuild requests with


def console_for(out: TextIO, color: str = "auto") -> Console:
    """A rich Console on `out` that never interprets markup, coloured as `color` says. A closed
    pipe raises BrokenPipeError (rich's default exits 1), so the caller keeps its exit code."""
    if color not in COLOR_CHOICES:
        raise ValueError(f"color must be one of {COLOR_CHOICES}, not {color!r}")
    common: dict[str, Any] = {"file": out, "highlight": False, "markup": False, "emoji": False, "soft_wrap": True}
    console = _pipe_console()
    if color == "always":
        return console(force_terminal=True, color_system="standard", **common)
    if color == "never":
        return console(no_color=True, color_system=None, **common)
    return console(**common)


@cache
def _pipe_console() -> type[Console]:
    from rich.console import Console

    class PipeConsole(Console):
        def on_broken_pipe(self) -> None:
            self.quiet = True
            raise BrokenPipeError

    return PipeConsole
