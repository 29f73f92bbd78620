-- The benchmark builder's audit (`alias-cir audit`, README "Your own specifications").
-- v_leftover_names: original names left in a renamed copy (module code or comment, cfg,
--   description), one row per task, place, file and name; empty when every copy is clean.
-- v_kept_names: original names kept on purpose, counted apart: lowercase English words in
--   comments (english_word), string values (string_value), the paper's description rule
--   (description_rule).
-- v_audit_tasks: per ingested task, whether the renamed copy verified (else the reason),
--   the hidden cfg names with their kind, the names the name grade needs, what the
--   descriptions would have to add, whether the behavior grade can grade it (and why not)
--   and the leftover names.
-- v_audit_hidden_by_kind: hidden names of the verified tasks by cfg kind (as
--   v_hidden_names_by_kind, Table U's split).
-- v_audit_summary: one line for the corpus.
-- Reads: tasks, candidates, test_set, renamed_tasks, required_names, control_eligibility,
--   verdicts, leftover_names.
CREATE OR REPLACE VIEW v_leftover_names AS
SELECT task_id, place, file, name, n, first_line
FROM leftover_names WHERE kept IS NULL
ORDER BY task_id, place, file, name;

CREATE OR REPLACE VIEW v_kept_names AS
SELECT task_id, place, kept, count(*) AS names, sum(n)::BIGINT AS occurrences,
       string_agg(name, ', ' ORDER BY name) AS which
FROM leftover_names WHERE kept IS NOT NULL
GROUP BY ALL ORDER BY task_id, place, kept;

CREATE OR REPLACE VIEW v_audit_tasks AS
WITH req AS (
  SELECT task_id,
         string_agg(name || ' (' || cfg_kind || ')', ', ' ORDER BY name) AS needed_names,
         string_agg(name || ' (' || cfg_kind || ')', ', ' ORDER BY name) FILTER (WHERE hidden) AS hidden_names,
         count(*) FILTER (WHERE hidden) AS n_hidden,
         string_agg(coalesce(new_name, name) || ' (' || cfg_kind || ')', ', ' ORDER BY name)
           FILTER (WHERE NOT coalesce(mentioned_renamed, FALSE)) AS add_to_renamed_description
  FROM required_names GROUP BY task_id),
self AS (
  SELECT task_id, bool_and(passed) AS passed, min(reason) AS reason
  FROM verdicts WHERE model = 'control:self' AND grade = 'behavior' GROUP BY task_id),
lo AS (
  SELECT task_id, sum(n)::BIGINT AS n_leftover, string_agg(DISTINCT name, ', ' ORDER BY name) AS leftover_names
  FROM v_leftover_names GROUP BY task_id)
SELECT t.task_id, t.folder, t.system_module, t.cfg_path, t.description_source,
       coalesce(s.in_test_set, FALSE) AS verified,
       CASE WHEN coalesce(s.in_test_set, FALSE) THEN NULL
            ELSE coalesce(s.reason, CASE WHEN r.status = 'error' THEN 'rename_error' END, 'not verified') END AS reason,
       CASE WHEN coalesce(s.in_test_set, FALSE) THEN NULL ELSE coalesce(s.detail, r.error) END AS detail,
       s.original_distinct_states, s.original_depth,
       coalesce(req.n_hidden, 0) AS n_hidden, req.hidden_names, req.needed_names,
       req.hidden_names AS add_to_description, req.add_to_renamed_description,
       CASE WHEN e.task_id IS NULL THEN NULL WHEN NOT e.eligible THEN FALSE
            WHEN self.passed IS NULL THEN NULL ELSE self.passed END AS behavior_gradable,
       CASE WHEN e.task_id IS NULL THEN 'controls not run for this task'
            WHEN NOT e.eligible THEN e.reason
            WHEN self.passed IS NULL THEN 'reference not yet graded against itself'
            WHEN NOT self.passed THEN 'the reference fails against itself: ' || coalesce(self.reason, '?') END
         AS behavior_why_not,
       coalesce(lo.n_leftover, 0)::BIGINT AS n_leftover, lo.leftover_names, coalesce(r.n_kept_english, 0) AS n_kept_english
FROM tasks t
LEFT JOIN test_set s USING (task_id)
LEFT JOIN renamed_tasks r USING (task_id)
LEFT JOIN req USING (task_id)
LEFT JOIN control_eligibility e USING (task_id)
LEFT JOIN self USING (task_id)
LEFT JOIN lo USING (task_id)
ORDER BY t.task_id;

CREATE OR REPLACE VIEW v_audit_hidden_by_kind AS
SELECT r.cfg_kind, count(*) AS n_hidden
FROM required_names r JOIN test_set s USING (task_id)
WHERE s.in_test_set AND r.hidden
GROUP BY r.cfg_kind ORDER BY n_hidden DESC, r.cfg_kind;

CREATE OR REPLACE VIEW v_audit_summary AS
SELECT (SELECT count(*) FROM candidates) AS candidates,
       (SELECT count(*) FROM tasks) AS tasks,
       (SELECT count(*) FROM test_set WHERE in_test_set) AS verified,
       (SELECT count(*) FROM v_audit_tasks WHERE verified AND n_hidden > 0) AS tasks_with_hidden_names,
       (SELECT coalesce(sum(n_hidden), 0)::BIGINT FROM v_audit_hidden_by_kind) AS hidden_names,
       (SELECT coalesce(string_agg(cfg_kind || ' ' || n_hidden, ', ' ORDER BY n_hidden DESC, cfg_kind), '')
          FROM v_audit_hidden_by_kind) AS hidden_by_kind,
       (SELECT count(*) FROM v_audit_tasks WHERE verified AND behavior_gradable) AS behavior_gradable,
       (SELECT count(*) FROM v_audit_tasks WHERE verified AND behavior_gradable IS NULL) AS behavior_unknown,
       (SELECT coalesce(sum(n), 0)::BIGINT FROM v_leftover_names) AS leftover_names,
       (SELECT coalesce(sum(n), 0)::BIGINT FROM leftover_names WHERE kept = 'english_word') AS kept_english_words;
