-- Experiment 2, randomized exposure (Methods "Randomized exposure", "Log-likelihood",
-- "Analysis"; Table 2; Appendices F, N, O, T). `split` gives each task's half (A or B);
-- `exposure_arms` (the exposure stage's adapters, plus params.report.exposure) names, per model family and arm
-- ('task-pair' or 'spec-only'), the fine-tuned model trained on each half; a task is
-- *seen* by the model of its half and *unseen* by the other. `loglik` holds the mean token
-- log-likelihoods of the references. All three are empty until the exposure experiment
-- has run; the reports then say "no data". Effects and intervals are computed in Python
-- (alias.report.exposure with alias.stats.exposure_effects).

-- v_exposure_cells: one row per (family, arm, grade, task_id, condition, exposure) over
-- test-set tasks in the split: the pass rate of the seen or unseen model.
-- Reads: exposure_arms, split, v_task_rates (verdicts, test_set, control_eligibility).
CREATE OR REPLACE VIEW v_exposure_cells AS
SELECT a.family, a.arm, r.grade, r.task_id, r.condition,
       CASE WHEN a.half = sp.half THEN 'seen' ELSE 'unseen' END AS exposure,
       r.model, r.n_samples, r.rate, r.behavior_covered
FROM exposure_arms a
JOIN v_task_rates r ON r.model = a.model
JOIN split sp ON sp.task_id = r.task_id;

-- v_exposure_paired: one row per (family, arm, grade, task_id) with the four cells of
-- the task (original/renamed x seen/unseen rates, fractions; NULL where a cell is missing).
-- Reads: v_exposure_cells.
CREATE OR REPLACE VIEW v_exposure_paired AS
SELECT family, arm, grade, task_id, bool_or(behavior_covered) AS behavior_covered,
       max(rate) FILTER (WHERE condition = 'original' AND exposure = 'seen') AS original_seen,
       max(rate) FILTER (WHERE condition = 'original' AND exposure = 'unseen') AS original_unseen,
       max(rate) FILTER (WHERE condition = 'random' AND exposure = 'seen') AS renamed_seen,
       max(rate) FILTER (WHERE condition = 'random' AND exposure = 'unseen') AS renamed_unseen
FROM v_exposure_cells
GROUP BY family, arm, grade, task_id;

-- v_exposure_truncation (Appendix N): v_exposure_paired with no_truncation = neither
-- model of the arm has a truncated output of the task in any condition (and truncation is
-- known for every sample).
-- Reads: v_exposure_paired, exposure_arms, v_truncation_tasks (samples, verdicts, test_set).
CREATE OR REPLACE VIEW v_exposure_truncation AS
SELECT p.*,
       coalesce((SELECT bool_and(t.no_truncation) AND count(*) = 2
                 FROM exposure_arms a JOIN v_truncation_tasks t ON t.model = a.model
                 WHERE a.family = p.family AND a.arm = p.arm AND t.task_id = p.task_id), false)
         AS no_truncation
FROM v_exposure_paired p;

-- v_loglik_paired: one row per (family, arm, measure, task_id) with the four cells of the
-- mean token log-likelihood of the reference; measure 'all' (mean_loglik), 'outside'
-- (tokens outside renamed identifiers) or 'identifiers' (renamed identifiers alone).
-- Test-set tasks only (the paper counts likelihoods over the tasks with a cfg, 110).
-- Reads: exposure_arms, split, loglik, v_behavior_covered (test_set, ...).
CREATE OR REPLACE VIEW v_loglik_paired AS
WITH cells AS (
  SELECT a.family, a.arm, l.task_id, l.condition,
         CASE WHEN a.half = sp.half THEN 'seen' ELSE 'unseen' END AS exposure,
         l.mean_loglik, l.outside_loglik, l.identifier_loglik
  FROM exposure_arms a
  JOIN loglik l ON l.model = a.model
  JOIN split sp ON sp.task_id = l.task_id
  JOIN v_behavior_covered c ON c.task_id = l.task_id
),
long AS (
  SELECT family, arm, task_id, condition, exposure, 'all' AS measure, mean_loglik AS value FROM cells
  UNION ALL
  SELECT family, arm, task_id, condition, exposure, 'outside', outside_loglik FROM cells
  UNION ALL
  SELECT family, arm, task_id, condition, exposure, 'identifiers', identifier_loglik FROM cells
)
SELECT family, arm, measure, task_id,
       max(value) FILTER (WHERE condition = 'original' AND exposure = 'seen') AS original_seen,
       max(value) FILTER (WHERE condition = 'original' AND exposure = 'unseen') AS original_unseen,
       max(value) FILTER (WHERE condition = 'random' AND exposure = 'seen') AS renamed_seen,
       max(value) FILTER (WHERE condition = 'random' AND exposure = 'unseen') AS renamed_unseen
FROM long
GROUP BY family, arm, measure, task_id;
