"""Table V.1 (similarity), Appendices L, M, N, the exposure tables (Table 2, F.1, O.1) and
Figures S.1, T.1, U.1: the views of sql/11_*..15_* against pandas on a small synthetic
store, and every statistic against an independent computation (hand-computed BLEU and an
LCS by hand for ROUGE-L, direct alias.stats calls). A store without the data says
"no data"."""
from __future__ import annotations

import math
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from alias import stats as S
from alias.generate.continuation import continuation_item, continuation_rows, longest_shared_token_run
from alias.report import appendix_tables as A
from alias.report import exposure as E
from alias.report import figures as F
from alias.report import similarity as V
from alias.report.stats_tables import table_1, table_u_hidden
from alias.config import ConfigError
from alias.store.db import StoreError, build_store, query, write_parquet
from alias.tla.lexer import strip_comments
from conftest import embedded_config, folders_under

from test_stats_views import (COVERED, MODELS, TEST_TASKS, _frame, _path,  # tests/ on sys.path
                              synthetic_tables)

SQL = Path(__file__).resolve().parents[1] / "sql"
B = 300
SEED = 11

#: Renamed descriptions: T1 names Paxos, T2 the dining philosophers, T3 only a problem word.
DESCRIPTIONS = {"T1": "A Paxos consensus protocol among Gmbn acceptors.",
                "T2": "The dining-philosophers problem with Qwert forks.",
                "T3": "Processes reach consensus on one value.",
                "T4": "A clock with an hour hand.", "T5": "A traffic light.", "T6": "A buffer of bounded size."}
ARMS = [{"family": "fam", "arm": "task-pair", "half_A": "gpt-5", "half_B": "opus-4.8"}]
HALF = {"T1": "A", "T2": "A", "T3": "B", "T4": "B", "T5": "A", "T6": "B"}
#: Truncated samples: at the token limit, without a closing line, or flagged by extraction.
HIT_LIMIT = {("gpt-5", "T2", "random", 0), ("gpt-5", "T5", "original", 1)}
NO_CLOSING = {("opus-4.8", "T3", "random", 2)}
EXTRACTION_TRUNCATED = {("opus-4.8", "T6", "original", 3)}
CLEAN = {"gpt-5": {"T1", "T3", "T4", "T6"}, "opus-4.8": {"T1", "T2", "T4", "T5"}}


def _module(name: str, k: int) -> str:
    return (f"---- MODULE {name} ----\n\\* comment {k}\nEXTENDS Naturals\nVARIABLE x{k}\n"
            f"(* block (* nested *) comment *)\nInit == x{k} = {k}\nNext == x{k}' = x{k} + 1\n"
            f"Spec == Init /\\ [][Next]_x{k}\n====\n")


