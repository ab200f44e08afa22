"""Time 1,000,000 vectorized similarity lookups on the shipped baseline verb matrix,
and the baseline matrix build.

    .venv/bin/python -m benchmarks.matrix_lookup [--pairs 1000000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np

from metrics.vocab._baseline import build, load_default


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--pairs", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    matrix = load_default("v")
    rng = np.random.default_rng(0)
    seeds = np.flatnonzero(np.isin(matrix.labels, matrix.labels[:112]))
    # half the queries against a dataset synset (mostly hits), half uniformly random (mostly misses)
    a = np.where(rng.random(args.pairs) < 0.5, rng.choice(seeds, args.pairs), rng.integers(0, matrix.n_labels, args.pairs))
    b = rng.integers(0, matrix.n_labels, args.pairs)
    la, lb = matrix.labels[a], matrix.labels[b]

    by_label, by_index = [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        sims = matrix.sims(la, lb)
        by_label.append(time.perf_counter() - t)
        t = time.perf_counter()
        matrix.scores_by_index(a, b)
        by_index.append(time.perf_counter() - t)
    builds = []
    for pos in ("v", "n"):
        t = time.perf_counter()
        m = build(pos)
        builds.append((pos, time.perf_counter() - t, m))

    print(f"matrix: {matrix}  ({(sims > 0).mean():.1%} of queried pairs non-zero)")
    print(f"{args.pairs:,} lookups by label : median {statistics.median(by_label):.3f} s over {args.repeats} runs")
    print(f"{args.pairs:,} lookups by index : median {statistics.median(by_index):.3f} s over {args.repeats} runs")
    for pos, seconds, m in builds:
        print(f"baseline build ({'verb' if pos == 'v' else 'object'}): {seconds:.2f} s, {m.n_labels} labels, "
              f"{m.n_pairs} pairs, sparsity {m.sparsity:.4%}")


if __name__ == "__main__":
    main()
