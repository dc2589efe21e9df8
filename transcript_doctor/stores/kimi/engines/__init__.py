"""Layer 2, engines: the live-history folds of engine v1 and engine v2 and what they share
(ContextMessage builders, vacuous parts, compaction, the v2 loop-event fold). May import `read`."""
