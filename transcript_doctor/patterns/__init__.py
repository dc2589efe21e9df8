"""One table of structural-rejection patterns: provider errors that mean "this history is malformed".

Used by E601 (stored errors in every store kind) and by `tdoc explain --error`. The table holds
the kimi-code strict-resend patterns (docs/kimi-replay.md §8) and the wordings of the providers'
own structural rejections (docs/rules.md, "Provider error patterns"). Each entry names the
provider that words its error that way and, by name, the tdoc rule whose finding is the cause;
where no rule detects the cause in a store yet, the rule is E601 itself.

Linear time on hostile text: a pattern is a short list of *parts* that must occur in order. Each
part is a small regex with no nested or adjacent overlapping quantifiers, found with one forward
`search` starting where the previous part ended, so a match costs O(len(text)) per pattern. (A
single regex like `tool_use[\\s\\S]*tool_result` is quadratic on text that repeats `tool_use`.)
"""

from .rejections import PATTERNS, Pattern, RejectionMatch, find_position, match_rejection
from .transient import TRANSIENT_KINDS, transient_kind
from .unwrap import MAX_UNWRAP_CHARS, ProviderError, strip_prefixes, unwrap

__all__ = [
    "MAX_UNWRAP_CHARS", "PATTERNS", "TRANSIENT_KINDS", "Pattern", "ProviderError", "RejectionMatch", "find_position",
    "match_rejection", "strip_prefixes", "transient_kind", "unwrap",
]
