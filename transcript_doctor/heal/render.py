"""What `tdoc heal` prints: JSON, or a human summary (with --diff: the patch alone on stdout).

With `--diff` the patch (or SQL plan) is the only thing on stdout, so `tdoc heal --diff >
fix.patch` gives a file `git apply` accepts; the summaries go to stderr. Patches are written as
they are when stdout is not a terminal (a patch must keep its bytes) and escaped on a terminal.
"""

from __future__ import annotations

from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from ..encode import dumps
from ..stores import HealResult
from ..text import terminal_safe


def render_heal(results: list[HealResult], fmt: str, out: TextIO, err: Console, *, diff: bool = False) -> None:
    if fmt == "json":
        doc = {"schema_version": 1, "results": [_result_dict(r) for r in results]}
        out.write(dumps(doc, indent=True) + "\n")  # safe for any value a reader let through
        for r in results:
            if r.extra.get("error"):
                err.print(Text(f"tdoc: {r.path}: {r.extra['error']}"))
        return
    if diff:
        for r in results:
            if r.diff:
                text = r.diff if r.diff.endswith("\n") else r.diff + "\n"
                out.write(terminal_safe(text) if out.isatty() else text)
        out.flush()
        summary = err
    else:
        summary = Console(file=out, highlight=False, markup=False, emoji=False, soft_wrap=True)
    for r in results:
        _human(summary, r, err, show_diff=not diff)


def _result_dict(r: HealResult) -> dict[str, Any]:
    doc = r.as_dict()
    doc["error"] = r.extra.get("error")
    doc["diff"] = r.diff
    doc["needs_unsafe"] = r.needs_unsafe
    return doc


def _say(console: Console, text: str, style: str | None = None) -> None:
    console.print(Text(terminal_safe(text), style=style or ""))


def _human(console: Console, r: HealResult, err: Console, *, show_diff: bool) -> None:
    if r.extra.get("error"):
        _say(err, f"tdoc: error: {r.extra['error']}")
        return
    if not r.changed:
        copied = f" (copied unchanged -> {r.output})" if r.written and r.output else ""
        if r.needs_unsafe:
            _say(console, f"{r.path}: {r.needs_unsafe} fix(es) need --unsafe-fixes; nothing else to heal{copied}",
                 "yellow")
        elif r.skipped:  # fixes there were, each kept for the reason below: not "nothing to heal"
            _say(console, f"{r.path}: nothing healed, {len(r.skipped)} fix(es) kept{copied}", "yellow")
        else:
            _say(console, f"{r.path}: nothing to heal{copied}", "green")
        _unfixable(console, r)
        _details(console, r)
        return
    if show_diff and r.diff and not r.written:
        console.print(Text(terminal_safe(r.diff)))
    verb = "healed" if r.written else "would heal"
    codes = sorted({f.code for f in r.applied})
    line = f"{r.path}: {verb} {len(r.applied)} finding(s) ({', '.join(codes)}) with {len(r.edits)} edit(s)"
    if r.output and r.output != r.path:
        line += f" -> {r.output}"
    _say(console, line, "bold")
    if r.backup:
        _say(console, f"  backup: {r.backup}")
    if r.needs_unsafe:
        _say(console, f"  {r.needs_unsafe} more fix(es) need --unsafe-fixes", "yellow")
    _unfixable(console, r)
    _details(console, r)
    if not r.written:
        console.print(Text("  dry run: nothing written (use --in-place or --output PATH)", style="dim"))


def _unfixable(console: Console, r: HealResult) -> None:
    """The findings left that no fix covers (a heal cannot make them go; `tdoc scan` shows them)."""
    left = [f for f in r.remaining if f.fix is None or not f.fix.edits]
    if left:
        codes = ", ".join(sorted({f.code for f in left}))
        _say(console, f"  {len(left)} finding(s) have no fix ({codes}); `tdoc scan` shows them", "dim")


def _details(console: Console, r: HealResult) -> None:
    for s in r.skipped:
        if s.get("step") is not None:
            where = f"{s['step']}" + (f" (line {s['line']})" if s.get("line") else "")
        else:
            where = f"row {s['row']}" if s.get("row") is not None else f"line {s.get('line')}"
        _say(console, f"  kept {where}: {s['reason']}", "yellow")
    for w in r.warnings:
        _say(console, f"  warning: {w}", "yellow")
