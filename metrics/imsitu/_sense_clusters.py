"""Two-step verb-sense clustering of <image, verb> nodes (Algorithm 1, Appendix G), its quality
(Table 1, Appendix B) and the ambiguity statistics it reveals (Table 2).

Source: Yao, Jarvis & Jiang, *Towards Robust Evaluation of Visual Activity Recognition* §3.2,
§4.1. The node embeddings are supplied by the user (a ``.npy`` matrix plus a CSV naming each
row's ``image`` and ``verb``); no model runs here.

Algorithm 1, as implemented:

- Step 1 (same-verb clustering): for each verb, its nodes' embeddings are clustered with the
  algorithm A for every k in K = {2, …, 16} (k ≤ n_v − 1, the silhouette's limit) and the k with
  the highest silhouette is kept (strictly higher: ties keep the smaller k, as the ``>`` in
  lines 11 and 26). A = K-Means on unit vectors (scikit-learn ``KMeans``, k-means++,
  ``n_init="auto"``, ``random_state=seed``) or HAC (complete linkage, cosine distance; one
  scikit-learn ``AgglomerativeClustering`` tree per verb, cut at each k — the same partitions as
  refitting with ``n_clusters=k``, since complete-linkage merges come in order).
- Step 2 (cross-verb clustering): each step-1 cluster is represented by the mean of its
  members' unit vectors; the same A clusters these means with k_r = int(|V| × r) for r in
  R = {0.6, 0.7, …, 1.6}, and the r with the highest silhouette wins. |V| is the number of
  distinct verbs in the nodes (504 in the paper); r is taken as the exact decimal it is written
  as, so floating point never loses a cluster (in doubles int(90 × 0.7) is 62, not 63). Values
  of k_r outside [2, m − 1] for m step-1 clusters are skipped.
- Silhouettes use cosine distance (Appendix B) — exactly, from the pairwise distance matrix, up
  to ``max_exact`` points; above that, scikit-learn's sampled silhouette on ``max_exact`` points
  (``random_state=seed``), and the result says so (``silhouette_sampled``).
- A verb with fewer than 3 nodes cannot be scored by a silhouette (it needs 2 ≤ k ≤ n − 1), so
  its nodes form one step-1 cluster (the paper does not say; this keeps every node).

Quality (Appendix B), of the final clusters over the nodes (each <image, verb> pair labelled by
its final cluster, embeddings normalized to unit length): silhouette (cosine), Calinski–Harabasz
(Eq. 2) and WordNet purity (Eq. 3, clusters of at least two distinct verbs; verbs lemmatized
through every WordNet base form). The same silhouette and Calinski–Harabasz over the step-2
points (the cluster means the selection scored) are reported under ``step2``.

Everything is deterministic for a seed.
"""

from __future__ import annotations

import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.core._inputs import check_readable, csv_rows, read_text, require_columns
from metrics.core._validation import array_problem

STEP1_KS = tuple(range(2, 17))
STEP2_RATIOS = tuple(i / 10 for i in range(6, 17))
ALGORITHMS = ("kmeans", "hac")
MAX_EXACT = 10_000


@dataclass
class Nodes:
    """<image, verb> nodes: one embedding row each."""

    embeddings: np.ndarray  # (n, d) float32
    images: np.ndarray      # (n,) str
    verbs: np.ndarray       # (n,) str

    def __len__(self) -> int:
        return len(self.verbs)


def unit_rows(x: np.ndarray, dtype=np.float64) -> np.ndarray:
    """Rows scaled to unit Euclidean length (float64 by default: scikit-learn's float32
    distance path upcasts in chunks and is slower)."""
    x = np.asarray(x, dtype=dtype)
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return x / np.where(norms > 0, norms, 1.0)


