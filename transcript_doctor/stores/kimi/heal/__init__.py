"""Layer 7, heal: plan and verify a healed journal, handed to the shared heal pipeline
(`transcript_doctor/heal/`) as its plan. May import every layer below (it reuses the replay's
step edits, not the checks' internals)."""
