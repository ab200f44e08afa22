"""Adaptive collection vs a fixed number of raters per item: ratings needed for the same
precision of the rater model's item scores — the same mean SE, and the same 90th percentile SE
(nine items in ten at least that precise).

A SHOE-like study: 500 items in SHOE's user-study design (categories 1–3 alike; levels 1–4; the
HOI similarity of a category-1/2 pair is the mean of the unchanged component's 4 and the level,
of a category-3 pair the level itself; plus N(0, 0.3) jitter), a pool of 20 raters with
severities N(0, 0.5²) scale points and noise SDs U(0.3, 1.2). Each (item, rater) rating is
drawn once, so both designs see the same answers.

- Fixed: every item gets k random raters; its mean (or 90th percentile) SE is the target.
- Adaptive (``metrics.study.collection_priority``, as the platform's ``[adaptive]``
  assignment): items below ``min_raters`` first, then the item whose SE lies furthest above the
  target, a random new rater each time, until the mean (90th percentile) SE reaches the target;
  items at target retire, none gets more than ``max_raters``. The model is refitted every
  ``--refit-every`` ratings and before stopping; in between, item SEs are updated with the
  fitted raters (``RaterModel.item_posterior``).

Both designs' final SEs and RMSEs against the truth come from a full fit.

- Hindsight bound (mean SE only): the fewest ratings *any* allocation of ratings to items could
  take to reach the fixed design's mean SE, knowing in advance every item's SE after each of
  its first 1 … ``max_raters`` ratings (raters in a random order per item, rater parameters
  from a fit of all 20 ratings per item; the fixed design's target recomputed the same way).
  It is solved exactly as a multiple-choice knapsack by dynamic programming over the total
  number of ratings (:func:`fewest_ratings`). It holds the raters' order fixed; the designs
  above each draw their own raters and fit their own model, so one study's adaptive saving
  can exceed it.

    .venv/bin/python -m benchmarks.adaptive_collection [--seeds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

import numpy as np
import pandas as pd

from metrics.study import collection_priority, fit_rater_model

N_ITEMS, N_RATERS = 500, 20


def shoe_like_study(seed: int):
    rng = np.random.default_rng(seed)
    category = rng.integers(1, 4, N_ITEMS)
    level = rng.integers(1, 5, N_ITEMS)
    latent = np.where(category < 3, (4 + level) / 2, np.minimum(level, 3.5))
    latent = np.clip(latent + rng.normal(0, 0.3, N_ITEMS), 0, 4)
    severity = rng.normal(0, 0.5, N_RATERS)
    noise = rng.uniform(0.3, 1.2, N_RATERS)
    answers = np.clip(np.rint(latent[:, None] - severity[None, :]
                              + rng.normal(0, 1, (N_ITEMS, N_RATERS)) * noise[None, :]), 0, 4)
    return pd.Series(latent, index=[f"i{k}" for k in range(N_ITEMS)]), answers.astype(int)


def long_ratings(rated: np.ndarray, answers: np.ndarray, items) -> pd.DataFrame:
    rows, cols = np.nonzero(rated)
    return pd.DataFrame({"item_id": np.asarray(items)[rows], "annotator": [f"r{c}" for c in cols],
                         "rating": answers[rows, cols]})


CRITERIA = {"mean": lambda se: float(np.mean(se)), "p90": lambda se: float(np.quantile(se, 0.9))}


def summary(truth: pd.Series, rated: np.ndarray, answers: np.ndarray) -> dict:
    model = fit_rater_model(long_ratings(rated, answers, truth.index))
    scores = model.items.reindex(truth.index)
    return {"ratings": int(rated.sum()), **{name: f(scores["se"]) for name, f in CRITERIA.items()},
            "rmse": float(np.sqrt(np.mean((scores["score"] - truth) ** 2)))}


def fixed_design(truth, answers, k: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    rated = np.argsort(rng.random(answers.shape), axis=1) < k
    return summary(truth, rated, answers)


def fewest_ratings(se: np.ndarray, target_mean: float, min_raters: int) -> int:
    """The fewest ratings Σ n_i (``min_raters`` ≤ n_i ≤ columns) with mean_i se[i, n_i − 1] ≤
    ``target_mean``, ``se[i, n − 1]`` being item i's SE after n ratings: best[b] is the least
    total SE of the items so far using b ratings, extended item by item.

    >>> fewest_ratings(np.array([[1.0, 0.1], [1.0, 0.9]]), 0.55, 1)  # one item twice: 0.1 + 1.0
    3
    """
    best = np.zeros(1)
    for row in se:
        options = [(n, value) for n, value in enumerate(row, start=1) if n >= min_raters]
        extended = np.full(len(best) + len(row), np.inf)
        for n, value in options:
            extended[n:n + len(best)] = np.minimum(extended[n:n + len(best)], best + value)
        best = extended
    reachable = np.flatnonzero(best <= target_mean * len(se) + 1e-12)
    return int(reachable[0])


def hindsight_bound(truth, answers, k: int, seed: int, min_raters: int, max_raters: int) -> dict:
    """The fixed design's ratings and the hindsight optimum's, for the fixed design's mean SE."""
    model = fit_rater_model(long_ratings(np.ones(answers.shape, bool), answers, truth.index))
    order = np.argsort(np.random.default_rng(seed).random(answers.shape), axis=1)
    se = np.empty((len(truth), max_raters))
    for n in range(1, max_raters + 1):
        rated = np.zeros(answers.shape, bool)
        np.put_along_axis(rated, order[:, :n], True, axis=1)
        se[:, n - 1] = model.item_posterior(long_ratings(rated, answers, truth.index)) \
            .reindex(truth.index)["se"].to_numpy()
    fixed = len(truth) * k
    return {"fixed": fixed, "fewest": fewest_ratings(se, se[:, k - 1].mean(), min_raters)}