def appendix_tables(seed: int = 0) -> tuple[dict[str, pd.DataFrame], pd.DataFrame]:
    """The synthetic store of test_stats_views plus modules, renamed modules and
    descriptions, continuations, split and loglik; and the samples' generation metadata
    (extracted module, truncation flags) as a frame to add to the store."""
    rng = np.random.default_rng(seed + 1)
    tables = synthetic_tables(seed)
    mods, rmods, rtasks = [], [], []
    for k, t in enumerate(TEST_TASKS):
        mods.append({"task_id": t, "module": f"M{t}", "role": "system", "path": f"{t}/M{t}.tla",
                     "text": _module(f"M{t}", k), "sha256": "x"})
        rmods.append({"task_id": t, "module": f"R{t}", "original_module": f"M{t}", "role": "system",
                      "path": f"{t}/R{t}.tla", "text": _module(f"R{t}", k).replace(f"x{k}", f"q{k}"),
                      "sha256": "y"})
        rtasks.append({"task_id": t, "condition": "random", "status": "ok", "description": DESCRIPTIONS[t],
                       "n_renamed": 1, "n_leftover": 0})
    tables["modules"] = _frame("modules", mods)
    tables["renamed_modules"] = _frame("renamed_modules", rmods)
    tables["renamed_tasks"] = _frame("renamed_tasks", rtasks)
    tables["split"] = _frame("split", [{"task_id": t, "half": h} for t, h in HALF.items()])
    ll = []
    for model in MODELS:
        for t in TEST_TASKS:
            for cond in ("original", "random"):
                seen = (HALF[t] == "A") == (model == "gpt-5")
                base = -1.0 + (0.3 if seen else 0.0) + (0.0 if cond == "original" else -0.1 - (0.15 if seen else 0))
                ll.append({"task_id": t, "condition": cond, "model": model,
                           "mean_loglik": base + rng.normal(0, 0.02), "outside_loglik": base + 0.1,
                           "identifier_loglik": base - 0.5 + rng.normal(0, 0.05)})
    tables["loglik"] = _frame("loglik", ll)
    # continuations through the real code path (alias.generate.continuation)
    items, outs = [], []
    for k, t in enumerate(TEST_TASKS):
        for cond, text in (("original", mods[k]["text"]), ("random", rmods[k]["text"])):
            it = continuation_item(t, cond, text * 3, "tlaplus/Examples", f"{t}.tla", min_lines=3)
            items.append(it)
            lines = it.remainder.splitlines(keepends=True)[: int(rng.integers(2, 25))]
            outs.append({"task_id": t, "condition": cond, "model": "opus-4.8", "sample_idx": 0,
                         "text": "```tla\n" + "".join(lines) + "```\n"})
    tables["continuations"] = continuation_rows(items, outs)
    s = tables["samples"]
    meta = s[["task_id", "condition", "model", "sample_idx"]].copy()
    frontier = ~meta["model"].str.startswith("control:")
    meta["extracted_module"] = [(_module("Out", i % 7) if (i % 3) else None) for i in range(len(meta))]
    meta["output_tokens"] = rng.integers(100, 1024, len(meta))
    key = list(zip(meta["model"], meta["task_id"], meta["condition"], meta["sample_idx"]))
    meta["hit_token_limit"] = [k in HIT_LIMIT for k in key]
    meta["has_closing_line"] = [k not in NO_CLOSING for k in key]
    meta["truncated"] = meta["hit_token_limit"] | ~meta["has_closing_line"]
    v = tables["verdicts"]
    vkey = list(zip(v["model"], v["task_id"], v["condition"], v["sample_idx"]))
    v["truncated"] = [k in EXTRACTION_TRUNCATED for k in vkey]
    assert frontier.any()
    return tables, meta


def make_store(root: Path, tables: dict[str, pd.DataFrame], meta: pd.DataFrame | None,
               arms=ARMS) -> Path:
    for name, df in tables.items():
        write_parquet(df, root / _path(name))
    db = root / "data" / "alias.duckdb"
    build_store(db, folders_under(root), SQL, tables={"exposure_arms": E.exposure_arm_rows(_entries(arms))})
    if meta is not None:
        # the generate stage adds these columns to `samples`; create them where this store lacks them
        con = duckdb.connect(str(db))
        try:
            for col, typ in (("extracted_module", "VARCHAR"), ("output_tokens", "BIGINT"), ("truncated", "BOOLEAN"),
                             ("hit_token_limit", "BOOLEAN"), ("has_closing_line", "BOOLEAN")):
                con.execute(f"ALTER TABLE samples ADD COLUMN IF NOT EXISTS {col} {typ}")
            con.register("meta", meta)
            con.execute("UPDATE samples s SET extracted_module = m.extracted_module, output_tokens = m.output_tokens, "
                        "truncated = m.truncated, hit_token_limit = m.hit_token_limit, "
                        "has_closing_line = m.has_closing_line FROM meta m WHERE s.task_id = m.task_id AND "
                        "s.condition = m.condition AND s.model = m.model AND s.sample_idx = m.sample_idx")
        finally:
            con.close()
    return db


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tables, meta = appendix_tables()
    db = make_store(tmp_path_factory.mktemp("appendix_store"), tables, meta)
    return db, tables, meta


