"""The adaptive-collection benchmark's hindsight bound: the dynamic programme equals a search
over every allocation on small tables."""

import itertools

import numpy as np
import pytest

from benchmarks.adaptive_collection import fewest_ratings


def brute_force(se: np.ndarray, target_mean: float, min_raters: int) -> int:
    counts = range(min_raters, se.shape[1] + 1)
    return min(sum(ns) for ns in itertools.product(counts, repeat=len(se))
               if np.mean([se[i, n - 1] for i, n in enumerate(ns)]) <= target_mean + 1e-12)


@pytest.mark.parametrize("seed", range(20))
def test_fewest_ratings_equals_search_over_every_allocation(seed):
    rng = np.random.default_rng(seed)
    # SEs that mostly fall with n but not always (a disagreeing rating can raise an item's SE)
    se = np.sort(rng.uniform(0.1, 1.0, (4, 5)), axis=1)[:, ::-1] + rng.normal(0, 0.05, (4, 5))
    min_raters = int(rng.integers(1, 3))
    target = float(rng.uniform(se[:, -1].mean(), se[:, min_raters - 1].mean()))
    assert fewest_ratings(se, target, min_raters) == brute_force(se, target, min_raters)


def test_a_clear_item_gives_up_its_second_rating():
    se = np.array([[0.9, 0.5, 0.4], [0.8, 0.1, 0.1], [0.3, 0.3, 0.3]])
    # fixed k = 2: mean (0.5 + 0.1 + 0.3) / 3 = 0.3, 6 ratings. The third item is as precise
    # after one rating: (2, 2, 1) sums to 0.9 = 3 · 0.3 with 5 ratings; no 4 reach it
    # ((2, 1, 1): 1.6, (1, 2, 1): 1.3, (1, 1, 2): 2.0).
    assert fewest_ratings(se, se[:, 1].mean(), 1) == 5
    assert fewest_ratings(se, se[:, 1].mean(), 2) == 6  # at least two ratings each: k = 2
