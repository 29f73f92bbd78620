-- v_manifest_mismatch: test-set tasks whose original distinct-state count differs from the
--   corpus manifest's distinctStates.
-- v_state_equality: per test-set task, whether the renamed copy's TLC result, distinct
--   states and depth equal the original's (all must be true by construction).
-- Reads: test_set.
CREATE OR REPLACE VIEW v_manifest_mismatch AS
SELECT task_id, original_distinct_states, manifest_distinct_states, manifest_note
FROM test_set WHERE in_test_set AND manifest_match = false;

CREATE OR REPLACE VIEW v_state_equality AS
SELECT task_id,
       original_kind = renamed_kind AS same_result,
       original_distinct_states = renamed_distinct_states AS same_distinct_states,
       original_depth = renamed_depth AS same_depth
FROM test_set WHERE in_test_set;