@pytest.fixture(scope="module")
def empty_db(tmp_path_factory):
    root = tmp_path_factory.mktemp("empty_store")
    db = root / "data" / "alias.duckdb"
    build_store(db, folders_under(root), SQL)
    return db


def _frontier(df: pd.DataFrame) -> pd.DataFrame:
    return df[~df["model"].str.startswith("control:") & df["task_id"].isin(TEST_TASKS)]


# ------------------------------------------------------------------------ similarity
def test_similarity_tokens_without_comments():
    src = 'A == 1 \\* line\n(* outer (* inner *) still *)B == "x \\* y (* z *)"\n(* open'
    assert strip_comments(src) == 'A == 1 \nB == "x \\* y (* z *)"\n'
    assert V.similarity_tokens(src) == ["A", "==", "1", "B", "==", '"x\u2581\\*\u2581y\u2581(*\u2581z\u2581*)"']


def test_bleu4_hand_computed():
    # equal lengths: clipped n-gram precisions 5/6, 4/5, 3/4, 2/3, no brevity penalty
    hyp, ref = "a b c d e f", "a b c d e g"
    assert V.bleu4(hyp, ref) == pytest.approx(100 * (5 / 6 * 4 / 5 * 3 / 4 * 2 / 3) ** 0.25, abs=1e-9)
    # all precisions 1, hypothesis 5 tokens against 7: brevity penalty exp(1 - 7/5)
    assert V.bleu4("a b c d e", "a b c d e f g") == pytest.approx(100 * math.exp(1 - 7 / 5), abs=1e-9)
    # comments on either side do not count
    assert V.bleu4("a b (* x y *) c d e \\* z\n f", "a b c d e f") == pytest.approx(100.0)
    assert V.bleu4("", "a b") == 0.0


def _lcs(a: list, b: list) -> int:
    dp = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            dp[i + 1][j + 1] = dp[i][j] + 1 if x == y else max(dp[i][j + 1], dp[i + 1][j])
    return dp[-1][-1]


def test_rouge_l_lcs_by_hand():
    hyp, ref = "a b c d", "a c b d e"
    lcs = 3                                  # a b d (or a c d)
    p, r = lcs / 4, lcs / 5
    assert V.rouge_l(hyp, ref) == pytest.approx(100 * 2 * p * r / (p + r))
    # TLA+ tokens, an LCS computed here
    out, ref = "Init == x = 0 /\\ y = 1", "Init == /\\ x = 0 /\\ z = 1"
    th, tr = V.similarity_tokens(out), V.similarity_tokens(ref)
    assert th == ["Init", "==", "x", "=", "0", "/\\", "y", "=", "1"]
    k = _lcs(th, tr)
    assert k == 8
    assert V.rouge_l(out, ref) == pytest.approx(100 * 2 * k / (len(th) + len(tr)))


def test_v_similarity_inputs(store):
    db, tables, meta = store
    got = query("SELECT * FROM v_similarity_inputs ORDER BY model, task_id, condition, sample_idx", db)
    s = _frontier(tables["samples"]).merge(meta, on=["task_id", "condition", "model", "sample_idx"])
    s = s[s["condition"].isin(["original", "random"])]
    assert len(got) == len(s)
    ref = {("original", r.task_id): r.text for r in tables["modules"].itertuples()}
    ref |= {("random", r.task_id): r.text for r in tables["renamed_modules"].itertuples()}
    m = got.merge(s, on=["task_id", "condition", "model", "sample_idx"])
    assert len(m) == len(got)
    ext = m["extracted_module_y"] if "extracted_module_y" in m else m["extracted_module"]
    expected_out = [e if isinstance(e, str) else t for e, t in zip(ext, m["text"])]
    assert m["output_text"].tolist() == expected_out
    assert m["extracted"].tolist() == [isinstance(e, str) for e in ext]
    assert m["reference_text"].tolist() == [ref[(c, t)] for c, t in zip(m["condition"], m["task_id"])]


