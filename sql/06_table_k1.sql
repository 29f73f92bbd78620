-- v_table_k1: Table K.1, task counts for the corpus the pipeline ran on. Rows that later
-- stages fill (grader eligibility, behavior grade, meaningful renaming) are NULL until
-- those stages exist.
-- Reads: candidates, module_roles, test_set, required_names.
CREATE OR REPLACE VIEW v_table_k1 AS
SELECT * FROM (VALUES
  (1, 'System specifications with an exhaustive-search success model',
      (SELECT count(DISTINCT system_module_path) FROM candidates
       WHERE mode = 'exhaustive search' AND manifest_result = 'success'), 'starting pool'),
  (2, 'Candidate tasks (runtime and module checks passed)',
      (SELECT count(*) FROM test_set), 'verification'),
  (3, 'Pass SANY and TLC after CIR (test set)',
      (SELECT count(*) FROM test_set WHERE in_test_set), 'Experiment 1'),
  (4, '  With a TLC configuration',
      (SELECT count(*) FROM test_set WHERE in_test_set), 'Experiment 2, name-based grading'),
  (5, '  With a hidden required name',
      (SELECT count(*) FROM test_set s WHERE in_test_set AND EXISTS
         (SELECT 1 FROM required_names r WHERE r.task_id = s.task_id AND r.hidden)), 'hidden-name split'),
  (6, '  With every required name stated',
      (SELECT count(*) FROM test_set s WHERE in_test_set AND NOT EXISTS
         (SELECT 1 FROM required_names r WHERE r.task_id = s.task_id AND r.hidden)), 'hidden-name split')
) t(ord, "set", n, used_for)
ORDER BY ord;
