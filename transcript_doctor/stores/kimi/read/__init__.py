"""Layer 1, read: the journal as records (streaming reader, record validity, JavaScript-exact
JSON serialisation). Imports nothing else from the kimi package."""