def test_table_v1_matches_pandas(store):
    db, tables, meta = store
    samples = V.similarity_samples(db)
    assert len(samples) == len(query("SELECT * FROM v_similarity_inputs", db))
    inputs = query("SELECT * FROM v_similarity_inputs", db).iloc[:5]
    for r in inputs.itertuples():               # per-sample scores are the library's
        hit = samples[(samples.task_id == r.task_id) & (samples.model == r.model) & (samples.condition == r.condition)
                      & (samples.sample_idx == r.sample_idx)].iloc[0]
        assert hit.bleu4 == pytest.approx(V.bleu4(r.output_text, r.reference_text))
        assert hit.rouge_l == pytest.approx(V.rouge_l(r.output_text, r.reference_text))
    t = V.table_v1(samples, n_resamples=B, seed=SEED)
    for model in MODELS:
        for measure in ("bleu4", "rouge_l"):
            row = t[(t.model == model) & (t.measure == measure)].iloc[0]
            per_task = samples[samples.model == model].groupby(["task_id", "condition"])[measure].mean().unstack()
            assert row["original"] == pytest.approx(per_task["original"].mean())
            assert row["random"] == pytest.approx(per_task["random"].mean())
            both = per_task[["original", "random"]].dropna()
            d = S.mean_difference(both["original"], both["random"], n_resamples=B, seed=SEED, scale=1.0)
            assert (row["decrease"], row["ci_low"], row["ci_high"]) == pytest.approx((d.estimate, d.ci_low, d.ci_high))
            assert row["paired_tasks"] == len(both) == len(TEST_TASKS)
            assert row["meaningful"] is None       # no meaningful reference in the store


# ------------------------------------------------------------------------ truncation
def _truncated(tables, meta) -> pd.DataFrame:
    v = tables["verdicts"].groupby(["task_id", "condition", "model", "sample_idx"])["truncated"].any().reset_index()
    m = meta.merge(v, on=["task_id", "condition", "model", "sample_idx"], how="left", suffixes=("", "_v"))
    m["trunc"] = m["truncated"] | m["hit_token_limit"] | ~m["has_closing_line"] | m["truncated_v"].fillna(False)
    return _frontier(m)


def test_truncation_views_match_pandas(store):
    db, tables, meta = store
    m = _truncated(tables, meta)
    got = query("SELECT * FROM v_truncation_rates ORDER BY model, condition", db)
    exp = m.groupby(["model", "condition"])["trunc"].agg(["size", "sum"]).reset_index()
    assert got["n_samples"].tolist() == exp["size"].tolist()
    assert got["n_truncated"].tolist() == exp["sum"].tolist()
    np.testing.assert_allclose(got["truncated_share"], exp["sum"] / exp["size"])
    tasks = query("SELECT * FROM v_truncation_tasks ORDER BY model, task_id", db)
    exp_t = m.groupby(["model", "task_id"])["trunc"].sum().reset_index()
    assert tasks["no_truncation"].tolist() == (exp_t["trunc"] == 0).tolist()
    for model in MODELS:
        assert set(tasks[(tasks.model == model) & tasks.no_truncation].task_id) == CLEAN[model]


