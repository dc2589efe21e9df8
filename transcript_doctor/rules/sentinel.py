"""sentinel rules (temporary metadata; documentation to be written)."""

from .registry import define

define('S301', 'leaked-empty-sentinel', 'error', ('hermes',), 'unsafe', 'leaked empty sentinel', "")
define('S302', 'mangled-delivery-marker', 'error', ('eve',), 'none', 'mangled delivery marker', "")
define('S303', 'delivery-marker-in-prose', 'warning', ('eve',), 'none', 'delivery marker in prose', "")
define('S304', 'scaffolding-leak', 'warning', ('all',), 'none', 'scaffolding leak', "")
define('S305', 'persisted-recovery-nudge', 'warning', ('hermes',), 'safe', 'persisted recovery nudge', "")
define('S306', 'retry-filler', 'warning', ('eve',), 'none', 'retry filler', "")
define('S307', 'provider-placeholder', 'warning', ('opencode',), 'unsafe', 'provider placeholder', "")
