"""Claude Code session transcripts: reader, resume replay, checks and heal (docs/claude-code.md)."""

from .store import ClaudeCodeKind

KINDS = (ClaudeCodeKind(),)
from . import bridge  # noqa: F401  (registers the checks until the shared engine runs them)
