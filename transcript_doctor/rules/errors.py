"""errors rules (temporary metadata; documentation to be written)."""

from .registry import define

define('E601', 'recorded-provider-rejection', 'error', ('all',), 'none', 'recorded provider rejection', "")
