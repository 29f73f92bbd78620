-- v_identifiers_per_task: renamed identifiers per test-set task (Appendix G: median 11).
-- v_identifier_categories: renamed identifiers by Appendix C category, test set only.
-- Reads: identifiers, test_set.
CREATE OR REPLACE VIEW v_identifiers_per_task AS
SELECT i.task_id, count(*) AS n_renamed,
       count(*) FILTER (WHERE i.category = 'domain') AS n_domain,
       count(*) FILTER (WHERE i.category = 'convention') AS n_convention,
       count(*) FILTER (WHERE i.category = 'abbreviation') AS n_abbreviation
FROM identifiers i JOIN test_set s USING (task_id)
WHERE s.in_test_set
GROUP BY i.task_id;

CREATE OR REPLACE VIEW v_identifier_categories AS
SELECT i.category, count(*) AS n
FROM identifiers i JOIN test_set s USING (task_id)
WHERE s.in_test_set
GROUP BY i.category;
