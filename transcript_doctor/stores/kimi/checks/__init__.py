"""Layer 6, checks: the findings a scan reports from a replay (file integrity, steps, compaction,
transcript, divergence) and the repairs the projections make. May import every layer below;
never `heal`."""
