"""Two-step verb-sense clustering of <image, verb> nodes (Algorithm 1, Appendix G), as the
authors' released code runs it.

Sources: Yao, Jarvis & Jiang, *Towards Robust Evaluation of Visual Activity Recognition* §3.2,
§4.1; the released code ``ruyi101/multimodal-verb-sense-anonymous`` (``code/clustering.py``
``run_step1_clustering`` l.13–94 and ``run_step2_clustering`` l.99–166, ``code/experiments.py``
l.55–71 the settings; transcribed in ``tests/reference/verb_sense_clustering.py``). The node
embeddings are supplied by the user (:mod:`metrics.imsitu._nodes`); no model runs here.

Defaults, the released code's:

- Step 1 (same-verb clustering): each verb's nodes, in file order, are clustered with the
  algorithm A for every k in K = {2, …, 16} and the k with the highest cosine silhouette is kept
  (:mod:`metrics.imsitu._cluster_steps`: A = K-Means, ``random_state=42``, ``n_init=10``, on unit
  rows; or HAC, complete linkage, cosine).
- Step 2 (cross-verb clustering): the step-1 clusters, ordered by verb and then by the step-1
  label (the rows of ``groupby(["verbs", "cluster"])``, l.111), are each represented by the mean
  of their members' embeddings as given (``load_mllama_embedding`` averages the stored vectors,
  ``code/clustering_utils.py`` l.17–42); A clusters these means for every
  k = int(|V| × s), s in ``np.arange(0.6, 1.7, 0.1)`` — in floating point, so s = 0.7999…,
  0.9999…, 1.1999…, 1.4999… and 1.5999… (l.129–131: for |V| = 504, k = 503 and 755 where exact
  decimals give 504 and 756) — and the k with the highest silhouette wins. |V| is the number of
  distinct verbs in the nodes.

Options, the project's own readings (docs/method.md, "imSitu", has their measured effect):
``ratio_rule="decimal"`` takes each s as the exact decimal it is written as (int(90 × 0.7) is
63, not 62); ``step2_points="unit-mean"`` represents a step-1 cluster by the mean of its
members' unit vectors; ``seed`` and ``n_init`` set K-Means' ``random_state`` and ``n_init``.

Where the released code cannot run, the project extends it (the output counts each case):

- a verb with fewer than max(K) + 1 = 17 nodes makes ``silhouette_score`` (or the fit) fail;
  by default it stays one step-1 cluster (``small_verbs="one-cluster"``), and
  ``small_verbs="split"`` tries the k in K up to n − 1 instead (a verb of fewer than 3 nodes is
  one cluster either way);
- step-2 candidates outside [2, m − 1], for m step-1 clusters, are skipped;
- silhouettes over more than ``max_exact`` points are sampled (scikit-learn ``sample_size``,
  ``random_state=seed``; the result says so), where the released code computes them exactly.

Quality (Table 1) and ambiguity (Table 2): :mod:`metrics.imsitu._cluster_quality`. Everything
is deterministic for a seed.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np
import pandas as pd

from metrics.core._constraints import RANDOM_SEED, Boolean, Each, Either, Interval, Options, Whole, validate_params
from metrics.core._errors import InputError
from metrics.imsitu._cluster_files import released_files
from metrics.imsitu._cluster_quality import (
    MAX_EXACT,
    ambiguity_statistics,
    calinski_harabasz,
    clustering_quality,
)
from metrics.imsitu._cluster_steps import ALGORITHMS, first_seen, one_cluster, select_k
from metrics.imsitu._nodes import Nodes, unit_rows

STEP1_KS = tuple(range(2, 17))
STEP2_RATIOS = tuple(float(s) for s in np.arange(0.6, 1.7, 0.1))   # the released floats
RATIO_RULES = ("float", "decimal")
STEP2_POINTS = ("mean", "unit-mean")
SMALL_VERBS = ("one-cluster", "split")
SEED = 42
N_INIT = 10


@dataclass
class ClusteringResult:
    """Final clusters plus everything needed to inspect how they were chosen."""

    node_labels: np.ndarray            # final cluster of each node (numbered by first appearance)
    step1_labels: np.ndarray           # global step-1 cluster of each node, in (verb, label) order
    step1: dict[str, dict]             # verb -> {"k", "silhouette", "scores", "sampled", "small"}
    step2: dict                        # {"k", "ratio", "silhouette", "scores", "sampled"}
    clusters: dict[str, list[str]]     # cluster id -> sorted verbs
    images: dict[str, list[str]]       # image -> sorted cluster ids
    step1_local: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    step2_point_labels: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    settings: dict = field(default_factory=dict)
    quality: dict = field(default_factory=dict)
    ambiguity: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)

    def clusters_json(self, meta: dict | None = None) -> dict:
        """The clusters file read by ``python -m metrics imsitu --clusters``."""
        return {"clusters": self.clusters, "images": self.images, "meta": meta or {}}

    def released_files(self, nodes: Nodes) -> dict[str, str]:
        """The released code's step-1 CSV, step-2 CSV and results JSON (``step1``, ``step2``,
        ``results``) as text (:func:`metrics.imsitu._cluster_files.released_files`)."""
        return released_files(nodes.images, nodes.verbs, self.step1_local, self.step1_labels,
                              self.step2_point_labels)


def _worker_step1(chunk, algorithm, ks, seed, n_init, max_exact, small_verbs):
    """Step 1 for a chunk of verbs (one BLAS / OpenMP thread: many small problems)."""
    from threadpoolctl import threadpool_limits

    smallest = max(ks) + 1
    with threadpool_limits(limits=1):
        out = []
        for verb, x in chunk:
            small = len(x) < smallest
            best = one_cluster(len(x)) if small and small_verbs == "one-cluster" else \
                select_k(x, ks, algorithm, seed, max_exact, n_init=n_init)
            best["small"] = small
            out.append((verb, best))
        return out


def _verb_groups(nodes: Nodes) -> tuple[list[str], list[tuple[str, np.ndarray]]]:
    """The sorted verbs and, for each, the indices of its nodes in file order."""
    verbs, verb_index = np.unique(nodes.verbs.astype(str), return_inverse=True)
    names = [str(v) for v in verbs]
    order = np.argsort(verb_index, kind="stable")
    bounds = np.searchsorted(verb_index[order], np.arange(len(names) + 1))
    return names, [(names[v], order[bounds[v]:bounds[v + 1]]) for v in range(len(names))]


def _step1(x, groups, options: dict, n_jobs, say, started):
    """Step 1: cluster each verb's nodes; returns ``(step1, local labels by verb)``."""
    from joblib import Parallel, delayed

    n_chunks = max(1, min(len(groups), 20 * max(1, n_jobs)))
    chunks = [groups[i::n_chunks] for i in range(n_chunks)]
    step1: dict[str, dict] = {}
    local: dict[str, np.ndarray] = {}
    runner = Parallel(n_jobs=n_jobs, return_as="generator") if n_jobs != 1 else None
    jobs = (delayed(_worker_step1)([(verb, x[rows]) for verb, rows in chunk], **options) for chunk in chunks)
    results = runner(jobs) if runner else (_worker_step1([(v, x[r]) for v, r in c], **options) for c in chunks)
    done = 0
    for chunk_result in results:
        for verb, best in chunk_result:
            local[verb] = best.pop("labels")
            best["scores"] = {int(k): float(s) for k, s in best["scores"].items()}
            step1[verb] = best
        done += 1
        if done == len(chunks) or done % max(1, len(chunks) // 10) == 0:
            say(f"step 1: {len(step1)}/{len(groups)} verbs ({time.perf_counter() - started:.1f} s)")
    return step1, local


def _global_step1_labels(groups, local: dict, n_nodes: int) -> tuple[np.ndarray, np.ndarray, int]:
    """Number the step-1 clusters by (verb, local label), the order of the released step-2 rows;
    returns the global labels, the local ones (gaps closed) and their count m."""
    step1_labels = np.empty(n_nodes, dtype=np.int64)
    step1_local = np.empty(n_nodes, dtype=np.int64)
    offset = 0
    for verb, rows in groups:
        labels = np.unique(local[verb], return_inverse=True)[1].ravel()
        step1_local[rows] = labels
        step1_labels[rows] = labels + offset
        offset += int(labels.max()) + 1
    return step1_labels, step1_local, offset


def step2_candidates(ratios, n_verbs: int, m: int, rule: str = "float") -> dict[int, float]:
    """The step-2 k = int(n_verbs × s) within [2, m − 1], ascending, mapped to the first s giving
    it. ``rule="float"``: s in floating point, as the released code multiplies; ``"decimal"``:
    s as the decimal it rounds to at 10 digits (0.7999999999999999 → 4/5).

    >>> sorted(step2_candidates(STEP2_RATIOS, 20, 100))
    [12, 14, 15, 18, 19, 21, 23, 25, 28, 29, 31]
    >>> sorted(step2_candidates(STEP2_RATIOS, 20, 100, "decimal"))
    [12, 14, 16, 18, 20, 22, 24, 26, 28, 30, 32]
    """
    candidates: dict[int, float] = {}
    for s in ratios:
        k = int(n_verbs * float(s)) if rule == "float" else int(Fraction(str(round(float(s), 10))) * n_verbs)
        if 2 <= k <= m - 1:
            candidates.setdefault(k, round(float(s), 10))
    if not candidates:
        raise InputError(f"step 2: no k = int({n_verbs} × s) for s in {min(ratios):g}..{max(ratios):g} "
                         f"lies in [2, {m - 1}] ({m} step-1 clusters); give more nodes or other ratios")
    return dict(sorted(candidates.items()))


def cluster_points(x: np.ndarray, step1_labels: np.ndarray, m: int, how: str = "mean") -> np.ndarray:
    """One point per step-1 cluster: ``"mean"``, the mean of its members' embeddings as given
    (``np.mean`` over the members in file order, as ``load_mllama_embedding`` averages them);
    ``"unit-mean"``, the unit-length mean of its members' unit vectors."""
    if how == "unit-mean":
        sums = np.zeros((m, x.shape[1]), dtype=np.float64)
        np.add.at(sums, step1_labels, unit_rows(x))
        return unit_rows(sums / np.bincount(step1_labels, minlength=m)[:, None])
    order = np.argsort(step1_labels, kind="stable")
    bounds = np.searchsorted(step1_labels[order], np.arange(m + 1))
    x = np.asarray(x, dtype=np.float64)
    return np.array([np.mean(x[order[bounds[g]:bounds[g + 1]]], axis=0) for g in range(m)])


def _step2(points, candidates: dict, algorithm, seed, n_init, max_exact, n_jobs) -> tuple[dict, np.ndarray]:
    """Step 2: cluster the step-1 points; returns the selection and the label of each point."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # one thread per fit: faster here than BLAS/OpenMP threads
        best2 = select_k(points, list(candidates), algorithm, seed, max_exact, n_jobs=n_jobs, n_init=n_init)
    points_labels = best2.pop("labels")
    best2["ratio"] = candidates.get(best2["k"])
    best2["scores"] = {int(k): float(s) for k, s in best2["scores"].items()}
    return best2, points_labels


def _clusters_and_images(frame: pd.DataFrame, node_labels: np.ndarray) -> tuple[dict, dict]:
    """Cluster id -> sorted verbs, and image -> sorted cluster ids."""
    ids = [f"c{c:04d}" for c in range(int(node_labels.max()) + 1)]
    clusters = {ids[c]: sorted(set(g)) for c, g in frame.groupby("cluster")["verb"]}
    images = {image: [ids[c] for c in sorted(set(g))] for image, g in frame.groupby("image")["cluster"]}
    return clusters, images


def _add_quality(result: ClusteringResult, x, points, step2_labels, m, seed, max_exact, say) -> None:
    """Table 1 quality of the final clusters, and of step 2 over the step-1 points."""
    say("quality: silhouette, Calinski–Harabasz, purity")
    result.quality = clustering_quality(x, result.node_labels, result.clusters, seed=seed,
                                        max_exact=max_exact)
    if len(np.unique(step2_labels)) >= 2:
        result.quality["step2"] = {
            "silhouette": result.step2["silhouette"],
            "calinski_harabasz": calinski_harabasz(points, step2_labels), "n_points": m}


@validate_params({
    "algorithm": Options(ALGORITHMS), "seed": RANDOM_SEED, "n_init": Either(Whole(1, 1000), Options(("auto",))),
    "ks": Each(Whole(2, 10_000)), "ratios": Each(Interval(0, 100, low_open=True)), "ratio_rule": Options(RATIO_RULES),
    "step2_points": Options(STEP2_POINTS), "small_verbs": Options(SMALL_VERBS), "max_exact": Whole(10, 10_000_000),
    "n_jobs": Whole(1, 256), "quality": Boolean()})
def two_step_clustering(nodes: Nodes, *, algorithm: str = "kmeans", seed: int = SEED,
                        n_init: int | str = N_INIT, ks=STEP1_KS, ratios=STEP2_RATIOS,
                        ratio_rule: str = "float", step2_points: str = "mean",
                        small_verbs: str = "one-cluster", max_exact: int = MAX_EXACT,
                        n_jobs: int = 1, progress: Callable[[str], None] | None = None,
                        quality: bool = True) -> ClusteringResult:
    """Algorithm 1 (App. G) as the released code runs it: same-verb clustering, then cross-verb
    clustering of the step-1 cluster means, both with silhouette selection; then quality and
    ambiguity statistics. The options are described in the module docstring.

    ``progress`` receives one-line messages while it runs. ``n_jobs`` > 1 spreads step 1 over
    processes (results are identical: each verb's fit depends only on its rows and the seed).
    """
    say = progress or (lambda message: None)
    started = time.perf_counter()
    x = np.asarray(nodes.embeddings, dtype=np.float64)
    verbs, groups = _verb_groups(nodes)
    say(f"step 1: {len(nodes)} nodes, {len(verbs)} verbs, {algorithm}, k in {min(ks)}..{max(ks)}")
    options = {"algorithm": algorithm, "ks": tuple(ks), "seed": seed, "n_init": n_init,
               "max_exact": max_exact, "small_verbs": small_verbs}
    step1, local = _step1(x, groups, options, n_jobs, say, started)
    step1_labels, step1_local, m = _global_step1_labels(groups, local, len(nodes))
    t1 = time.perf_counter() - started

    points = cluster_points(x, step1_labels, m, step2_points)
    candidates = step2_candidates(ratios, len(verbs), m, ratio_rule)
    say(f"step 2: {m} step-1 clusters, k in {list(candidates)}")
    best2, point_labels = _step2(points, candidates, algorithm, seed, n_init, max_exact, n_jobs)
    node_labels = first_seen(point_labels[step1_labels])
    t2 = time.perf_counter() - started - t1
    say(f"step 2: k = {best2['k']} (s = {best2['ratio']}), silhouette {best2['silhouette']:.4f} "
        f"({t2:.1f} s)")

    frame = pd.DataFrame({"image": nodes.images.astype(str), "verb": nodes.verbs.astype(str),
                          "cluster": node_labels})
    clusters, images = _clusters_and_images(frame, node_labels)
    settings = {"algorithm": algorithm, "seed": seed, "n_init": n_init, "ratio_rule": ratio_rule,
                "step2_points": step2_points, "small_verbs": small_verbs,
                "min_nodes_per_verb": max(ks) + 1,
                "n_small_verbs": sum(1 for s in step1.values() if s["small"])}
    result = ClusteringResult(node_labels, step1_labels, step1, best2, clusters, images,
                              step1_local=step1_local, step2_point_labels=point_labels, settings=settings)
    result.ambiguity = ambiguity_statistics(frame)
    if quality:
        _add_quality(result, x, points, point_labels, m, seed, max_exact, say)
    t3 = time.perf_counter() - started - t1 - t2
    result.seconds = {"step1": round(t1, 3), "step2": round(t2, 3), "quality": round(t3, 3),
                      "total": round(time.perf_counter() - started, 3)}
    say(f"done in {result.seconds['total']:.1f} s")
    return result