def test_truncation_table_matches_direct_stats(store):
    db, tables, meta = store
    m = _truncated(tables, meta)
    clean = m.groupby(["model", "task_id"])["trunc"].sum()
    rates, expo = A.table_n_truncation(db, n_resamples=B, seed=SEED)
    v = _frontier(tables["verdicts"])
    for model in MODELS:
        keep = sorted(t for t in TEST_TASKS if clean[(model, t)] == 0)
        assert set(keep) == CLEAN[model]
        r = S.pass_rates(v[(v.model == model) & (v.grade == "name") & v.task_id.isin(keep)])
        w = r.pivot(index="task_id", columns="condition", values="rate").sort_index()
        row = rates[(rates.model == model) & (rates.grade == "name")].iloc[0]
        d = S.mean_difference(w["original"], w["random"], n_resamples=B, seed=SEED)
        assert row["subset_tasks"] == len(keep) and row["all_tasks"] == len(TEST_TASKS)
        assert (row["decrease"], row["ci95_low"], row["ci95_high"]) == pytest.approx((d.estimate, d.ci_low, d.ci_high))
    # exposure on the tasks where neither model has a truncated output
    both_clean = sorted(CLEAN["gpt-5"] & CLEAN["opus-4.8"])
    assert both_clean == ["T1", "T4"]
    trained_on = {t: ("gpt-5" if HALF[t] == "A" else "opus-4.8") for t in both_clean}
    r = S.pass_rates(v[(v.grade == "name") & v.task_id.isin(both_clean)], by=("model",))
    su = S.seen_unseen_rates(r[r.condition.isin(["original", "random"])], trained_on)
    e = S.exposure_effects(su[("original", "seen")], su[("original", "unseen")], su[("random", "seen")],
                           su[("random", "unseen")], n_resamples=B, seed=SEED)
    row = expo[(expo.grade == "name")].iloc[0]
    assert row["tasks"] == 2
    assert (row["unseen_cost"], row["did"]) == pytest.approx((e.unseen_cost.estimate, e.did.estimate))


# ------------------------------------------------------------------------ known names
def test_known_names_marks(store):
    db, *_ = store
    k = query("SELECT * FROM v_known_names ORDER BY list_name, task_id", db)
    fixed = set(k[(k.list_name == "fixed") & k.marked].task_id)
    broader = set(k[(k.list_name == "broader") & k.marked].task_id)
    assert fixed == {"T1", "T2"}                 # Paxos; dining philosophers
    assert broader == {"T1", "T2", "T3"}         # + consensus
    assert k[(k.list_name == "broader") & (k.task_id == "T1")].matched_terms.iloc[0] == "Paxos; consensus"
    terms = query("SELECT * FROM v_known_name_terms", db)
    assert set(terms[terms.list_name == "fixed"].term) < set(terms[terms.list_name == "broader"].term)


def test_known_names_table_matches_direct_stats(store):
    db, tables, _ = store
    tm = A.table_m_known_names(db, n_resamples=B, seed=SEED)
    v = _frontier(tables["verdicts"])
    for model in MODELS:
        r = S.pass_rates(v[(v.model == model) & (v.grade == "name")])
        w = r.pivot(index="task_id", columns="condition", values="rate").sort_index()
        dec = (w["original"] - w["random"]).to_numpy()
        mask = w.index.isin(["T1", "T2"])
        perm = S.permutation_test_groups(dec, mask, n_permutations=B, seed=SEED)
        rows = tm[(tm.model == model) & (tm.grade == "name") & (tm.list == "fixed")]
        known, other = rows[rows.group == "known name"].iloc[0], rows[rows.group == "other"].iloc[0]
        assert known["tasks"] == 2 and other["tasks"] == 4
        assert known["decrease"] == pytest.approx(dec[mask].mean() * 100)
        assert other["decrease"] == pytest.approx(dec[~mask].mean() * 100)
        assert known["perm_p"] == pytest.approx(perm.p_value) and known["perm_diff"] == pytest.approx(perm.estimate)
        beh = tm[(tm.model == model) & (tm.grade == "behavior") & (tm.list == "fixed")]
        assert beh["tasks"].sum() == len(COVERED)


