"""Tests of alias.stats against independent computations (scipy, pure-Python loops, hand
calculations, exhaustive enumeration) and a coverage simulation of the bootstrap interval."""
from __future__ import annotations

import itertools
import math
import time

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from alias import stats as S

# --------------------------------------------------------------------------- helpers


def _percentile(sorted_values: list[float], q: float) -> float:
    """numpy's default ('linear') percentile, written out: h = (B-1) q/100, interpolate."""
    h = (len(sorted_values) - 1) * q / 100.0
    lo = math.floor(h)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (h - lo) * (sorted_values[hi] - sorted_values[lo])


def _loop_bootstrap_means(values: list[float], n_resamples: int, seed: int) -> list[float]:
    """Slow bootstrap: one resample at a time from the documented stream of bootstrap_indices."""
    rng = np.random.default_rng(seed)
    n = len(values)
    means = []
    for _ in range(n_resamples):
        idx = rng.integers(0, n, size=n).tolist()
        total = 0.0
        for i in idx:
            total += values[i]
        means.append(total / n)
    return means


def _rates(rng: np.random.Generator, n: int, p=None) -> np.ndarray:
    """Pass rates out of 5 samples, as fractions."""
    p = rng.uniform(0, 1, n) if p is None else p
    return rng.binomial(5, p) / 5.0


# --------------------------------------------------------------------------- pass rates


def test_pass_rates_by_hand():
    df = pd.DataFrame({
        "task_id": ["t1"] * 5 + ["t1"] * 5 + ["t2"] * 5,
        "condition": ["original"] * 5 + ["random"] * 5 + ["original"] * 5,
        "passed": [True, True, False, True, False,   # t1 original: 3/5
                   False, True, False, False, True,  # t1 random: 2/5
                   True, True, True, False, True],   # t2 original: 4/5
    })
    out = S.pass_rates(df, n_samples=5)
    got = {(r.task_id, r.condition): (r.n_samples, r.n_passed, r.rate) for r in out.itertuples()}
    assert got == {("t1", "original"): (5, 3, 0.6), ("t1", "random"): (5, 2, 0.4),
                   ("t2", "original"): (5, 4, 0.8)}


def test_pass_rates_accepts_0_1_and_by_column():
    df = pd.DataFrame({"model": ["A", "A", "B", "B"], "task_id": ["t"] * 4,
                       "condition": ["o"] * 4, "passed": [1, 0, 1, 1]})
    out = S.pass_rates(df, by=("model",))
    assert out["rate"].tolist() == [0.5, 1.0]
    assert out["model"].tolist() == ["A", "B"]


def test_pass_at_k_matches_comb_formula():
    for n in (1, 5, 10, 37):
        for c in range(n + 1):
            for k in range(1, n + 1):
                expected = 1.0 - math.comb(n - c, k) / math.comb(n, k)
                assert float(S.pass_at_k(n, c, k)) == pytest.approx(expected, rel=1e-12, abs=1e-15)
    c = np.array([0, 1, 2, 3, 4, 5])
    assert np.array_equal(S.pass_at_k(5, c, 1), c / 5)  # pass@1 is exactly the pass rate


# --------------------------------------------------------------------------- sign test


def test_sign_test_paper_example_by_hand():
    # Experiment 1: 18 tasks now fail, 2 now pass -> p = 2 (C(20,0)+C(20,1)+C(20,2)) / 2^20
    a = np.r_[np.full(18, 0.6), np.full(2, 0.0), np.full(91, 0.2)]
    b = np.r_[np.full(18, 0.0), np.full(2, 0.4), np.full(91, 0.2)]
    r = S.sign_test(a, b)
    assert (r.n_a_higher, r.n_b_higher, r.n_ties, r.n_tasks) == (18, 2, 91, 111)
    assert r.p_value == pytest.approx(2 * (1 + 20 + 190) / 2 ** 20, rel=1e-12)  # 0.000402
    assert round(r.p_value, 4) == 0.0004


