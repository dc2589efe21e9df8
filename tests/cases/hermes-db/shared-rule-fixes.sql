-- A Hermes state.db (schema v30, the columns Hermes' resume reads) with one session per shared
-- rule whose fix Hermes can write: each session holds the problem and, where it matters, the
-- near miss beside it. Row ids are given explicitly so the expectations can name them.
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (30);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, parent_session_id TEXT,
    started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
    tool_call_count INTEGER DEFAULT 0, rewind_count INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id),
    role TEXT NOT NULL, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT,
    timestamp REAL NOT NULL, finish_reason TEXT, reasoning TEXT, reasoning_content TEXT,
    active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0, api_content TEXT
);

-- W102: list content (Hermes' "\x00json:" encoding) with a blank text part beside real text.
INSERT INTO sessions (id, source, started_at) VALUES ('s_blank_part', 'cli', 1787000000.0);
INSERT INTO messages (id, session_id, role, content, timestamp, finish_reason) VALUES
    (1, 's_blank_part', 'user', 'Summarise the log.', 1787000001.0, NULL),
    (2, 's_blank_part', 'assistant',
        char(0) || 'json:[{"type": "text", "text": "The log is clean."}, {"type": "text", "text": "  "}]',
        1787000002.0, 'stop');

-- W105: call id call_1 issued twice; the second call (row 14) is the duplicate.
INSERT INTO sessions (id, source, started_at) VALUES ('s_reused_id', 'cli', 1787000100.0);
INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, finish_reason) VALUES
    (11, 's_reused_id', 'user', 'List and read.', NULL, NULL, NULL, 1787000101.0, NULL),
    (12, 's_reused_id', 'assistant', '', NULL,
        '[{"id": "call_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]', NULL, 1787000102.0, 'tool_calls'),
    (13, 's_reused_id', 'tool', 'a.txt', 'call_1', NULL, 'ls', 1787000103.0, NULL),
    (14, 's_reused_id', 'assistant', '', NULL,
        '[{"id": "call_1", "type": "function", "function": {"name": "read", "arguments": "{}"}}]', NULL, 1787000104.0, 'tool_calls'),
    (15, 's_reused_id', 'tool', 'hello', 'call_1', NULL, 'read', 1787000105.0, NULL),
    (16, 's_reused_id', 'assistant', 'a.txt says hello.', NULL, NULL, NULL, 1787000106.0, 'stop');

-- W108: the resumed history opens with an assistant greeting (row 21).
INSERT INTO sessions (id, source, started_at) VALUES ('s_leading', 'telegram', 1787000200.0);
INSERT INTO messages (id, session_id, role, content, timestamp, finish_reason) VALUES
    (21, 's_leading', 'assistant', 'Hi! What can I do for you?', 1787000201.0, 'stop'),
    (22, 's_leading', 'user', 'Nothing, thanks.', 1787000202.0, NULL),
    (23, 's_leading', 'assistant', 'Goodbye.', 1787000203.0, 'stop');

-- F507: binary tool output with a NUL byte in a tool result (row 33); the answer is clean.
INSERT INTO sessions (id, source, started_at) VALUES ('s_nul', 'cli', 1787000300.0);
INSERT INTO messages (id, session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, finish_reason) VALUES
    (31, 's_nul', 'user', 'Dump the header.', NULL, NULL, NULL, 1787000301.0, NULL),
    (32, 's_nul', 'assistant', '', NULL,
        '[{"id": "call_x", "type": "function", "function": {"name": "xxd", "arguments": "{}"}}]', NULL, 1787000302.0, 'tool_calls'),
    (33, 's_nul', 'tool', 'MZ' || char(0) || char(0) || 'header', 'call_x', NULL, 'xxd', 1787000303.0, NULL),
    (34, 's_nul', 'assistant', 'It is a PE executable.', NULL, NULL, NULL, 1787000304.0, 'stop');
