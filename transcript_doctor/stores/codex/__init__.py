"""Codex CLI rollouts (`~/.codex/sessions/**/rollout-*.jsonl`), rebuilt the way Codex resumes them.

Discovery imports only the sniffer; `store.py` loads when a file matches.
"""

from ..lazy import LazyKind
from .sniff import sniff

KINDS = [LazyKind("codex-rollout", "codex", sniff, f"{__name__}.store:CodexKind", jsonl=True)]

__all__ = ["KINDS"]
