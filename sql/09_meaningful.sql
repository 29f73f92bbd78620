-- The meaningful-names condition (Appendix R).
-- v_meaningful_verified: one row: test-set tasks proposed for, replies received, valid
--   maps, maps applied, copies verified by SANY + TLC (the paper: 77 of 100), and the
--   proposer/model/view the maps came from.
-- v_meaningful_failures: per failure reason (no_reply, invalid_map, rename_error,
--   apply_error, sany_meaningful, tlc_meaningful_<kind>, state_mismatch), the tasks.
-- v_meaningful_problems: per map problem kind (missing, duplicate, original_name, ...),
--   the proposals and problems of that kind.
-- Reads: meaningful_proposals, meaningful_tasks.
CREATE OR REPLACE VIEW v_meaningful_verified AS
SELECT (SELECT count(*) FROM meaningful_proposals) AS proposed,
       (SELECT count(*) FROM meaningful_proposals WHERE reply IS NOT NULL) AS replies,
       (SELECT count(*) FROM meaningful_proposals WHERE valid) AS valid_maps,
       (SELECT count(*) FROM meaningful_tasks WHERE applied) AS applied,
       (SELECT count(*) FROM meaningful_tasks WHERE verified) AS verified,
       (SELECT string_agg(DISTINCT proposer || ':' || model || ' (' || view || ')', ', ')
          FROM meaningful_proposals) AS proposer;

CREATE OR REPLACE VIEW v_meaningful_failures AS
SELECT reason, count(*) AS tasks, string_agg(task_id, ', ' ORDER BY task_id) AS task_ids
FROM meaningful_tasks WHERE NOT verified
GROUP BY reason ORDER BY tasks DESC, reason;

CREATE OR REPLACE VIEW v_meaningful_problems AS
SELECT p.kind, count(DISTINCT m.task_id) AS proposals, count(*) AS problems
FROM meaningful_proposals AS m,
     unnest(json_extract_string(m.problems, '$[*].kind')) AS p(kind)
GROUP BY p.kind ORDER BY problems DESC, p.kind;
