"""Temporary: run the shared rules and this store's own over Claude Code stores until the rule
engine that drives `Store.conversations()` / `native_findings()` is on main."""

from __future__ import annotations

from collections.abc import Iterator

from ...model import Finding
from ...rules.registry import RULES, checker
from ..base import Options
from .resume import FORMAT
from .store import ClaudeCodeStore


@checker(FORMAT)
def check_claude_code(store: ClaudeCodeStore, options: Options) -> Iterator[Finding]:
    yield from store.findings(frozenset(RULES))