def test_sign_test_matches_scipy_binomtest():
    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 20, 90, 111):
        for _ in range(10):
            a, b = _rates(rng, n), _rates(rng, n)
            r = S.sign_test(a, b)
            up, down = int(np.sum(a > b)), int(np.sum(a < b))
            assert (r.n_a_higher, r.n_b_higher) == (up, down)
            if up + down == 0:
                assert r.p_value == 1.0
            else:
                assert r.p_value == pytest.approx(sps.binomtest(up, up + down, 0.5).pvalue, rel=1e-9)


def test_sign_test_ties_with_rounding():
    a = np.array([0.6, 0.1 + 0.2, 0.9])
    b = np.array([3 / 5, 0.3, 0.1])
    r = S.sign_test(a, b)
    assert (r.n_a_higher, r.n_b_higher, r.n_ties) == (1, 0, 2)
    assert r.p_value == 1.0


# --------------------------------------------------------------------------- bootstrap


def test_bootstrap_indices_documented_stream():
    idx = S.bootstrap_indices(13, 50, seed=3)
    assert idx.shape == (50, 13)
    assert np.array_equal(idx, np.random.default_rng(3).integers(0, 13, size=(50, 13)))


def test_mean_difference_matches_python_loop():
    rng = np.random.default_rng(11)
    n, n_res, seed = 37, 2000, 12345
    a, b = _rates(rng, n), _rates(rng, n)
    r = S.mean_difference(a, b, n_resamples=n_res, seed=seed)

    d = [float(x) - float(y) for x, y in zip(a.tolist(), b.tolist())]
    means = sorted(m * 100 for m in _loop_bootstrap_means(d, n_res, seed))
    assert r.estimate == pytest.approx(100 * sum(d) / n, abs=1e-9)
    assert r.ci_low == pytest.approx(_percentile(means, 2.5), abs=1e-9)
    assert r.ci_high == pytest.approx(_percentile(means, 97.5), abs=1e-9)
    assert (r.n_tasks, r.n_resamples, r.seed) == (n, n_res, seed)
    assert r.mean_a == pytest.approx(100 * a.mean()) and r.mean_b == pytest.approx(100 * b.mean())

    # TOST: its 90% interval and bootstrap p-values come from the same resamples
    t = S.tost_equivalence(a, b, margin=5.0, n_resamples=n_res, seed=seed)
    assert t.ci_low == pytest.approx(_percentile(means, 5.0), abs=1e-9)
    assert t.ci_high == pytest.approx(_percentile(means, 95.0), abs=1e-9)
    assert t.p_lower_boot == sum(m <= -5.0 for m in means) / n_res
    assert t.p_upper_boot == sum(m >= 5.0 for m in means) / n_res


def test_exposure_effects_match_python_loop():
    rng = np.random.default_rng(5)
    n, n_res, seed = 29, 1500, 99
    cs, cu, rs, ru = (_rates(rng, n) for _ in range(4))
    r = S.exposure_effects(cs, cu, rs, ru, n_resamples=n_res, seed=seed)
    per_task = {
        "exposure_original": cs - cu,
        "exposure_renamed": rs - ru,
        "did": (cs - rs) - (cu - ru),
        "unseen_cost": cu - ru,
        "seen_cost": cs - rs,
    }
    for name, values in per_task.items():
        means = sorted(m * 100 for m in _loop_bootstrap_means(values.tolist(), n_res, seed))
        est = getattr(r, name)
        assert est.estimate == pytest.approx(100 * values.mean(), abs=1e-9), name
        assert est.ci_low == pytest.approx(_percentile(means, 2.5), abs=1e-9), name
        assert est.ci_high == pytest.approx(_percentile(means, 97.5), abs=1e-9), name