def adaptive_design(truth, answers, target: float, criterion: str, seed: int, min_raters: int,
                    max_raters: int, batch: int, refit_every: int) -> dict:
    rng = np.random.default_rng(seed)
    rated = np.zeros(answers.shape, bool)
    items = pd.DataFrame({"se": np.inf, "n": 0}, index=truth.index)
    model, fitted_at = None, 0
    while True:
        open_items = collection_priority(items, target_se=target, min_raters=min_raters,
                                         max_raters=max_raters)
        done = (items["n"] >= min_raters).all() and CRITERIA[criterion](items["se"]) <= target
        if done and fitted_at < rated.sum():  # confirm with a full refit before stopping
            model, fitted_at = fit_rater_model(long_ratings(rated, answers, truth.index)), int(rated.sum())
            items = model.items[["se", "n"]].reindex(truth.index)
            continue
        if done or open_items.empty:
            break
        for key in open_items.index[:batch]:
            i = truth.index.get_loc(key)
            rater = rng.choice(np.flatnonzero(~rated[i]))
            rated[i, rater] = True
        ratings = long_ratings(rated, answers, truth.index)
        if model is None or rated.sum() - fitted_at >= refit_every:
            model, fitted_at = fit_rater_model(ratings), int(rated.sum())
            current = model.items
        else:
            current = model.item_posterior(ratings)
        items = current[["se", "n"]].reindex(truth.index).fillna({"se": np.inf, "n": 0})
    return summary(truth, rated, answers)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="simulated studies (median reported)")
    parser.add_argument("--ks", default="3,5", help="fixed raters per item to compare with")
    parser.add_argument("--min-raters", type=int, default=2)
    parser.add_argument("--max-raters", type=int, default=12)
    parser.add_argument("--batch", type=int, default=5,
                        help="ratings handed out between SE updates (the platform: 1)")
    parser.add_argument("--refit-every", type=int, default=100,
                        help="ratings between full refits (the platform's default: 25)")
    args = parser.parse_args()
    started = time.perf_counter()
    rows = []
    for criterion in CRITERIA:
        for k in (int(x) for x in args.ks.split(",")):
            per_seed, bounds = [], []
            for seed in range(args.seeds):
                truth, answers = shoe_like_study(seed)
                fixed = fixed_design(truth, answers, k, seed + 100)
                adaptive = adaptive_design(truth, answers, fixed[criterion], criterion, seed + 200,
                                           args.min_raters, args.max_raters, args.batch, args.refit_every)
                per_seed.append((fixed, adaptive))
                if criterion == "mean":
                    bounds.append(hindsight_bound(truth, answers, k, seed + 300, args.min_raters,
                                                  args.max_raters))
            med = {f"{side}_{key}": statistics.median(run[i][key] for run in per_seed)
                   for i, side in enumerate(("fixed", "adaptive")) for key in ("ratings", criterion, "rmse")}
            med["saved"] = statistics.median(1 - a["ratings"] / f["ratings"] for f, a in per_seed)
            if bounds:
                med["bound"] = statistics.median(1 - b["fewest"] / b["fixed"] for b in bounds)
            rows.append((criterion, k, med))
    print(f"adaptive vs fixed collection, {N_ITEMS} items, {N_RATERS} raters, median of "
          f"{args.seeds} simulated studies; load average {os.getloadavg()[0]:.2f}")
    print(f"{'SE':>4} {'fixed k':>7} {'target':>6} | {'fixed ratings':>13} {'RMSE':>6} | "
          f"{'adaptive ratings':>16} {'SE':>6} {'RMSE':>6} | {'saved':>6} | {'hindsight bound':>15}")
    for criterion, k, m in rows:
        print(f"{criterion:>4} {k:7d} {m['fixed_' + criterion]:6.3f} | {m['fixed_ratings']:13.0f} "
              f"{m['fixed_rmse']:6.3f} | {m['adaptive_ratings']:16.0f} {m['adaptive_' + criterion]:6.3f} "
              f"{m['adaptive_rmse']:6.3f} | {100 * m['saved']:5.1f}% | "
              + (f"{100 * m['bound']:14.1f}%" if "bound" in m else f"{'—':>15}"))
    print(f"({time.perf_counter() - started:.0f} s)")


if __name__ == "__main__":
    main()
