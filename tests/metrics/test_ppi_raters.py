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
    assert e.over == "items and raters" and e.df == pytest.approx(5)   # R − 1 when raters dominate


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
    assert _rater_variance(items, np.array([0, 1] * 4), residual, np.full(4, 2)) == pytest.approx((2.0, 0.5, 4.0))


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


def test_saved_is_counted_at_equal_width_t_quantile_included():
    rng = np.random.default_rng(4)
    # many raters of equal severity: the rater term is small and the t quantile near normal, so the
    # human-only items needed approach the finite-population formula (1/n' − 1/M)·S²_C = (1/n − 1/M)·S²_PPI
    ratings, llm = crossed(rng, items=300, raters=60, k=1, sd_b=0.0)
    ratings = ratings[ratings["item"] < 100]
    e = ppi_mean_rater_population(ratings, llm)
    means = ratings.groupby("item")["rating"].mean()
    fixed = ppi_mean(means.to_numpy(), llm[:100].to_numpy(), llm[100:].to_numpy(), finite_population=True)
    ratio = (np.ptp(fixed.interval) / np.ptp(fixed.classical_interval)) ** 2
    expected = 1 / ((1 / 100 - 1 / 300) * ratio + 1 / 300)
    assert e.effective_n == pytest.approx(expected, rel=0.15) and e.saved == pytest.approx(1 - 100 / e.effective_n)
    # three raters far apart: PPI leaves the raters' term dominant, its t has fewer degrees of
    # freedom and its interval is the wider one: nothing saved
    ratings, llm = crossed(np.random.default_rng(5), items=200, raters=3, k=1, sd_b=0.8)
    e = ppi_mean_rater_population(ratings[ratings["item"] < 40], llm)
    assert np.ptp(e.interval) > np.ptp(e.classical_interval) and e.df < e.classical_df
    assert e.saved == 0.0 and e.effective_n == e.n