def test_seed_controls_resampling():
    rng = np.random.default_rng(1)
    # continuous values (log-likelihoods, scale=1): rate lattices can give equal bounds
    a, b = rng.normal(-1.0, 0.3, 60), rng.normal(-1.1, 0.3, 60)
    r1 = S.mean_difference(a, b, seed=1, scale=1.0)
    assert S.mean_difference(a, b, seed=1, scale=1.0) == r1
    assert S.mean_difference(a, b, scale=1.0) == S.mean_difference(a, b, seed=S.DEFAULT_SEED, scale=1.0)
    r2 = S.mean_difference(a, b, seed=2, scale=1.0)
    assert (r1.ci_low, r1.ci_high) != (r2.ci_low, r2.ci_high)
    assert r1.n_resamples == S.DEFAULT_RESAMPLES == 10_000


def test_scale_one_for_log_likelihoods():
    ll_a = np.array([-0.5, -0.7, -1.2, -0.9])
    ll_b = np.array([-0.8, -0.9, -1.3, -1.0])
    r = S.mean_difference(ll_a, ll_b, scale=1.0, n_resamples=500)
    assert r.estimate == pytest.approx(0.175)
    with pytest.raises(ValueError, match="fractions"):
        S.mean_difference(ll_a, ll_b)  # default scale=100 expects rates in [0, 1]


# --------------------------------------------------------------------------- DiD by hand

# Four tasks, rates as fractions (c = original, r = renamed):
#   task  c_seen c_unseen r_seen r_unseen | c_s-c_u  r_s-r_u  DiD_s  c_u-r_u  c_s-r_s
#   t1     0.8    0.4      0.4    0.2     |  0.4      0.2     0.2    0.2      0.4
#   t2     0.6    0.6      0.2    0.4     |  0.0     -0.2     0.2    0.2      0.4
#   t3     1.0    0.2      0.8    0.0     |  0.8      0.8     0.0    0.2      0.2
#   t4     0.0    0.2      0.0    0.0     | -0.2      0.0    -0.2    0.2      0.0
#   mean                                  |  0.25     0.20    0.05   0.20     0.25
# In points: exposure 25.0 (original), 20.0 (renamed), DiD 5.0 = 25.0 - 20.0, unseen cost
# 20.0 (every task 0.2, so its interval is [20, 20]), seen cost 25.0 = DiD + unseen cost.
# Cell means: 60.0, 35.0, 35.0, 15.0 percent.
# DiD interval: a resampled mean of 4 draws from {0.2, 0.2, 0, -0.2} is 0.05 (#plus - #minus)
# with P(+0.2) = 1/2, P(0) = P(-0.2) = 1/4 per draw. P(mean <= -0.15) = 1/256 + 4/256 = 0.0195
# and P(mean <= -0.10) = 0.0195 + 6/256 + 8/256 = 0.074, so the 2.5% quantile is -0.10;
# P(mean = 0.2) = 1/16 > 0.025, so the 97.5% quantile is 0.2: the 95% interval is
# [-10, 20] points (with 10,000 resamples both bounds sit far inside those plateaus).
_HAND = {"t1": (0.8, 0.4, 0.4, 0.2), "t2": (0.6, 0.6, 0.2, 0.4),
         "t3": (1.0, 0.2, 0.8, 0.0), "t4": (0.0, 0.2, 0.0, 0.0)}


def _check_hand_did(r: S.ExposureEffects) -> None:
    assert r.n_tasks == 4
    assert r.exposure_original.estimate == pytest.approx(25.0)
    assert r.exposure_renamed.estimate == pytest.approx(20.0)
    assert r.did.estimate == pytest.approx(5.0)
    assert r.unseen_cost.estimate == pytest.approx(20.0)
    assert (r.unseen_cost.ci_low, r.unseen_cost.ci_high) == pytest.approx((20.0, 20.0))
    assert r.seen_cost.estimate == pytest.approx(25.0)
    assert (r.mean_original_seen, r.mean_original_unseen, r.mean_renamed_seen,
            r.mean_renamed_unseen) == pytest.approx((60.0, 35.0, 35.0, 15.0))
    assert (r.did.ci_low, r.did.ci_high) == pytest.approx((-10.0, 20.0))


def test_did_hand_worked_arrays():
    cols = np.array(list(_HAND.values())).T
    _check_hand_did(S.exposure_effects(*cols))


