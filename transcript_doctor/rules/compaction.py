"""compaction rules (temporary metadata; documentation to be written)."""

from .registry import define

define('C201', 'legacy-compaction-misaligned', 'error', ('kimi',), 'safe', 'legacy compaction misaligned', "")
define('C202', 'folded-length-mismatch', 'warning', ('kimi',), 'none', 'folded length mismatch', "")
define('C203', 'phantom-step', 'warning', ('kimi', 'eve'), 'safe', 'phantom step', "")
define('C204', 'engine-divergence', 'info', ('kimi',), 'none', 'engine divergence', "")
define('C205', 'unknown-step-event', 'error', ('kimi',), 'unsafe', 'unknown step event', "")
