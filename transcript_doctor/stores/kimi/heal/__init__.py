"""Layer 7, heal: plan, verify and write a healed journal. May import every layer below (it
reuses the replay's step edits, not the checks' internals)."""
