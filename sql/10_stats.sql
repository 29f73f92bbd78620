-- Per-task pass rates and the inputs of the statistics of Experiments 1 and 3 (Methods,
-- "Metrics" and "Disagreements"; Table 1; Appendices P and U). Rates are fractions in
-- [0, 1]; the statistics over tasks (bootstrap, TOST, sign test) are computed in Python
-- (alias.report.stats_tables with alias.stats). Grader controls (model 'control:%') and
-- tasks outside the test set are left out everywhere. A verdict whose `passed` is NULL
-- counts as a failure. The behavior grade covers a test-set task when the task is eligible
-- and its reference passes against itself (Appendix J; the same rule as v_table_k1 row 8).

-- v_behavior_covered: one row per test-set task; `covered` when the behavior-based grade
-- covers it (Table 1 behavior rows, Experiment 3 and Appendix P use only covered tasks).
-- Reads: test_set, control_eligibility, verdicts.
CREATE OR REPLACE VIEW v_behavior_covered AS
SELECT task_id, eligible, self_passed, eligible AND self_passed AS covered
FROM (
  SELECT s.task_id,
         coalesce(e.eligible, false) AS eligible,
         EXISTS (SELECT 1 FROM verdicts v
                 WHERE v.task_id = s.task_id AND v.model = 'control:self'
                   AND v.grade = 'behavior' AND v.passed) AS self_passed
  FROM test_set s LEFT JOIN control_eligibility e USING (task_id)
  WHERE s.in_test_set
);

-- v_task_rates: one row per (model, task_id, condition, grade): samples graded, samples
-- passed and the pass rate (the pass@1 estimate, Methods "Metrics"), samples with a
-- truncated output, and whether the behavior grade covers the task.
-- Reads: verdicts, v_behavior_covered (test_set, control_eligibility, verdicts).
CREATE OR REPLACE VIEW v_task_rates AS
SELECT v.model, v.task_id, v.condition, v.grade,
       count(*) AS n_samples,
       count(*) FILTER (WHERE v.passed) AS n_passed,
       CAST(count(*) FILTER (WHERE v.passed) AS DOUBLE) / count(*) AS rate,
       count(*) FILTER (WHERE v.truncated) AS n_truncated,
       c.covered AS behavior_covered
FROM verdicts v
JOIN v_behavior_covered c USING (task_id)
WHERE v.model NOT LIKE 'control:%'
GROUP BY v.model, v.task_id, v.condition, v.grade, c.covered;

-- v_paired_rates: one row per (model, grade, task_id): the rates of the original, random
-- and (when present) meaningful conditions side by side, samples per condition, and
-- decrease = original_rate - random_rate (a fraction; NULL unless both are present).
-- Reads: v_task_rates.
CREATE OR REPLACE VIEW v_paired_rates AS
WITH w AS (
  SELECT model, grade, task_id, behavior_covered,
         max(rate) FILTER (WHERE condition = 'original') AS original_rate,
         max(rate) FILTER (WHERE condition = 'random') AS random_rate,
         max(rate) FILTER (WHERE condition = 'meaningful') AS meaningful_rate,
         max(n_samples) FILTER (WHERE condition = 'original') AS original_n,
         max(n_samples) FILTER (WHERE condition = 'random') AS random_n,
         max(n_samples) FILTER (WHERE condition = 'meaningful') AS meaningful_n
  FROM v_task_rates
  GROUP BY model, grade, task_id, behavior_covered
)
SELECT model, grade, task_id, behavior_covered,
       original_rate, random_rate, meaningful_rate, original_n, random_n, meaningful_n,
       original_rate - random_rate AS decrease
FROM w;

-- v_hidden_split: v_paired_rates with the task's hidden required names (Methods, "Hidden
-- required names"; Results "Hidden names"; Appendix U): has_hidden when the cfg lists at
-- least one name the description never mentions; a task without required names (no cfg)
-- belongs to the "every required name stated" group.
-- Reads: v_paired_rates, v_hidden_names_per_task (required_names, test_set).
CREATE OR REPLACE VIEW v_hidden_split AS
SELECT p.*, h.n_required, h.n_hidden, h.n_hidden > 0 AS has_hidden
FROM v_paired_rates p
JOIN v_hidden_names_per_task h USING (task_id);

