-- Text similarity inputs (Appendix V, Table V.1). BLEU-4 and ROUGE-L need a tokenizer and
-- sacrebleu / rouge-score, so the per-sample scores are computed in Python
-- (alias.report.similarity), from the pairs these views give.

-- v_reference_modules: the reference of each condition: the task's system module in the
-- original condition, its renamed copy in the random condition, its meaningful copy
-- (Appendix R, verified tasks only) in the meaningful condition.
-- Reads: modules, renamed_modules, meaningful_modules.
CREATE OR REPLACE VIEW v_reference_modules AS
SELECT task_id, 'original' AS condition, module, text FROM modules WHERE role = 'system'
UNION ALL
SELECT task_id, 'random' AS condition, module, text FROM renamed_modules WHERE role = 'system'
UNION ALL
SELECT task_id, 'meaningful' AS condition, module, text FROM meaningful_modules WHERE role = 'system';

-- v_similarity_inputs: one row per model sample of a test-set task whose condition has a
-- reference: the text to score (the extracted module, or the raw output when the sample
-- has no extracted module), whether it was extracted, and the reference of the same
-- condition (comments are removed in Python, on both sides).
-- Reads: v_sample_meta (samples, verdicts), v_reference_modules (modules, renamed_modules),
-- v_behavior_covered (test_set, control_eligibility, verdicts).
CREATE OR REPLACE VIEW v_similarity_inputs AS
SELECT s.model, s.task_id, s.condition, s.sample_idx,
       coalesce(s.extracted_module, s.text) AS output_text,
       s.extracted_module IS NOT NULL AS extracted,
       r.text AS reference_text,
       c.covered AS behavior_covered
FROM v_sample_meta s
JOIN v_reference_modules r ON r.task_id = s.task_id AND r.condition = s.condition
JOIN v_behavior_covered c ON c.task_id = s.task_id
WHERE s.model NOT LIKE 'control:%';
