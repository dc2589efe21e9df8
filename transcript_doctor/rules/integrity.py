"""integrity rules (temporary metadata; documentation to be written)."""

from .registry import define

define('F501', 'torn-final-line', 'warning', ('jsonl',), 'safe', 'torn final line', "")
define('F502', 'corrupt-line', 'error', ('jsonl',), 'none', 'corrupt line', "")
define('F503', 'missing-header', 'error', ('kimi',), 'none', 'missing header', "")
define('F504', 'invalid-record', 'warning', ('all',), 'none', 'invalid record', "")
define('F505', 'unsupported-version', 'warning', ('kimi', 'hermes'), 'none', 'unsupported version', "")
define('F506', 'store-integrity', 'error', ('sqlite',), 'none', 'store integrity', "")
define('F507', 'bad-text-encoding', 'error', ('all',), 'unsafe', 'bad text encoding', "")
define('F508', 'malformed-tool-arguments', 'warning', ('all',), 'none', 'malformed tool arguments', "")