# ------------------------------------------------------------------------ continuation
def test_continuation_views_and_table(store):
    db, tables, _ = store
    c = tables["continuations"]
    got = query("SELECT * FROM v_continuation_paired ORDER BY task_id", db)
    w = c.pivot(index="task_id", columns="condition", values="longest_run").astype(float).sort_index()
    assert got["original_run"].tolist() == w["original"].tolist()
    assert got["renamed_run"].tolist() == w["random"].tolist()
    # the stored runs are the library's
    r0 = c.iloc[0]
    assert r0.longest_run == longest_shared_token_run(r0.continuation, r0.reference_remainder)
    v = _frontier(tables["verdicts"])
    r = S.pass_rates(v[(v.model == "opus-4.8") & (v.grade == "name")])
    pr = r.pivot(index="task_id", columns="condition", values="rate").sort_index()
    dec = (pr["original"] - pr["random"]).to_numpy()
    np.testing.assert_allclose(got["decrease"], dec)
    tl = A.table_l_continuation(db, n_resamples=B, seed=SEED, long_run=20)
    row = tl.iloc[0]
    assert row["model"] == "opus-4.8" and row["tasks"] == len(TEST_TASKS)
    assert row["long_original"] == int((w["original"] >= 20).sum())
    assert row["long_renamed"] == int((w["random"] >= 20).sum())
    assert 0 < row["long_original"] < len(TEST_TASKS)
    diff = (w["original"] - w["random"]).to_numpy()
    sp = S.spearman_permutation(diff, dec, n_permutations=B, seed=SEED)
    assert row["spearman_rho"] == pytest.approx(sp.rho) and row["spearman_p"] == pytest.approx(sp.p_value)
    long_mask = w["original"].to_numpy() >= 20
    perm = S.permutation_test_groups(dec, long_mask, n_permutations=B, seed=SEED)
    assert row["long_decrease"] == pytest.approx(perm.mean_group) and row["long_perm_p"] == pytest.approx(
        perm.p_value)
    p95 = np.percentile(w["random"], 95)
    assert row["renamed_p95"] == pytest.approx(p95)
    assert row["above_p95"] == int((w["original"] > p95).sum())


# ------------------------------------------------------------------------ exposure
def _entries(arms) -> tuple:
    """``report.exposure`` entries as the configuration reads them."""
    return embedded_config({"report.exposure": list(arms)}).report.exposure


def test_exposure_arm_rows_validation():
    rows = E.exposure_arm_rows(_entries(ARMS))
    assert rows.to_dict("records") == [{"family": "fam", "arm": "task-pair", "half": "A", "model": "gpt-5"},
                                       {"family": "fam", "arm": "task-pair", "half": "B", "model": "opus-4.8"}]
    assert E.exposure_arm_rows(()).empty
    for bad in ([{"family": "f", "arm": "other", "half_A": "a", "half_B": "b"}],
                [{"family": "f", "arm": "task-pair", "half_A": "a", "half_B": "a"}],
                [{"family": "f", "arm": "task-pair", "half_A": "a"}], ["x"], {"a": 1},
                ARMS + ARMS):
        with pytest.raises(ConfigError, match="report.exposure"):
            _entries(bad)


def test_build_store_rejects_bad_rows(tmp_path):
    rows = E.exposure_arm_rows(_entries(ARMS))
    db = tmp_path / "sub" / "alias.duckdb"
    with pytest.raises(StoreError, match="unknown table"):
        build_store(db, folders_under(tmp_path), SQL, tables={"no_such_table": rows})
    assert not (tmp_path / "sub").exists()               # nothing written
    with pytest.raises(StoreError, match="missing columns"):
        build_store(db, folders_under(tmp_path), SQL, tables={"exposure_arms": rows.drop(columns=["model"])})
    assert not db.exists()


