-- A labelled OpenCode case (anomalyco/opencode#31259): an assistant message whose only text part
-- is whitespace. OpenCode's Anthropic transform drops text parts that are exactly "" but keeps " ",
-- so every later request carries {"role":"assistant","content":[{"type":"text","text":" "}]} and draws
-- `messages: text content blocks must contain non-whitespace text`. Expected: W101 on msg_ws_0002
-- (and on msg_ws_0006, whose only text is a no-break space: JS trim() whitespace); near-misses in
-- session ses_ws_near: W102, not W101, where the whitespace text sits beside a signed reasoning
-- part (msg_ws_0102) or a tool call (msg_ws_0104).
-- The schema below is OpenCode's (copied from fixtures/opencode/opencode.db), then one project.

CREATE TABLE "__drizzle_migrations" (id SERIAL PRIMARY KEY, hash text NOT NULL, created_at numeric);
CREATE TABLE `project` (
	`id` text PRIMARY KEY,
	`worktree` text NOT NULL,
	`vcs` text,
	`name` text,
	`icon_url` text,
	`icon_color` text,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`time_initialized` integer,
	`sandboxes` text NOT NULL
);
CREATE TABLE `message` (
	`id` text PRIMARY KEY,
	`session_id` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE TABLE `part` (
	`id` text PRIMARY KEY,
	`message_id` text NOT NULL,
	`session_id` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_part_message_id_message_id_fk` FOREIGN KEY (`message_id`) REFERENCES `message`(`id`) ON DELETE CASCADE
);
CREATE TABLE `permission` (
	`project_id` text PRIMARY KEY,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_permission_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
);
CREATE TABLE `session` (
	`id` text PRIMARY KEY,
	`project_id` text NOT NULL,
	`parent_id` text,
	`slug` text NOT NULL,
	`directory` text NOT NULL,
	`title` text NOT NULL,
	`version` text NOT NULL,
	`share_url` text,
	`summary_additions` integer,
	`summary_deletions` integer,
	`summary_files` integer,
	`summary_diffs` text,
	`revert` text,
	`permission` text,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`time_compacting` integer,
	`time_archived` integer, `workspace_id` text, `agent` text, `model` text, `path` text, `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL, `goal` text,
	CONSTRAINT `fk_session_project_id_project_id_fk` FOREIGN KEY (`project_id`) REFERENCES `project`(`id`) ON DELETE CASCADE
);
CREATE TABLE `todo` (
	`session_id` text NOT NULL,
	`content` text NOT NULL,
	`status` text NOT NULL,
	`priority` text NOT NULL,
	`position` integer NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	CONSTRAINT `todo_pk` PRIMARY KEY(`session_id`, `position`),
	CONSTRAINT `fk_todo_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE TABLE `session_share` (
	`session_id` text PRIMARY KEY,
	`id` text NOT NULL,
	`secret` text NOT NULL,
	`url` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	CONSTRAINT `fk_session_share_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE INDEX `session_project_idx` ON `session` (`project_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
CREATE INDEX `todo_session_idx` ON `todo` (`session_id`);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `session_workspace_idx` ON `session` (`workspace_id`);
CREATE TABLE `session_message` (
	`id` text PRIMARY KEY,
	`session_id` text NOT NULL,
	`type` text NOT NULL,
	`time_created` integer NOT NULL,
	`time_updated` integer NOT NULL,
	`data` text NOT NULL,
	CONSTRAINT `fk_session_message_session_id_session_id_fk` FOREIGN KEY (`session_id`) REFERENCES `session`(`id`) ON DELETE CASCADE
);
CREATE INDEX `session_message_session_idx` ON `session_message` (`session_id`);
CREATE INDEX `session_message_session_type_idx` ON `session_message` (`session_id`,`type`);
CREATE INDEX `session_message_time_created_idx` ON `session_message` (`time_created`);

INSERT INTO project (id, worktree, time_created, time_updated, sandboxes) VALUES ('p1', '/p', 0, 0, '[]');

INSERT INTO session (id, project_id, slug, directory, title, version, time_created, time_updated)
VALUES ('ses_ws', 'p1', 'calm-otter', '/p', 'Fix flaky test', '1.17.13', 1786000000000, 1786000000000),
       ('ses_ws_near', 'p1', 'brisk-heron', '/p', 'Near misses', '1.17.13', 1786000000000, 1786000000000);

INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES
('msg_ws_0001', 'ses_ws', 1786000000001, 1786000000001,
 '{"role":"user","time":{"created":1786000000001},"agent":"build","model":{"providerID":"github-copilot","modelID":"claude-opus-4.7"}}'),
('msg_ws_0002', 'ses_ws', 1786000000002, 1786000000002,
 '{"role":"assistant","time":{"created":1786000000002,"completed":1786000000900},"parentID":"msg_ws_0001","modelID":"claude-opus-4.7","providerID":"github-copilot","mode":"build","agent":"build","path":{"cwd":"/p","root":"/p"},"cost":0,"tokens":{"total":2101,"input":2100,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}'),
('msg_ws_0003', 'ses_ws', 1786000000003, 1786000000003,
 '{"role":"user","time":{"created":1786000000003},"agent":"build","model":{"providerID":"github-copilot","modelID":"claude-opus-4.7"}}'),
('msg_ws_0004', 'ses_ws', 1786000000004, 1786000000004,
 '{"role":"assistant","time":{"created":1786000000004,"completed":1786000000990},"parentID":"msg_ws_0003","modelID":"claude-opus-4.7","providerID":"github-copilot","mode":"build","agent":"build","path":{"cwd":"/p","root":"/p"},"cost":0,"tokens":{"total":2300,"input":2280,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}'),
('msg_ws_0005', 'ses_ws', 1786000000005, 1786000000005,
 '{"role":"user","time":{"created":1786000000005},"agent":"build","model":{"providerID":"github-copilot","modelID":"claude-opus-4.7"}}'),
('msg_ws_0006', 'ses_ws', 1786000000006, 1786000000006,
 '{"role":"assistant","time":{"created":1786000000006,"completed":1786000000995},"parentID":"msg_ws_0005","modelID":"claude-opus-4.7","providerID":"github-copilot","mode":"build","agent":"build","path":{"cwd":"/p","root":"/p"},"cost":0,"tokens":{"total":2400,"input":2399,"output":1,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}'),
('msg_ws_0007', 'ses_ws', 1786000000007, 1786000000007,
 '{"role":"user","time":{"created":1786000000007},"agent":"build","model":{"providerID":"github-copilot","modelID":"claude-opus-4.7"}}'),
('msg_ws_0101', 'ses_ws_near', 1786000000101, 1786000000101,
 '{"role":"user","time":{"created":1786000000101},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-5"}}'),
('msg_ws_0102', 'ses_ws_near', 1786000000102, 1786000000102,
 '{"role":"assistant","time":{"created":1786000000102,"completed":1786000000200},"parentID":"msg_ws_0101","modelID":"claude-sonnet-5","providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/p","root":"/p"},"cost":0.01,"tokens":{"total":110,"input":100,"output":10,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}'),
('msg_ws_0103', 'ses_ws_near', 1786000000103, 1786000000103,
 '{"role":"user","time":{"created":1786000000103},"agent":"build","model":{"providerID":"anthropic","modelID":"claude-sonnet-5"}}'),
('msg_ws_0104', 'ses_ws_near', 1786000000104, 1786000000104,
 '{"role":"assistant","time":{"created":1786000000104,"completed":1786000000300},"parentID":"msg_ws_0103","modelID":"claude-sonnet-5","providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/p","root":"/p"},"cost":0.01,"tokens":{"total":110,"input":100,"output":10,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"tool-calls"}'),
('msg_ws_0105', 'ses_ws_near', 1786000000105, 1786000000105,
 '{"role":"assistant","time":{"created":1786000000105,"completed":1786000000400},"parentID":"msg_ws_0103","modelID":"claude-sonnet-5","providerID":"anthropic","mode":"build","agent":"build","path":{"cwd":"/p","root":"/p"},"cost":0.01,"tokens":{"total":120,"input":100,"output":20,"reasoning":0,"cache":{"read":0,"write":0}},"finish":"stop"}');

INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES
('prt_ws_0001', 'msg_ws_0001', 'ses_ws', 1786000000001, 1786000000001, '{"type":"text","text":"The date test is flaky, fix it."}'),
('prt_ws_0002', 'msg_ws_0002', 'ses_ws', 1786000000002, 1786000000002, '{"type":"step-start"}'),
('prt_ws_0003', 'msg_ws_0002', 'ses_ws', 1786000000002, 1786000000002, '{"type":"text","text":" ","time":{"start":1786000000100,"end":1786000000800}}'),
('prt_ws_0004', 'msg_ws_0002', 'ses_ws', 1786000000002, 1786000000002, '{"type":"step-finish","reason":"stop","cost":0,"tokens":{"total":2101,"input":2100,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}}'),
('prt_ws_0005', 'msg_ws_0003', 'ses_ws', 1786000000003, 1786000000003, '{"type":"text","text":"Are you there?"}'),
('prt_ws_0006', 'msg_ws_0004', 'ses_ws', 1786000000004, 1786000000004, '{"type":"step-start"}'),
('prt_ws_0007', 'msg_ws_0004', 'ses_ws', 1786000000004, 1786000000004, '{"type":"text","text":"Yes: the date test now freezes the clock."}'),
('prt_ws_0008', 'msg_ws_0004', 'ses_ws', 1786000000004, 1786000000004, '{"type":"step-finish","reason":"stop","cost":0,"tokens":{"total":2300,"input":2280,"output":20,"reasoning":0,"cache":{"read":0,"write":0}}}'),
('prt_ws_0009', 'msg_ws_0005', 'ses_ws', 1786000000005, 1786000000005, '{"type":"text","text":"Thanks. Anything else?"}'),
('prt_ws_0010', 'msg_ws_0006', 'ses_ws', 1786000000006, 1786000000006, '{"type":"step-start"}'),
('prt_ws_0011', 'msg_ws_0006', 'ses_ws', 1786000000006, 1786000000006, '{"type":"text","text":"\u00a0\n"}'),
('prt_ws_0012', 'msg_ws_0006', 'ses_ws', 1786000000006, 1786000000006, '{"type":"step-finish","reason":"stop","cost":0,"tokens":{"total":2400,"input":2399,"output":1,"reasoning":0,"cache":{"read":0,"write":0}}}'),
('prt_ws_0013', 'msg_ws_0007', 'ses_ws', 1786000000007, 1786000000007, '{"type":"text","text":"Hello?"}'),
('prt_ws_0101', 'msg_ws_0101', 'ses_ws_near', 1786000000101, 1786000000101, '{"type":"text","text":"Why is CI red?"}'),
('prt_ws_0102', 'msg_ws_0102', 'ses_ws_near', 1786000000102, 1786000000102, '{"type":"step-start"}'),
('prt_ws_0103', 'msg_ws_0102', 'ses_ws_near', 1786000000102, 1786000000102, '{"type":"reasoning","text":"","metadata":{"anthropic":{"signature":"EqQBCkgIBhABGAIiQK"}},"time":{"start":1786000000102,"end":1786000000103}}'),
('prt_ws_0104', 'msg_ws_0102', 'ses_ws_near', 1786000000102, 1786000000102, '{"type":"text","text":" "}'),
('prt_ws_0105', 'msg_ws_0102', 'ses_ws_near', 1786000000102, 1786000000102, '{"type":"step-finish","reason":"stop","cost":0,"tokens":{"total":110,"input":100,"output":10,"reasoning":0,"cache":{"read":0,"write":0}}}'),
('prt_ws_0106', 'msg_ws_0103', 'ses_ws_near', 1786000000103, 1786000000103, '{"type":"text","text":"Look at the logs."}'),
('prt_ws_0107', 'msg_ws_0104', 'ses_ws_near', 1786000000104, 1786000000104, '{"type":"step-start"}'),
('prt_ws_0108', 'msg_ws_0104', 'ses_ws_near', 1786000000104, 1786000000104, '{"type":"text","text":"  "}'),
('prt_ws_0109', 'msg_ws_0104', 'ses_ws_near', 1786000000104, 1786000000104, '{"type":"tool","callID":"toolu_01","tool":"bash","state":{"status":"completed","input":{"command":"cat ci.log"},"output":"FAIL test_dates","title":"bash","metadata":{},"time":{"start":1786000000104,"end":1786000000105}}}'),
('prt_ws_0110', 'msg_ws_0104', 'ses_ws_near', 1786000000104, 1786000000104, '{"type":"step-finish","reason":"tool-calls","cost":0,"tokens":{"total":110,"input":100,"output":10,"reasoning":0,"cache":{"read":0,"write":0}}}'),
('prt_ws_0111', 'msg_ws_0105', 'ses_ws_near', 1786000000105, 1786000000105, '{"type":"step-start"}'),
('prt_ws_0112', 'msg_ws_0105', 'ses_ws_near', 1786000000105, 1786000000105, '{"type":"text","text":"test_dates fails: it depends on the wall clock."}'),
('prt_ws_0113', 'msg_ws_0105', 'ses_ws_near', 1786000000105, 1786000000105, '{"type":"step-finish","reason":"stop","cost":0,"tokens":{"total":120,"input":100,"output":20,"reasoning":0,"cache":{"read":0,"write":0}}}');
