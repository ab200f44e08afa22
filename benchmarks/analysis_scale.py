"""Analysis at scale: (1) the full agreement report (no plots) on 100,000 items × 5 raters;
(2) recalibration of a 7,150 × 117 verb matrix plus an 80-row object matrix from 2,500
ratings with 5-fold cross-validation.

    .venv/bin/python -m benchmarks.analysis_scale [--repeats 3]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import pandas as pd

from metrics import hico
from metrics.study import agreement_report, join_ratings, recalibrate_matrices, simulate_ratings
from metrics.vocab import SimilarityMatrix
from metrics.vocab import _wordnet as wordnet


def agreement_workload(n_items: int, k: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return simulate_ratings(np.arange(n_items).astype(str), rng.uniform(0, 4, n_items), k=k, seed=1)


def matrix(rows: list[str], candidates: list[str], rng, density: float) -> SimilarityMatrix:
    labels = list(dict.fromkeys(rows + candidates))
    index = {l: i for i, l in enumerate(labels)}
    r = np.repeat([index[x] for x in rows], len(candidates))
    c = np.tile([index[x] for x in candidates], len(rows))
    both_rows = c < len(rows)  # a pair of two rows appears twice: keep one order
    keep = (rng.random(len(r)) < density) & (r != c) & ~(both_rows & (c < r))
    return SimilarityMatrix(labels, row=r[keep], col=c[keep], val=np.round(rng.uniform(0.2, 4, keep.sum()), 1))


def recalibration_workload(n_ratings: int):
    rng = np.random.default_rng(0)
    v = hico()
    verb_rows = list(dict.fromkeys(s for s in v.verbs["synset"] if s))
    obj_rows = list(dict.fromkeys(s for s in v.objects["synset"] if s))
    all_verbs = [s.name() for s in wordnet.wordnet().all_synsets("v")]
    all_nouns = [s.name() for s in wordnet.wordnet().all_synsets("n")]
    verb_cands = list(dict.fromkeys(verb_rows + list(rng.choice(all_verbs, 7150, replace=False))))[:7150]
    obj_cands = list(dict.fromkeys(obj_rows + list(rng.choice(all_nouns, 2000, replace=False))))[:2000]
    vm, om = matrix(verb_rows, verb_cands, rng, 0.3), matrix(obj_rows, obj_cands, rng, 0.3)
    n_items = n_ratings // 5
    cat = rng.integers(1, 4, n_items)
    gv = rng.choice(verb_rows, n_items)
    go = rng.choice(obj_rows, n_items)
    pv = np.where(cat == 1, gv, rng.choice(verb_cands, n_items))
    po = np.where(cat == 2, go, rng.choice(obj_cands, n_items))
    items = pd.DataFrame({"item_id": np.arange(n_items).astype(str), "category": cat, "gt_verb": gv,
                          "gt_object": go, "pred_verb": pv, "pred_object": po})
    latent = 4 * np.sqrt(0.5 * vm.sims(pv, gv) + 0.5 * om.sims(po, go))
    ratings = simulate_ratings(items["item_id"], latent, k=5, seed=2)
    return join_ratings(items, ratings), vm, om


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--items", type=int, default=100_000)
    parser.add_argument("--ratings", type=int, default=2_500)
    args = parser.parse_args()

    ratings = agreement_workload(args.items, 5)
    times = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        report = agreement_report(ratings, n_resamples=1000)
        times.append(time.perf_counter() - t)
    print(f"agreement report, {report.n_items:,} items x {report.n_annotators} raters "
          f"(alpha {report.krippendorff_alpha:.3f}, 1,000 bootstrap resamples): "
          f"median {statistics.median(times):.2f} s over {args.repeats} runs (target <= 5 s)")

    rated, vm, om = recalibration_workload(args.ratings)
    times = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        result = recalibrate_matrices(rated, vm, om, folds=5)
        times.append(time.perf_counter() - t)
    print(f"recalibration, verb matrix {vm.n_labels:,} labels / {vm.n_pairs:,} pairs, object matrix "
          f"{om.n_labels:,} labels / {om.n_pairs:,} pairs, {int(rated['n_ratings'].sum()):,} ratings, 5 folds: "
          f"median {statistics.median(times):.2f} s over {args.repeats} runs (target <= 10 s); "
          f"held-out agreement {result['before']['agreement']:.4f} -> {result['after']['agreement']:.4f}")


if __name__ == "__main__":
    main()
