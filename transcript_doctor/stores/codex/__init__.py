"""Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`), rebuilt the way Codex resumes them."""

from . import bridge  # noqa: F401  (registers the codex check until the shared engine runs conversations())
from .store import CodexKind, CodexStore

KINDS = [CodexKind()]

__all__ = ["KINDS", "CodexKind", "CodexStore"]
