"""imSitu verb accuracy under three criteria and the Top-1 improvement breakdown.

Source: Yao, Jarvis & Jiang, *Towards Robust Evaluation of Visual Activity Recognition:
Resolving Verb Ambiguity with Sense Clustering* (§4.1–4.2, Tables 3–4). The sense clusters
themselves are built by :mod:`metrics.imsitu._sense_clusters` (Algorithm 1, Appendix G) or read by
:mod:`metrics.imsitu._cluster_files`; the inputs by :mod:`metrics.imsitu._readers`.

Three criteria decide whether a predicted verb ``p`` is correct for an image (§4.2):

- ``gold``: ``p`` equals a gold verb (after lower-casing and stripping; no lemmatization, so
  ``jumping`` and ``jump`` differ — imSitu uses gerunds throughout);
- ``wn_syn``: ``p`` and a gold verb share a WordNet verb synset, each verb taken through every
  morphological base form WordNet allows (``jumping`` → ``jump``, ``lying`` → ``lie``,
  ``riding`` → ``ride`` and ``rid``); an exact match counts too, so WN-Syn ≥ Gold even for a verb
  WordNet lacks;
- ``cluster``: as the paper defines it (§4.2), ``p`` is correct iff it appears in one of the
  sense clusters that contain the image. ``include_gold=True`` (``--include-gold``) adds the
  image's gold verbs to its targets as well, which keeps Cluster ≥ Gold with clusters built
  elsewhere; ``n_gold_outside_clusters`` counts the images whose gold verb is in none of their
  clusters (where the two readings can differ). With clusters built by Algorithm 1 every gold
  verb is one of the image's nodes (§3.1), so the count is 0 and the readings agree.

Top-1 accuracy is the share of images whose first prediction is correct, Top-5 the share with a
correct verb among the first five. Gold images without predictions count as wrong
(``n_missing_predictions``); predictions for images without gold are ignored
(``n_extra_predictions``).
"""

from __future__ import annotations

import numpy as np

from metrics.core._constraints import Boolean, Whole, validate_params
from metrics.core._errors import InputError
from metrics.imsitu._cluster_files import SenseClusters
from metrics.imsitu._readers import parse_gold
from metrics.imsitu._verbs import normalize_verb, wn_synonyms

CRITERIA = ("gold", "wn_syn", "cluster")


def _as_gold(gold: dict) -> dict[str, tuple[str, ...]]:
    """Gold as ``{image: (verbs,)}``, parsing plain ``{image: verb}`` dicts."""
    if all(isinstance(v, tuple) for v in gold.values()):
        return gold
    return parse_gold(gold)


def _as_pred(pred: dict) -> dict[str, list[str]]:
    return {image: [normalize_verb(v) for v in verbs] for image, verbs in pred.items()}


def _targets(gold: tuple[str, ...], image: str, clusters: SenseClusters | None, include_gold: bool):
    """(verbs of the image's clusters (∪ gold with ``include_gold``), verbs sharing a cluster of
    the image with a gold verb)."""
    if clusters is None:
        return None, None
    ids = clusters.images.get(image, ())
    in_image = clusters.image_verbs(image) | (set(gold) if include_gold else set())
    with_gold = frozenset(set(gold).union(*(clusters.clusters[c] for c in ids
                                            if not clusters.clusters[c].isdisjoint(gold))))
    return in_image, with_gold


@validate_params({"k": Whole(1), "include_gold": Boolean()})
def prediction_marks(gold: dict, pred: dict, clusters: SenseClusters | None = None,
                     k: int = 5, *, include_gold: bool = False) -> tuple[list[str], dict[str, np.ndarray]]:
    """Per-prediction correctness: (images, {criterion: bool array images × k}).

    Columns are ranks 1..k; a list shorter than k leaves the rest False; ``cluster`` is present
    only with clusters. An extra array ``cluster_same_as_gold`` marks predictions that share a
    cluster of the image with a gold verb (the synonym part of Table 4).

    >>> images, m = prediction_marks({"a.jpg": "jumping"}, {"a.jpg": ["leaping", "sleeping"]}, k=2)
    >>> m["gold"].tolist(), m["wn_syn"].tolist()
    ([[False, False]], [[True, False]])
    """
    gold, pred = _as_gold(gold), _as_pred(pred)
    images = list(gold)
    n = len(images)
    marks = {c: np.zeros((n, k), dtype=bool) for c in CRITERIA if c != "cluster" or clusters}
    if clusters is not None:
        marks["cluster_same_as_gold"] = np.zeros((n, k), dtype=bool)
    for i, image in enumerate(images):
        golds = gold[image]
        in_image, with_gold = _targets(golds, image, clusters, include_gold)
        for r, verb in enumerate(pred.get(image, [])[:k]):
            marks["gold"][i, r] = verb in golds
            marks["wn_syn"][i, r] = any(wn_synonyms(verb, g) for g in golds)
            if clusters is not None:
                marks["cluster"][i, r] = verb in in_image
                marks["cluster_same_as_gold"][i, r] = verb in with_gold
    return images, marks


