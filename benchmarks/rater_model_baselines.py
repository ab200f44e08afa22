"""The ordinal rater model's item scores against plain aggregation and crowd-kit's nominal
aggregators, on simulated studies with known truth: Pearson r and RMSE against the true
similarity (0–4), and the seconds each method takes.

- ``model``: ``metrics.study.fit_rater_model`` (ordinal; rater severity and consistency).
- ``mean``, ``median``: the item's plain mean / median rating.
- ``majority``: crowd-kit ``MajorityVote`` (the most frequent rating; nominal).
- ``dawid-skene``, ``mace``: crowd-kit ``DawidSkene`` and ``MACE`` (nominal: a confusion matrix
  or a competence per rater over the five ratings as unordered labels). Their score is the
  expected rating under the item's posterior over labels (better than the posterior mode here).

Studies: ``test`` — 250 items with uniform true similarity, 9 raters (two strict and two
lenient by 1 and 0.5 points, a mid-scale one, a random and a constant one), 3 per item, noise
0.6 (the study of ``tests/metrics/test_rater_model.py``); ``shoe`` — the SHOE-like study of
``benchmarks.adaptive_collection`` (500 items, 20 raters with severities N(0, 0.5²) and noise
U(0.3, 1.2)), 3 random raters per item.

    .venv/bin/python -m benchmarks.rater_model_baselines [--seeds 3]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
import warnings

import numpy as np
import pandas as pd

from benchmarks.adaptive_collection import long_ratings, shoe_like_study
from metrics.study import fit_rater_model, simulate_ratings

# crowd-kit 1.4.2 passes pandas' deprecated ``inplace`` / ``copy`` keywords (results unaffected)
warnings.filterwarnings("ignore", module=r"crowdkit\.", category=DeprecationWarning)

PROFILES = ["neutral", "strict", "lenient", "strict", "lenient", "neutral", "mid", "random", "constant"]
SHIFTS = [0.0, 1.0, 1.0, 0.5, 0.5, 0.0, 0.0, 0.0, 0.0]


def rater_tests_study(seed: int) -> tuple[pd.Series, pd.DataFrame]:
    """Truth and long ratings of the rater-model tests' study (seed 0 is the tests' own)."""
    rng = np.random.default_rng(seed)
    truth = pd.Series(rng.uniform(0, 4, 250), index=[f"i{k}" for k in range(250)])
    ratings = simulate_ratings(truth.index, truth.to_numpy(), k=len(PROFILES), profiles=PROFILES,
                               shift=SHIFTS, noise=0.6, raters_per_item=3, seed=seed + 1)
    return truth, ratings


def shoe_study(seed: int, k: int = 3) -> tuple[pd.Series, pd.DataFrame]:
    truth, answers = shoe_like_study(seed)
    rated = np.argsort(np.random.default_rng(seed + 100).random(answers.shape), axis=1) < k
    return truth, long_ratings(rated, answers, truth.index)


def _crowdkit(name: str, **options):
    """A crowd-kit aggregator (imported here: crowd-kit takes about 2 s to import)."""
    from crowdkit import aggregation
    return getattr(aggregation, name)(**options)


def _expected_label(aggregator, tasks: pd.DataFrame) -> pd.Series:
    probas = aggregator.fit(tasks).probas_
    return pd.Series(probas.to_numpy() @ probas.columns.to_numpy(float), index=probas.index)


METHODS = {
    "model": lambda r, t: fit_rater_model(r).items["score"],
    "mean": lambda r, t: r.groupby("item_id")["rating"].mean(),
    "median": lambda r, t: r.groupby("item_id")["rating"].median(),
    "majority": lambda r, t: _crowdkit("MajorityVote").fit_predict(t).astype(float),
    "dawid-skene": lambda r, t: _expected_label(_crowdkit("DawidSkene", n_iter=100), t),
    "mace": lambda r, t: mace_scores(t),
}


def mace_scores(tasks: pd.DataFrame, *, restarts: int = 10) -> pd.Series:
    """MACE's expected rating per item, its EM started ``restarts`` times (crowd-kit's default 10)."""
    return _expected_label(_crowdkit("MACE", n_iter=100, n_restarts=restarts, random_state=0), tasks)


def tasks_of(ratings: pd.DataFrame) -> pd.DataFrame:
    """Long ratings as crowd-kit's ``task`` / ``worker`` / ``label`` table."""
    return pd.DataFrame({"task": ratings["item_id"], "worker": ratings["annotator"],
                         "label": ratings["rating"].astype(int)})


def item_scores(ratings: pd.DataFrame, methods=tuple(METHODS)) -> dict[str, tuple[pd.Series, float]]:
    """Each method's item scores and the seconds it took."""
    tasks = tasks_of(ratings)
    out = {}
    for name in methods:
        started = time.perf_counter()
        scores = METHODS[name](ratings, tasks)
        out[name] = (scores, time.perf_counter() - started)
    return out


def accuracy(scores: pd.Series, truth: pd.Series) -> tuple[float, float]:
    """Pearson r and RMSE of ``scores`` against ``truth``."""
    scores = scores.reindex(truth.index).astype(float)
    return (float(np.corrcoef(scores, truth)[0, 1]),
            float(np.sqrt(np.mean((scores - truth) ** 2))))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=3, help="simulated studies of each kind (median)")
    args = parser.parse_args()
    print(f"item scores against the truth, median of {args.seeds} simulated studies; "
          f"load average {os.getloadavg()[0]:.2f}")
    print(f"{'study':>5} {'method':>12} | {'Pearson r':>9} {'RMSE':>6} {'seconds':>7}")
    for label, make in (("test", rater_tests_study), ("shoe", shoe_study)):
        runs = []
        for seed in range(args.seeds):
            truth, ratings = make(seed)
            runs.append({name: (*accuracy(scores, truth), seconds)
                         for name, (scores, seconds) in item_scores(ratings).items()})
        for name in METHODS:
            r, rmse, seconds = (statistics.median(run[name][i] for run in runs) for i in range(3))
            print(f"{label:>5} {name:>12} | {r:9.3f} {rmse:6.3f} {seconds:7.2f}")


if __name__ == "__main__":
    main()
