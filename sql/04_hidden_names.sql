-- v_hidden_names_per_task: required and hidden names per test-set task (Methods,
--   "Hidden required names"; a task with n_hidden > 0 is in the hidden-name split).
-- v_hidden_names_by_kind: hidden names by cfg kind (constant, invariant, property, ...).
-- Reads: required_names, test_set.
CREATE OR REPLACE VIEW v_hidden_names_per_task AS
SELECT s.task_id,
       count(r.name) AS n_required,
       count(r.name) FILTER (WHERE r.hidden) AS n_hidden,
       count(r.name) FILTER (WHERE r.hidden AND r.category = 'convention') AS n_hidden_convention
FROM test_set s LEFT JOIN required_names r USING (task_id)
WHERE s.in_test_set
GROUP BY s.task_id;

CREATE OR REPLACE VIEW v_hidden_names_by_kind AS
SELECT r.cfg_kind, count(*) AS n_hidden
FROM required_names r JOIN test_set s USING (task_id)
WHERE s.in_test_set AND r.hidden
GROUP BY r.cfg_kind;
