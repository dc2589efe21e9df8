"""`tdoc replay`: open one store and print what its runtime would rebuild."""

from __future__ import annotations

from pathlib import Path
from typing import Any, TextIO

from rich.console import Console
from rich.text import Text

from .model import TdocError
from .stores import Options, open_store
from .text import excerpt, terminal_safe


def replay_path(path: str, options: Options, input_format: str | None = None) -> Any:
    """The replay of one store, in the shape of `tdoc schema replay`: one object for a store of one
    session (a journal, a stream, an export of one session) or when `options.session` picks one;
    an array, one object per session, for a store that holds several (databases, Hermes exports,
    kimi export bundles), whatever their number."""
    options.full_replay = True
    store = open_store(_input(path), path, options, input_format)
    try:
        return store.replay(options)
    finally:
        store.close()


def replay_html(path: str, options: Options, input_format: str | None, out: TextIO) -> None:
    """`tdoc replay --format html`: the page of one store (the same page `scan --format html` draws)."""
    from .core import ScanConfig, scan
    from .reporters.html import render

    _input(path)  # the same errors as the JSON replay: no such file, a directory
    config = ScanConfig(input_format=input_format, options=Options(session=options.session), jobs=1)
    report = scan([path], config)
    if report.files and report.files[0].error:
        raise TdocError(report.files[0].error)
    render(report, out, None, config)


def _input(path: str) -> Path:
    if path == "-":
        from .stores import expand_paths

        return next(iter(expand_paths(["-"])))[0]
    p = Path(path)
    if not p.exists():
        raise TdocError(f"{path}: no such file")
    if p.is_dir():
        raise TdocError(f"{path}: replay takes one store file, not a directory")
    return p


def _message_text(m: dict[str, Any]) -> str:
    content = m.get("content")
    if isinstance(content, str):
        return content
    pieces = []
    for part in content or []:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind == "text":
            pieces.append(part.get("text") or "")
        elif kind in ("think", "reasoning"):
            signed = " signed" if "encrypted" in part else ""
            pieces.append(f"<think{signed}: {part.get('think') or part.get('text') or ''}>")
        else:
            pieces.append(f"<{kind}>")
    return " ".join(pieces)


def _print_messages(console: Console, title: str, messages: list[Any]) -> None:
    console.print(Text(f"{title} ({len(messages)} messages)", style="bold"))
    for i, m in enumerate(messages):
        if not isinstance(m, dict):
            continue
        role = str(m.get("role", "?"))
        line = Text(f"  {i:>4} {role:<9} ", style="cyan")
        calls = m.get("toolCalls") or m.get("tool_calls") or []
        tail = excerpt(_message_text(m).replace("\n", " "), 160)
        if calls:
            tail += f" [calls {len(calls)}]"
        if m.get("partial"):
            tail += " [partial]"
        line.append(terminal_safe(tail))
        console.print(line)


def _print_turns(console: Console, turns: list[Any]) -> None:
    """eve: each turn, who started it, and what each reply delivered."""
    for turn in turns:
        if not isinstance(turn, dict):
            continue
        who = "human" if turn.get("human") else "unattended"
        console.print(Text(terminal_safe(f"turn {turn.get('id')} ({who}, {turn.get('outcome')}) lines "
                                         f"{turn.get('line')}-{turn.get('end_line')}"), style="bold"))
        for reply in turn.get("replies") or []:
            if isinstance(reply, dict):
                text = excerpt(str(reply.get("text") or "").replace("\n", " "), 120)
                meta = ", ".join(f"{k} {reply[k]}" for k in ("phase", "finish_reason") if reply.get(k))
                console.print(Text(terminal_safe(f"  reply [{meta}] {text}")))


def _print_runs(console: Console, runs: list[Any]) -> None:
    """OpenCode: the verdict on each run's final answer."""
    for run in runs:
        if isinstance(run, dict):
            extra = f" ({run['rule']}, retry_safe={run.get('retry_safe')})" if run.get("rule") else ""
            console.print(Text(terminal_safe(f"run {run.get('index')}: {run.get('verdict')}{extra}")))


def _item_text(item: dict[str, Any]) -> str:
    """Codex: a one-line view of a Responses input item."""
    kind = str(item.get("type", "?"))
    if kind == "message":
        return f"{item.get('role')}: " + _message_text({"content": [
            {"type": "text", "text": b.get("text")} if isinstance(b, dict) and "text" in b else {"type": "media"}
            for b in item.get("content") or [] if isinstance(b, dict)]})
    if kind.endswith("_call") and kind != "web_search_call":
        return f"{kind} {item.get('name') or ''} {item.get('call_id') or ''}".rstrip()
    if kind.endswith("_output"):
        output = item.get("output")
        return f"{kind} {item.get('call_id')}: " + (output if isinstance(output, str) else "<content>")
    if kind == "web_search_call":
        return f"web_search_call {item.get('action')}"
    return kind


def _print_request(console: Console, request: list[Any]) -> None:
    """Codex: each item the request carries, with its input index, line and where it came from."""
    console.print(Text(f"request ({len(request)} items)", style="bold"))
    for entry in request:
        if isinstance(entry, dict):
            raw = entry.get("item")
            item: dict[str, Any] = raw if isinstance(raw, dict) else {}
            row = Text(f"  input[{entry.get('position')}] line {entry.get('line')} {entry.get('source')}: ", style="cyan")
            row.append(terminal_safe(excerpt(_item_text(item).replace("\n", " "), 160)))
            console.print(row)


def render_human(value: Any, console: Console) -> None:
    """A readable view of one replay object (or a list of them, one per session)."""
    for obj in value if isinstance(value, list) else [value]:
        header = f"{obj.get('format', '?')}"
        for key in ("engine", "session"):
            if obj.get(key):
                header += f"  {key} {obj[key]}"
        console.print(Text(terminal_safe(header), style="bold magenta"))
        if obj.get("crash"):
            console.print(Text(terminal_safe(f"engine failed: {obj['crash']}"), style="red"))
            continue
        if obj.get("request") is not None:
            _print_request(console, obj["request"])
            for key in ("repairs", "unsent"):
                if obj.get(key):
                    console.print(Text(terminal_safe(f"{key}: {len(obj[key])} item(s)"), style="yellow"))
        else:
            _print_messages(console, "history", obj.get("history") or [])
        _print_turns(console, obj.get("turns") or [])
        _print_runs(console, obj.get("runs") or [])
        if obj.get("projection") is not None:
            _print_messages(console, "projection", obj["projection"])
        for key in ("anomalies", "strictAnomalies", "errors"):
            if obj.get(key):
                console.print(Text(terminal_safe(f"{key}: {obj[key]}"), style="yellow"))
