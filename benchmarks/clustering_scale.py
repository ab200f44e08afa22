"""Two-step sense clustering at scale: 50,000 nodes × 256 dimensions over 500 verbs.

Target: both steps with silhouette selection (step 1: k = 2..16 for each of the 500
verbs; step 2: the 11 ratios r = 0.6..1.6) in ≤ 120 s, peak memory ≤ 4 GiB. The final
quality's node-level silhouette over 50,000 nodes would need a 50,000² distance matrix, so it
is sampled (scikit-learn's ``sample_size``, 10,000 nodes) — the output says so.

Synthetic nodes: 700 sense centres on the unit sphere; each verb draws 2–4 senses, each node
is its sense centre plus Gaussian noise; 12,500 images. Peak memory is the process's maximum
resident set size (``ru_maxrss``), which includes the interpreter and libraries.

K-Means runs with the command's defaults (the released ``n_init=10``, ``random_state=42``);
``--n-init auto`` fits each k once (k-means++ with one initialization), about ten times fewer fits.

    .venv/bin/python -m benchmarks.clustering_scale [--runs 3] [--n-jobs 2] [--algorithm kmeans] [--n-init auto]
"""

from __future__ import annotations

import argparse
import resource
import statistics
import time

import numpy as np

from metrics.imsitu import Nodes, result_summary, summary_text, two_step_clustering


def synthetic_nodes(n_nodes=50_000, dim=256, n_verbs=500, n_senses=700, noise=0.6, seed=0) -> Nodes:
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_senses, dim)).astype(np.float32)
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    per_verb = n_nodes // n_verbs
    x = np.empty((n_nodes, dim), dtype=np.float32)
    verbs = np.empty(n_nodes, dtype=object)
    for v in range(n_verbs):
        senses = rng.choice(n_senses, size=rng.integers(2, 5), replace=False)
        rows = slice(v * per_verb, (v + 1) * per_verb)
        picked = senses[rng.integers(0, len(senses), per_verb)]
        x[rows] = centres[picked] + noise / np.sqrt(dim) * rng.normal(size=(per_verb, dim)).astype(np.float32)
        verbs[rows] = f"verb{v:03d}ing"
    images = np.array([f"img{i:05d}.jpg" for i in rng.integers(0, n_nodes // 4, n_nodes)], dtype=object)
    return Nodes(x, images, verbs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--n-jobs", type=int, default=2)
    parser.add_argument("--algorithm", default="kmeans", choices=["kmeans", "hac"])
    parser.add_argument("--nodes", type=int, default=50_000)
    parser.add_argument("--n-init", default="10", help="K-Means n_init: a number or auto (default 10, as released)")
    args = parser.parse_args()
    nodes = synthetic_nodes(n_nodes=args.nodes)
    print(f"{len(nodes)} nodes × {nodes.embeddings.shape[1]} dims over {len(set(nodes.verbs))} verbs, "
          f"{args.algorithm}, n_init={args.n_init}, n_jobs={args.n_jobs}")
    times, summary = [], None
    for run in range(args.runs):
        start = time.perf_counter()
        n_init = "auto" if args.n_init == "auto" else int(args.n_init)
        result = two_step_clustering(nodes, algorithm=args.algorithm, n_init=n_init, n_jobs=args.n_jobs,
                                     progress=lambda m, run=run: print(f"  [{run + 1}] {m}", flush=True))
        times.append(time.perf_counter() - start)
        summary = result_summary(result)
        print(f"run {run + 1}: {times[-1]:.1f} s (step 1 {result.seconds['step1']:.1f} s, "
              f"step 2 {result.seconds['step2']:.1f} s, quality {result.seconds['quality']:.1f} s)")
    from joblib.externals.loky import get_reusable_executor

    get_reusable_executor().shutdown(wait=True)  # reap the step-1 workers so their peak is counted
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 ** 2
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024 ** 2
    print(summary_text(summary))
    print(f"median of {len(times)} runs: {statistics.median(times):.1f} s (all: "
          + ", ".join(f"{t:.1f}" for t in times) + ") — target ≤ 120 s")
    print(f"peak memory: main process {peak:.2f} GiB, largest worker {children:.2f} GiB — target ≤ 4 GiB")
    if summary["quality"].get("silhouette_sampled"):
        print(f"note: the node-level silhouette is sampled ({summary['quality']['silhouette_sample_size']} "
              f"of {summary['quality']['n_nodes']} nodes); every step-1 and step-2 silhouette is exact")


if __name__ == "__main__":
    main()
