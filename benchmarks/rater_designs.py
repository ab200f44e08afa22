"""Unbalanced rater designs for :mod:`benchmarks.ppi_coverage`: a few heavy raters who rate most
of the drawn items, light raters (pilots, one-off participants) who rate a handful, raters who
leave early, and ``[active]`` draws with probabilities spread over 0.05–0.9.

A design: the drawn items (a simple random sample of ``share·items``, or a Poisson draw with
probabilities ``π_i ∈ [0.05, 0.9]`` ∝ a noisy |LLM error| proxy whose mean is ``share``) are
rated by ``heavy`` raters each (every heavy rater rates every drawn item); ``dropouts`` further
raters start on the drawn items in a random order and leave after a uniform 20–80% of them;
``light`` raters rate 3–8 drawn items each, chosen at random. Severities, item locations, the
rating rule and the LLM are :mod:`benchmarks.ppi_coverage`'s.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

LOW, HIGH = 0.05, 0.9      # the spread of the active draw probabilities
LIGHT_ITEMS = (3, 8)       # items a light rater rates, inclusive


def spread_probabilities(proxy: np.ndarray, share: float) -> np.ndarray:
    """``π_i = clip(a·proxy_i, 0.05, 0.9)`` with ``a`` found by bisection so ``mean(π) = share``."""
    low, high = 0.0, 1e6
    for _ in range(100):
        a = (low + high) / 2
        if np.clip(a * proxy, LOW, HIGH).mean() < share:
            low = a
        else:
            high = a
    return np.clip(high * proxy, LOW, HIGH)


def unbalanced(rng, *, items, location, llm, sd_b, share, heavy, light, dropouts=0, active=False,
               residual_sd=0.8):
    """One study's (ratings, probability, selected) under the design above."""
    if active:
        proxy = np.abs(llm - location - 0.4) + rng.uniform(0, 0.3, items)
        probability = spread_probabilities(proxy, share)
        chosen = rng.random(items) < probability
        while chosen.sum() < 2:
            chosen = rng.random(items) < probability
    else:
        probability = None
        chosen = np.zeros(items, bool)
        chosen[rng.choice(items, size=max(2, round(share * items)), replace=False)] = True
    drawn = np.flatnonzero(chosen)
    raters = heavy + dropouts + light
    severity = rng.normal(0, sd_b, raters)
    item_parts, rater_parts = [], []
    for r in range(heavy):
        item_parts.append(drawn)
        rater_parts.append(np.full(len(drawn), r))
    for r in range(heavy, heavy + dropouts):
        order = rng.permutation(drawn)
        kept = order[:max(1, round(rng.uniform(0.2, 0.8) * len(drawn)))]
        item_parts.append(kept)
        rater_parts.append(np.full(len(kept), r))
    for r in range(heavy + dropouts, raters):
        size = min(len(drawn), int(rng.integers(LIGHT_ITEMS[0], LIGHT_ITEMS[1] + 1)))
        item_parts.append(rng.choice(drawn, size=size, replace=False))
        rater_parts.append(np.full(size, r))
    item, rater = np.concatenate(item_parts), np.concatenate(rater_parts)
    score = np.clip(np.round(location[item] + severity[rater] + rng.normal(0, residual_sd, len(item))), 0, 4)
    ratings = pd.DataFrame({"item": item, "rater": rater, "rating": score})
    if active:
        return ratings, pd.Series(probability), pd.Series(chosen)
    return ratings, None, None
