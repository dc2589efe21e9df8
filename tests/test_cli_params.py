"""The pydantic-free conversion of command-line values (`cli_params.py`) against typer's own.

For every parameter of every `tdoc` command and values of every kind a user can type (choices in
any case, decimal and non-decimal numbers, out-of-range numbers, paths, empty strings, arbitrary
text), both conversions give the same value of the same type, or fail with the same message.
"""

from __future__ import annotations

from typing import Any

import pytest
import typer.main
from hypothesis import given, settings
from hypothesis import strategies as st
from typer._click.exceptions import BadParameter
from typer._coercion import build_runtime_param
from typer.core import _TyperParameter

from transcript_doctor.cli import app
from transcript_doctor.cli_params import PlainParam, plain_param

COMMAND = typer.main.get_command(app)
CONTEXT = COMMAND.make_context("tdoc", ["--version"], resilient_parsing=True)
PARAMS = [
    (name, p)
    for name, cmd in [("tdoc", COMMAND), *getattr(COMMAND, "commands", {}).items()]
    for p in cmd.params
    if isinstance(p, _TyperParameter)
]
WORDS = ["human", "JSON", "v1", "auto", "warning", "Error", "info", "sarif", "0", "7", "-1", "+3", " 5", "1e3",
         "", "-", "a/b.jsonl", "x" * 40, "True", "a\x00b", "٣"]  # fmt: skip


def _outcome(runtime: Any, value: Any, param: _TyperParameter) -> tuple[str, Any]:
    try:
        result = runtime.coerce(value, param=param, ctx=CONTEXT)
    except BadParameter as exc:
        return "error", exc.format_message()
    except Exception as exc:  # noqa: BLE001 - whatever typer's conversion raises, the plain one must too
        return type(exc).__name__, str(exc)
    return type(result).__name__, result


def _both(param: _TyperParameter, value: Any) -> None:
    plain = plain_param(param.type_descriptor)
    if plain is None:
        return
    assert isinstance(plain, PlainParam)
    many = param.multiple or param.nargs == -1
    raw = tuple(value) if many else value
    expected = _outcome(build_runtime_param(param.type_descriptor), raw, param)
    assert _outcome(plain, raw, param) == expected


def test_every_plain_parameter_is_covered() -> None:
    covered = [name for name, p in PARAMS if plain_param(p.type_descriptor) is not None]
    assert len(covered) == len(PARAMS)  # every tdoc parameter avoids pydantic


@pytest.mark.parametrize(("command", "param"), PARAMS, ids=[f"{c}-{p.name}" for c, p in PARAMS])
@pytest.mark.parametrize("word", WORDS)
def test_labelled_values_convert_as_typer_does(command: str, param: _TyperParameter, word: str) -> None:
    many = param.multiple or param.nargs == -1
    _both(param, [word, word.upper()] if many else word)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(PARAMS), st.lists(st.text(max_size=12) | st.sampled_from(WORDS), min_size=1, max_size=3))
def test_any_text_converts_as_typer_does(entry: tuple[str, _TyperParameter], words: list[str]) -> None:
    _, param = entry
    many = param.multiple or param.nargs == -1
    _both(param, words if many else words[0])
