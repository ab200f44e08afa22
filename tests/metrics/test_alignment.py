import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from metrics.core._intervals import fisher_interval
from metrics.study._alignment import align, alignment_table, permutation_pvalue, to_0_4


def test_fisher_interval_matches_the_paper_and_the_formula():
    lo, hi = fisher_interval(0.799, 500)        # SHOE supp. §6.3: [0.765, 0.829]
    assert (round(lo, 3), round(hi, 3)) == (0.765, 0.829)
    z, se = math.atanh(0.5), 1 / math.sqrt(97)
    assert fisher_interval(0.5, 100) == pytest.approx((math.tanh(z - 1.959964 * se), math.tanh(z + 1.959964 * se)))


def test_permutation_pvalue():
    rng = np.random.default_rng(0)
    x = rng.random(200)
    # no permutation reaches the observed ρ: two-sided p = 2 · 1 / (2000 + 1)
    assert permutation_pvalue(x, x + rng.normal(0, 0.2, 200), 2000) == pytest.approx(2 / 2001)
    p = permutation_pvalue(x, rng.random(200), 2000)
    assert 0.05 < p < 1.0


def test_align_by_hand():
    res = align([4, 2, 0], [3, 2, 1], n_resamples=100)
    assert res["agreement"] == pytest.approx(np.mean([0.75, 1.0, 0.75]))
    assert res["spearman"] == pytest.approx(1.0)


def test_scale_detection():
    assert to_0_4("shoe", np.array([0.5, 1.0])).tolist() == [2.0, 4.0]
    assert to_0_4("llm", np.array([0.5, 3.0])).tolist() == [0.5, 3.0]
    assert to_0_4("llm_04", np.array([0.5, 1.0])).tolist() == [0.5, 1.0]


def test_table_ranks_metrics_and_adds_baselines():
    items = pd.DataFrame({
        "item_id": ["1", "2", "3", "4", "5", "6"], "category": [1, 1, 2, 2, 3, 3],
        "gt_verb": ["ride"] * 6, "gt_object": ["bicycle"] * 6,
        "pred_verb": ["ride", "ride", "push", "walk", "push", "hold"],
        "pred_object": ["motorcycle", "horse", "bicycle", "bicycle", "car", "cup"],
        "verb_sim": [1, 1, 0.5, 0.25, 0.5, 0.0], "object_sim": [0.75, 0.25, 1, 1, 0.5, 0.0],
        "human_mean": [3.4, 2.2, 2.8, 2.4, 1.8, 0.2], "good": [3.5, 2.3, 2.9, 2.5, 1.9, 0.3],
        "bad": [0.0, 4.0, 0.0, 4.0, 0.0, 4.0]})
    result = alignment_table(items, n_resamples=200)
    assert result["ranking"][0] == "good"
    assert result["ranking"][-1] == "bad"
    for name in ("shoe_arithmetic", "shoe_geometric", "shoe_min", "wordnet_path", "wordnet_wup", "wordnet_lch"):
        assert name in result["metrics"]
    shoe = 4 * (0.5 * items["verb_sim"] + 0.5 * items["object_sim"])
    expected = np.mean(1 - np.abs(shoe - items["human_mean"]) / 4)
    assert result["metrics"]["shoe_arithmetic"]["agreement"] == pytest.approx(expected)
    assert set(result["by_category"]) == {"1", "2", "3"}
    assert result["metrics"]["good"]["spearman"] == pytest.approx(
        stats.spearmanr(items["good"], items["human_mean"]).statistic)
