"""The heal pipeline: one sequence of stages for every store kind (docs/heal.md).

A store turns the findings it is given into a `plan.HealPlan` (what to change, how to write it);
`pipeline` does the rest: dry run and diff, `--output`, `--in-place` with a backup, the atomic
write or the SQL transaction, the scan of the result and the restore when a fix did not hold.

Stores import only `transcript_doctor.heal.plan` (plain data types); nothing in a store imports
the pipeline. This module imports nothing so that importing `heal.plan` stays cheap.
"""