def test_did_hand_worked_from_verdict_rows():
    trained_on = {"t1": "qwen-A", "t2": "qwen-A", "t3": "qwen-B", "t4": "qwen-B"}
    rows = []
    for task, (cs, cu, rs, ru) in _HAND.items():
        seen = trained_on[task]
        unseen = "qwen-B" if seen == "qwen-A" else "qwen-A"
        for model, cond, rate in ((seen, "original", cs), (unseen, "original", cu),
                                  (seen, "random", rs), (unseen, "random", ru)):
            k = round(rate * 5)
            rows += [{"model": model, "task_id": task, "condition": cond, "passed": i < k}
                     for i in range(5)]
    rates = S.pass_rates(pd.DataFrame(rows), by=("model",), n_samples=5)
    cells = S.seen_unseen_rates(rates, trained_on)
    assert cells.loc["t3", ("original", "seen")] == 1.0
    assert cells.loc["t3", ("original", "unseen")] == pytest.approx(0.2)
    r = S.exposure_effects(cells[("original", "seen")], cells[("original", "unseen")],
                           cells[("random", "seen")], cells[("random", "unseen")])
    _check_hand_did(r)


# --------------------------------------------------------------------------- TOST


def _tost_case(n_plus: int, n_minus: int, n_zero: int, step: float):
    """Per-task differences +step (n_plus tasks), -step (n_minus), 0 (n_zero), as rates."""
    a = np.r_[np.full(n_plus, 0.2 + step), np.full(n_minus, 0.2), np.full(n_zero, 0.4)]
    b = np.r_[np.full(n_plus, 0.2), np.full(n_minus, 0.2 + step), np.full(n_zero, 0.4)]
    return a, b


def test_tost_inside_margin():
    # 10 tasks +20, 10 tasks -20, 70 zeros: mean 0, se ~ 1.0 point, 90% CI ~ [-1.6, 1.6]
    a, b = _tost_case(10, 10, 70, 0.2)
    r = S.tost_equivalence(a, b)
    assert r.estimate == pytest.approx(0.0, abs=1e-9)
    assert -5.0 < r.ci_low < -0.5 and 0.5 < r.ci_high < 5.0
    assert r.equivalent
    assert r.p_boot < 0.05 and r.p_t < 0.05
    d = (a - b) * 100
    assert r.p_lower_t == pytest.approx(sps.ttest_1samp(d, -5.0, alternative="greater").pvalue, rel=1e-9)
    assert r.p_upper_t == pytest.approx(sps.ttest_1samp(d, 5.0, alternative="less").pvalue, rel=1e-9)
    assert r.p_t == max(r.p_lower_t, r.p_upper_t)


@pytest.mark.parametrize("sign", [1, -1])
def test_tost_estimate_inside_but_interval_outside(sign):
    # 18 tasks +40, 9 tasks -40, 63 zeros: mean 4 points, se ~2.3, 90% CI ~ [0.2, 7.8]
    a, b = _tost_case(18, 9, 63, 0.4)
    if sign < 0:
        a, b = b, a
    r = S.tost_equivalence(a, b)
    assert r.estimate == pytest.approx(4.0 * sign)
    assert not r.equivalent
    if sign > 0:
        assert -5.0 < r.ci_low < 5.0 < r.ci_high
        assert r.p_upper_boot > 0.05 and r.p_upper_t > 0.05 and r.p_lower_t < 0.05
    else:
        assert r.ci_low < -5.0 < r.ci_high < 5.0
        assert r.p_lower_boot > 0.05 and r.p_lower_t > 0.05 and r.p_upper_t < 0.05
    assert r.p_boot > 0.05 and r.p_t > 0.05
    d = (a - b) * 100
    assert r.p_lower_t == pytest.approx(sps.ttest_1samp(d, -5.0, alternative="greater").pvalue, rel=1e-9)
    assert r.p_upper_t == pytest.approx(sps.ttest_1samp(d, 5.0, alternative="less").pvalue, rel=1e-9)


