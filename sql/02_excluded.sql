-- v_excluded: every candidate model that is not in the test set, with the stage that
-- excluded it and its reason code.
-- Reads: candidates, test_set.
CREATE OR REPLACE VIEW v_excluded AS
SELECT c.task_id, c.model_module_path, c.cfg_path, 'ingest' AS stage, c.reason, c.detail
FROM candidates c
WHERE c.status = 'excluded'
UNION ALL
SELECT s.task_id, c.model_module_path, c.cfg_path, 'verify' AS stage, s.reason, s.detail
FROM test_set s
JOIN candidates c ON c.task_id = s.task_id AND c.status = 'task'
WHERE NOT s.in_test_set;
