"""The statistics views (sql/10_stats.sql) against pandas computations on a synthetic store,
and the Table 1 / Appendix U / Appendix P reports (alias.report.stats_tables) against
direct alias.stats calls. A store with no data gives "no data" cells, never 0."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from alias import stats as S
from alias.report import stats_tables as T
from alias.store.db import build_store, query, write_parquet
from alias.store.models import TABLE_SOURCES
from conftest import folders_under, table_path

SQL = Path(__file__).resolve().parents[1] / "sql"
B = 300          # bootstrap resamples in these tests (the reports default to 10,000)
SEED = 7

TEST_TASKS = ["T1", "T2", "T3", "T4", "T5", "T6"]
OUTSIDE = "T7"                       # candidate task that is not in the test set
HIDDEN = {"T1", "T2", "T5"}          # cfg lists a name the description never mentions
ELIGIBLE = {"T1", "T2", "T3", "T4", "T5"}
SELF_PASSES = {"T1", "T2", "T3", "T4"}
COVERED = ELIGIBLE & SELF_PASSES     # tasks the behavior grade covers
MODELS = ["gpt-5", "opus-4.8"]
CONDITIONS = ["original", "random"]
MEANINGFUL = {("opus-4.8", "T1"), ("opus-4.8", "T2"), ("opus-4.8", "T6")}
N_SAMPLES = 5


def _path(table: str) -> Path:
    return table_path(table)


def _frame(table: str, rows: list[dict]) -> pd.DataFrame:
    model = TABLE_SOURCES[table][0]
    cols = [c.name for c in model.__table__.columns]
    return pd.DataFrame([{c: r.get(c) for c in cols} for r in rows], columns=cols)


def synthetic_tables(seed: int = 0) -> dict[str, pd.DataFrame]:
    """test_set, required_names, control_eligibility, samples and verdicts (frontier models
    and grader controls) for a handful of tasks."""
    rng = np.random.default_rng(seed)
    test_set = [{"task_id": t, "in_test_set": True} for t in TEST_TASKS] + \
               [{"task_id": OUTSIDE, "in_test_set": False, "reason": "renamed_tlc_fails"}]
    req = []
    for t in TEST_TASKS + [OUTSIDE]:
        if t == "T4":
            continue                                   # no cfg: no required names
        req.append({"task_id": t, "name": "N", "cfg_kind": "constant", "mentioned": True, "hidden": False})
        if t in HIDDEN | {OUTSIDE}:
            req.append({"task_id": t, "name": "TypeOK", "cfg_kind": "invariant", "mentioned": False,
                        "hidden": True, "category": "convention"})
    elig = [{"task_id": t, "eligible": t in ELIGIBLE, "reason": None if t in ELIGIBLE else "random_values"}
            for t in TEST_TASKS]
    samples, verdicts = [], []
    for t in ELIGIBLE:                                 # grader controls: excluded from every view
        for kind, passed in (("self", t in SELF_PASSES), ("mutant", True)):
            samples.append({"task_id": t, "condition": "original", "model": f"control:{kind}",
                            "sample_idx": 0, "text": "---- MODULE M ----"})
            verdicts.append({"task_id": t, "condition": "original", "model": f"control:{kind}",
                             "sample_idx": 0, "grade": "behavior", "passed": passed,
                             "reason": None if passed else "no_mapping"})
    p_pass = {"original": 0.55, "random": 0.3, "meaningful": 0.4}
    for model in MODELS:
        for t in TEST_TASKS + [OUTSIDE]:
            conds = CONDITIONS + (["meaningful"] if (model, t) in MEANINGFUL else [])
            for cond in conds:
                for i in range(N_SAMPLES):
                    key = {"task_id": t, "condition": cond, "model": model, "sample_idx": i}
                    samples.append(key | {"text": "---- MODULE M ----"})
                    trunc = bool(rng.random() < 0.2)
                    parse = bool(rng.random() < 0.8)
                    name = parse and bool(rng.random() < p_pass[cond])
                    beh = parse and bool(rng.random() < p_pass[cond] + 0.1)
                    for grade, ok, why in (("parse", parse, "sany_error"),
                                           ("name", name, rng.choice(["tlc_error", "tlc_violation"])),
                                           ("behavior", beh, rng.choice(["forward_failed", "no_mapping"]))):
                        verdicts.append(key | {"grade": grade, "passed": ok, "reason": None if ok else str(why),
                                               "truncated": trunc})
    out = {"test_set": _frame("test_set", test_set), "required_names": _frame("required_names", req),
           "control_eligibility": _frame("control_eligibility", elig),
           "samples": _frame("samples", samples), "verdicts": _frame("verdicts", verdicts)}
    out["samples"]["sample_idx"] = out["samples"]["sample_idx"].astype("int64")
    out["verdicts"]["sample_idx"] = out["verdicts"]["sample_idx"].astype("int64")
    return out


def make_store(root: Path, tables: dict[str, pd.DataFrame]) -> Path:
    """Write ``tables`` as Parquet at their TABLE_SOURCES paths under ``root`` and build the
    store ``root/data/alias.duckdb`` with the repository's views."""
    for name, df in tables.items():
        write_parquet(df, root / _path(name))
    db = root / "data" / "alias.duckdb"
    build_store(db, folders_under(root), SQL)
    return db


