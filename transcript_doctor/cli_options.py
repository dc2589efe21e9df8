"""Options and choices several `tdoc` commands share, and the settings they resolve to."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from .errors import TdocError
from .reporters import REPORTERS

if TYPE_CHECKING:  # loaded by the commands that read settings, not by `tdoc --version`
    from .config import Settings

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


class Color(str, Enum):
    auto = "auto"
    always = "always"
    never = "never"


SelectOpt = Annotated[
    list[str] | None,
    typer.Option("--select", help="Only these rules: codes, prefixes (W1, S) or names; comma-separated."),
]
IgnoreOpt = Annotated[
    list[str] | None, typer.Option("--ignore", help="Skip these rules (same forms as --select).")
]
TargetOpt = Annotated[
    str | None,
    typer.Option("--target", help="Codex: judge the request for 'codex' (default, with its repairs) or the raw 'responses' API."),
]
EngineOpt = Annotated[Engine, typer.Option("--engine", help="kimi-code replay engine (auto = both).")]


def known_input_format(value: str | None) -> str | None:
    """`--input-format` names a known store format: a usage error (exit 2) once, not one per input."""
    if value is None:
        return None
    from .stores import kinds  # (the sniffers only: the store families load when a store is opened)

    known = kinds()
    if value not in known:
        raise typer.BadParameter(f"unknown input format {value!r}; known: {', '.join(known)}")
    return value


InputFormatOpt = Annotated[
    str | None,
    typer.Option("--input-format", callback=known_input_format,
                 help="Read every input as this format instead of detecting it."),
]
ConfigOpt = Annotated[
    Path | None,
    typer.Option("--config", help="Read settings from this file (tdoc.toml, or pyproject.toml's [tool.tdoc])."),
]
NoConfigOpt = Annotated[
    bool, typer.Option("--no-config", help="Do not look for tdoc.toml / pyproject.toml configuration.")
]
ColorOpt = Annotated[Color, typer.Option("--color", help="Colour the human output: auto (on a terminal), always, never.")]
JobsOpt = Annotated[
    int | None,
    typer.Option("--jobs", "-j", min=0, help="Worker processes, at most one per CPU (default or 0: decide by the work). A large database is split over them by its sessions."),
]


def split_codes(values: list[str] | None) -> list[str] | None:
    """`--select A,B --select C` as ["A", "B", "C"]; None when none was given."""
    if not values:
        return None
    return [v.strip() for value in values for v in value.split(",") if v.strip()]


def settings(config_file: Path | None, no_config: bool, **flags: object) -> Settings:
    """Flags over the configuration file over defaults."""
    from .config import load_config, resolve

    if no_config and config_file is not None:
        raise TdocError("--config and --no-config exclude each other")
    file = load_config(config_file, discover=not no_config)
    return resolve(file, **flags)
