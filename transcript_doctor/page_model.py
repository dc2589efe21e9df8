"""What the HTML page shows for each store: the request each session sends, where each message was
read, which findings land on it, and what a heal would change.

The request is the one provider errors count in: `Store.locate` maps each request position back
to its record, so positions and source lines are the ones `tdoc explain --error` uses. For
kimi-code journals that is the request a pre-fix v1 build sends (the one that draws the 400);
for the other stores, the history their runtime resumes from (`tdoc replay`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .core import Report, ScanConfig
from .model import Finding, TdocError
from .stores import HealOptions, Options, Store, open_store

MAX_MESSAGES = 2000  # per session; a page beyond this is not readable anyway (the rest is counted)
COMPACTION_HINTS = ("compaction", "summary")


@dataclass
class PageMessage:
    position: int
    role: str
    parts: list[tuple[str, str]]  # (kind, text): text, think, tool-call, tool-result, other
    source: str | None  # "lines 3-5" / "messages row 12"
    lines: tuple[int, int] | None
    findings: list[Finding] = field(default_factory=list)
    boundary: str | None = None  # why this message starts a new stretch (a compaction summary)


@dataclass
class SessionPage:
    session: str | None
    note: str
    messages: list[PageMessage]
    unplaced: list[Finding]  # findings on records the request does not carry (or with no position)
    hidden: int = 0  # messages past MAX_MESSAGES


@dataclass
class StorePage:
    path: str
    format: str | None
    error: str | None
    sessions: list[SessionPage] = field(default_factory=list)
    findings: list[Finding] = field(default_factory=list)
    heal_diff: str | None = None
    heal_note: str | None = None


def build_pages(report: Report, config: ScanConfig) -> list[StorePage]:
    pages = []
    for fr in report.files:
        page = StorePage(fr.path, fr.format, fr.error, findings=list(fr.findings))
        if not fr.error:
            _fill(page, config)
        pages.append(page)
    return pages


def _fill(page: StorePage, config: ScanConfig) -> None:
    options = Options(session=config.options.session, full_replay=True, settings=config.options.settings)
    path = _real_path(page.path)
    try:
        store = open_store(path, page.path, options, config.input_format)
    except TdocError as exc:
        page.error = str(exc)
        return
    try:
        for session, note, messages in _requests(store, options):
            page.sessions.append(_session_page(store, session, note, messages, page.findings))
    except TdocError as exc:
        page.error = str(exc)
    finally:
        store.close()
    page.heal_diff, page.heal_note = _heal_preview(path, page.path, config)


def _real_path(display: str) -> Path:
    if display == "-":
        from .stores import expand_paths

        return next(iter(expand_paths(["-"])))[0]
    return Path(display)


def _requests(store: Store, options: Options) -> list[tuple[str | None, str, list[dict[str, Any]]]]:
    """(session, what the list is, request messages) for each session of the store."""
    kimi_sessions = getattr(store, "sessions", None)
    if store.format == "kimi-wire" and isinstance(kimi_sessions, list):
        from .stores.kimi.replay.driver import projected

        out = []
        for s in kimi_sessions:
            if options.session not in (None, s.id):
                continue
            projection = projected(s.replay, "v1", prefix=True)
            messages = []
            if projection is not None:
                history = s.replay.v1.history
                for message, sources in zip(projection.messages, projection.sources):
                    origin = history[sources[0]].get("origin") if sources else None  # compaction summary?
                    messages.append({**message, "origin": origin})
            out.append((s.id, "the request a pre-fix kimi-code build (v1 engine) sends; positions are the "
                        "ones a provider error names", messages))  # fmt: skip
        return out
    value = store.replay(options)
    objects = value if isinstance(value, list) else [value]
    return [(obj.get("session"), f"the history {store.format} resumes from (tdoc replay)", obj.get("history") or [])
            for obj in objects if isinstance(obj, dict)]  # fmt: skip


def _session_page(store: Store, session: str | None, note: str, messages: list[dict[str, Any]],
                  findings: list[Finding]) -> SessionPage:  # fmt: skip
    mine = [f for f in findings if f.session in (None, session)]
    placed: set[int] = set()
    out = []
    for position, message in enumerate(messages[:MAX_MESSAGES]):
        where = store.locate(position, session)
        page_msg = _page_message(position, message, where)
        for i, f in enumerate(mine):
            if _lands_on(f, page_msg):
                page_msg.findings.append(f)
                placed.add(i)
        out.append(page_msg)
    unplaced = [f for i, f in enumerate(mine) if i not in placed]
    return SessionPage(session, note, out, unplaced, hidden=max(0, len(messages) - MAX_MESSAGES))


def _page_message(position: int, m: dict[str, Any], where: dict[str, Any] | None) -> PageMessage:
    lines = None
    source = None
    if where:
        if where.get("line") is not None:
            end = where.get("end_line") or where["line"]
            lines = (int(where["line"]), int(end))
            source = f"line {lines[0]}" if lines[0] == lines[1] else f"lines {lines[0]}-{lines[1]}"
        elif where.get("row") is not None:
            source = f"{where.get('table') or 'row'} row {where['row']}"
    origin = m.get("origin")
    kind = str(origin.get("kind") or "") if isinstance(origin, dict) else ""
    boundary = "compaction summary: the history before it was folded" if any(
        h in kind for h in COMPACTION_HINTS) else None  # fmt: skip
    return PageMessage(position, str(m.get("role", "?")), message_parts(m), source, lines, boundary=boundary)


def _lands_on(f: Finding, m: PageMessage) -> bool:
    if f.position is not None:
        return f.position == m.position
    if f.line is None or m.lines is None:
        return False
    end = f.end_line or f.line
    return f.line <= m.lines[1] and m.lines[0] <= end


def message_parts(m: dict[str, Any]) -> list[tuple[str, str]]:
    """A message of any store's shape as (kind, text) pieces, in order."""
    parts: list[tuple[str, str]] = []
    content = m.get("content")
    if isinstance(content, str):
        parts.append(("text", content))
    elif isinstance(content, list):
        for part in content:
            parts.append(_part(part))
    for call in m.get("toolCalls") or m.get("tool_calls") or []:
        if isinstance(call, dict):
            fn: dict[str, Any] = call["function"] if isinstance(call.get("function"), dict) else {}
            name = call.get("name") or fn.get("name") or "?"
            args = call.get("arguments") or fn.get("arguments") or ""
            parts.append(("tool-call", f"{name} [{call.get('id', '?')}] {args if isinstance(args, str) else args!r}"))
    result_of = m.get("toolCallId") or m.get("tool_call_id")
    if result_of:
        parts.insert(0, ("tool-result", f"result of {result_of}"))
    return parts