def test_tost_far_outside_and_wider_margin():
    a, b = _tost_case(30, 0, 60, 0.3)  # mean 10 points
    r = S.tost_equivalence(a, b)
    assert r.estimate == pytest.approx(10.0) and not r.equivalent and r.ci_low > 5.0
    assert r.p_upper_boot > 0.95
    assert S.tost_equivalence(a, b, margin=20.0).equivalent


def test_tost_interval_is_90_percent_mean_difference_interval():
    rng = np.random.default_rng(21)
    a, b = _rates(rng, 77), _rates(rng, 77)
    t = S.tost_equivalence(a, b, seed=4)
    m = S.mean_difference(a, b, seed=4, confidence=0.90)
    assert (t.ci_low, t.ci_high) == pytest.approx((m.ci_low, m.ci_high), abs=1e-9)


def test_tost_constant_differences():
    a = np.full(10, 0.6)
    b = np.full(10, 0.4)  # every difference is 20 points, se = 0
    r = S.tost_equivalence(a, b)
    assert not r.equivalent and r.p_lower_t == 0.0 and r.p_upper_t == 1.0
    r = S.tost_equivalence(a, a)
    assert r.equivalent and r.p_t == 0.0 and r.p_boot == 0.0


# --------------------------------------------------------------------------- permutation


def _diff_means(x, y, axis=-1):
    return np.mean(x, axis=axis) - np.mean(y, axis=axis)


def test_permutation_groups_vs_scipy():
    rng = np.random.default_rng(3)
    n = 111
    decrease = _rates(rng, n) - _rates(rng, n)
    group = rng.random(n) < 0.4
    decrease[group] += 0.08  # a modest shift so that p lands away from 0 and 1
    decrease = np.clip(decrease, -1, 1)
    r = S.permutation_test_groups(decrease, group)
    assert r.estimate == pytest.approx(100 * (decrease[group].mean() - decrease[~group].mean()))
    assert (r.n_group, r.n_other, r.n_permutations) == (int(group.sum()), n - int(group.sum()), 10_000)
    ref = sps.permutation_test((decrease[group], decrease[~group]), _diff_means, vectorized=True,
                               permutation_type="independent", n_resamples=10_000,
                               alternative="two-sided", random_state=np.random.default_rng(0))
    assert 0.02 < ref.pvalue < 0.9
    assert r.p_value == pytest.approx(ref.pvalue, abs=0.03)


def test_permutation_groups_vs_exact_enumeration():
    values = np.array([0.4, 0.2, 0.0, -0.2, 0.6, 0.0, 0.2, 0.2, -0.4, 0.8])
    group = np.array([1, 1, 1, 1, 0, 0, 0, 0, 0, 0], dtype=bool)
    obs = values[group].mean() - values[~group].mean()
    splits = list(itertools.combinations(range(10), 4))  # all 210 relabellings
    stats_ = []
    for s in splits:
        m = np.zeros(10, dtype=bool)
        m[list(s)] = True
        stats_.append(values[m].mean() - values[~m].mean())
    exact = np.mean(np.abs(stats_) >= abs(obs) - 1e-12)
    r = S.permutation_test_groups(values, group, seed=8)
    assert 0.05 < exact < 0.95
    assert r.p_value == pytest.approx(exact, abs=0.015)


def test_permutation_groups_null_p_is_one_for_zero_difference():
    values = np.array([0.2, 0.0, 0.2, 0.0])
    r = S.permutation_test_groups(values, [True, True, False, False], n_permutations=200)
    assert r.estimate == 0.0 and r.p_value == 1.0


# --------------------------------------------------------------------------- Spearman


def _spearman_rows(u, v, axis=-1):
    """Spearman's rho along ``axis`` via scipy.stats.rankdata (vectorized for scipy)."""
    ru = np.moveaxis(sps.rankdata(u, axis=axis), axis, -1)
    rv = np.moveaxis(sps.rankdata(v, axis=axis), axis, -1)
    ru = ru - ru.mean(axis=-1, keepdims=True)
    rv = rv - rv.mean(axis=-1, keepdims=True)
    return (ru * rv).sum(-1) / np.sqrt((ru * ru).sum(-1) * (rv * rv).sum(-1))


