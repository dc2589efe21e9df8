"""Rule catalogue: the registry, the shared rules (one module each) and the store-specific families."""

from . import (  # noqa: F401  (registration)
    codex_rules,
    compaction,
    errors,
    integrity,
    sentinel,
    shared,
    terminal,
)
from .registry import RULES, Rule, define, finding, lookup, selected_codes

__all__ = ["RULES", "Rule", "define", "finding", "lookup", "selected_codes"]
