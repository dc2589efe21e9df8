"""wedge rules (temporary metadata; documentation to be written)."""

from .registry import define

define('W101', 'vacuous-assistant', 'error', ('kimi', 'hermes', 'opencode'), 'safe', 'vacuous assistant', "")
define('W102', 'blank-text-part', 'warning', ('all',), 'safe', 'blank text part', "")
define('W103', 'orphan-tool-call', 'error', ('all',), 'unsafe', 'orphan tool call', "")
define('W104', 'orphan-tool-result', 'error', ('all',), 'safe', 'orphan tool result', "")
define('W105', 'duplicate-tool-call-id', 'error', ('all',), 'unsafe', 'duplicate tool call id', "")
define('W106', 'duplicate-tool-result', 'error', ('all',), 'safe', 'duplicate tool result', "")
define('W107', 'displaced-tool-result', 'warning', ('all',), 'unsafe', 'displaced tool result', "")
define('W108', 'leading-non-user', 'warning', ('all',), 'unsafe', 'leading non user', "")
define('W109', 'consecutive-assistants', 'info', ('all',), 'unsafe', 'consecutive assistants', "")
