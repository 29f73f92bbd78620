-- Sample metadata and the truncation control (Appendix N). Rates are fractions in [0, 1].
-- Grader controls (model 'control:%') and tasks outside the test set are left out of the
-- per-task views.

-- v_sample_meta: one row per sample with the generation metadata columns of `samples`
-- (extracted_module, output_tokens, truncated, hit_token_limit, has_closing_line). The
-- generate stage writes these columns; in a store whose `samples` table predates them the
-- UNION BY NAME with an empty typed row fills them with NULL, so every view below works
-- on either store. `truncated_output` (Appendix N: "outputs that reach the limit or lack
-- the closing line of a module") is true when any of samples.truncated,
-- samples.hit_token_limit, NOT samples.has_closing_line, or the grader's extraction flag
-- verdicts.truncated (no closing ==== line) is true; false when at least one of them is
-- known and none is true; NULL when none is known.
-- Reads: samples, verdicts.
CREATE OR REPLACE VIEW v_sample_meta AS
WITH s AS (
  SELECT * FROM samples
  UNION ALL BY NAME
  SELECT * FROM (SELECT NULL::VARCHAR AS task_id, NULL::VARCHAR AS condition, NULL::VARCHAR AS model,
                        NULL::BIGINT AS sample_idx, NULL::VARCHAR AS text,
                        NULL::VARCHAR AS extracted_module, NULL::BIGINT AS output_tokens,
                        NULL::BOOLEAN AS truncated, NULL::BOOLEAN AS hit_token_limit,
                        NULL::BOOLEAN AS has_closing_line) WHERE false
),
g AS (
  SELECT task_id, condition, model, sample_idx, bool_or(truncated) AS extraction_truncated
  FROM verdicts GROUP BY ALL
)
SELECT s.task_id, s.condition, s.model, s.sample_idx, s.text, s.extracted_module,
       s.output_tokens, s.truncated, s.hit_token_limit, s.has_closing_line,
       g.extraction_truncated,
       CASE WHEN coalesce(s.truncated, false) OR coalesce(s.hit_token_limit, false)
                 OR coalesce(NOT s.has_closing_line, false)
                 OR coalesce(g.extraction_truncated, false) THEN true
            WHEN s.truncated IS NULL AND s.hit_token_limit IS NULL AND s.has_closing_line IS NULL
                 AND g.extraction_truncated IS NULL THEN NULL
            ELSE false END AS truncated_output
FROM s
LEFT JOIN g USING (task_id, condition, model, sample_idx);

-- v_truncation_rates (Appendix N, "Truncated outputs make up 16.9% ... of the original
-- outputs"): one row per (model, condition) over test-set tasks: samples, samples whose
-- truncation is known, truncated samples and their share of the known ones (a fraction;
-- NULL when none is known).
-- Reads: v_sample_meta (samples, verdicts), test_set.
CREATE OR REPLACE VIEW v_truncation_rates AS
SELECT m.model, m.condition,
       count(*) AS n_samples,
       count(m.truncated_output) AS n_known,
       count(*) FILTER (WHERE m.truncated_output) AS n_truncated,
       CASE WHEN count(m.truncated_output) = 0 THEN NULL
            ELSE CAST(count(*) FILTER (WHERE m.truncated_output) AS DOUBLE) / count(m.truncated_output)
       END AS truncated_share
FROM v_sample_meta m
JOIN test_set t ON t.task_id = m.task_id AND t.in_test_set
WHERE m.model NOT LIKE 'control:%'
GROUP BY m.model, m.condition;

-- v_truncation_tasks: one row per (model, task_id) over test-set tasks with samples:
-- samples, samples with known truncation, truncated samples (any condition), and
-- no_truncation = every sample's truncation is known and none is truncated (the task
-- belongs to the Appendix N subset of that model).
-- Reads: v_sample_meta (samples, verdicts), test_set.
CREATE OR REPLACE VIEW v_truncation_tasks AS
SELECT m.model, m.task_id,
       count(*) AS n_samples,
       count(m.truncated_output) AS n_known,
       count(*) FILTER (WHERE m.truncated_output) AS n_truncated,
       count(m.truncated_output) = count(*) AND count(*) FILTER (WHERE m.truncated_output) = 0
         AS no_truncation
FROM v_sample_meta m
JOIN test_set t ON t.task_id = m.task_id AND t.in_test_set
WHERE m.model NOT LIKE 'control:%'
GROUP BY m.model, m.task_id;

-- v_truncation_subset (Appendix N): v_paired_rates restricted to the tasks with no
-- truncated output in any condition for that model (rates and decrease on that subset).
-- Reads: v_paired_rates (verdicts, test_set, control_eligibility), v_truncation_tasks.
CREATE OR REPLACE VIEW v_truncation_subset AS
SELECT p.*
FROM v_paired_rates p
JOIN v_truncation_tasks t ON t.model = p.model AND t.task_id = p.task_id
WHERE t.no_truncation;
