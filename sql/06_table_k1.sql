-- v_table_k1: Table K.1, task counts for the corpus the pipeline ran on. Rows that later
-- stages fill (grader eligibility, behavior grade) are NULL until those stages have run.
-- Reads: candidates, module_roles, test_set, required_names, control_eligibility, verdicts.
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
         (SELECT 1 FROM required_names r WHERE r.task_id = s.task_id AND r.hidden)), 'hidden-name split'),
  (7, '  Eligible for behavior-based grading (no random values, no test fixture)',
      (SELECT CASE WHEN count(*) = 0 THEN NULL ELSE count(*) FILTER (WHERE eligible) END
       FROM control_eligibility), 'grader validation (Appendix J)'),
  (8, '  Reference accepted against itself (behavior-based grade covers)',
      (SELECT CASE WHEN (SELECT count(*) FROM control_eligibility) = 0 THEN NULL ELSE
         (SELECT count(*) FROM verdicts WHERE model = 'control:self' AND grade = 'behavior' AND passed
            AND task_id IN (SELECT task_id FROM control_eligibility WHERE eligible)) END),
      'Experiment 3, behavior-based grading')
) t(ord, "set", n, used_for)
ORDER BY ord;
