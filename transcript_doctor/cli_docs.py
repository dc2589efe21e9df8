"""`tdoc rules`, `tdoc explain` and `tdoc schema`: the rule catalogue, provider errors, the output schemas."""

# No `from __future__ import annotations` here: typer reads the parameters' annotations every time
# it builds a command, and string annotations would be compiled and evaluated anew each time.

from typing import Annotated

import typer

from .cli_help import command_registry
from .cli_options import DocFormat
from .cli_output import deliver, json_text
from .errors import TdocError

commands = command_registry()


@commands.command("rules")
def rules_cmd(
    format: Annotated[DocFormat, typer.Option("--format", "-f", help="Output format.")] = DocFormat.human,
) -> None:
    """List the rule catalogue (one line per rule; never wrapped or cut, so `| grep` sees whole names)."""
    from .explain import rules_lines
    from .rules import RULES

    if format is DocFormat.json:
        deliver(lambda out: out.write(json_text([r.as_dict() for r in sorted(RULES.values(), key=lambda r: r.code)])))
    else:
        deliver(lambda out: out.write(rules_lines()))


@commands.command("explain")
def explain_cmd(
    rule: Annotated[str | None, typer.Argument(help="A rule code or name.")] = None,
    path: Annotated[str | None, typer.Argument(help="With --error: the store to map the error to (- for stdin).")] = None,
    error: Annotated[str | None, typer.Option("--error", help="A pasted provider error message.")] = None,
    session: Annotated[str | None, typer.Option("--session", help="With --error PATH: the session id.")] = None,
    format: Annotated[DocFormat, typer.Option("--format", "-f", help="Output format.")] = DocFormat.human,
) -> None:
    """Print a rule's documentation, or say which rule a provider error points at.

    With --error: exit 0 when the error is a structural rejection tdoc knows, 1 when not.
    """
    from .explain import explain_error, explain_rule

    if error is not None:
        if rule and path:
            raise TdocError("with --error, give at most one PATH")
        store_path = path or rule  # `tdoc explain --error TEXT PATH`
        codes: list[int] = []
        deliver(lambda out: codes.append(explain_error(error, store_path, format.value, out, session)))
        raise typer.Exit(codes[0] if codes else 0)
    if not rule:
        raise TdocError("name a rule (code or name), or pass --error TEXT")
    if path is not None:  # (it was silently ignored: `tdoc explain C201 W101` explained C201 alone)
        raise TdocError(f"explain one rule at a time ({path!r} too?); a second argument is the store for --error")
    deliver(lambda out: explain_rule(rule, format.value, out))


@commands.command("schema")
def schema_cmd(
    name: Annotated[str, typer.Argument(help="report, finding, replay, heal or sessions.")] = "report",
) -> None:
    """Print the JSON Schema of a machine output."""
    from .schema import OUTPUT_SCHEMAS, bundled

    if name not in OUTPUT_SCHEMAS:
        raise TdocError(f"unknown schema {name!r}; choose one of {', '.join(OUTPUT_SCHEMAS)}")
    deliver(lambda out: out.write(json_text(bundled(name))))