@pytest.fixture(scope="module")
def synth(tmp_path_factory):
    root = tmp_path_factory.mktemp("stats_store")
    tables = synthetic_tables()
    return make_store(root, tables), tables


def _frontier(tables) -> pd.DataFrame:
    v = tables["verdicts"]
    return v[~v.model.str.startswith("control:") & v.task_id.isin(TEST_TASKS)].copy()


def _expected_rates(tables) -> pd.DataFrame:
    return S.pass_rates(_frontier(tables), by=("model", "grade"), n_samples=N_SAMPLES)


def _expected_paired(tables) -> pd.DataFrame:
    r = _expected_rates(tables)
    w = r.pivot_table(index=["model", "grade", "task_id"], columns="condition", values="rate").reset_index()
    w["decrease"] = w["original"] - w["random"]
    return w


# --------------------------------------------------------------------------- views
def test_v_behavior_covered(synth):
    db, _ = synth
    got = query("SELECT * FROM v_behavior_covered ORDER BY task_id", db)
    assert got.task_id.tolist() == TEST_TASKS
    assert set(got.loc[got.covered, "task_id"]) == COVERED
    assert set(got.loc[got.eligible, "task_id"]) == ELIGIBLE


def test_v_task_rates_matches_pandas(synth):
    db, tables = synth
    got = query("SELECT * FROM v_task_rates", db)
    exp = _expected_rates(tables)
    assert not got.model.str.startswith("control:").any()
    assert set(got.task_id) == set(TEST_TASKS)
    m = exp.merge(got, on=["model", "task_id", "condition", "grade"], how="outer", suffixes=("_e", "_g"),
                  indicator=True)
    assert (m["_merge"] == "both").all()
    assert (m.n_samples_e == m.n_samples_g).all()
    assert (m.n_passed_e == m.n_passed_g).all()
    np.testing.assert_allclose(m.rate_e, m.rate_g)
    assert (m.behavior_covered == m.task_id.isin(COVERED)).all()
    f = _frontier(tables)
    trunc = f.groupby(["model", "task_id", "condition", "grade"]).truncated.sum().rename("t").reset_index()
    mt = got.merge(trunc, on=["model", "task_id", "condition", "grade"])
    assert (mt.n_truncated == mt.t).all() and len(mt) == len(got)


def test_v_paired_rates_matches_pandas(synth):
    db, tables = synth
    got = query("SELECT * FROM v_paired_rates", db)
    exp = _expected_paired(tables)
    m = exp.merge(got, on=["model", "grade", "task_id"], how="outer", indicator=True)
    assert (m["_merge"] == "both").all()
    np.testing.assert_allclose(m.original, m.original_rate)
    np.testing.assert_allclose(m.random, m.random_rate)
    np.testing.assert_allclose(m.decrease_x, m.decrease_y)
    np.testing.assert_allclose(m.meaningful, m.meaningful_rate)    # NaN where absent on both sides
    has_m = m.meaningful_rate.notna()
    assert set(zip(m.loc[has_m, "model"], m.loc[has_m, "task_id"])) == MEANINGFUL
    assert (m.original_n == N_SAMPLES).all() and (m.random_n == N_SAMPLES).all()


