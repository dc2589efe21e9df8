"""terminal rules (temporary metadata; documentation to be written)."""

from .registry import define

define('T401', 'empty-completion', 'error', ('opencode',), 'none', 'empty completion', "")
define('T402', 'empty-completion-with-work', 'error', ('opencode',), 'none', 'empty completion with work', "")
define('T403', 'non-terminal-final', 'warning', ('opencode', 'kimi', 'hermes', 'eve'), 'none', 'non terminal final', "")
define('T404', 'dangling-tool-state', 'warning', ('opencode', 'kimi'), 'none', 'dangling tool state', "")
define('T405', 'think-only-final', 'warning', ('hermes', 'kimi', 'opencode'), 'none', 'think only final', "")
