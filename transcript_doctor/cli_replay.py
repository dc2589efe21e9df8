"""`tdoc replay`: the history a runtime would rebuild from a store."""

# No `from __future__ import annotations` here: typer reads the parameters' annotations every time
# it builds a command, and string annotations would be compiled and evaluated anew each time.

from enum import Enum
from typing import Annotated

import typer

from .cli_help import command_registry
from .cli_options import Color, ColorOpt, Engine, InputFormatOpt, TargetOpt
from .cli_output import deliver, json_text

commands = command_registry()


class PageFormat(str, Enum):
    json = "json"
    human = "human"
    html = "html"


@commands.command("replay")
def replay_cmd(
    path: Annotated[str, typer.Argument(help="One store file, or - for standard input.")],
    engine: Annotated[Engine, typer.Option("--engine", help="kimi-code engine.")] = Engine.v2,
    session: Annotated[str | None, typer.Option("--session", help="Only this session (its id).")] = None,
    target: TargetOpt = None,
    format: Annotated[PageFormat, typer.Option("--format", "-f", help="Output format.")] = PageFormat.json,
    color: ColorOpt = Color.auto,
    input_format: InputFormatOpt = None,
) -> None:
    """Print the history the runtime would rebuild from a store (html: the request as a page)."""
    from .fleet import reject_remote
    from .replay_view import render_human, replay_html, replay_path
    from .stores import Options
    from .stores.options import CodexOptions, KimiOptions

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