def topk_accuracy(marks: np.ndarray, k: int) -> float:
    """Share of rows with a True among the first k columns (Top-k accuracy)."""
    if len(marks) == 0:
        return float("nan")
    return float(marks[:, :k].any(axis=1).mean())


@validate_params({"include_gold": Boolean()})
def sense_accuracy_tables(gold: dict, pred: dict, clusters: SenseClusters | None = None, *,
                   include_gold: bool = False) -> dict:
    """Top-1 / Top-5 accuracy under the gold, WordNet-synonym and cluster criteria (Table 3)
    and the Top-1 improvement breakdown (Table 4).

    Breakdown: of the images whose first prediction is correct under clusters but not under
    gold, ``synonym`` counts those whose prediction shares a cluster of the image with the gold
    verb and ``multi_perspective`` the rest (in another cluster of the image). Both are
    reported as fractions of all images (the paper's "+3.9 / +8.8", which add up to
    Cluster − Gold) and as shares of the improvement (``share_*``). None when the clusters are
    only each image's targets (``per_cluster`` False: the released results JSON).

    >>> g = {"a.jpg": "jumping", "b.jpg": "lying"}
    >>> p = {"a.jpg": ["leaping", "jumping"], "b.jpg": ["sleeping"]}
    >>> r = sense_accuracy_tables(g, p)
    >>> r["gold"], r["wn_syn"]
    ({'top1': 0.0, 'top5': 0.5}, {'top1': 0.5, 'top5': 0.5})
    """
    if not gold:
        raise InputError("no gold images")
    gold, pred = _as_gold(gold), _as_pred(pred)
    scored = set(gold) & set(pred)
    if not scored:
        raise InputError("no image of the predictions has a gold verb (check the image names)")
    images, marks = prediction_marks(gold, pred, clusters, k=5, include_gold=include_gold)
    result: dict = {name: {"top1": topk_accuracy(m, 1), "top5": topk_accuracy(m, 5)}
                    for name, m in marks.items() if name in CRITERIA}
    result.setdefault("cluster", None)
    result["breakdown"] = None
    if clusters is not None:
        gain = marks["cluster"][:, 0] & ~marks["gold"][:, 0]
        synonym = gain & marks["cluster_same_as_gold"][:, 0]
        multi = gain & ~marks["cluster_same_as_gold"][:, 0]
        n_gain = int(gain.sum())
        result["breakdown"] = None if not clusters.per_cluster else {
            "synonym": float(synonym.mean()), "multi_perspective": float(multi.mean()),
            "n_synonym": int(synonym.sum()), "n_multi_perspective": int(multi.sum()),
            "share_synonym": synonym.sum() / n_gain if n_gain else None,
            "share_multi_perspective": multi.sum() / n_gain if n_gain else None,
        }
        result["n_images_without_clusters"] = sum(1 for i in images if not clusters.images.get(i))
        result["n_gold_outside_clusters"] = sum(
            1 for i in images if set(gold[i]).isdisjoint(clusters.image_verbs(i)))
        result["include_gold"] = include_gold
    result["n_images"] = len(images)
    result["n_missing_predictions"] = len(set(gold) - scored)
    result["n_extra_predictions"] = len(set(pred) - scored)
    return result


def accuracy_text(result: dict) -> str:
    """The readable table of :func:`sense_accuracy_tables`."""
    lines = [f"{result['n_images']} images ({result['n_missing_predictions']} without predictions, "
             f"{result['n_extra_predictions']} predictions without gold ignored)",
             f"{'criterion':<10} {'Top-1':>7} {'Top-5':>7}"]
    for name, label in (("gold", "Gold"), ("wn_syn", "WN-Syn"), ("cluster", "Cluster")):
        if result.get(name):
            lines.append(f"{label:<10} {result[name]['top1']:7.3f} {result[name]['top5']:7.3f}")
    if result.get("cluster"):
        lines.append(f"cluster criterion: {'image clusters + gold verbs (--include-gold)' if result['include_gold'] else 'image clusters only (paper §4.2)'}; "
                     f"{result['n_gold_outside_clusters']} images whose gold verb is in none of their clusters")
    b = result.get("breakdown")
    if result.get("cluster") and b is None:
        lines.append("Top-1 gain over Gold: not split (the clusters file gives each image's targets, "
                     "not the clusters)")
    if b:
        lines.append(f"Top-1 gain over Gold: synonym +{b['synonym']:.3f} ({b['n_synonym']} images), "
                     f"multi-perspective +{b['multi_perspective']:.3f} ({b['n_multi_perspective']} images)")
    return "\n".join(lines)
