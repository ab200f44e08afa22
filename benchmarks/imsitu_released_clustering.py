"""imSitu two-step sense clustering: ``metrics imsitu-cluster`` against the plain transcription of
the authors' released code (``tests/reference/verb_sense_clustering.py``), with the released
settings and with each of the project's own readings.

Workload (generated, as the released code needs: every verb has at least 17 nodes): ``--verbs``
verbs with 17–39 nodes each; each verb has 2–3 senses drawn from ``--senses`` shared ones, a
node's embedding is its sense's direction plus Gaussian noise, scaled by a factor drawn from
[0.3, 3] (a language model's hidden states differ in norm), in float32. Nodes of the verbs of one
sense share scene images (``s<sense>_<n>.jpg``), so an image is a node of several verbs.

For each algorithm and each setting, the adjusted Rand index of the final node partitions against
the released code's, and the step-2 k each chose; the range over ``--runs`` generated sets.

    .venv/bin/python -m benchmarks.imsitu_released_clustering            # 5 sets of 20 verbs
    .venv/bin/python -m benchmarks.imsitu_released_clustering --runs 2
"""

from __future__ import annotations

import argparse

import numpy as np
import pandas as pd

from metrics.imsitu import Nodes, two_step_clustering

SETTINGS = {   # name -> two_step_clustering options; "released" is the default
    "released (default)": {},
    "--ratio-rule decimal": {"ratio_rule": "decimal"},
    "--step2-points unit-mean": {"step2_points": "unit-mean"},
    "--seed 0 --n-init auto": {"seed": 0, "n_init": "auto"},
    "all three (the earlier reading)": {"ratio_rule": "decimal", "step2_points": "unit-mean", "seed": 0,
                                        "n_init": "auto"},
}


def generated_nodes(seed: int = 0, n_verbs: int = 20, n_senses: int = 30, dim: int = 32,
                    noise: float = 0.45) -> Nodes:
    """Nodes of ``n_verbs`` verbs (``verb00`` …), 17–39 each, 2–3 senses per verb, unequal norms."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_senses, dim))
    centres /= np.linalg.norm(centres, axis=1, keepdims=True)
    rows, images, verbs = [], [], []
    for v in range(n_verbs):
        senses = rng.choice(n_senses, size=int(rng.integers(2, 4)), replace=False)
        n = int(rng.integers(17, 40))
        taken = {int(s): rng.permutation(60) for s in senses}
        for j in range(n):
            s = int(senses[j % len(senses)]) if j < len(senses) else int(rng.choice(senses))
            scene = int(taken[s][0])
            taken[s] = taken[s][1:]
            point = centres[s] + noise * rng.normal(size=dim) / np.sqrt(dim) * 3
            rows.append(point * rng.uniform(0.3, 3.0))
            images.append(f"s{s}_{scene}.jpg")
            verbs.append(f"verb{v:02d}")
    return Nodes(np.array(rows, dtype=np.float32), np.array(images, dtype=object), np.array(verbs, dtype=object))


def released_run(nodes: Nodes, algorithm: str) -> dict:
    """The transcribed released code on the same nodes: ``node_labels`` (final cluster of each
    node), ``step1`` (its step-1 DataFrame), ``step2`` (the grouped rows), ``targets``, ``k``."""
    from tests.reference.verb_sense_clustering import image_targets, released_clustering

    x = nodes.embeddings.astype(np.float64)
    verbs, images = nodes.verbs.astype(str), nodes.images.astype(str)
    embedding_file = {(v, i.split(".")[0]): x[n] for n, (v, i) in enumerate(zip(verbs, images))}
    df_rows = pd.DataFrame({"verbs": verbs, "image": images})
    method = "kmeans" if algorithm == "kmeans" else "agglomerative"
    step1, step2 = released_clustering(embedding_file, df_rows, method)
    final = {(row.verbs, image): row.final_cluster for row in step2.itertuples() for image in row.image}
    return {"node_labels": np.array([final[(v, i)] for v, i in zip(verbs, images)]), "step1": step1,
            "step2": step2, "targets": image_targets(step2), "k": int(step2["final_cluster"].nunique())}


def measure(runs: int, n_verbs: int) -> pd.DataFrame:
    from sklearn.metrics import adjusted_rand_score

    records = []
    for run in range(runs):
        nodes = generated_nodes(seed=run, n_verbs=n_verbs)
        for algorithm in ("hac", "kmeans"):
            released = released_run(nodes, algorithm)
            for name, options in SETTINGS.items():
                result = two_step_clustering(nodes, algorithm=algorithm, quality=False, **options)
                records.append({"run": run, "algorithm": algorithm, "setting": name,
                                "ari": adjusted_rand_score(released["node_labels"], result.node_labels),
                                "k_released": released["k"], "k": result.step2["k"]})
    return pd.DataFrame(records)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--verbs", type=int, default=20)
    args = parser.parse_args(argv)
    table = measure(args.runs, args.verbs)
    print(f"{args.runs} generated sets of {args.verbs} verbs; adjusted Rand index against the released code")
    print(f"{'algorithm':<9} {'setting':<34} {'ARI min':>8} {'ARI max':>8} {'= 1.0':>6}  step-2 k (released / here)")
    for (algorithm, name), rows in table.groupby(["algorithm", "setting"], sort=False):
        ks = ", ".join(f"{a}/{b}" for a, b in zip(rows["k_released"], rows["k"]))
        print(f"{algorithm:<9} {name:<34} {rows['ari'].min():8.3f} {rows['ari'].max():8.3f} "
              f"{int((rows['ari'] == 1.0).sum()):>3}/{len(rows):<2}  {ks}")


if __name__ == "__main__":
    main()