def test_v_hidden_split(synth):
    db, tables = synth
    got = query("SELECT * FROM v_hidden_split", db)
    paired = query("SELECT * FROM v_paired_rates", db)
    assert len(got) == len(paired)
    assert (got.has_hidden == got.task_id.isin(HIDDEN)).all()
    t4 = got[got.task_id == "T4"]
    assert (t4.n_required == 0).all() and not t4.has_hidden.any()


def _sample_grades(tables) -> pd.DataFrame:
    f = _frontier(tables)
    key = ["model", "task_id", "condition", "sample_idx"]
    n = f[f.grade == "name"].set_index(key)
    b = f[f.grade == "behavior"].set_index(key)
    g = pd.DataFrame({"name_ok": n.passed, "beh_ok": b.passed, "name_reason": n.reason,
                      "behavior_reason": b.reason}).reset_index()
    return g[g.task_id.isin(COVERED)]


def test_v_grade_disagreements_matches_pandas(synth):
    db, tables = synth
    got = query("SELECT * FROM v_grade_disagreements ORDER BY model, condition", db)
    g = _sample_grades(tables)
    exp = g.groupby(["model", "condition"]).apply(lambda d: pd.Series({
        "n_tasks": d.task_id.nunique(), "n_samples": len(d),
        "behavior_only": int((d.beh_ok & ~d.name_ok).sum()), "name_only": int((d.name_ok & ~d.beh_ok).sum()),
        "both_pass": int((d.name_ok & d.beh_ok).sum()), "neither": int((~d.name_ok & ~d.beh_ok).sum())}),
        include_groups=False).reset_index()
    got = got.sort_values(["model", "condition"]).reset_index(drop=True)
    exp = exp.sort_values(["model", "condition"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(got.astype({c: "int64" for c in exp.columns[2:]}), exp,
                                  check_dtype=False)
    assert (got.n_samples == got.behavior_only + got.name_only + got.both_pass + got.neither).all()
    full = got.condition != "meaningful"
    assert (got.n_samples[full] == len(COVERED) * N_SAMPLES).all()


def test_v_disagreement_samples_matches_pandas(synth):
    db, tables = synth
    got = query("SELECT * FROM v_disagreement_samples", db)
    g = _sample_grades(tables)
    d = g[g.name_ok != g.beh_ok].copy()
    assert len(got) == len(d) > 0
    d["disagreement"] = np.where(d.name_ok, "name_only", "behavior_only")
    d["failing_reason"] = np.where(d.name_ok, d.behavior_reason, d.name_reason)
    key = ["model", "task_id", "condition", "sample_idx"]
    m = d.merge(got, on=key, suffixes=("_e", "_g"))
    assert len(m) == len(d)
    assert (m.disagreement_e == m.disagreement_g).all()
    assert (m.failing_reason_e == m.failing_reason_g).all()
    assert (m.has_hidden == m.task_id.isin(HIDDEN)).all()
    assert got.failing_reason.notna().all()


def test_v_upper_bound_matches_pandas(synth):
    db, tables = synth
    got = query("SELECT * FROM v_upper_bound", db)
    g = _sample_grades(tables)
    g["either"] = g.name_ok | g.beh_ok
    exp = g.groupby(["model", "task_id", "condition"]).agg(
        n=("either", "size"), n_either=("either", "sum"), n_name=("name_ok", "sum"),
        n_behavior=("beh_ok", "sum")).reset_index()
    m = exp.merge(got, on=["model", "task_id", "condition"], how="outer", indicator=True)
    assert (m["_merge"] == "both").all()
    assert (m.n == m.n_samples).all()
    for c in ("n_either", "n_name", "n_behavior"):
        assert (m[f"{c}_x"] == m[f"{c}_y"]).all()
    np.testing.assert_allclose(m.rate, m.n_either_x / m.n)


# --------------------------------------------------------------------------- reports
def _direct(a, b) -> dict:
    md = S.mean_difference(a, b, n_resamples=B, seed=SEED)
    tost = S.tost_equivalence(a, b, margin=5.0, n_resamples=B, seed=SEED)
    st = S.sign_test(a, b)
    return {"tasks": len(a), "original_pct": md.mean_a, "random_pct": md.mean_b, "decrease": md.estimate,
            "ci95_low": md.ci_low, "ci95_high": md.ci_high, "ci90_low": tost.ci_low, "ci90_high": tost.ci_high,
            "tost_equivalent": tost.equivalent, "tost_p": tost.p_boot, "n_lower": st.n_a_higher,
            "n_higher": st.n_b_higher, "sign_p": st.p_value}


def _check_row(row, exp: dict):
    for k, v in exp.items():
        if isinstance(v, (bool, np.bool_)):
            assert bool(row[k]) == bool(v), k
        else:
            assert row[k] == pytest.approx(v, rel=1e-12, abs=1e-12), k


def test_table_1_matches_direct_stats(synth):
    db, tables = synth
    t1 = T.table_1(db, n_resamples=B, seed=SEED)
    assert len(t1) == len(MODELS) * len(T.TABLE_1_ROWS)
    w = _expected_paired(tables)
    for _, row in t1.iterrows():
        sel = w[(w.model == row.model) & (w.grade == row.grade)].sort_values("task_id")
        if row.scope == T.COVERED:
            sel = sel[sel.task_id.isin(COVERED)]
        else:
            assert len(sel) == len(TEST_TASKS)
        _check_row(row, _direct(sel.original.to_numpy(), sel.random.to_numpy()))
        assert row.original_pct == pytest.approx(100 * sel.original.mean())
        m = sel[sel.meaningful.notna()]
        if len(m):
            assert row.meaningful_pct == pytest.approx(100 * m.meaningful.mean())
            assert row.meaningful_tasks == len(m)
        else:
            assert pd.isna(row.meaningful_pct)


def test_table_u_hidden_matches_direct_stats(synth):
    db, tables = synth
    tu = T.table_u_hidden(db, n_resamples=B, seed=SEED)
    assert len(tu) == len(MODELS) * len(T.HIDDEN_ROWS) * 2
    w = _expected_paired(tables)
    for _, row in tu.iterrows():
        sel = w[(w.model == row.model) & (w.grade == row.grade)].sort_values("task_id")
        if row.scope == T.COVERED:
            sel = sel[sel.task_id.isin(COVERED)]
        sel = sel[sel.task_id.isin(HIDDEN) == (row.split == "hidden")]
        assert len(sel) >= 2
        _check_row(row, _direct(sel.original.to_numpy(), sel.random.to_numpy()))


def test_upper_bound_and_disagreement_table(synth):
    db, tables = synth
    g = _sample_grades(tables)
    g["either"] = g.name_ok | g.beh_ok
    rates = S.pass_rates(g, passed_col="either", by=("model",))
    ub = T.upper_bound_table(db, n_resamples=B, seed=SEED)
    for _, row in ub.iterrows():
        r = rates[rates.model == row.model]
        a = r[r.condition == "original"].sort_values("task_id").rate.to_numpy()
        b = r[r.condition == "random"].sort_values("task_id").rate.to_numpy()
        _check_row(row, _direct(a, b))
    tp = T.table_p_disagreements(db)
    assert set(zip(tp.model, tp.condition)) == ({(m, c) for m in MODELS for c in CONDITIONS}
                                                | {("opus-4.8", "meaningful")})
    opus_m = tp[(tp.model == "opus-4.8") & (tp.condition == "meaningful")].iloc[0]
    assert opus_m.samples == 2 * N_SAMPLES          # T1, T2 covered; T6 is not
    causes = T.disagreement_causes(db)
    assert causes.samples.sum() == int((g.name_ok != g.beh_ok).sum())


def test_write_stats_reports(synth, tmp_path):
    db, _ = synth
    res = T.write_stats_reports(db, tmp_path, n_resamples=B, seed=SEED)
    assert set(res["files"]) == {"table_1.md", "table_U_hidden.md", "table_P_disagreements.md"}
    for name in res["files"]:
        text = (tmp_path / name).read_text()
        assert "nan" not in text.lower().replace("meaningful", "")
    t1 = T.table_1(db, n_resamples=B, seed=SEED)
    r = t1[(t1.model == "opus-4.8") & (t1.grade == "name") & (t1.scope == T.TEST_SET)].iloc[0]
    assert res["stats"]["opus-4.8/name/test set/decrease"] == pytest.approx(r.decrease)
    assert res["stats"]["opus-4.8/name/test set/tasks"] == len(TEST_TASKS)
    md = (tmp_path / "table_1.md").read_text()
    assert f"{r.decrease:.1f} [{r.ci95_low:.1f}, {r.ci95_high:.1f}]" in md
    # meaningful only for opus: gpt-5 rows say no data in that column
    gpt_line = next(ln for ln in md.splitlines() if ln.startswith("| gpt-5 | Correct, name | test set"))
    assert gpt_line.rstrip(" |").endswith("no data")
    # GPT-5 / behavior / covered: 4 tasks; deterministic given the seed
    again = T.write_stats_reports(db, tmp_path / "again", n_resamples=B, seed=SEED)
    for name in res["files"]:
        assert (tmp_path / name).read_bytes() == Path(again["files"][name]).read_bytes()


def _table_rows(md: str) -> list[list[str]]:
    lines = [ln for ln in md.splitlines() if ln.startswith("| ")]
    return [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[1:]]


def test_empty_store_says_no_data(tmp_path):
    db = tmp_path / "data" / "alias.duckdb"
    build_store(db, folders_under(tmp_path / "nothing"), SQL)
    res = T.write_stats_reports(db, tmp_path / "out", n_resamples=B, seed=SEED)
    for name in ("table_1.md", "table_U_hidden.md", "table_P_disagreements.md"):
        md = (tmp_path / "out" / name).read_text()
        rows = _table_rows(md)
        assert rows, name
        for cells in rows:
            assert "0" not in cells and "0.0" not in cells, (name, cells)
        assert "no data" in md
    t1 = _table_rows((tmp_path / "out" / "table_1.md").read_text())
    assert len(t1) == len(T.TABLE_1_ROWS)
    for cells in t1:
        assert cells[0] == "no data" and all(c == "no data" for c in cells[3:])
    assert all(v is None for v in res["stats"].values())


def test_no_controls_means_no_behavior_rates(tmp_path):
    """Without the controls stage no task is covered: behavior rows say no data, the name
    rows over the test set still have numbers."""
    tables = synthetic_tables()
    v = tables["verdicts"]
    tables["verdicts"] = v[~v.model.str.startswith("control:")].reset_index(drop=True)
    del tables["control_eligibility"]
    db = make_store(tmp_path, tables)
    t1 = T.format_table_1(T.table_1(db, n_resamples=B, seed=SEED))
    beh = t1[t1.measure == "Correct, behavior"]
    assert len(beh) == len(MODELS) and beh["decrease [95% CI]"].isna().all()
    name = t1[(t1.measure == "Correct, name") & (t1["tasks set"] == T.TEST_SET)]
    assert name["decrease [95% CI]"].notna().all() and (name.tasks == str(len(TEST_TASKS))).all()
    tp = T.table_p_disagreements(db)
    assert tp.samples.isna().all()


def test_control_counts_keep_tasks_without_a_cfg_apart(tmp_path):
    """Table J.1's "N of M test-set tasks with a cfg": a task the controls saw without a cfg
    (reason no_cfg) is covered but not one of the M."""
    tables = synthetic_tables()
    elig = tables["control_eligibility"]
    elig.loc[elig.task_id == "T6", "reason"] = "no_cfg"
    c = query("SELECT * FROM v_control_counts", make_store(tmp_path, tables)).iloc[0]
    assert (c.controlled_tasks, c.tasks_with_cfg, c.eligible, c.not_eligible) == (6, 5, 5, 1)