def test_spearman_rho_and_p_vs_scipy():
    rng = np.random.default_rng(17)
    n = 111
    y = _rates(rng, n) - _rates(rng, n)  # per-task decreases: many ties
    x = np.round(rng.integers(0, 120, n) + 20 * y)  # e.g. token-run differences, weakly related
    r = S.spearman_permutation(x, y)
    assert r.rho == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)

    ref = sps.permutation_test((x, y), _spearman_rows, vectorized=True,
                               permutation_type="pairings", n_resamples=10_000,
                               alternative="two-sided", random_state=np.random.default_rng(1))
    assert 0.01 < ref.pvalue < 0.9
    assert r.p_value == pytest.approx(ref.pvalue, abs=0.03)


def test_spearman_p_vs_exact_enumeration():
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0])
    y = np.array([2.0, 1.0, 4.0, 3.0, 7.0, 5.0, 5.0])
    r = S.spearman_permutation(x, y, seed=2)
    obs = sps.spearmanr(x, y).statistic
    perms = np.array(list(itertools.permutations(range(7))))  # all 5,040 pairings
    null = _spearman_rows(np.broadcast_to(x, perms.shape), y[perms])
    assert null.shape == (5040,) and np.isclose(null, obs).any()
    exact = np.mean(np.abs(null) >= abs(obs) - 1e-12)
    assert r.rho == pytest.approx(obs, abs=1e-12)
    assert 0.005 < exact < 0.5
    assert r.p_value == pytest.approx(exact, abs=0.01)


# --------------------------------------------------------------------------- coverage


def test_bootstrap_interval_coverage_simulation():
    """1,000 synthetic studies of 90 tasks with a known mean difference of 10 points.

    Task difficulty p ~ Beta(0.5, 1) (mean 1/3, many hard tasks, as in the paper); the
    original condition passes each of 5 samples with p, the renamed one with 0.7 p, so
    E[rate_orig - rate_renamed] = 0.3 E[p] = 0.1 exactly. 2,000 resamples per study.
    """
    rng = np.random.default_rng(20260926)
    n_studies, n_tasks, truth = 1000, 90, 10.0
    p = rng.beta(0.5, 1.0, size=(n_studies, n_tasks))
    orig = rng.binomial(5, p) / 5
    renamed = rng.binomial(5, 0.7 * p) / 5
    t0 = time.perf_counter()
    covered = 0
    for s in range(n_studies):
        r = S.mean_difference(orig[s], renamed[s], n_resamples=2000, seed=s)
        covered += r.ci_low <= truth <= r.ci_high
    rate = covered / n_studies
    assert 0.93 <= rate <= 0.97, rate
    assert time.perf_counter() - t0 < 60


# --------------------------------------------------------------------------- errors

_A = [0.2, 0.4, 0.6]
_B = [0.0, 0.4, 0.8]
_NAN = [0.2, float("nan"), 0.6]


