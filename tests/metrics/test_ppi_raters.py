"""The rater-population PPI mean (``metrics.study.ppi_mean_rater_population``): hand-worked
values, the zero-width regression (every item rated), the fixed-rating estimand left as it was,
and a small fixed-seed slice of ``benchmarks/ppi_coverage.py``."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics import InputError
from metrics.study import ppi_mean, ppi_mean_rater_population
from metrics.study._ppi_raters import _rater_variance


def crossed(rng, *, items=60, raters=6, k=1, sd_b=0.5, sd_e=0.7):
    location = rng.normal(2, 1, items)
    severity = rng.normal(0, sd_b, raters)
    who = np.argsort(rng.random((items, raters)), axis=1)[:, :k]
    item, rater = np.repeat(np.arange(items), k), who.reshape(-1)
    rating = location[item] + severity[rater] + rng.normal(0, sd_e, len(item))
    return pd.DataFrame({"item": item, "rater": rater, "rating": rating}), pd.Series(location + 0.3)


def test_every_item_rated_gives_a_positive_width_equal_to_human_only():
    # the regression: with one rating per item and every item rated the fixed-rating estimand
    # has nothing left to sample and a zero-width interval; the raters are still a sample
    ratings, llm = crossed(np.random.default_rng(3))
    e = ppi_mean_rater_population(ratings, llm)
    assert e.estimate == pytest.approx(ratings["rating"].mean())
    assert e.interval.high - e.interval.low > 0.1
    assert (e.interval.low, e.interval.high) == pytest.approx(tuple(e.classical_interval))
    assert e.saved == 0.0 and e.effective_n == e.n == 60
    # every item rated: V is the raters' term alone, C·σ̃_B² + Q·(MS_B − n₀σ̃_B²) (at least 0) with
    # c_r = m_r/60, C = Σc_r², Q = Σc_r²/m_r (a rater mean's noise over m_r items) and σ̃_B² the
    # untruncated moment estimate; MS_B's degrees of freedom are Box's (Σλ)²/Σλ² over the
    # eigenvalues of AΣ (A = diag(m) − mm'/N on the rater means, Σ their variances
    # max(σ̃_B², 0) + σ̂_E²/m_r), below R − 1 = 5 as the six raters rate unequally many items; the
    # interval's ν is Satterthwaite's with MS_B at its χ² quartile bound κ·MS_B,
    # κ = ν_B/χ²_{ν_B}(0.25), in V's MS_B part B = (C/n₀)·MS_B (g = 1): the raters' part at the bound
    # is V + (κ − 1)·B and its variance that of κ·B on ν_B degrees of freedom
    m = ratings["rater"].value_counts().sort_index().to_numpy(float)
    residual = ratings["rating"].to_numpy() - e.lam * llm.to_numpy()[ratings["item"]]
    rater_means = pd.Series(residual).groupby(ratings["rater"].to_numpy()).mean().to_numpy()
    between = float(np.sum(m * (rater_means - residual.mean()) ** 2)) / 5
    within = float(np.sum((residual - rater_means[ratings["rater"]]) ** 2)) / (60 - 6)
    n0 = (60 - np.sum(m ** 2) / 60) / 5
    var_b = (between - within) / (n0 - 1 + 1)       # no shared items: g = 1
    a = (np.diag(m) - np.outer(m, m) / 60) @ np.diag(max(var_b, 0.0) + within / m)
    eigen = np.linalg.eigvals(a).real
    box = eigen.sum() ** 2 / np.sum(eigen ** 2)
    c_sq, q = np.sum((m / 60) ** 2), np.sum((m / 60) ** 2 / m)
    variance = max(c_sq * var_b + q * (between - n0 * var_b), 0.0)
    half = (e.interval.high - e.interval.low) / 2
    assert half == pytest.approx(stats.t.ppf(0.975, e.df) * np.sqrt(variance), rel=1e-9)
    kappa = box / stats.chi2.ppf(0.25, box)
    on_between = c_sq / n0 * between
    satterthwaite = (variance + (kappa - 1) * on_between) ** 2 / ((kappa * on_between) ** 2 / box)
    assert e.over == "items and raters" and 4 < box < 5 and 3.5 < e.df <= box
    assert e.df == pytest.approx(satterthwaite, rel=1e-6)


def test_the_rater_term_is_the_rater_means_spread_by_hand():
    # every item rated by both raters; rater v one point above u on every item, no residual:
    # item means are fixed by the two raters, so the variance is the raters' term alone.
    # residuals y − λ·ŷ (λ = 1 as ŷ = u's rating): u 0, v 1 on each of 4 items;
    # MS_B = 4·½² + 4·½² = 2 (1 df), n₀ = (8 − 32/8)/1 = 4; every item rated: the rater term's
    # variance is MS_B/n₀ = 0.5 (the unbiased σ̂_B², with within-item S = ½, is (2 − ½)/3 = 0.5 too);
    # c = (½, ½), Σc² = ½ → V = 0.25 on 1 df
    items = np.repeat(np.arange(4), 2)
    u = np.array([0.0, 1, 2, 3])
    ratings = pd.DataFrame({"item": items, "rater": ["u", "v"] * 4, "rating": np.repeat(u, 2) + [0, 1] * 4})
    e = ppi_mean_rater_population(ratings, pd.Series(u), lam=1.0)
    assert e.estimate == pytest.approx(2.0) and e.raters == 2 and e.df == pytest.approx(1.0)
    half = stats.t.ppf(0.975, 1) * 0.5
    assert tuple(e.interval) == pytest.approx((2.0 - half, 2.0 + half))
    residual = ratings["rating"].to_numpy() - np.repeat(u, 2)
    assert _rater_variance(items, np.array([0, 1] * 4), residual, np.full(4, 2)) == pytest.approx(
        (2.0, 0.5, 4.0, 1.0, 0.5))


def test_active_weights_by_probability_and_checks_the_draw():
    rng = np.random.default_rng(1)
    ratings, llm = crossed(rng, items=80, k=2)
    probability = pd.Series(np.full(80, 0.5))
    selected = pd.Series(rng.random(80) < 0.5)
    kept = ratings[ratings["item"].map(selected)]
    e = ppi_mean_rater_population(kept, llm, probability=probability, selected=selected)
    assert e.interval.low < e.estimate < e.interval.high and e.n == int(selected.sum())
    with pytest.raises(InputError, match="drawn for humans needs a rating"):
        ppi_mean_rater_population(kept[kept["item"] != kept["item"].iloc[0]], llm, probability=probability,
                                  selected=selected)


def test_one_rater_is_not_a_population():
    ratings = pd.DataFrame({"item": [0, 1, 2], "rater": "u", "rating": [1.0, 2.0, 3.0]})
    with pytest.raises(InputError, match="at least two raters"):
        ppi_mean_rater_population(ratings, pd.Series([1.0, 2.0, 3.0, 4.0]))


def test_fixed_rating_estimand_keeps_its_name_and_numbers():
    # ppi_mean (item sampling only) is unchanged: its hand-worked value
    e = ppi_mean([2.0, 4.0], [1.0, 3.0], [1.0, 2.0, 3.0], lam=1.0)
    assert (e.estimate, e.classical) == (3.0, 3.0) and not hasattr(e, "over")


def test_coverage_slice_fixed_seed():
    from benchmarks.ppi_coverage import coverage_table
    table = coverage_table(studies=80, items=80, seed=7, quick=True)
    # 80 studies: Monte Carlo se ≈ 2.4 points at 95%; the fixed-rating interval of the every-item
    # cell covers nothing (zero width), the rater-population one about 95%
    assert (table["PPI"] >= 0.85).all() and (table["human-only"] >= 0.85).all()
    every = table[(table["rated"] == 1.0) & ~table["active"]].iloc[0]
    assert every["fixed-rating PPI"] < 0.2 and every["PPI"] >= 0.88


def test_coverage_table_is_the_same_in_one_or_two_processes():
    from benchmarks.ppi_coverage import coverage_table
    one = coverage_table(studies=6, items=60, seed=3, quick=True)
    assert one.equals(coverage_table(studies=6, items=60, seed=3, quick=True, jobs=2))
    assert not one.equals(coverage_table(studies=6, items=60, seed=4, quick=True))


def test_saved_is_the_documented_formula_of_the_two_widths():
    # effective items = n·(human-only width / PPI width)², saved = 1 − n/effective (docs/studies.md)
    rng = np.random.default_rng(4)
    ratings, llm = crossed(rng, items=300, raters=60, k=1, sd_b=0.0)
    e = ppi_mean_rater_population(ratings[ratings["item"] < 100], llm)
    expected = 100 * (np.ptp(e.classical_interval) / np.ptp(e.interval)) ** 2
    assert e.effective_n == pytest.approx(expected, rel=1e-12) and e.effective_n > 150
    assert e.saved == pytest.approx(1 - 100 / expected)
    # three raters far apart: PPI leaves the raters' term dominant, its t has fewer degrees of
    # freedom and its interval is the wider one: fewer effective items than rated, saved negative
    ratings, llm = crossed(np.random.default_rng(5), items=200, raters=3, k=1, sd_b=0.8)
    e = ppi_mean_rater_population(ratings[ratings["item"] < 40], llm)
    assert np.ptp(e.interval) > np.ptp(e.classical_interval) and e.df < e.classical_df
    assert e.effective_n == pytest.approx(40 * (np.ptp(e.classical_interval) / np.ptp(e.interval)) ** 2)
    assert e.effective_n < 40 and e.saved < 0


def test_unbalanced_active_slice_fixed_seed():
    # the benchmark's unbalanced [active] cell: 4 heavy raters, one who leaves after 20–80% of the
    # drawn items, 6 light raters of 3–8 items, draw probabilities 0.05–0.9. Counting the 11 raters
    # as 10 rater degrees of freedom covered 89–92% in such designs; MS_B's own degrees of freedom
    # (about the heavy raters) bring it to nominal. 1,000 studies: Monte Carlo se ≈ 0.75 points;
    # this slice covers 93.3% (PPI) and 93.6% (human-only), 91.9% and 92.4% with R − 1.
    from benchmarks.ppi_coverage import UNBALANCED, grid, run_cell
    assert UNBALANCED[0] in grid(quick=True) and UNBALANCED[0] == (0.6, (4, 1, 6), 0.25, 0, True)
    row = run_cell(np.random.default_rng([11, 4]), 1000, items=200, raters=(4, 1, 6), sd_b=0.6, share=0.25, k=0,
                   active=True)
    assert row["raters"] == "4+1d+6l" and row["studies"] == 1000
    assert 0.925 <= row["PPI"] <= 0.975 and 0.925 <= row["human-only"] <= 0.975, row


def test_light_raters_do_not_add_rater_degrees_of_freedom():
    # two designs with the same four heavy raters on every rated item; adding ten raters of 4 items
    # each moves the degrees of freedom of the all-rated interval (MS_B's) by less than two, where
    # counting raters would take them from 3 to 13
    rng = np.random.default_rng(8)
    location, severity = rng.normal(2, 1, 80), rng.normal(0, 0.6, 14)
    rows = [(i, r, location[i] + severity[r] + rng.normal(0, 0.7)) for i in range(80) for r in range(4)]
    heavy = pd.DataFrame(rows, columns=["item", "rater", "rating"])
    light = pd.DataFrame([(i, r, location[i] + severity[r] + rng.normal(0, 0.7))
                          for r in range(4, 14) for i in rng.choice(80, 4, replace=False)],
                         columns=["item", "rater", "rating"])
    llm = pd.Series(location + 0.2)
    alone = ppi_mean_rater_population(heavy, llm)
    mixed = ppi_mean_rater_population(pd.concat([heavy, light]), llm)
    assert alone.df == pytest.approx(3.0, abs=0.05) and mixed.raters == 14
    assert 3.0 < mixed.df < 5.0
