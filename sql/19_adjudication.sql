-- Real model outputs where the grades disagree, with people's readings (issue 33, point 5),
-- and the behavior grade before and after refinement mappings on the outputs that pass
-- the benchmark's own TLC check.
-- Reads: v_tlabench_outputs (external_verdicts, samples, verdicts, test_set), adjudications.

-- v_tlabench_grade_disagreements: one row per output of a task with a reference where the name
-- grade and the behavior grade disagree, or the benchmark's TLC check passes and the
-- behavior grade fails; both behavior procedures' verdicts and the reading (NULL: not read).
CREATE OR REPLACE VIEW v_tlabench_grade_disagreements AS
SELECT o.model, o.regime, o.release_model, o.task_id,
       CASE WHEN o.name_passed AND NOT o.behavior_passed THEN 'name only'
            WHEN o.behavior_passed AND NOT o.name_passed THEN 'behavior only'
            ELSE 'their TLC only' END AS disagreement,
       o.their_tlc, o.name_passed, o.behavior_renaming_passed, o.behavior_passed,
       o.behavior_renaming_reason, o.behavior_reason, o.behavior_error,
       a.judgment, a.category, a.evidence, a.note
FROM v_tlabench_outputs o
LEFT JOIN adjudications a ON a.model = o.model AND a.task_id = o.task_id
WHERE o.has_reference AND o.in_release
  AND ((o.name_passed IS DISTINCT FROM o.behavior_passed) OR (o.their_tlc AND NOT o.behavior_passed))
ORDER BY o.model, o.task_id;

-- v_tlabench_behavior_before_after: per model (replay key and release model: one regime),
-- the outputs the benchmark's TLC check passes, how many of them fail by behavior under
-- the paper's procedure (before) and the refinement procedure (after), how many of those
-- failures compared no behaviors (another count of variables or constants, no formula, an
-- evaluation error, a reference without variables), and the readings of the failures after.
CREATE OR REPLACE VIEW v_tlabench_behavior_before_after AS
WITH t AS (
  SELECT o.*, a.judgment
  FROM v_tlabench_outputs o LEFT JOIN adjudications a ON a.model = o.model AND a.task_id = o.task_id
  WHERE o.has_reference AND o.in_release AND o.their_tlc
), nc AS (
  SELECT *, (behavior_renaming_reason SIMILAR TO
               '(variable|constant)_count_differs.*|no_spec_formula.*|.*eval_error.*|reference_without_variables.*'
             AND NOT behavior_renaming_passed) AS nc_before,
            (behavior_reason SIMILAR TO
               '(variable|constant)_count_differs.*|no_spec_formula.*|.*eval_error.*|reference_without_variables.*'
             AND NOT behavior_passed) AS nc_after
  FROM t
)
SELECT model, regime,
       count(*) AS their_tlc_passes,
       count(*) FILTER (WHERE NOT behavior_renaming_passed) AS fail_before,
       count(*) FILTER (WHERE nc_before) AS no_comparison_before,
       count(*) FILTER (WHERE NOT behavior_passed) AS fail_after,
       count(*) FILTER (WHERE nc_after) AS no_comparison_after,
       count(*) FILTER (WHERE NOT behavior_passed AND judgment = 'real_difference') AS after_real_difference,
       count(*) FILTER (WHERE NOT behavior_passed AND judgment = 'grader_limit') AS after_grader_limit,
       count(*) FILTER (WHERE NOT behavior_passed AND judgment IS NULL) AS after_not_read
FROM nc
GROUP BY model, regime
ORDER BY model;