def test_exposure_views_and_effects_match_direct_stats(store):
    db, tables, _ = store
    eff = E.exposure_effects_table(db, n_resamples=B, seed=SEED)
    v = _frontier(tables["verdicts"])
    trained_on = {t: ("gpt-5" if HALF[t] == "A" else "opus-4.8") for t in TEST_TASKS}
    for grade, tasks in (("name", TEST_TASKS), ("behavior", sorted(COVERED))):
        r = S.pass_rates(v[(v.grade == grade) & v.task_id.isin(tasks) & v.condition.isin(["original", "random"])],
                         by=("model",))
        su = S.seen_unseen_rates(r, trained_on)
        paired = query(f"SELECT * FROM v_exposure_paired WHERE grade = '{grade}' ORDER BY task_id", db)
        paired = paired[paired.task_id.isin(tasks)]
        np.testing.assert_allclose(paired["original_seen"], su[("original", "seen")])
        np.testing.assert_allclose(paired["renamed_unseen"], su[("random", "unseen")])
        e = S.exposure_effects(su[("original", "seen")], su[("original", "unseen")], su[("random", "seen")],
                               su[("random", "unseen")], n_resamples=B, seed=SEED)
        row = eff[(eff.measure == grade)].iloc[0]
        assert row["tasks"] == len(tasks)
        for k in ("exposure_original", "did", "unseen_cost"):
            b = getattr(e, k)
            assert (row[k], row[f"{k}_low"], row[f"{k}_high"]) == pytest.approx((b.estimate, b.ci_low, b.ci_high))
    ll = tables["loglik"]
    ll = ll[ll.task_id.isin(TEST_TASKS)]
    su = S.seen_unseen_rates(ll, trained_on, rate_col="mean_loglik")
    e = S.exposure_effects(su[("original", "seen")], su[("original", "unseen")], su[("random", "seen")],
                           su[("random", "unseen")], n_resamples=B, seed=SEED, scale=1.0)
    row = eff[eff.measure == "all"].iloc[0]
    assert (row["did"], row["did_low"], row["did_high"]) == pytest.approx((e.did.estimate, e.did.ci_low, e.did.ci_high))
    assert row["did"] == pytest.approx(0.15, abs=0.05)        # the synthetic DiD built in
    assert row["seen_higher"] == len(TEST_TASKS) and row["tasks"] == len(TEST_TASKS)


def test_exposure_reports(store, tmp_path):
    db, *_ = store
    res = E.write_exposure_reports(db, tmp_path, n_resamples=B, seed=SEED)
    t2 = (tmp_path / "table_2.md").read_text()
    assert "| fam | Correct, behavior | 4 |" in t2 and "Likelihood, other" in t2
    o1 = (tmp_path / "table_O1.md").read_text()
    assert "Log-likelihood higher when seen (tasks) | 6/6 | no data |" in o1   # no spec-only arm
    f1 = (tmp_path / "table_F1.md").read_text()
    assert "Original, seen / unseen" in f1 and "no data" not in f1.split("|---|")[-1]
    assert set(res["files"]) == {"table_2.md", "table_F1.md", "table_O1.md"}


# ------------------------------------------------------------------------ figures and reports
def _png_ok(p: Path) -> bool:
    return p.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and p.stat().st_size > 5000


def test_figures_with_data(store, tmp_path):
    db, *_ = store
    t1 = table_1(db, n_resamples=B, seed=SEED)
    tu = table_u_hidden(db, n_resamples=B, seed=SEED)
    eff = E.exposure_effects_table(db, n_resamples=B, seed=SEED)
    res = F.write_figures(tmp_path, table_u=tu, table1=t1, effects=eff)
    for name in ("figure_S1.png", "figure_T1.png", "figure_U1.png"):
        assert _png_ok(tmp_path / "figures" / name), name
    s1 = pd.read_csv(tmp_path / "plots" / "figure_S1.csv")
    assert len(s1) == len(MODELS) * 2 * 2
    hid = tu[(tu.model == "opus-4.8") & (tu.grade == "name") & (tu.scope == "test set") & (tu.split == "hidden")].iloc[0]
    got = s1[(s1.model == "opus-4.8") & (s1.split == "hidden") & (s1.condition == "original")].pass_pct.iloc[0]
    assert got == pytest.approx(hid["original_pct"], abs=1e-4)
    u1 = pd.read_csv(tmp_path / "plots" / "figure_U1.csv")
    cov = t1[(t1.model == "gpt-5") & (t1.grade == "behavior")].iloc[0]
    row = u1[(u1.model == "gpt-5") & (u1.grade == "behavior")].iloc[0]
    assert (row.decrease, row.ci_low, row.ci_high) == pytest.approx((cov.decrease, cov.ci95_low, cov.ci95_high), abs=1e-4)
    assert res["rows"] == {"figure_S1.csv": 8, "figure_U1.csv": 4, "figure_T1a.csv": 4, "figure_T1b.csv": 4,
                           "figure_T1c.csv": 3}


