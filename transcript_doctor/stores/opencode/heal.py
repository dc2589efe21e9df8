"""Healing OpenCode stores (placeholder while the heal module is written)."""
