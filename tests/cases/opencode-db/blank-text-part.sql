-- An opencode.db (the tables OpenCode's reader needs) with one session: a finished assistant
-- step whose text parts are a real answer and a blank part beside it. OpenCode keeps each part
-- as a row, so the finding points at the blank part's row and its fix deletes that row.
CREATE TABLE `session` (
    `id` text PRIMARY KEY, `project_id` text NOT NULL, `parent_id` text, `slug` text NOT NULL,
    `directory` text NOT NULL, `title` text NOT NULL, `version` text NOT NULL,
    `time_created` integer NOT NULL, `time_updated` integer NOT NULL
);
CREATE TABLE `message` (
    `id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL,
    `time_updated` integer NOT NULL, `data` text NOT NULL
);
CREATE TABLE `part` (
    `id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL,
    `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL
);
INSERT INTO session VALUES ('ses_blank', 'proj1', NULL, 'quiet-heron', '/home/dev/app', 'Explain the log', '1.3.17',
    1785748200000, 1785748209000);
INSERT INTO message VALUES
    ('msg_001', 'ses_blank', 1785748201000, 1785748201000,
     '{"role":"user","time":{"created":1785748201000},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-5"}}'),
    ('msg_002', 'ses_blank', 1785748202000, 1785748205000,
     '{"role":"assistant","time":{"created":1785748202000,"completed":1785748205000},"parentID":"msg_001","modelID":"claude-sonnet-5","providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/home/dev/app","root":"/home/dev/app"},"cost":0.002,"tokens":{"input":120,"output":30,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}');
INSERT INTO part VALUES
    ('prt_001', 'msg_001', 'ses_blank', 1785748201000, 1785748201000, '{"type":"text","text":"What does the log say?"}'),
    ('prt_002', 'msg_002', 'ses_blank', 1785748202000, 1785748202000, '{"type":"step-start"}'),
    ('prt_003', 'msg_002', 'ses_blank', 1785748203000, 1785748203000, '{"type":"text","text":"The log shows one failed login."}'),
    ('prt_004', 'msg_002', 'ses_blank', 1785748204000, 1785748204000, '{"type":"text","text":"   "}'),
    ('prt_005', 'msg_002', 'ses_blank', 1785748205000, 1785748205000,
     '{"type":"step-finish","reason":"stop","cost":0.002,"tokens":{"input":120,"output":30,"reasoning":0,"cache":{"read":0,"write":0}}}');
