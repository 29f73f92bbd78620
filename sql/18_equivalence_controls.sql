-- Equivalence controls (issue 33, Table J.2): behavior-preserving restructurings of each
-- eligible reference (alias/grade/equivalence), kept only when TLC confirms them under the
-- mapping their generator knows, graded by both procedures of the behavior grade.
-- Reads: control_eligibility, control_samples, verdicts.

-- The classes, in the generators' order (a class not in this list still shows, last).
CREATE OR REPLACE VIEW v_equivalence_classes AS
SELECT class, ord FROM (VALUES
  ('reorder', 1), ('inline_extract', 2), ('merge_record', 3), ('split_variable', 4),
  ('constant_definition', 5), ('reencode', 6), ('history_variable', 7), ('split_action', 8)) c(class, ord)
UNION ALL
SELECT DISTINCT equiv_class, 100 FROM control_samples
WHERE equiv_class IS NOT NULL
  AND equiv_class NOT IN ('reorder', 'inline_extract', 'merge_record', 'split_variable', 'constant_definition',
                          'reencode', 'history_variable', 'split_action');

-- One row per kept variant of an eligible task and procedure: 'refinement' is the grade
-- `behavior` (the procedure grade.behavior.mappings names; refinement by default), 'renaming'
-- the grade `behavior_renaming` (always the paper's). passed is NULL until graded.
CREATE OR REPLACE VIEW v_equivalence_verdicts AS
SELECT cs.task_id, cs.equiv_class AS class, cs.sample_idx, cs.variant_id, cs.known_mapping,
       p.procedure, v.passed, v.reason, v.method, v.mapping
FROM control_samples cs
CROSS JOIN (VALUES ('behavior', 'refinement'), ('behavior_renaming', 'renaming')) p(grade, procedure)
LEFT JOIN verdicts v
  ON v.task_id = cs.task_id AND v.condition = 'original' AND v.model = cs.model
 AND v.sample_idx = cs.sample_idx AND v.grade = p.grade
WHERE cs.equiv_class IS NOT NULL AND cs.valid
  AND cs.task_id IN (SELECT task_id FROM control_eligibility WHERE eligible);

-- Table J.2: per class and procedure, the kept variants, how many the procedure accepts
-- and from how many tasks; NULL (no data) for a class the controls never generated.
CREATE OR REPLACE VIEW v_table_j2 AS
WITH ran AS (SELECT DISTINCT equiv_class AS class FROM control_samples WHERE equiv_class IS NOT NULL)
SELECT c.class, p.procedure,
       CASE WHEN c.class IN (SELECT class FROM ran) THEN count(v.task_id) END AS kept,
       CASE WHEN c.class IN (SELECT class FROM ran) THEN count(*) FILTER (WHERE v.passed) END AS accepted,
       CASE WHEN c.class IN (SELECT class FROM ran) THEN count(DISTINCT v.task_id) END AS tasks
FROM v_equivalence_classes c
CROSS JOIN (VALUES ('refinement', 1), ('renaming', 2)) p(procedure, pord)
LEFT JOIN v_equivalence_verdicts v ON v.class = c.class AND v.procedure = p.procedure
GROUP BY c.class, c.ord, p.procedure, p.pord
ORDER BY c.ord, c.class, p.pord;

-- Variants the generators made that TLC did not confirm (not graded), and classes that
-- made none for a task, by class and reason.
CREATE OR REPLACE VIEW v_equivalence_not_kept AS
SELECT equiv_class AS class,
       CASE WHEN sample_idx < 0 THEN 'not applicable' ELSE 'not confirmed' END AS outcome,
       CASE WHEN sample_idx < 0 THEN regexp_replace(split_part(detail, ';', 1), '^[a-z_]+:[^:]*: ', '')
            ELSE coalesce(json_extract_string(detail, '$.reason'), 'unknown') END AS reason,
       count(*) AS n, count(DISTINCT task_id) AS tasks
FROM control_samples
WHERE equiv_class IS NOT NULL AND NOT valid
GROUP BY ALL
ORDER BY class, outcome, n DESC, reason;

-- Kept variants the configured procedure rejects: each is a false negative of the grade.
CREATE OR REPLACE VIEW v_equivalence_rejected AS
SELECT class, task_id, sample_idx, variant_id, reason, known_mapping
FROM v_equivalence_verdicts
WHERE procedure = 'refinement' AND passed IS NOT NULL AND NOT passed
ORDER BY class, task_id, sample_idx;
