-- A labelled OpenCode case (anomalyco/opencode#31259): an assistant message whose only text part
-- is whitespace. OpenCode's Anthropic transform drops text parts that are exactly "" but keeps " ",
-- so every later request carries {"role":"assistant","content":[{"type":"text","text":" "}]} and draws
-- `messages: text content blocks must contain non-whitespace text`. Expected: W101 on msg_ws_0002
-- (and on msg_ws_0006, whose only text is a no-break space: JS trim() whitespace); near-misses in
-- session ses_ws_near: W102, not W101, where the whitespace text sits beside a signed reasoning
-- part (msg_ws_0102) or a tool call (msg_ws_0104).
-- Run against an empty database that has OpenCode's schema and project 'p1'.

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
