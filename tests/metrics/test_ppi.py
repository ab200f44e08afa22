"""Prediction-powered inference: closed forms, conformance to ppi-python's mean
(tests/reference/ppi_py_mean.py), the classical limit λ = 0, active inference's unbiasedness and
the coverage of nominal 95% intervals on simulated data."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import ppi_py_mean

import metrics
from metrics import InputError, ParameterError
from metrics.study._ppi import ppi_mean, ppi_mean_by_group
from metrics.study._ppi_active import active_ppi_mean, active_probabilities, active_selection, ensemble_uncertainty
from metrics.study._ppi_alignment import ppi_agreement, ppi_correlation, ppi_weight
from metrics.study._tuning import optimal_w

Z95 = 1.959963984540054


def test_hand_computed_mean_and_interval():
    # y = (2, 4), ŷ = (1, 3), ŷ_unlabeled = (1, 2, 3), λ = 1:
    # mean(ŷ_unl) = 2, rectifier y − ŷ = (1, 1) → mean 1, sd 0; sd(ŷ_unl) = √(2/3)
    # estimate 3, half-width z·√((2/3)/3) = z·0.4714
    e = ppi_mean([2.0, 4.0], [1.0, 3.0], [1.0, 2.0, 3.0], lam=1.0)
    assert e.estimate == 3.0
    assert e.interval.high - 3.0 == pytest.approx(Z95 * math.sqrt(2 / 9))
    # classical: mean 3, sd (ddof 0) 1 → half-width z/√2
    assert e.classical == 3.0 and e.classical_interval.high - 3.0 == pytest.approx(Z95 / math.sqrt(2))
    # effective n = 2·((1/√2) / √(2/9))² = 2·(1/2)/(2/9) = 4.5; saved 1 − 2/4.5
    assert e.effective_n == pytest.approx(4.5) and e.saved == pytest.approx(1 - 2 / 4.5)


def test_biased_model_is_corrected():
    # the model reads every item 1 point low: PPI's rectifier adds the point back
    rng = np.random.default_rng(0)
    y = rng.uniform(0, 4, 300)
    unl = rng.uniform(0, 4, 3000)
    e = ppi_mean(y[:100], y[:100] - 1, unl - 1, lam=1.0)
    assert e.estimate == pytest.approx(unl.mean() - 1 + 1)


def test_lambda_zero_is_the_classical_interval():
    rng = np.random.default_rng(1)
    y, f, unl = rng.normal(2, 1, 50), rng.normal(2, 1, 50), rng.normal(2, 1, 500)
    e = ppi_mean(y, f, unl, lam=0.0)
    assert e.estimate == e.classical == pytest.approx(y.mean())
    assert e.interval == e.classical_interval
    assert e.effective_n == pytest.approx(50) and e.saved == pytest.approx(0)
    lo, hi = ppi_py_mean.classical_mean_ci(list(y))
    assert e.classical_interval == pytest.approx((lo, hi))


def test_a_perfect_model_narrows_the_interval_as_N_grows():
    rng = np.random.default_rng(2)
    y = rng.uniform(0, 4, 40)
    widths = []
    for N in (100, 1000, 10000):
        unl = rng.uniform(0, 4, N)
        e = ppi_mean(y, y, unl, lam=1.0)
        # rectifier is 0: the width is z·sd(ŷ_unl)/√N, the classical one stays at n = 40
        assert e.interval.high - e.interval.low == pytest.approx(2 * Z95 * unl.std() / math.sqrt(N))
        widths.append(e.interval.high - e.interval.low)
    assert widths[0] > widths[1] > widths[2]
    assert e.effective_n > 40 * 100


@settings(max_examples=60, deadline=None)
@given(n=st.integers(2, 30), N=st.integers(1, 60), seed=st.integers(0, 10_000),
       lam=st.one_of(st.none(), st.floats(0, 1)), noise=st.floats(0, 3))
def test_conforms_to_ppi_python_mean(n, N, seed, lam, noise):
    rng = np.random.default_rng(seed)
    latent = rng.uniform(0, 4, n + N)
    f = np.clip(latent + rng.normal(0, noise, n + N), 0, 4)
    y = np.rint(np.clip(latent + rng.normal(0, 0.5, n + N), 0, 4))[:n]
    fhat, funl = f[:n], f[n:]
    if np.var(np.concatenate([fhat, funl])) == 0:
        return
    est, lo, hi, ref_lam = ppi_py_mean.ppi_mean_ci(list(y), list(fhat), list(funl), lam=lam)
    e = ppi_mean(y, fhat, funl, lam=lam)
    assert e.lam == pytest.approx(ref_lam, abs=1e-12)
    assert e.estimate == pytest.approx(est, abs=1e-9)
    assert tuple(e.interval) == pytest.approx((lo, hi), abs=1e-9)


def test_coverage_of_nominal_95_percent_intervals():
    # 600 studies: 80 human-rated items of 2000; model correlated with the truth, biased by 0.3
    rng = np.random.default_rng(3)
    hits = {"ppi": 0, "classical": 0, "active": 0}
    truth = 2.0
    for _ in range(600):
        latent = rng.uniform(0, 4, 2080)
        y = latent + rng.normal(0, 0.8, 2080) + (truth - 2.0)
        f = latent + 0.3 + rng.normal(0, 0.5, 2080)
        e = ppi_mean(y[:80], f[:80], f[80:])
        hits["ppi"] += e.interval.low <= truth <= e.interval.high
        hits["classical"] += e.classical_interval.low <= truth <= e.classical_interval.high
        u = np.abs(rng.normal(0, 1, 2080)) + 0.1
        pi = active_probabilities(u, budget=80, floor=0.3)
        xi = rng.random(2080) < pi
        a = active_ppi_mean(np.where(xi, y, np.nan), f, pi, xi)
        # the estimand of active inference is the mean over these items
        hits["active"] += a.interval.low <= y.mean() <= a.interval.high
    for name, k in hits.items():
        assert 0.92 <= k / 600 <= 0.98, (name, k)


def test_finite_population_closed_form_and_coverage():
    # y = (2, 4, 3), ŷ = (1, 3, 3), ŷ_unlabeled = (2, 2, 1), λ = 1, M = 6:
    # mean ŷ over all 6 = 2, rectifier (1, 1, 0) → mean 2/3; estimate 8/3;
    # S²(rectifier) = 1/3, (1 − 3/6)·(1/3)/3 = 1/18 → half-width z/√18
    e = ppi_mean([2.0, 4.0, 3.0], [1.0, 3.0, 3.0], [2.0, 2.0, 1.0], lam=1.0, finite_population=True)
    assert e.estimate == pytest.approx(8 / 3)
    assert e.interval.high - e.estimate == pytest.approx(Z95 / math.sqrt(18))
    # classical: S²(y) = 1, (1/2)·1/3 → z/√6
    assert e.classical_interval.high - 3.0 == pytest.approx(Z95 / math.sqrt(6))
    # a fixed pool of 1500 items, 400 simple random samples of 150 (a tenth) and 400 Poisson draws:
    # intervals for the pool's own mean cover it about 95% of the time; the iid interval more often
    rng = np.random.default_rng(11)
    latent = rng.uniform(0, 4, 1500)
    y, f = latent + rng.normal(0, 0.7, 1500), latent + rng.normal(0, 0.4, 1500)
    u = np.where(latent > 2, 1.0, 0.3)
    pi = active_probabilities(u, budget=150, floor=0.3)
    hits = {"finite": 0, "iid": 0, "active": 0}
    for _ in range(400):
        sample = np.zeros(1500, bool)
        sample[rng.choice(1500, 150, replace=False)] = True
        for name, finite in (("finite", True), ("iid", False)):
            e = ppi_mean(y[sample], f[sample], f[~sample], finite_population=finite)
            hits[name] += e.interval.low <= y.mean() <= e.interval.high
        xi = rng.random(1500) < pi
        a = active_ppi_mean(np.where(xi, y, np.nan), f, pi, xi, finite_population=True)
        hits["active"] += a.interval.low <= y.mean() <= a.interval.high
    assert 0.93 <= hits["finite"] / 400 <= 0.97 and 0.92 <= hits["active"] / 400 <= 0.97
    assert hits["iid"] >= hits["finite"]


def test_ppi_beats_classical_when_the_model_is_good():
    rng = np.random.default_rng(4)
    latent = rng.uniform(0, 4, 5100)
    y = latent + rng.normal(0, 0.4, 5100)
    f = latent + rng.normal(0, 0.3, 5100)
    e = ppi_mean(y[:100], f[:100], f[100:])
    assert e.interval.high - e.interval.low < 0.7 * (e.classical_interval.high - e.classical_interval.low)
    assert e.saved > 0.5 and 0.5 < e.lam <= 1


def test_a_useless_model_costs_little():
    rng = np.random.default_rng(5)
    y, f = rng.normal(2, 1, 200), rng.normal(2, 1, 5200)
    e = ppi_mean(y, f[:200], f[200:])
    assert e.lam < 0.3
    assert (e.interval.high - e.interval.low) < 1.05 * (e.classical_interval.high - e.classical_interval.low)


def test_by_group_estimates_each_cell():
    items = pd.DataFrame({"category": [1] * 6 + [2] * 6,
                          "llm": [1.0, 3.0, 1.0, 2.0, 3.0, 2.0, 0.0, 4.0, 2.0, 2.0, 2.0, 2.0],
                          "human_mean": [2.0, 4.0, None, None, None, None, 1.0, None, None, None, None, None]})
    table = ppi_mean_by_group(items, by="category", lam=1.0)
    # category 1: mean(ŷ_unl) = 2, rectifier (1, 1) → 3; category 2: one human rating → no estimate
    assert table.loc[0, "estimate"] == 3.0 and table.loc[0, "n"] == 2 and table.loc[0, "N"] == 4
    assert math.isnan(table.loc[1, "estimate"]) and table.loc[1, "n"] == 1
    # finite population, category 1: mean ŷ over its 6 items = 2, rectifier 1 → 3; fully rated → exact
    items.loc[[7, 8], "human_mean"] = [3.0, 2.0]
    finite = ppi_mean_by_group(items, by="category", lam=1.0, finite_population=True)
    assert finite.loc[0, "estimate"] == 3.0 and finite.loc[1, "n"] == 3


def test_agreement_classical_limit_and_hand_value():
    metric, y, f = np.array([2.0, 2.0, 3.0]), np.array([2.0, 4.0, 3.0]), np.array([2.0, 3.0, 3.0])
    # Eq. 13 per item: 1, 0.5, 1 → mean 5/6
    e = ppi_agreement(metric, y, f, [1.0, 2.0], [1.0, 2.0], lam=0.0)
    assert e.estimate == pytest.approx(5 / 6)
    # λ = 1: g(ŷ_unl) = (1, 1) → 1; rectifier g(y) − g(ŷ) = (0, −0.25, 0) → −1/12
    e = ppi_agreement(metric, y, f, [1.0, 2.0], [1.0, 2.0], lam=1.0)
    assert e.estimate == pytest.approx(1 - 1 / 12)


def test_correlation_classical_limit_is_pearson_with_a_delta_method_interval():
    rng = np.random.default_rng(6)
    m = rng.uniform(0, 4, 600)
    y = m + rng.normal(0, 1, 600)
    f = y + rng.normal(0, 0.3, 600)   # a model that predicts the human rating beyond the metric
    e = ppi_correlation(m[:150], y[:150], f[:150], m[150:], f[150:])
    assert e.classical == pytest.approx(np.corrcoef(m[:150], y[:150])[0, 1])
    # classical delta-method SE of Pearson's r under normality is ≈ (1 − r²)/√n: Fisher half-width ≈ z/√n
    half = (math.atanh(e.classical_interval.high) - math.atanh(e.classical_interval.low)) / 2
    assert half == pytest.approx(Z95 / math.sqrt(150), rel=0.2)
    assert e.lam > 0.3 and e.effective_n > 150
    zero = ppi_correlation(m[:150], y[:150], f[:150], m[150:], f[150:], lam=0.0)
    assert zero.estimate == pytest.approx(e.classical) and zero.interval == pytest.approx(e.classical_interval)
    # the model is the metric plus noise: nothing to learn about Y − M, λ̂ small, no gain
    g = m + rng.normal(0, 0.5, 600)
    assert ppi_correlation(m[:150], y[:150], g[:150], m[150:], g[150:]).effective_n < 1.2 * 150
    # a perfect model (ŷ = y on every item) with λ = 1: Pearson's r over the model-rated items
    perfect = ppi_correlation(m[:150], y[:150], y[:150], m[150:], y[150:], lam=1.0)
    assert perfect.estimate == pytest.approx(np.corrcoef(m[150:], y[150:])[0, 1])
    ranked = ppi_correlation(m[:150], y[:150], f[:150], m[150:], f[150:], method="rank")
    assert 0.6 < ranked.estimate < 0.9
    with pytest.raises(ParameterError, match="method"):
        ppi_correlation(m[:150], y[:150], f[:150], m[150:], f[150:], method="kendall")


def test_correlation_covers_the_population_value():
    rng = np.random.default_rng(7)
    hits = 0
    rho = 0.8  # population Pearson of m and y: cov 1 / √(1 · (1 + 0.5625))
    for _ in range(300):
        m = rng.normal(0, 1, 1500)
        y = m + rng.normal(0, 0.75, 1500)
        f = m + rng.normal(0, 0.4, 1500)
        e = ppi_correlation(m[:120], y[:120], f[:120], m[120:], f[120:])
        hits += e.interval.low <= rho <= e.interval.high
    assert 0.92 <= hits / 300 <= 0.98


def test_weight_classical_limit_equals_tuning_and_a_good_model_narrows_it():
    rng = np.random.default_rng(8)
    n, N = 120, 3000
    v, o = rng.uniform(0, 1, n + N), rng.uniform(0, 1, n + N)
    latent = 4 * (0.3 * v + 0.7 * o)
    y = np.clip(latent + rng.normal(0, 0.6, n + N), 0, 4)
    # the tuned w depends on which side of w·v + (1 − w)·o each human rating falls: only a model
    # that predicts the human rating itself (not just the latent similarity) narrows it
    f = np.clip(y + rng.normal(0, 0.1, n + N), 0, 4)
    e0 = ppi_weight(v[:n], o[:n], y[:n], f[:n], v[n:], o[n:], f[n:], lam=0.0)
    assert e0.estimate == e0.classical == optimal_w(v[:n], o[:n], y[:n] / 4)
    assert e0.interval == e0.classical_interval
    assert e0.interval.low <= 0.3 <= e0.interval.high
    e = ppi_weight(v[:n], o[:n], y[:n], f[:n], v[n:], o[n:], f[n:])
    assert e.lam > 0.5 and e.interval.high - e.interval.low < e0.interval.high - e0.interval.low
    assert abs(e.estimate - 0.3) < 0.05


def test_weight_interval_covers_the_true_weight():
    rng = np.random.default_rng(9)
    hits = 0
    for _ in range(100):
        v, o = rng.uniform(0, 1, 1600), rng.uniform(0, 1, 1600)
        latent = 4 * (0.6 * v + 0.4 * o)
        y = latent + rng.normal(0, 0.5, 1600)   # symmetric noise: the MAE minimiser is w = 0.6
        f = y + rng.normal(0, 0.2, 1600)
        e = ppi_weight(v[:100], o[:100], y[:100], f[:100], v[100:], o[100:], f[100:])
        hits += e.interval.low <= 0.6 <= e.interval.high
    assert hits >= 90


def test_active_probabilities_balance_cells_floor_and_cap():
    u = np.array([0.0, 0.0, 5.0, 1.0, 0.0, 0.0, 0.0, 2.0])
    cells = np.array(["a", "a", "a", "a", "b", "b", "b", "b"])
    pi = active_probabilities(u, budget=4, cells=cells, floor=0.2)
    assert pi[:4].sum() == pytest.approx(2) and pi[4:].sum() == pytest.approx(2)  # equal shares
    assert (pi > 0).all() and (pi <= 1).all()
    # cell a: weights 0.8·(0, 0, 5/6, 1/6) + 0.05 = (0.05, 0.05, 0.7167, 0.1833); × 2 the third is
    # 1.433 > 1: capped at 1, the other 1 spread as (0.05, 0.05, 0.1833) / 0.2833
    assert pi[:4] == pytest.approx([0.05 / 0.28333, 0.05 / 0.28333, 1.0, 0.18333 / 0.28333], rel=1e-4)
    assert active_probabilities(u, budget=4, floor=1.0) == pytest.approx(np.full(8, 0.5))
    with pytest.raises(ParameterError, match="budget"):
        active_probabilities(u, budget=9)
    # a cell smaller than its equal share (3 of 6) is rated whole; the other takes the rest
    small = active_probabilities(u, budget=6, cells=[0, 0, 0, 0, 0, 0, 1, 1])
    assert small[6:].tolist() == [1.0, 1.0] and small[:6].sum() == pytest.approx(4)
    # proportional: the 6-item cell gets 6/8 of the budget
    prop = active_probabilities(u, budget=4, cells=[0, 0, 0, 0, 0, 0, 1, 1], allocation="proportional")
    assert prop[:6].sum() == pytest.approx(3) and prop[6:].sum() == pytest.approx(1)
    with pytest.raises(ParameterError, match="allocation"):
        active_probabilities(u, budget=4, allocation="neyman")
    with pytest.raises(InputError, match="uncertainty"):
        active_probabilities([-1.0, 1.0], budget=1)


def test_ensemble_uncertainty_and_selection_order():
    u = ensemble_uncertainty([[2, 2, 2], [0, 4, 2], [1, 3, 2], [2, np.nan, 3]])
    assert u.tolist() == pytest.approx([0.0, math.sqrt(8 / 3), math.sqrt(2 / 3), 0.5])
    s = active_selection(u, budget=3.5, floor=0.1, seed=0)
    chosen = s[s["selected"]]
    # priorities 1..k over the selected items, most uncertain first
    assert sorted(chosen["priority"]) == list(range(1, len(chosen) + 1))
    assert list(chosen.sort_values("priority").index) == sorted(chosen.index, key=lambda i: -u[i])
    assert (s.loc[~s["selected"], "priority"] == 0).all()
    with pytest.raises(InputError, match="member_ratings"):
        ensemble_uncertainty([1, 2, 3])


def test_active_estimate_closed_forms_and_unbiasedness():
    # every item sampled with π = 1: both estimates are the plain mean of y
    y, f = np.array([1.0, 2.0, 4.0]), np.array([0.0, 2.0, 3.0])
    e = active_ppi_mean(y, f, [1.0, 1.0, 1.0], [True, True, True], lam=1.0)
    assert e.estimate == pytest.approx(7 / 3) and e.classical == pytest.approx(7 / 3)
    # the cross-fitted intercept, hand-worked: ŷ = (1, 2, 1, 2), π = (1, ½, 1, ½), all selected,
    # y = (2, 4, 2, 2); A = y·ξ/π = (2, 8, 2, 4), D = 1 − ξ/π = (0, −1, 0, −1), folds {0, 2}, {1, 3}
    # — each fold's D is constant, so c = 0 and the classical estimate is Horvitz–Thompson, 4
    e = active_ppi_mean([2.0, 4.0, 2.0, 2.0], [1.0, 2.0, 1.0, 2.0], [1.0, 0.5, 1.0, 0.5], [True] * 4, lam=0.0)
    assert e.classical == pytest.approx(4.0) and e.estimate == pytest.approx(4.0)
    # π = (1, ½, ½, 1, 1, ½), y = (2, 4, 2, 2, 3, 3): A = (2, 8, 4, 2, 3, 6), D = (0, −1, −1, 0, 0, −1);
    # fold {0, 2, 4}: A = (2, 4, 3), D = (0, −1, 0): Var(D) = 2/9, Cov(D, A) = −4/3 + 1 = −1/3 → c = 1.5,
    # applied to fold {1, 3, 5}: A = (8, 2, 6), D = (−1, 0, −1): Var(D) = 2/9, Cov = −14/3 + 32/9 = −10/9
    # → c = 5, applied to the first: z = (2, 4 − 5, 3) and (8 − 1.5, 2, 6 − 1.5) → mean 17/6
    e = active_ppi_mean([2.0, 4.0, 2.0, 2.0, 3.0, 3.0], np.zeros(6), [1, 0.5, 0.5, 1, 1, 0.5], [True] * 6, lam=0.0)
    assert e.classical == pytest.approx(17 / 6)
    plain = active_ppi_mean([2.0, 4.0], [1.0, 2.0], [1.0, 0.5], [True, True], lam=1.0, intercept=False)
    assert (plain.estimate, plain.classical) == (pytest.approx((1 + 2 + 1 + 4) / 2), pytest.approx(5.0))
    # uniform π and λ = 1: (1/N)Σ ŷ + (1/N)Σ_ξ (y − ŷ)/π
    rng = np.random.default_rng(10)
    N = 4000
    latent = rng.uniform(0, 4, N)
    y = latent + rng.normal(0, 0.5, N)
    noise = np.where(latent > 2, 1.5, 0.1)                           # the model is poor above 2
    f = latent + rng.normal(0, noise, N)
    u = np.sqrt(0.5 ** 2 + noise ** 2)   # calibrated: the RMS of y − ŷ (optimal π ∝ it, Zrnic & Candès §4)
    pi = active_probabilities(u, budget=200, floor=0.2)
    estimates, widths_active, widths_uniform = [], [], []
    for _ in range(200):
        xi = rng.random(N) < pi
        a = active_ppi_mean(np.where(xi, y, np.nan), f, pi, xi)
        estimates.append(a.estimate)
        widths_active.append(a.interval.high - a.interval.low)
        xi_u = rng.random(N) < 200 / N
        widths_uniform.append(np.ptp(active_ppi_mean(np.where(xi_u, y, np.nan), f, np.full(N, 200 / N), xi_u).interval))
    # unbiased: the mean of 200 draws within 4 standard errors of the items' mean
    assert abs(np.mean(estimates) - y.mean()) < 4 * np.std(estimates) / math.sqrt(200)
    assert np.median(widths_active) < np.median(widths_uniform)
    with pytest.raises(InputError, match="selected item"):
        active_ppi_mean([np.nan, 1.0, 2.0], [1.0, 1.0, 1.0], [0.5, 0.5, 0.5], [True, True, True])


def test_public_api_names():
    for name in ("ppi_mean", "ppi_mean_by_group", "ppi_agreement", "ppi_correlation", "ppi_weight", "ppi_entries",
                 "active_probabilities", "active_selection", "active_ppi_mean", "ensemble_uncertainty",
                 "PPIEstimate"):
        assert name in metrics.__all__
        assert getattr(metrics, name) is getattr(metrics.study, name)
