-- Validation of the behavior-based grade (Appendix J, Table J.1) and the references the
-- grader cannot grade.
-- Reads: control_eligibility, control_samples, verdicts.

-- One row per graded control: its kind and whether each grade passed.
CREATE OR REPLACE VIEW v_control_verdicts AS
SELECT v.task_id,
       replace(v.model, 'control:', '') AS kind,
       v.sample_idx,
       v.grade,
       v.passed,
       v.reason,
       v.method,
       v.maps_tried,
       v.mapping,
       v.detail,
       cs.mutant_kind,
       cs.reference_states,
       cs.control_states
FROM verdicts v
LEFT JOIN control_samples cs
  ON cs.task_id = v.task_id AND cs.model = v.model AND cs.sample_idx = v.sample_idx
WHERE v.model LIKE 'control:%';

-- Table J.1: n and passed per control, behavior grade, eligible tasks only.
CREATE OR REPLACE VIEW v_table_j1 AS
WITH b AS (
  SELECT * FROM v_control_verdicts
  WHERE grade = 'behavior'
    AND task_id IN (SELECT task_id FROM control_eligibility WHERE eligible)
)
SELECT 1 AS ord, 'Reference against itself' AS control, 'should pass' AS expected,
       count(*) AS n, count(*) FILTER (WHERE passed) AS passed, count(DISTINCT task_id) AS tasks
FROM b WHERE kind = 'self'
UNION ALL
SELECT 2, 'Operator-renamed reference', 'should pass', count(*), count(*) FILTER (WHERE passed),
       count(DISTINCT task_id)
FROM b WHERE kind = 'oprenamed'
UNION ALL
SELECT 3, 'Renamed reference and modules', 'should pass', count(*), count(*) FILTER (WHERE passed),
       count(DISTINCT task_id)
FROM b WHERE kind = 'renamed'
UNION ALL
SELECT 4, 'Mutant with other reachable states', 'should fail', count(*), count(*) FILTER (WHERE passed),
       count(DISTINCT task_id)
FROM b WHERE kind = 'mutant'
UNION ALL
SELECT 5, 'Mutant with the same reachable states', 'should fail', count(*), count(*) FILTER (WHERE passed),
       count(DISTINCT task_id)
FROM b WHERE kind = 'hardneg'
ORDER BY ord;

-- Hard negatives (issue 33): mutants with the reference's number of distinct states whose
-- behaviors TLC shows to differ, per mutation operator and procedure (grade behavior: the
-- configured one; behavior_renaming: the paper's). Eligible tasks only; operator 'all' sums.
CREATE OR REPLACE VIEW v_hard_negatives AS
WITH h AS (
  SELECT * FROM v_control_verdicts
  WHERE kind = 'hardneg' AND grade IN ('behavior', 'behavior_renaming')
    AND task_id IN (SELECT task_id FROM control_eligibility WHERE eligible)
)
SELECT mutant_kind AS operator, grade AS procedure, count(*) AS kept, count(DISTINCT task_id) AS tasks,
       count(*) FILTER (WHERE passed) AS accepted
FROM h GROUP BY mutant_kind, grade
UNION ALL
SELECT 'all', grade, count(*), count(DISTINCT task_id), count(*) FILTER (WHERE passed)
FROM h GROUP BY grade
ORDER BY operator = 'all', operator, procedure;

-- Eligibility and the operator-renamed copies that do not count (Appendix J text).
CREATE OR REPLACE VIEW v_control_counts AS
SELECT
  (SELECT count(*) FROM test_set WHERE in_test_set) AS test_set_tasks,
  (SELECT count(*) FROM control_eligibility) AS controlled_tasks,
  (SELECT count(*) FROM control_eligibility WHERE reason IS DISTINCT FROM 'no_cfg') AS tasks_with_cfg,
  (SELECT count(*) FROM control_eligibility WHERE eligible) AS eligible,
  (SELECT count(*) FROM control_eligibility WHERE NOT eligible) AS not_eligible,
  (SELECT count(*) FROM control_samples WHERE kind = 'oprenamed' AND NOT valid
          AND detail = 'no operator to rename') AS oprenamed_nothing_to_rename,
  (SELECT count(*) FROM control_samples WHERE kind = 'oprenamed' AND NOT valid
          AND detail LIKE 'sany%') AS oprenamed_sany_fails,
  (SELECT count(*) FROM control_samples WHERE kind = 'oprenamed' AND NOT valid
          AND (detail LIKE 'tlc%' OR detail LIKE 'cfg%')) AS oprenamed_tlc_fails,
  (SELECT count(*) FROM control_samples WHERE kind = 'mutant' AND sample_idx >= 0) AS mutants_tried,
  (SELECT count(*) FROM control_samples WHERE kind = 'mutant' AND valid) AS mutants_kept,
  (SELECT count(*) FROM control_samples WHERE kind = 'hardneg' AND sample_idx >= 0) AS hardneg_tried,
  (SELECT count(*) FROM control_samples WHERE kind = 'hardneg' AND valid) AS hardneg_kept,
  (SELECT count(*) FROM control_samples WHERE kind = 'hardneg' AND sample_idx >= 0
          AND reference_states = control_states) AS hardneg_same_states,
  -- not kept by point (c) of the keep-check (alias/grade/hardneg.py): the candidate's state
  -- graph is the reference's re-encoded, or the comparison could not be made
  (SELECT count(*) FROM control_samples WHERE kind = 'hardneg' AND NOT valid
          AND detail LIKE '%"relabel": "relabeled:%') AS hardneg_re_encoded,
  (SELECT count(*) FROM control_samples WHERE kind = 'hardneg' AND NOT valid
          AND (detail LIKE '%"relabel": "undecided:%' OR detail LIKE '%"relabel": "TLC gave no state graph%'))
          AS hardneg_relabel_unchecked;

-- Every positive control of an eligible reference the behavior grade does not accept (the
-- reference against itself, its renamed and operator-renamed copies, and any other control
-- that must pass), with the reason (the construct that stops it) and the last attempts.
CREATE OR REPLACE VIEW v_grader_failures AS
SELECT task_id, kind, sample_idx, reason, method, maps_tried, detail
FROM v_control_verdicts
WHERE grade = 'behavior' AND NOT passed
  AND kind NOT IN ('mutant', 'hardneg')
  AND task_id IN (SELECT task_id FROM control_eligibility WHERE eligible)
ORDER BY reason, task_id, kind, sample_idx;

-- Controls graded wrongly: a positive control rejected or a mutant accepted (a hard
-- negative accepted by either procedure).
CREATE OR REPLACE VIEW v_control_errors AS
SELECT task_id, kind, sample_idx, grade, passed, reason, mutant_kind
FROM v_control_verdicts
WHERE (grade = 'behavior'
       AND ((kind IN ('self', 'renamed', 'oprenamed') AND NOT passed) OR (kind = 'mutant' AND passed)))
   OR (kind = 'hardneg' AND grade IN ('behavior', 'behavior_renaming') AND passed)
ORDER BY kind, task_id, sample_idx, grade;