def read_nodes(embeddings_path, nodes_path) -> Nodes:
    """The ``.npy`` matrix and the CSV (``image, verb`` per row, header required), validated."""
    embeddings_path, nodes_path = Path(embeddings_path), Path(nodes_path)
    for path in (embeddings_path, nodes_path):
        check_readable(path)
    try:
        with warnings.catch_warnings():  # a header of Python 2's spelling: read, or refused below;
            warnings.simplefilter("ignore", UserWarning)   # a header string with an invalid escape
            warnings.simplefilter("ignore", DeprecationWarning)   # (numpy's literal_eval): refused
            x = np.load(embeddings_path, allow_pickle=False)
    except Exception as exc:  # numpy raises ValueError, OSError, EOFError and pickle errors here
        raise InputError(f"{embeddings_path}: not a .npy array ({str(exc).splitlines()[0] if str(exc) else type(exc).__name__})") from None
    if not isinstance(x, np.ndarray):
        raise InputError(f"{embeddings_path}: an .npz archive, not a .npy array")
    if x.ndim != 2 or x.shape[0] == 0 or x.shape[1] == 0:
        raise InputError(f"{embeddings_path}: expected a 2-D matrix (nodes × dimensions), got shape {x.shape}")
    problem = array_problem(x, finite=False)  # non-finite rows are named below
    if problem:
        raise InputError(f"{embeddings_path}: expected numbers; the array {problem}")
    with np.errstate(over="ignore"):  # beyond float32: infinite, refused below as not finite
        x = np.asarray(x, dtype=np.float32)
    images, verbs = [], []
    header, rows = csv_rows(read_text(nodes_path), str(nodes_path))
    require_columns(header, ("image", "verb"), str(nodes_path))
    at = {column: header.index(column) for column in ("image", "verb")}
    for line, fields in rows:
        fields = fields + [""] * (len(header) - len(fields))
        image, verb = fields[at["image"]].strip(), fields[at["verb"]].strip().lower()
        if not image or not verb:
            raise InputError(f"{nodes_path}: line {line}: {'image' if not image else 'verb'} is empty")
        images.append(image)
        verbs.append(verb)
    if len(verbs) != len(x):
        raise InputError(f"{nodes_path}: {len(verbs)} rows but {embeddings_path} has {len(x)} embeddings")
    finite = np.isfinite(x).all(axis=1)
    with np.errstate(invalid="ignore", over="ignore"):  # rows with inf / NaN: refused as not finite
        zero = np.linalg.norm(x.astype(np.float64), axis=1) == 0   # float32's norm of 1e-45s is 0
    bad = np.flatnonzero(~finite | zero)
    if len(bad):
        row = int(bad[0])
        raise InputError(f"{embeddings_path}: row {row} ({nodes_path} line {row + 2}) is "
                         f"{'not finite' if not finite[row] else 'all zeros'}")
    return Nodes(x, np.array(images, dtype=object), np.array(verbs, dtype=object))


# ---------------------------------------------------------------------------------- scoring
def cosine_distances(x: np.ndarray) -> np.ndarray:
    """Pairwise cosine distances of unit rows (1 − cos, clipped at 0, zero diagonal)."""
    d = 1.0 - x @ x.T
    np.clip(d, 0.0, 2.0, out=d)
    np.fill_diagonal(d, 0.0)
    return d


def silhouette(x: np.ndarray, labels: np.ndarray, distances: np.ndarray | None = None,
               max_exact: int = MAX_EXACT, seed: int = 0) -> tuple[float, bool]:
    """(mean silhouette with cosine distance (App. B Eq. 1), sampled?).

    Exact from ``distances`` (or the full matrix) up to ``max_exact`` points; beyond, scikit-learn's
    sampled silhouette on ``max_exact`` points drawn with ``seed``.

    >>> x = unit_rows(np.array([[1, 0], [1, .1], [0, 1], [.1, 1]]))
    >>> round(silhouette(x, np.array([0, 0, 1, 1]))[0], 3)
    0.994
    """
    from sklearn.metrics import silhouette_score

    if distances is not None:
        return float(silhouette_score(distances, labels, metric="precomputed")), False
    if len(x) <= max_exact:
        return float(silhouette_score(cosine_distances(x), labels, metric="precomputed")), False
    return float(silhouette_score(x, labels, metric="cosine", sample_size=max_exact,
                                  random_state=seed)), True


