-- File continuation (Appendix L). The `continuations` table (one row per continuation
-- sample; empty until a continuation run has written data/continuation/continuations.parquet)
-- holds the longest token run each continuation shares with the real rest of the file,
-- for the original file (condition 'original') and its renamed copy ('random').

-- v_continuation_runs: one row per (model, task_id, condition) over test-set tasks:
-- samples, samples with a run (a failed sample has none), and the longest and mean run
-- in TLA+ tokens over the samples.
-- Reads: continuations, test_set.
CREATE OR REPLACE VIEW v_continuation_runs AS
SELECT c.model, c.task_id, c.condition,
       count(*) AS n_samples,
       count(c.longest_run) AS n_scored,
       max(c.longest_run) AS longest_run,
       avg(c.longest_run) AS mean_run
FROM continuations c
JOIN test_set t ON t.task_id = c.task_id AND t.in_test_set
GROUP BY c.model, c.task_id, c.condition;

-- v_continuation_paired (Appendix L): one row per (model, task_id) with a run on both
-- copies: the longest run on the original file and on the renamed copy, their difference
-- (original - renamed), and the same model's name-grade decrease of that task
-- (original - random pass rate, a fraction; NULL when the model has no graded samples of
-- the task in both conditions).
-- Reads: v_continuation_runs (continuations, test_set), v_paired_rates (verdicts, ...).
CREATE OR REPLACE VIEW v_continuation_paired AS
WITH w AS (
  SELECT model, task_id,
         max(longest_run) FILTER (WHERE condition = 'original') AS original_run,
         max(longest_run) FILTER (WHERE condition = 'random') AS renamed_run
  FROM v_continuation_runs GROUP BY model, task_id
)
SELECT w.model, w.task_id, w.original_run, w.renamed_run,
       w.original_run - w.renamed_run AS run_difference,
       p.original_rate, p.random_rate, p.decrease
FROM w
LEFT JOIN v_paired_rates p ON p.model = w.model AND p.task_id = w.task_id AND p.grade = 'name'
WHERE w.original_run IS NOT NULL AND w.renamed_run IS NOT NULL;
