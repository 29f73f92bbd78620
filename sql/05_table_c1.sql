-- v_table_c1: Table C.1, identifier kinds over renamed identifiers and hidden required
-- names of the test set (n and percent of each column).
-- Reads: identifiers, required_names, test_set.
CREATE OR REPLACE VIEW v_table_c1 AS
WITH renamed AS (
  SELECT category, count(*) AS n FROM identifiers i JOIN test_set s USING (task_id)
  WHERE s.in_test_set GROUP BY category),
hidden AS (
  SELECT category, count(*) AS n FROM required_names r JOIN test_set s USING (task_id)
  WHERE s.in_test_set AND r.hidden GROUP BY category),
kinds AS (SELECT * FROM (VALUES ('domain', 1), ('convention', 2), ('abbreviation', 3)) k(category, ord))
SELECT k.category,
       coalesce(r.n, 0) AS renamed,
       round(100.0 * coalesce(r.n, 0) / nullif((SELECT sum(n) FROM renamed), 0), 1) AS renamed_pct,
       coalesce(h.n, 0) AS hidden,
       round(100.0 * coalesce(h.n, 0) / nullif((SELECT sum(n) FROM hidden), 0), 1) AS hidden_pct
FROM kinds k LEFT JOIN renamed r USING (category) LEFT JOIN hidden h USING (category)
ORDER BY k.ord;
