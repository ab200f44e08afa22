"""One clustering step of Algorithm 1: fit K-Means or HAC for each candidate k and keep the k
with the highest cosine silhouette, as the released code does (``ruyi101/multimodal-verb-sense-
anonymous``, ``code/clustering_utils.py`` l.48–85 ``cluster_embeddings``; ``code/clustering.py``
l.57–82 and 133–157 the selection).

- K-Means: scikit-learn ``KMeans(n_clusters=k, random_state=seed, n_init=n_init)`` (k-means++,
  Lloyd) on the rows scaled to unit length by ``normalize`` (l.65–66, 77–81; the released
  ``random_state`` is 42, ``n_init`` 10).
- HAC: ``AgglomerativeClustering(metric="cosine", linkage="complete")`` on the rows as given
  (l.69–75). One tree per point set, cut at each k and numbered as scikit-learn numbers the
  clusters of ``n_clusters=k`` (its ``_hc_cut``): the labels of refitting with each k.
- The silhouette uses cosine distance (l.69, 144 of ``clustering.py``), and a k wins only with a
  strictly higher one (``>``, l.71, 146): ties keep the smaller k.

Labels are returned as the algorithm numbers them: the released step-2 CSV keeps that
numbering (``cluster``), and the step-2 points are ordered by it.
"""

from __future__ import annotations

import heapq
import warnings

import numpy as np

from metrics.core._errors import InputError
from metrics.imsitu._cluster_quality import MAX_EXACT, cosine_distances, silhouette
from metrics.imsitu._nodes import unit_rows

ALGORITHMS = ("kmeans", "hac")


def _hac_tree(x: np.ndarray) -> np.ndarray:
    """Merges (``children_``) of the complete-linkage tree over the cosine distances of the rows
    (scipy's ``linkage`` on ``pdist(x, "cosine")``, as scikit-learn fits ``metric="cosine"``)."""
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(n_clusters=1, linkage="complete", metric="cosine",
                                    compute_full_tree=True).fit(np.asarray(x, dtype=np.float64))
    return model.children_


def _cut(children: np.ndarray, n: int, k: int) -> np.ndarray:
    """Labels of n leaves after the first n − k merges of an agglomerative tree, numbered as
    scikit-learn's ``_hc_cut`` numbers them (the order of its heap of cluster nodes)."""
    parent = np.arange(2 * n - 1)
    for step in range(n - k):
        a, b = children[step]
        parent[a] = parent[b] = n + step

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    heap = [-(int(max(children[-1])) + 1)]
    for _ in range(k - 1):
        a, b = children[-heap[0] - n]
        heapq.heappush(heap, -int(a))
        heapq.heappushpop(heap, -int(b))
    position = {-node: i for i, node in enumerate(heap)}
    return np.array([position[root(i)] for i in range(n)], dtype=np.int64)


def first_seen(labels: np.ndarray) -> np.ndarray:
    """Relabel clusters 0, 1, … in order of first appearance (a canonical numbering)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inverse]


def _kmeans(x: np.ndarray, k: int, seed: int, n_init) -> np.ndarray:
    """K-Means labels of unit rows; on duplicate points they may name fewer than k clusters,
    which :func:`select_k` scores as they are -- so scikit-learn's warning is not printed."""
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Number of distinct clusters", ConvergenceWarning)
        return KMeans(n_clusters=k, n_init=n_init, random_state=seed).fit_predict(x)


def _kmeans_single_thread(x: np.ndarray, k: int, seed: int, n_init) -> np.ndarray:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _kmeans(x, k, seed, n_init)


def _parallel_kmeans(x: np.ndarray, ks: list, seed: int, n_init, n_jobs: int) -> dict:
    """K-Means labels for every k, fitted in ``n_jobs`` processes (the fits are independent)."""
    from joblib import Parallel, delayed

    return dict(zip(ks, Parallel(n_jobs=n_jobs)(delayed(_kmeans_single_thread)(x, k, seed, n_init)
                                                  for k in ks)))


def one_cluster(n: int) -> dict:
    """The result of :func:`select_k` when no k is usable: every row in cluster 0."""
    return {"labels": np.zeros(n, dtype=np.int64), "k": 1, "silhouette": None, "scores": {},
            "sampled": False}


def select_k(x: np.ndarray, ks, algorithm: str = "kmeans", seed: int = 42,
             max_exact: int = MAX_EXACT, n_jobs: int = 1, *, n_init=10) -> dict:
    """Cluster the rows of ``x`` for each k in ``ks`` (ascending; those outside [2, n − 1], where
    the silhouette is undefined, are skipped) and keep the k with the highest silhouette.

    Returns ``{"labels", "k", "silhouette", "scores": {k: silhouette}, "sampled"}``; one
    cluster (``k`` 1) when no k is usable.
    """
    n = len(x)
    ks = sorted({int(k) for k in ks if 2 <= k <= n - 1})
    if not ks:
        return one_cluster(n)
    unit = unit_rows(x)
    distances = cosine_distances(unit) if n <= max_exact else None
    children = None
    if algorithm == "hac":
        if distances is None:
            raise InputError(f"HAC over {n} points needs the full distance matrix; "
                             f"raise --max-exact (now {max_exact}) or use kmeans")
        children = _hac_tree(x)
    best: dict = {"labels": None, "k": None, "silhouette": -np.inf, "scores": {}, "sampled": False}
    fits = None
    if algorithm == "kmeans" and n_jobs != 1 and len(ks) > 1:
        fits = _parallel_kmeans(unit, ks, seed, n_init, n_jobs)
    for k in ks:
        if fits is not None:
            labels = fits[k]
        else:
            labels = _kmeans(unit, k, seed, n_init) if children is None else _cut(children, n, k)
        if len(np.unique(labels)) < 2:  # K-Means may collapse on duplicate points
            continue
        score, sampled = silhouette(unit, labels, distances, max_exact, seed)
        best["scores"][k] = score
        best["sampled"] |= sampled
        if score > best["silhouette"]:
            best.update(labels=np.asarray(labels, dtype=np.int64), k=k, silhouette=score)
    if best["labels"] is None:
        return one_cluster(n)
    return best
