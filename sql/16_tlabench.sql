-- Real model outputs against another benchmark's verdicts (TLA+-Bench's release: its 100
-- evaluation tasks, two frontier models' generations, its own SANY/TLC verdicts). Our
-- `tlabench` grade reproduces the benchmark's procedure (alias.grade.tlabench); `name` and
-- `behavior` are the paper's grades. One sample per (model, task): condition original,
-- sample 0. The statistics over tasks (bootstrap CIs of the pass rates) are computed in
-- Python (alias.report.tlabench). Every view is empty without external verdicts.

-- v_tlabench_outputs: one row per (source, regime, model, task_id) that either the
-- benchmark's verdicts or the replayed outputs have (`model`: the samples' model,
-- `<replay key>/<release model>`, so one model's default and cfgaware generations are two
-- models here; verdicts join samples on it, never on the release's name alone;
-- `release_model`: the release's name): the benchmark's sany_pass/tlc_pass
-- (tlc_pass NULL where it ran no TLC: false), ours from the `tlabench` grade, and the
-- `name` and `behavior` verdicts (and `behavior_renaming`, the paper's procedure, where graded). `in_release`: the release has the output file;
-- `has_reference`: the task is in our test set (its gold spec checked).
-- Reads: external_verdicts, samples, verdicts, test_set.
CREATE OR REPLACE VIEW v_tlabench_outputs AS
WITH ours AS (
  SELECT s.model, s.task_id,
         max(CASE WHEN v.grade = 'tlabench' THEN v.sany_exit_ok END) AS our_sany,
         max(CASE WHEN v.grade = 'tlabench' THEN coalesce(v.passed, false) END) AS our_tlc,
         max(CASE WHEN v.grade = 'tlabench' THEN v.reason END) AS our_reason,
         max(CASE WHEN v.grade = 'tlabench' THEN v.error_text END) AS our_error,
         max(CASE WHEN v.grade = 'tlabench' THEN v.detail END) AS our_detail,
         max(CASE WHEN v.grade = 'name' THEN coalesce(v.passed, false)::INT END)::BOOLEAN AS name_passed,
         max(CASE WHEN v.grade = 'name' THEN v.reason END) AS name_reason,
         max(CASE WHEN v.grade = 'name' THEN v.detail END) AS name_detail,
         max(CASE WHEN v.grade = 'name' THEN v.error_text END) AS name_error,
         max(CASE WHEN v.grade = 'behavior' THEN coalesce(v.passed, false)::INT END)::BOOLEAN AS behavior_passed,
         max(CASE WHEN v.grade = 'behavior' THEN v.reason END) AS behavior_reason,
         max(CASE WHEN v.grade = 'behavior' THEN v.mapping END) AS behavior_mapping,
         max(CASE WHEN v.grade = 'behavior' THEN v.error_text END) AS behavior_error,
         max(CASE WHEN v.grade = 'behavior_renaming' THEN coalesce(v.passed, false)::INT END)::BOOLEAN
           AS behavior_renaming_passed,
         max(CASE WHEN v.grade = 'behavior_renaming' THEN v.reason END) AS behavior_renaming_reason
  FROM samples s LEFT JOIN verdicts v
    ON v.task_id = s.task_id AND v.condition = s.condition AND v.model = s.model AND v.sample_idx = s.sample_idx
  WHERE s.condition = 'original' AND s.sample_idx = 0
    AND s.model IN (SELECT DISTINCT sample_model FROM external_verdicts)
  GROUP BY s.model, s.task_id
)
SELECT coalesce(e.source, 'tla-bench') AS source, e.regime, coalesce(e.sample_model, o.model) AS model,
       e.model AS release_model,
       coalesce(e.task_id, o.task_id) AS task_id,
       e.sany_pass AS their_sany, coalesce(e.tlc_pass, false) AS their_tlc, e.tlc_pass IS NULL AS their_tlc_absent,
       e.label AS their_label, e.evidence AS their_evidence,
       o.model IS NOT NULL AS in_release, e.model IS NOT NULL AS in_verdicts,
       coalesce(t.in_test_set, false) AS has_reference,
       o.our_sany, o.our_tlc, o.our_reason, o.our_error, o.our_detail,
       o.name_passed, o.name_reason, o.name_detail, o.name_error,
       o.behavior_passed, o.behavior_reason, o.behavior_mapping, o.behavior_error,
       o.behavior_renaming_passed, o.behavior_renaming_reason
FROM external_verdicts e
FULL OUTER JOIN ours o ON o.model = e.sample_model AND o.task_id = e.task_id
LEFT JOIN test_set t ON t.task_id = coalesce(e.task_id, o.task_id);

-- v_tlabench_agreement: per model, how often our `tlabench` grade gives the benchmark's
-- sany_pass and tlc_pass, on the outputs both have; outputs the verdicts list but the
-- release lacks, and outputs of tasks without a gold spec, counted apart.
-- Reads: v_tlabench_outputs.
CREATE OR REPLACE VIEW v_tlabench_agreement AS
SELECT model,
       count(*) FILTER (WHERE in_release AND in_verdicts AND our_sany IS NOT NULL) AS compared,
       count(*) FILTER (WHERE in_release AND in_verdicts AND our_sany = their_sany) AS sany_agree,
       count(*) FILTER (WHERE in_release AND in_verdicts AND our_sany IS NOT NULL AND our_tlc = their_tlc) AS tlc_agree,
       count(*) FILTER (WHERE in_verdicts AND NOT in_release) AS missing_from_release,
       count(*) FILTER (WHERE in_release AND NOT in_verdicts) AS missing_verdict,
       count(*) FILTER (WHERE NOT has_reference) AS without_reference
FROM v_tlabench_outputs GROUP BY model;

-- v_tlabench_disagreements: every output on which our `tlabench` grade and the benchmark
-- differ (on SANY or TLC), with both sides' evidence.
-- Reads: v_tlabench_outputs.
CREATE OR REPLACE VIEW v_tlabench_disagreements AS
SELECT model, task_id, their_sany, our_sany, their_tlc, our_tlc, their_label, their_evidence,
       our_reason, our_error, our_detail
FROM v_tlabench_outputs
WHERE in_release AND in_verdicts AND our_sany IS NOT NULL AND (our_sany <> their_sany OR our_tlc <> their_tlc);

-- v_tlabench_name_vs_tlc: our `name` grade (the task's cfg with the Appendix H changes)
-- against the benchmark's tlc_pass, one row per output both have, on test-set tasks.
-- Reads: v_tlabench_outputs.
CREATE OR REPLACE VIEW v_tlabench_name_vs_tlc AS
SELECT model, task_id, their_tlc, coalesce(name_passed, false) AS name_passed, name_reason, name_detail, name_error
FROM v_tlabench_outputs
WHERE in_release AND in_verdicts AND has_reference;

-- v_tlabench_name_vs_behavior: the two grades of the paper on these real outputs (Appendix
-- P), one row per output on a test-set task, with the map or the TLC error.
-- Reads: v_tlabench_outputs.
CREATE OR REPLACE VIEW v_tlabench_name_vs_behavior AS
SELECT model, task_id, coalesce(name_passed, false) AS name_passed, coalesce(behavior_passed, false) AS behavior_passed,
       name_reason, name_error, behavior_reason, behavior_mapping, behavior_error
FROM v_tlabench_outputs
WHERE in_release AND has_reference;