-- v_sample_grades: one row per graded sample that has both a name and a behavior verdict:
-- whether each passed, their reasons and truncation. Helper of the Appendix P views.
-- Reads: verdicts, v_behavior_covered (test_set, control_eligibility, verdicts).
CREATE OR REPLACE VIEW v_sample_grades AS
SELECT n.model, n.task_id, n.condition, n.sample_idx,
       c.covered AS behavior_covered,
       coalesce(n.passed, false) AS name_passed,
       coalesce(b.passed, false) AS behavior_passed,
       n.reason AS name_reason,
       b.reason AS behavior_reason,
       coalesce(n.truncated, b.truncated) AS truncated
FROM verdicts n
JOIN verdicts b
  ON b.task_id = n.task_id AND b.condition = n.condition AND b.model = n.model
 AND b.sample_idx = n.sample_idx AND b.grade = 'behavior'
JOIN v_behavior_covered c ON c.task_id = n.task_id
WHERE n.grade = 'name' AND n.model NOT LIKE 'control:%';

-- v_grade_disagreements (Appendix P): one row per (model, condition) over the tasks the
-- behavior grade covers: samples passing only the behavior grade, only the name grade,
-- both, neither.
-- Reads: v_sample_grades (verdicts, test_set, control_eligibility).
CREATE OR REPLACE VIEW v_grade_disagreements AS
SELECT model, condition,
       count(DISTINCT task_id) AS n_tasks,
       count(*) AS n_samples,
       count(*) FILTER (WHERE behavior_passed AND NOT name_passed) AS behavior_only,
       count(*) FILTER (WHERE name_passed AND NOT behavior_passed) AS name_only,
       count(*) FILTER (WHERE name_passed AND behavior_passed) AS both_pass,
       count(*) FILTER (WHERE NOT name_passed AND NOT behavior_passed) AS neither
FROM v_sample_grades
WHERE behavior_covered
GROUP BY model, condition;

-- v_disagreement_samples (Appendix P, "We read the outputs on which the two grades
-- disagree and sort them by cause"): one row per name-only or behavior-only sample on a
-- covered task, with both grades' reasons; failing_reason is the reason of the grade that
-- failed (behavior for name-only, name for behavior-only), the first key for cause sorting.
-- Reads: v_sample_grades (verdicts, test_set, control_eligibility), v_hidden_names_per_task.
CREATE OR REPLACE VIEW v_disagreement_samples AS
SELECT g.model, g.condition, g.task_id, g.sample_idx,
       CASE WHEN g.name_passed THEN 'name_only' ELSE 'behavior_only' END AS disagreement,
       CASE WHEN g.name_passed THEN g.behavior_reason ELSE g.name_reason END AS failing_reason,
       g.behavior_reason, g.name_reason, g.truncated,
       h.n_hidden > 0 AS has_hidden
FROM v_sample_grades g
LEFT JOIN v_hidden_names_per_task h USING (task_id)
WHERE g.behavior_covered AND g.name_passed <> g.behavior_passed
ORDER BY disagreement, failing_reason, g.model, g.condition, g.task_id, g.sample_idx;

-- v_upper_bound (Appendix P): one row per (model, task_id, condition) over covered tasks:
-- samples passing each grade and the upper-bound rate that counts a sample correct when
-- the behavior grade OR the name grade passes it (every name-only pass credited).
-- Reads: v_sample_grades (verdicts, test_set, control_eligibility).
CREATE OR REPLACE VIEW v_upper_bound AS
SELECT model, task_id, condition,
       count(*) AS n_samples,
       count(*) FILTER (WHERE behavior_passed) AS n_behavior,
       count(*) FILTER (WHERE name_passed) AS n_name,
       count(*) FILTER (WHERE behavior_passed OR name_passed) AS n_either,
       CAST(count(*) FILTER (WHERE behavior_passed OR name_passed) AS DOUBLE) / count(*) AS rate
FROM v_sample_grades
WHERE behavior_covered
GROUP BY model, task_id, condition;