def calinski_harabasz(x: np.ndarray, labels: np.ndarray) -> float:
    """Calinski–Harabasz index (App. B Eq. 2) of unit-normalized rows, via scikit-learn."""
    from sklearn.metrics import calinski_harabasz_score

    return float(calinski_harabasz_score(unit_rows(x), labels))


def purity(clusters: dict[str, set[str] | frozenset[str]]) -> float | None:
    """WordNet purity (App. B Eq. 3) over clusters of at least two distinct verbs.

    PuS = Σ_i max_j |Cluster_i ∩ Synset_j| / Σ_i |Cluster_i|, summed over clusters with
    |Cluster_i| > 1, where Synset_j ranges over the WordNet verb synsets holding at least one
    verb of the cluster (each verb lemmatized through all its base forms). None when no cluster
    has two verbs.

    >>> purity({"a": {"jumping", "leaping", "sleeping"}, "b": {"eating"}})  # jump.v.01 ∋ jump, leap
    0.6666666666666666
    """
    from metrics.imsitu._accuracy import verb_synsets

    hits = total = 0
    for verbs in clusters.values():
        verbs = set(verbs)
        if len(verbs) < 2:
            continue
        counts: dict[str, int] = {}
        for verb in verbs:
            for synset in verb_synsets(verb):
                counts[synset] = counts.get(synset, 0) + 1
        hits += max(counts.values(), default=0)
        total += len(verbs)
    return hits / total if total else None


# ---------------------------------------------------------------------------------- algorithms
def _hac_tree(distances: np.ndarray) -> np.ndarray:
    """Merges (children_) of the complete-linkage tree over precomputed cosine distances."""
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(n_clusters=1, linkage="complete", metric="precomputed",
                                    compute_full_tree=True).fit(distances)
    return model.children_


def _cut(children: np.ndarray, n: int, k: int) -> np.ndarray:
    """Labels of n leaves after the first n − k merges of an agglomerative tree."""
    parent = np.arange(2 * n - 1)
    for step in range(n - k):
        a, b = children[step]
        parent[a] = parent[b] = n + step

    def root(i):
        while parent[i] != i:
            i = parent[i]
        return i

    roots = np.array([root(i) for i in range(n)])
    _, labels = np.unique(roots, return_inverse=True)
    return _first_seen(labels)


def _first_seen(labels: np.ndarray) -> np.ndarray:
    """Relabel clusters 0, 1, … in order of first appearance (a canonical numbering)."""
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    order = np.argsort(np.argsort(first))
    return order[inverse]


def _kmeans(x: np.ndarray, k: int, seed: int) -> np.ndarray:
    """K-Means labels; on duplicate points they may name fewer than k clusters, which
    :func:`select_k` skips -- so scikit-learn's warning about it is not printed."""
    from sklearn.cluster import KMeans
    from sklearn.exceptions import ConvergenceWarning

    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", "Number of distinct clusters", ConvergenceWarning)
        return _first_seen(KMeans(n_clusters=k, n_init="auto", random_state=seed).fit_predict(x))


def _kmeans_single_thread(x: np.ndarray, k: int, seed: int) -> np.ndarray:
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return _kmeans(x, k, seed)


def _one_cluster(n: int) -> dict:
    """The result of :func:`select_k` when no k is usable: every row in cluster 0."""
    return {"labels": np.zeros(n, dtype=int), "k": 1, "silhouette": None, "scores": {},
            "sampled": False}


