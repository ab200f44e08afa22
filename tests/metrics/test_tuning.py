import numpy as np
import pandas as pd
import pytest

from metrics.study._tuning import mae_curve, optimal_w, tune_w_by_category


def test_recovers_w_exactly_without_noise():
    rng = np.random.default_rng(0)
    v, o = rng.random(300), rng.random(300)
    for w in (0.267, 0.5, 0.733, 0.0, 1.0):
        assert optimal_w(v, o, w * v + (1 - w) * o) == pytest.approx(w, abs=1e-9)


def test_recovers_w_within_005_with_noise():
    rng = np.random.default_rng(1)
    v, o = rng.random(500), rng.random(500)
    y = np.clip(0.64 * v + 0.36 * o + rng.normal(0, 0.08, 500), 0, 1)
    assert abs(optimal_w(v, o, y) - 0.64) < 0.05


def test_exact_optimum_is_at_least_as_good_as_the_grid():
    rng = np.random.default_rng(2)
    v, o, y = rng.random(101), rng.random(101), rng.random(101)
    grid = np.linspace(0, 1, 1001)
    w = optimal_w(v, o, y)
    assert mae_curve(v, o, y, [w])[0] <= mae_curve(v, o, y, grid).min() + 1e-12


def test_per_category_tuning_and_agreement():
    rng = np.random.default_rng(3)
    n = 300
    cat = np.repeat([1, 2, 3], n // 3)
    v, o = rng.random(n), rng.random(n)
    true_w = np.select([cat == 1, cat == 2], [0.267, 0.733], 0.640)
    items = pd.DataFrame({"category": cat, "verb_sim": v, "object_sim": o,
                          "human_mean": 4 * (true_w * v + (1 - true_w) * o)})
    result = tune_w_by_category(items)
    assert result["w_by_category"]["1"] == pytest.approx(0.267, abs=1e-9)
    assert result["w_by_category"]["2"] == pytest.approx(0.733, abs=1e-9)
    assert result["w_by_category"]["3"] == pytest.approx(0.640, abs=1e-9)
    assert result["agreement_tuned"] == pytest.approx(1.0)
    assert result["agreement_w05"] < 1.0
    assert len(result["curve"]["w"]) == 1001
