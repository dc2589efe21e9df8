"""Command-line values converted without pydantic, for the plain parameter types tdoc declares.

typer converts every value that is not a flag through a pydantic `TypeAdapter`; importing pydantic
and building the adapters costs more than the rest of a small scan's start-up. For `str`, `bool`,
`int`, `Path`, an `Enum` of choices and lists of these, the conversion is plain and done here. A value
this module does not accept outright (a bad choice, an integer out of range, a string that is not
plainly decimal) goes to typer's own conversion, so what is accepted and every error message stay
exactly typer's (`tests/test_cli_params.py` pins both against typer's adapters).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any, get_args, get_origin

from typer._click.core import Command, Context
from typer._coercion import RuntimeParam, TypeDescriptor, build_runtime_param
from typer._param_types import coerce_cli_choice, coerce_cli_path
from typer.core import TyperGroup, _TyperParameter

_DECIMAL = re.compile(r"[0-9]{1,18}")


class _Refused(Exception):
    """This value is not plainly valid: typer's conversion decides (and words any error)."""


Convert = Callable[[Any, "_TyperParameter", Context], Any]


class PlainParam(RuntimeParam):
    """Converts each value with `convert`; hands a refused one to typer's conversion.

    A plain subclass of typer's frozen dataclass, not a dataclass itself: the class is made at every
    start-up, and a dataclass compiles six methods then (issue 20).
    """

    convert: Convert
    many: bool
    descriptor: TypeDescriptor

    def __init__(self, *, annotation: Any, parameter_info: Any, convert: Convert, many: bool,
                 descriptor: TypeDescriptor) -> None:  # fmt: skip
        super().__init__(parameter_info=parameter_info, annotation=annotation)
        self.convert = convert
        self.many = many
        self.descriptor = descriptor

    def _coerce_value(self, value: Any, param: _TyperParameter, ctx: Context) -> Any:
        try:
            if self.many:
                if not isinstance(value, (list, tuple)):
                    raise _Refused
                return [self.convert(v, param, ctx) for v in value]
            return self.convert(value, param, ctx)
        except _Refused:
            return build_runtime_param(self.descriptor)._coerce_value(value, param=param, ctx=ctx)


def plain_param(descriptor: TypeDescriptor) -> PlainParam | None:
    """The plain conversion for a parameter, or None when typer's own must do it."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or info.parser is not None or info.clamp:
        return None
    annotation = descriptor.annotation
    many = get_origin(annotation) is list
    if many:
        (annotation,) = get_args(annotation)
    convert = _converter(annotation, descriptor)
    if convert is None:
        return None
    return PlainParam(annotation=descriptor.annotation, parameter_info=info, convert=convert, many=many,
                      descriptor=descriptor)  # fmt: skip


def _converter(annotation: Any, descriptor: TypeDescriptor) -> Convert | None:
    info = descriptor.parameter_info
    if annotation is str and not descriptor.is_path:
        return _to_str
    if annotation is bool:
        return _as_bool
    if annotation is int:
        low, high = info.min, info.max

        def to_int(value: Any, param: _TyperParameter, ctx: Context) -> int:
            if not (isinstance(value, str) and _DECIMAL.fullmatch(value)):
                raise _Refused
            number = int(value)
            if (low is not None and number < low) or (high is not None and number > high):
                raise _Refused
            return number

        return to_int
    if annotation is Path:

        def to_path(value: Any, param: _TyperParameter, ctx: Context) -> Any:
            if not (isinstance(value, str) and value):
                raise _Refused
            try:
                return coerce_cli_path(Path(value), info, path_type=Path, param=param, ctx=ctx)
            except Exception:  # a null byte, a failed existence check: typer words the error
                raise _Refused from None

        return to_path
    if isinstance(annotation, type) and issubclass(annotation, Enum):
        choices = tuple(annotation)

        def to_choice(value: Any, param: _TyperParameter, ctx: Context) -> Any:
            try:
                return coerce_cli_choice(value, choices=choices, case_sensitive=info.case_sensitive, ctx=ctx)
            except ValueError:
                raise _Refused from None

        return to_choice
    return None


def _to_str(value: Any, param: _TyperParameter, ctx: Context) -> str:
    if not isinstance(value, str):
        raise _Refused
    return value


def _as_bool(value: Any, param: _TyperParameter, ctx: Context) -> bool:
    if not isinstance(value, bool):
        raise _Refused
    return value


def install(command: Command) -> None:
    """Give every parameter of `command` and its subcommands the plain conversion where it applies.

    The `--help` option is made anew for each context, so each command's maker of it is wrapped.
    Of a group that builds its commands when they are named, only those built so far (the rest
    get it when built).
    """
    for param in command.params:
        _give_plain(param)
    if not getattr(command, "_tdoc_plain_help", False):
        make_help = command.get_help_option

        def get_help_option(ctx: Context) -> Any:
            option = make_help(ctx)
            if option is not None:
                _give_plain(option)
            return option

        command.get_help_option = get_help_option  # type: ignore[method-assign]
        command._tdoc_plain_help = True  # type: ignore[attr-defined]
    commands = getattr(command, "commands", {})
    loaded = getattr(commands, "loaded", None)  # a group that builds its commands when named
    for sub in loaded() if loaded is not None else commands.values():
        install(sub)


def _give_plain(param: Any) -> None:
    if isinstance(param, _TyperParameter) and param._runtime_param is None:
        plain = plain_param(param.type_descriptor)
        if plain is not None:
            param._runtime_param = plain


class PlainCoercionGroup(TyperGroup):
    """A typer group whose commands convert plain values without pydantic."""

    def make_context(self, info_name: str | None, args: list[str], parent: Context | None = None,
                     **extra: Any) -> Context:  # fmt: skip
        install(self)
        return super().make_context(info_name, args, parent, **extra)
