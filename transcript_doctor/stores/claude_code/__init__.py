"""Claude Code session transcripts: reader, resume replay, checks and heal (docs/claude-code.md)."""

from .store import ClaudeCodeKind

KINDS = (ClaudeCodeKind(),)
