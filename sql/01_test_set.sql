-- v_test_set: one row per task in the verified test set (Table K.1, "test set").
-- Reads: tasks, test_set, renamed_tasks.
CREATE OR REPLACE VIEW v_test_set AS
SELECT t.task_id, t.folder, t.system_module, t.wrapper_module, t.model_module, t.cfg_path,
       t.description_source, t.pluscal,
       r.system_module AS renamed_system_module, r.n_renamed, r.text_similarity,
       s.original_distinct_states, s.original_depth, s.renamed_distinct_states, s.renamed_depth,
       s.manifest_distinct_states, s.manifest_match
FROM tasks t
JOIN test_set s USING (task_id)
LEFT JOIN renamed_tasks r USING (task_id)
WHERE s.in_test_set;