def test_empty_store_says_no_data(empty_db, tmp_path):
    A.write_appendix_reports(empty_db, tmp_path, n_resamples=B)
    E.write_exposure_reports(empty_db, tmp_path, n_resamples=B)
    V.write_similarity_report(empty_db, tmp_path, n_resamples=B)
    for name in ("table_V1.md", "table_M_known_names.md", "table_N_truncation.md", "table_L_continuation.md",
                 "table_2.md", "table_F1.md", "table_O1.md"):
        text = (tmp_path / name).read_text()
        assert "no data" in text, name
        for line in text.splitlines():
            if line.startswith("| no data |") or line.startswith("| None |"):
                assert "| 0 |" not in line and "| 0.0 |" not in line, (name, line)
    t1 = table_1(empty_db, n_resamples=B)
    tu = table_u_hidden(empty_db, n_resamples=B)
    eff = E.exposure_effects_table(empty_db, n_resamples=B)
    res = F.write_figures(tmp_path, table_u=tu, table1=t1, effects=eff)
    assert all(v == 0 for v in res["rows"].values())
    for name in ("figure_S1.png", "figure_T1.png", "figure_U1.png"):
        assert _png_ok(tmp_path / "figures" / name)
    assert pd.read_csv(tmp_path / "plots" / "figure_S1.csv").empty


def test_store_without_generation_columns(tmp_path):
    """A `samples` table without the generation metadata columns still gives every view
    (NULL metadata: unknown truncation, raw text for similarity)."""
    tables, _ = appendix_tables()
    db = make_store(tmp_path, tables, None)
    meta = query("SELECT * FROM v_sample_meta WHERE model NOT LIKE 'control:%'", db)
    assert meta["extracted_module"].isna().all()
    # truncation is then known only from the grader's extraction flag (verdicts.truncated)
    assert meta["truncated_output"].notna().all()
    sim = query("SELECT output_text, extracted FROM v_similarity_inputs", db)
    assert (~sim["extracted"]).all() and (sim["output_text"] == "---- MODULE M ----").all()


def test_every_model_report_says_where_its_outputs_come_from(tmp_path):
    """Tables 1, U, P, M, N, L, V.1 (Experiment 1) name each model's source; Tables 2, F.1
    and O.1 (Experiment 2) name the exposure stage's."""
    from alias.report.stats_tables import write_stats_reports

    tables, meta = appendix_tables()
    s = tables["samples"]
    where = {"opus-4.8": "released outputs: a fixture file", "gpt-5": "provider model: gpt-5"}
    s["source"] = [where.get(m) for m in s["model"]]
    db = make_store(tmp_path / "store", tables, meta)
    out = tmp_path / "reports"
    write_stats_reports(db, out, n_resamples=B)
    A.write_appendix_reports(db, out, n_resamples=B)
    V.write_similarity_report(db, out, n_resamples=B)
    E.write_exposure_reports(db, out, n_resamples=B)
    for name in ("table_1.md", "table_U_hidden.md", "table_P_disagreements.md", "table_M_known_names.md",
                 "table_N_truncation.md",
                 "table_L_continuation.md", "table_V1.md"):
        text = (out / name).read_text()
        section = text[text.index("## Where the outputs come from"):]
        for model, source in where.items():
            assert f"| {model} | {source} |" in section, (name, section)
    for name in ("table_2.md", "table_F1.md", "table_O1.md"):
        assert "## Where the outputs come from" in (out / name).read_text(), name