def _hac_children(distances, n: int, max_exact: int):
    """The HAC merge tree, refused when the distance matrix was too large to compute."""
    if distances is None:
        raise InputError(f"HAC over {n} points needs the full distance matrix; "
                         f"raise --max-exact (now {max_exact}) or use kmeans")
    return _hac_tree(distances)


def _parallel_kmeans(x: np.ndarray, ks: list, seed: int, n_jobs: int) -> dict:
    """K-Means labels for every k, fitted in ``n_jobs`` processes (the fits are independent)."""
    from joblib import Parallel, delayed

    return dict(zip(ks, Parallel(n_jobs=n_jobs)(delayed(_kmeans_single_thread)(x, k, seed)
                                                  for k in ks)))


def select_k(x: np.ndarray, ks, algorithm: str = "kmeans", seed: int = 0,
             max_exact: int = MAX_EXACT, n_jobs: int = 1) -> dict:
    """Cluster unit rows ``x`` for every k in ``ks`` and keep the best silhouette.

    Returns ``{"labels", "k", "silhouette", "scores": {k: silhouette}, "sampled"}``; ``k`` values
    outside [2, n − 1] are skipped, and with none left every row is one cluster (k = 1,
    silhouette None).
    """
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r} (choose {', '.join(ALGORITHMS)})")
    n = len(x)
    ks = [k for k in dict.fromkeys(ks) if 2 <= k <= n - 1]
    if not ks:
        return _one_cluster(n)
    distances = cosine_distances(x) if n <= max_exact else None
    children = _hac_children(distances, n, max_exact) if algorithm == "hac" else None
    best: dict = {"labels": None, "k": None, "silhouette": -np.inf, "scores": {}, "sampled": False}
    fits = None
    if algorithm == "kmeans" and n_jobs != 1 and len(ks) > 1:
        fits = _parallel_kmeans(x, ks, seed, n_jobs)
    for k in ks:
        if fits is not None:
            labels = fits[k]
        else:
            labels = _kmeans(x, k, seed) if children is None else _cut(children, n, k)
        if len(np.unique(labels)) < 2:  # K-Means may collapse on duplicate points
            continue
        score, sampled = silhouette(x, labels, distances, max_exact, seed)
        best["scores"][k] = score
        best["sampled"] |= sampled
        if score > best["silhouette"]:
            best.update(labels=labels, k=k, silhouette=score)
    if best["labels"] is None:
        return _one_cluster(n)
    return best


# ---------------------------------------------------------------------------------- Algorithm 1
@dataclass
class ClusteringResult:
    """Final clusters plus everything needed to inspect how they were chosen."""

    node_labels: np.ndarray            # final cluster of each node
    step1_labels: np.ndarray           # global step-1 cluster of each node
    step1: dict[str, dict]             # verb -> {"k", "silhouette", "scores", "sampled"}
    step2: dict                        # {"k", "ratio", "silhouette", "scores", "sampled"}
    clusters: dict[str, list[str]]     # cluster id -> sorted verbs
    images: dict[str, list[str]]       # image -> sorted cluster ids
    quality: dict = field(default_factory=dict)
    ambiguity: dict = field(default_factory=dict)
    seconds: dict = field(default_factory=dict)

    def clusters_json(self, meta: dict | None = None) -> dict:
        """The clusters file read by ``python -m metrics imsitu --clusters``."""
        return {"clusters": self.clusters, "images": self.images, "meta": meta or {}}


