"""Claude Code session transcripts: reader, resume replay, checks and heal (docs/claude-code-sessions.md).

Discovery imports only the sniffer; `store.py` loads when a file matches.
"""

from ..lazy import LazyKind
from .sniff import sniff_transcript

KINDS = (LazyKind("claude-code", "claude-code", sniff_transcript, f"{__name__}.store:ClaudeCodeKind", jsonl=True),)
