"""Layer 5, replay: one streaming pass feeding every record to both engines and both transcript
reducers (general path and hot path), the step index, and the step edits findings and heal share.
May import `read`, `engines`, `transcript` and `projection`."""