def _worker_step1(chunk, algorithm, ks, seed, max_exact):
    """Step 1 for a chunk of verbs (one BLAS / OpenMP thread: many small problems)."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return [(verb, select_k(x, ks, algorithm, seed, max_exact)) for verb, x in chunk]


def _verb_groups(nodes: Nodes) -> tuple[list[str], list[tuple[str, np.ndarray]]]:
    """The sorted verbs and, for each, the indices of its nodes."""
    verbs, verb_index = np.unique(nodes.verbs.astype(str), return_inverse=True)
    names = [str(v) for v in verbs]
    order = np.argsort(verb_index, kind="stable")
    bounds = np.searchsorted(verb_index[order], np.arange(len(names) + 1))
    return names, [(names[v], order[bounds[v]:bounds[v + 1]]) for v in range(len(names))]


def _step1(x, groups, n_verbs, algorithm, ks, seed, max_exact, n_jobs, say, started):
    """Step 1: cluster each verb's nodes; returns ``(step1, local labels by verb)``."""
    from joblib import Parallel, delayed

    n_chunks = max(1, min(len(groups), 20 * max(1, n_jobs)))
    chunks = [groups[i::n_chunks] for i in range(n_chunks)]
    step1: dict[str, dict] = {}
    local: dict[str, np.ndarray] = {}
    runner = Parallel(n_jobs=n_jobs, return_as="generator") if n_jobs != 1 else None
    jobs = (delayed(_worker_step1)([(verb, x[rows]) for verb, rows in chunk], algorithm, ks, seed,
                                   max_exact) for chunk in chunks)
    results = runner(jobs) if runner else (_worker_step1([(v, x[r]) for v, r in c], algorithm, ks,
                                                         seed, max_exact) for c in chunks)
    done = 0
    for chunk_result in results:
        for verb, best in chunk_result:
            local[verb] = best.pop("labels")
            best["scores"] = {int(k): float(s) for k, s in best["scores"].items()}
            step1[verb] = best
        done += 1
        if done == len(chunks) or done % max(1, len(chunks) // 10) == 0:
            say(f"step 1: {sum(len(c) for c in chunks[:done]) if runner is None else len(step1)}"
                f"/{n_verbs} verbs ({time.perf_counter() - started:.1f} s)")
    return step1, local


def _global_step1_labels(groups, local: dict, n_nodes: int) -> tuple[np.ndarray, int]:
    """Number the verbs' local clusters consecutively; returns the labels and their count m."""
    step1_labels = np.empty(n_nodes, dtype=np.int64)
    offset = 0
    for verb, rows in groups:
        step1_labels[rows] = local[verb] + offset
        offset += int(local[verb].max()) + 1
    return step1_labels, offset


def _step2_candidates(ratios, n_verbs: int, m: int) -> dict:
    """The step-2 k_r = int(n_verbs × r) within [2, m − 1], mapped to their ratio r."""
    candidates: dict[int, float] = {}
    for r in ratios:
        k = int(Fraction(str(r)) * n_verbs)
        if 2 <= k <= m - 1:
            candidates.setdefault(k, round(r, 1))
    if not candidates:
        raise InputError(f"step 2: no k_r = int({n_verbs} × r) for r in "
                         f"{min(ratios)}..{max(ratios)} lies in [2, {m - 1}] "
                         f"({m} step-1 clusters); give more nodes or other ratios")
    return candidates


def _cluster_means(x: np.ndarray, step1_labels: np.ndarray, m: int) -> np.ndarray:
    """The unit-length mean of each step-1 cluster (K-Means on unit vectors; cosine ignores length)."""
    sums = np.zeros((m, x.shape[1]), dtype=np.float64)
    np.add.at(sums, step1_labels, x)
    return unit_rows(sums / np.bincount(step1_labels, minlength=m)[:, None])


def _step2(points, candidates: dict, algorithm, seed, max_exact, n_jobs) -> tuple[dict, np.ndarray]:
    """Step 2: cluster the step-1 means; returns the selection and the label of each mean."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):  # one thread per fit: faster here than BLAS/OpenMP threads
        best2 = select_k(points, list(candidates), algorithm, seed, max_exact, n_jobs=n_jobs)
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
    """Table 1 quality of the final clusters, and of step 2 over the step-1 means."""
    say("quality: silhouette, Calinski–Harabasz, purity")
    result.quality = clustering_quality(x, result.node_labels, result.clusters, seed=seed,
                                        max_exact=max_exact)
    if len(np.unique(step2_labels)) >= 2:
        result.quality["step2"] = {
            "silhouette": result.step2["silhouette"],
            "calinski_harabasz": calinski_harabasz(points, step2_labels), "n_points": m}


def two_step_clustering(nodes: Nodes, *, algorithm: str = "kmeans", seed: int = 0,
                        ks=STEP1_KS, ratios=STEP2_RATIOS, max_exact: int = MAX_EXACT,
                        n_jobs: int = 1, progress: Callable[[str], None] | None = None,
                        quality: bool = True) -> ClusteringResult:
    """Algorithm 1 (App. G): same-verb clustering, then cross-verb clustering of the step-1
    cluster means, both with silhouette selection; then quality and ambiguity statistics.

    ``progress`` receives one-line messages while it runs. ``n_jobs`` > 1 spreads step 1 over
    processes (results are identical: each verb's fit depends only on its rows and the seed).
    """
    if algorithm not in ALGORITHMS:
        raise InputError(f"unknown algorithm {algorithm!r} (choose {', '.join(ALGORITHMS)})")
    say = progress or (lambda message: None)
    started = time.perf_counter()
    x = unit_rows(nodes.embeddings)
    verbs, groups = _verb_groups(nodes)
    say(f"step 1: {len(nodes)} nodes, {len(verbs)} verbs, {algorithm}, k in {min(ks)}..{max(ks)}")
    step1, local = _step1(x, groups, len(verbs), algorithm, ks, seed, max_exact, n_jobs, say, started)
    step1_labels, m = _global_step1_labels(groups, local, len(nodes))
    t1 = time.perf_counter() - started

    points = _cluster_means(x, step1_labels, m)
    candidates = _step2_candidates(ratios, len(verbs), m)
    say(f"step 2: {m} step-1 clusters, k in {sorted(candidates)}")
    best2, step2_points_labels = _step2(points, candidates, algorithm, seed, max_exact, n_jobs)
    node_labels = _first_seen(step2_points_labels[step1_labels])
    t2 = time.perf_counter() - started - t1
    say(f"step 2: k = {best2['k']} (r = {best2['ratio']}), silhouette {best2['silhouette']:.4f} "
        f"({t2:.1f} s)")

    frame = pd.DataFrame({"image": nodes.images.astype(str), "verb": nodes.verbs.astype(str),
                          "cluster": node_labels})
    clusters, images = _clusters_and_images(frame, node_labels)
    result = ClusteringResult(node_labels, step1_labels, step1, best2, clusters, images)
    result.ambiguity = ambiguity_statistics(frame)
    if quality:
        _add_quality(result, x, points, step2_points_labels, m, seed, max_exact, say)
    t3 = time.perf_counter() - started - t1 - t2
    result.seconds = {"step1": round(t1, 3), "step2": round(t2, 3), "quality": round(t3, 3),
                      "total": round(time.perf_counter() - started, 3)}
    say(f"done in {result.seconds['total']:.1f} s")
    return result


def clustering_quality(x: np.ndarray, labels: np.ndarray, clusters: dict, seed: int = 0,
                       max_exact: int = MAX_EXACT) -> dict:
    """Silhouette (cosine), Calinski–Harabasz and WordNet purity of a node clustering (Table 1)."""
    x = unit_rows(x)
    out: dict = {"n_nodes": int(len(x)), "n_clusters": int(len(np.unique(labels)))}
    if 2 <= out["n_clusters"] <= len(x) - 1:
        out["silhouette"], out["silhouette_sampled"] = silhouette(x, labels, None, max_exact, seed)
        if out["silhouette_sampled"]:
            out["silhouette_sample_size"] = max_exact
        out["calinski_harabasz"] = calinski_harabasz(x, labels)
    else:
        out.update(silhouette=None, silhouette_sampled=False, calinski_harabasz=None)
    out["purity"] = purity(clusters)
    return out


def ambiguity_statistics(frame: pd.DataFrame) -> dict:
    """Table 2 from nodes labelled by final cluster (``image, verb, cluster`` columns).

    - ``n_clusters``; ``verbs_per_cluster``: mean distinct verbs in a cluster (synonymy);
    - ``clusters_per_image``: mean distinct clusters holding an image; ``multi_image_rate``:
      share of images in more than one cluster (multiple perspectives);
    - ``clusters_per_verb``: mean distinct clusters holding a verb; ``multi_verb_rate``: share
      of verbs in more than one cluster (polysemy).
    """
    per_cluster = frame.groupby("cluster")["verb"].nunique()
    per_image = frame.groupby("image")["cluster"].nunique()
    per_verb = frame.groupby("verb")["cluster"].nunique()
    return {"n_clusters": int(len(per_cluster)),
            "verbs_per_cluster": float(per_cluster.mean()),
            "clusters_per_image": float(per_image.mean()),
            "multi_image_rate": float((per_image > 1).mean()),
            "clusters_per_verb": float(per_verb.mean()),
            "multi_verb_rate": float((per_verb > 1).mean()),
            "n_images": int(len(per_image)), "n_verbs": int(len(per_verb))}


def result_summary(result: ClusteringResult) -> dict:
    """The JSON result of ``imsitu-cluster``: selection, quality, ambiguity, timings."""
    return {"quality": result.quality, "ambiguity": result.ambiguity,
            "step2": result.step2,
            "step1": {"k_distribution": {str(k): int(v) for k, v in sorted(
                pd.Series([s["k"] for s in result.step1.values()]).value_counts().items())},
                "n_step1_clusters": int(result.step1_labels.max()) + 1,
                "silhouette_sampled": any(s["sampled"] for s in result.step1.values())},
            "seconds": result.seconds}


def summary_text(summary: dict) -> str:
    q, a, s2 = summary["quality"], summary["ambiguity"], summary["step2"]

    def f(v, p=3):
        return "—" if v is None else f"{v:.{p}f}"
    lines = [f"step 1: {summary['step1']['n_step1_clusters']} clusters; k per verb: "
             + ", ".join(f"{k}×{n}" for k, n in summary["step1"]["k_distribution"].items()),
             f"step 2: k = {s2['k']} (r = {s2['ratio']}), silhouette {f(s2['silhouette'], 4)}",
             "quality (Table 1)"]
    if q:
        sampled = (f" (sampled: {q['silhouette_sample_size']} of {q['n_nodes']} nodes)"
                   if q.get("silhouette_sampled") else " (exact)")
        lines += [f"  silhouette (cosine)   {f(q['silhouette'])}{sampled}",
                  f"  Calinski–Harabasz     {f(q['calinski_harabasz'], 2)}",
                  f"  WordNet purity        {f(q['purity'])}"]
        if "step2" in q:
            lines.append(f"  over the {q['step2']['n_points']} step-2 points: silhouette "
                         f"{f(q['step2']['silhouette'])}, Calinski–Harabasz {f(q['step2']['calinski_harabasz'], 2)}")
    lines += ["ambiguity (Table 2)",
              f"  # of clusters         {a['n_clusters']}",
              f"  verbs per cluster     {a['verbs_per_cluster']:.2f}",
              f"  clusters per image    {a['clusters_per_image']:.2f}",
              f"  multi-image rate      {a['multi_image_rate']:.2f}",
              f"  clusters per verb     {a['clusters_per_verb']:.2f}",
              f"  multi-verb rate       {a['multi_verb_rate']:.2f}"]
    if summary["step1"]["silhouette_sampled"]:
        lines.append("note: some step-1 silhouettes were sampled (verbs with more nodes than the exact limit)")
    lines.append(f"time: {summary['seconds']['total']:.1f} s")
    return "\n".join(lines)