def _part(part: Any) -> tuple[str, str]:
    if not isinstance(part, dict):
        return ("other", repr(part))
    kind = str(part.get("type") or "?")
    if kind == "text":
        value = str(part.get("text") or "")
        return ("text", value if value.strip() else f"(blank text part: {value!r})")
    if kind in ("think", "reasoning", "thinking"):
        signed = " (signed)" if part.get("encrypted") or part.get("signature") else ""
        return ("think", f"{part.get('think') or part.get('text') or part.get('thinking') or ''}{signed}")
    if kind in ("tool_use", "tool-call", "function_call"):
        name = part.get("name") or "?"
        args = part.get("input", part.get("arguments", ""))
        return ("tool-call", f"{name} [{part.get('id') or part.get('call_id') or '?'}] {_compact(args)}")
    if kind in ("tool_result", "tool-result", "function_call_output"):
        of = part.get("tool_use_id") or part.get("call_id") or "?"
        error = " (error)" if part.get("is_error") else ""
        return ("tool-result", f"result of {of}{error}: {_compact(part.get('content', part.get('output', '')))}")
    return ("other", f"<{kind}>")


def _compact(value: Any) -> str:
    """Tool input or output as one string: text parts joined, anything else as compact JSON."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and all(isinstance(v, dict) for v in value):
        texts = [str(v.get("text")) for v in value if v.get("type") == "text"]
        if texts:
            return "\n".join(texts)
    import orjson

    try:
        return orjson.dumps(value, option=orjson.OPT_NON_STR_KEYS).decode()
    except TypeError:
        return repr(value)


def _heal_preview(path: Path, display: str, config: ScanConfig) -> tuple[str | None, str | None]:
    """The dry-run diff (JSONL) or SQL plan (databases) of a heal with safe fixes."""
    from .healing import heal_one

    scan_config = ScanConfig(select=config.select, ignore=config.ignore, input_format=config.input_format,
                             per_path_ignores=config.per_path_ignores, root=config.root)  # fmt: skip
    try:
        result = heal_one(path, display, scan_config, HealOptions(mode="dry-run", diff=True))
    except TdocError as exc:
        return None, f"no heal preview: {exc}"
    if not result.changed:
        return None, "tdoc heal would change nothing (safe fixes only)"
    return result.diff or "", None