@pytest.mark.parametrize("call", [
    lambda: S.mean_difference([], []),
    lambda: S.mean_difference(_A, _B[:2]),
    lambda: S.mean_difference(_NAN, _B),
    lambda: S.mean_difference(_A, [0.0, float("inf"), 0.8]),
    lambda: S.mean_difference([20.0, 40.0, 60.0], [0.0, 40.0, 80.0]),  # percent, not fractions
    lambda: S.mean_difference(np.zeros((3, 2)), np.zeros((3, 2))),
    lambda: S.mean_difference(_A, _B, n_resamples=0),
    lambda: S.mean_difference(_A, _B, seed=-1),
    lambda: S.mean_difference(_A, _B, seed=1.5),
    lambda: S.mean_difference(_A, _B, confidence=1.0),
    lambda: S.mean_difference(_A, _B, scale=0),
    lambda: S.bootstrap_mean([]),
    lambda: S.bootstrap_mean(_NAN),
    lambda: S.bootstrap_indices(0, 10),
    lambda: S.tost_equivalence([], []),
    lambda: S.tost_equivalence([0.2], [0.1]),
    lambda: S.tost_equivalence(_A, _B[:2]),
    lambda: S.tost_equivalence(_NAN, _B),
    lambda: S.tost_equivalence(_A, _B, margin=0.0),
    lambda: S.tost_equivalence(_A, _B, alpha=0.6),
    lambda: S.exposure_effects([], [], [], []),
    lambda: S.exposure_effects(_A, _B, _A, _B[:2]),
    lambda: S.exposure_effects(_A, _NAN, _A, _B),
    lambda: S.sign_test([], []),
    lambda: S.sign_test(_A, _B[:2]),
    lambda: S.sign_test(_NAN, _B),
    lambda: S.permutation_test_groups([], []),
    lambda: S.permutation_test_groups(_A, [True, False]),
    lambda: S.permutation_test_groups(_NAN, [True, False, True]),
    lambda: S.permutation_test_groups(_A, [True, True, True]),
    lambda: S.permutation_test_groups(_A, [1.0, float("nan"), 0.0]),
    lambda: S.permutation_test_groups(_A, [True, False, True], n_permutations=0),
    lambda: S.spearman_permutation([], []),
    lambda: S.spearman_permutation(_A, _B[:2]),
    lambda: S.spearman_permutation(_NAN, _B),
    lambda: S.spearman_permutation(_A, [0.5, 0.5, 0.5]),
    lambda: S.spearman_permutation([0.1, 0.2], [0.3, 0.1]),
    lambda: S.pass_at_k([], [], 1),
    lambda: S.pass_at_k(5, 6, 1),
    lambda: S.pass_at_k(5, 2, 6),
    lambda: S.pass_at_k(5, float("nan"), 1),
    lambda: S.pass_at_k([5, 5], [1, 2, 3], 1),
    lambda: S.pass_at_k(5, 2, 0),
])
def test_invalid_inputs_raise(call):
    with pytest.raises(ValueError):
        call()


def _verdicts(**overrides):
    df = pd.DataFrame({"task_id": ["t1", "t1"], "condition": ["o", "o"], "passed": [True, False]})
    for k, v in overrides.items():
        df[k] = v
    return df


@pytest.mark.parametrize("frame,kwargs", [
    (_verdicts().iloc[:0], {}),
    (_verdicts().drop(columns="passed"), {}),
    (_verdicts(passed=[True, None]), {}),
    (_verdicts(passed=[1.0, float("nan")]), {}),
    (_verdicts(passed=[1, 2]), {}),
    (_verdicts(task_id=["t1", None]), {}),
    (_verdicts(), {"n_samples": 5}),
])
def test_pass_rates_invalid(frame, kwargs):
    with pytest.raises(ValueError):
        S.pass_rates(frame, **kwargs)


def _rate_rows(models=("A", "B"), tasks=("t1", "t2"), conditions=("o", "r")):
    return pd.DataFrame([{"model": m, "task_id": t, "condition": c, "rate": 0.2}
                         for m in models for t in tasks for c in conditions])


@pytest.mark.parametrize("rates,trained_on", [
    (_rate_rows().iloc[:0], {"t1": "A", "t2": "B"}),
    (_rate_rows(models=("A", "B", "C")), {"t1": "A", "t2": "B"}),
    (_rate_rows(), {"t1": "A"}),
    (_rate_rows(), {"t1": "A", "t2": "Z"}),
    (_rate_rows().iloc[1:], {"t1": "A", "t2": "B"}),
    (pd.concat([_rate_rows(), _rate_rows().iloc[:1]]), {"t1": "A", "t2": "B"}),
    (_rate_rows().assign(rate=[float("nan")] + [0.2] * 7), {"t1": "A", "t2": "B"}),
])
def test_seen_unseen_invalid(rates, trained_on):
    with pytest.raises(ValueError):
        S.seen_unseen_rates(rates, trained_on)
