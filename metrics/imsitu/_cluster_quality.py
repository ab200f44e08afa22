"""Quality of a sense clustering (Table 1, Appendix B: silhouette with cosine distance,
Calinski–Harabasz, WordNet purity) and the ambiguity statistics it reveals (Table 2), from Yao,
Jarvis & Jiang, *Towards Robust Evaluation of Visual Activity Recognition*."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics.imsitu._nodes import unit_rows

MAX_EXACT = 10_000


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
    from metrics.imsitu._verbs import verb_synsets

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
