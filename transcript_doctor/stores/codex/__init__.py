"""Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`), rebuilt the way Codex resumes them."""

from .store import CodexKind, CodexStore

KINDS = [CodexKind()]

__all__ = ["KINDS", "CodexKind", "CodexStore"]
