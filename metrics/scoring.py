"""Standard HICO-DET mAP, SHOE mAP (Algorithm 1), SHOE mF1 (Algorithm 2) and miss rates.

Source: SHOE paper §3.1–3.2, supplementary §2 (miss rates) and §6.4 (Algorithms 1 and 2).

Everything is computed from flat arrays. The one shared structure is the *pair table*: every
(prediction, ground truth) pair of the same image, ordered by prediction and, within a
prediction, by ground-truth file order, with both box IoUs and the HOI similarity σ. The
three scores only differ in which pairs they use and how they match greedily.

Greedy matching is sequential inside an image but independent across images, so it is run
*step-wise*: step k lets the k-th acting item (ground truth for SHOE, prediction for standard
mAP) of every image act at once, as numpy operations. Items acting in the same step belong to
different images (or image-class blocks), so they never compete for the same partner and the
result is exactly the sequential algorithm's.

Decisions where the paper leaves room (also in the README):

- SHOE candidate choice (Alg. 1 l.16, Alg. 2 l.15): highest σ, ties by higher confidence,
  then earlier prediction in file order. Alg. 1 l.30: the most similar ground truth of the
  image, ties to the first in file order; σ = 0 ≥ δ = 0, so with the default every unmatched
  prediction of an image that has ground truth is a false positive somewhere.
- Per-class sort (Alg. 1 l.39): descending confidence, stable — equal confidences keep the
  order in which Algorithm 1 appends them (image order; within an image the ground-truth
  entries in file order, then the unmatched predictions in file order). Image order is the
  ground-truth file's, then images only in the predictions.
- SHOE AP is Eq. 11, Σ (R_i − R_{i−1}) P_i, not interpolated; ``interpolation="all-point"``
  replaces P_i by max_{j≥i} P_j. An unmatched ground truth's (0, 0) entry counts as one more
  false positive at confidence 0, exactly as FP_i = i − TP_i in the algorithm makes it.
- SHOE mF1: Algorithm 2 adds FN += 1 only for unmatched ground truths; Eq. 5 of the main text
  adds FN += 1 − t_j for every ground truth. ``fn_mode="eq5"`` gives the latter.
- Miss rates count a ground truth as matched when a prediction passed the IoU test and was
  assigned to it (even with σ = 0), over the τ-filtered predictions.
- Standard mAP: per class, predictions in descending score (stable, file order); a
  prediction takes the unmatched same-class ground truth of its image with both IoUs ≥ θ and
  the largest min(IoU_h, IoU_o) (ties: first in file order); all-point interpolated AP
  (VOC 2010+); mean over the classes that have ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import pandas as pd

from .errors import InputError

EPS = 1e-8
INTERPOLATIONS = ("none", "all-point")
FN_MODES = ("algorithm2", "eq5")


# ---------------------------------------------------------------------------- geometry
def box_iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise IoU of two (n, 4) arrays of ``[x1, y1, x2, y2]`` boxes (continuous, no +1).

    IoU = |a ∩ b| / (|a| + |b| − |a ∩ b|); 0 when the union is empty.

    >>> box_iou(np.array([[0., 0, 2, 2]]), np.array([[1., 0, 3, 2]])).round(4).tolist()
    [0.3333]
    """
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    iw = np.minimum(a[:, 2], b[:, 2]) - np.maximum(a[:, 0], b[:, 0])
    ih = np.minimum(a[:, 3], b[:, 3]) - np.maximum(a[:, 1], b[:, 1])
    inter = np.maximum(iw, 0.0) * np.maximum(ih, 0.0)
    union = (a[:, 2] - a[:, 0]) * (a[:, 3] - a[:, 1]) + (b[:, 2] - b[:, 0]) * (b[:, 3] - b[:, 1]) - inter
    out = np.zeros(len(inter))
    np.divide(inter, union, out=out, where=union > 0)
    return out


def image_pairs(gt_image: np.ndarray, pred_image: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """All (prediction, ground truth) index pairs sharing an image.

    Ordered by prediction, then ground truth in index (file) order.

    >>> p, g = image_pairs(np.array([0, 1, 0]), np.array([0, 2, 1]))
    >>> p.tolist(), g.tolist()
    ([0, 0, 2], [0, 2, 1])
    """
    gt_image = np.asarray(gt_image, dtype=np.int64)
    pred_image = np.asarray(pred_image, dtype=np.int64)
    if not len(gt_image) or not len(pred_image):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    n_img = int(max(gt_image.max(), pred_image.max())) + 1
    order = np.argsort(gt_image, kind="stable")
    count = np.bincount(gt_image, minlength=n_img)
    start = np.cumsum(count) - count
    per_pred = count[pred_image]
    total = int(per_pred.sum())
    p = np.repeat(np.arange(len(pred_image)), per_pred)
    offset = np.arange(total) - np.repeat(np.cumsum(per_pred) - per_pred, per_pred)
    g = order[np.repeat(start[pred_image], per_pred) + offset]
    return p, g


@dataclass
class PairTable:
    """Every (prediction p, ground truth g) pair of the same image with IoUs and σ."""

    p: np.ndarray
    g: np.ndarray
    iou_h: np.ndarray
    iou_o: np.ndarray
    sigma: np.ndarray

    @classmethod
    def build(cls, gt_image, gt_human, gt_object, pred_image, pred_human, pred_object,
              sigma: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> "PairTable":
        """``sigma(p, g)`` returns the HOI similarity of prediction p and ground truth g."""
        p, g = image_pairs(gt_image, pred_image)
        gt_human, gt_object = np.asarray(gt_human, float), np.asarray(gt_object, float)
        pred_human, pred_object = np.asarray(pred_human, float), np.asarray(pred_object, float)
        iou_h = box_iou(pred_human[p], gt_human[g])
        iou_o = box_iou(pred_object[p], gt_object[g])
        s = np.asarray(sigma(p, g), dtype=np.float64) if len(p) else np.zeros(0)
        if s.shape != p.shape:
            raise InputError(f"sigma returned shape {s.shape}, expected {p.shape}")
        return cls(p.astype(np.int64), g.astype(np.int64), iou_h, iou_o, s)


# ---------------------------------------------------------------------------- greedy core
def _segments(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    if not len(key):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
    return starts, np.r_[starts[1:], len(key)]


def _ranks(order: np.ndarray, group_sorted: np.ndarray) -> np.ndarray:
    """``order`` sorts rows by (group, priority); ``group_sorted`` is the group of each sorted
    row. Returns the rank of every row within its group."""
    n = len(order)
    starts, ends = _segments(group_sorted)
    first = np.repeat(starts, ends - starts)
    rank = np.empty(n, dtype=np.int64)
    rank[order] = np.arange(n) - first
    return rank


def sequential_greedy(agent: np.ndarray, resource: np.ndarray, agent_rank: np.ndarray,
                      n_agents: int, n_resources: int) -> np.ndarray:
    """Exact vectorized form of "agents in turn take their best still-free resource".

    ``agent``/``resource`` are the candidate edges, sorted by agent and, within an agent,
    best first. ``agent_rank[a]`` is the turn of agent ``a`` in its group; agents sharing a
    turn must never share a candidate resource (they belong to different groups). Returns,
    per edge-having agent, the index of the chosen edge (−1 when every candidate was taken),
    as an array over ``range(n_agents)``.

    >>> sequential_greedy(np.array([0, 0, 1]), np.array([5, 6, 5]), np.array([0, 1]), 2, 7).tolist()
    [0, -1]
    """
    chosen = np.full(n_agents, -1, dtype=np.int64)
    if not len(agent):
        return chosen
    taken = np.zeros(n_resources, dtype=bool)
    starts, ends = _segments(agent)
    agents = agent[starts]
    rank = agent_rank[agents]
    order = np.argsort(rank, kind="stable")
    bounds = np.searchsorted(rank[order], np.arange(int(rank.max()) + 2))
    for k in range(int(rank.max()) + 1):
        sel = order[bounds[k]:bounds[k + 1]]
        if not len(sel):
            continue
        s = starts[sel]
        lens = ends[sel] - s
        idx = np.repeat(s - (np.cumsum(lens) - lens), lens) + np.arange(int(lens.sum()))
        free = ~taken[resource[idx]]
        cand = idx[free]
        if not len(cand):
            continue
        seg = np.repeat(np.arange(len(sel)), lens)[free]
        first = np.r_[True, seg[1:] != seg[:-1]]
        pick = cand[first]
        chosen[agents[sel[seg[first]]]] = pick
        taken[resource[pick]] = True
    return chosen


# ---------------------------------------------------------------------------- SHOE matching
@dataclass
class ShoeMatch:
    """Result of Algorithm 1's (and 2's) per-image matching.

    ``gt_pred``: matched prediction per ground truth (−1 none); ``gt_sigma``: its σ (0 when
    none); ``active``: predictions taking part (τ filter); ``pred_matched``; ``pred_best_gt``:
    the image's most similar ground truth (−1 when the image has none); ``pred_best_sigma``.
    """

    gt_pred: np.ndarray
    gt_sigma: np.ndarray
    active: np.ndarray
    pred_matched: np.ndarray
    pred_best_gt: np.ndarray
    pred_best_sigma: np.ndarray


def best_gt_per_prediction(pairs: PairTable, n_pred: int) -> tuple[np.ndarray, np.ndarray]:
    """Per prediction, the ground truth of its image with the highest σ (ties: first in file
    order) and that σ; −1 / 0 for predictions in images without ground truth (Alg. 1 l.30)."""
    best_gt = np.full(n_pred, -1, dtype=np.int64)
    best_sigma = np.zeros(n_pred)
    if not len(pairs.p):
        return best_gt, best_sigma
    starts, ends = _segments(pairs.p)
    seg_max = np.maximum.reduceat(pairs.sigma, starts)
    seg_of = np.repeat(np.arange(len(starts)), ends - starts)
    at_max = np.flatnonzero(pairs.sigma == seg_max[seg_of])
    first = at_max[np.r_[True, seg_of[at_max][1:] != seg_of[at_max][:-1]]]
    preds = pairs.p[starts]
    best_gt[preds] = pairs.g[first]
    best_sigma[preds] = seg_max
    return best_gt, best_sigma


def shoe_match(pairs: PairTable, gt_image: np.ndarray, pred_score: np.ndarray, *,
               iou: float = 0.5, active: np.ndarray | None = None,
               best: tuple[np.ndarray, np.ndarray] | None = None) -> ShoeMatch:
    """Algorithm 1, lines 5–28 (and Algorithm 2, lines 6–27), for all images at once.

    Each ground truth, in file order within its image, takes among the still-unmatched
    ``active`` predictions of its image with IoU_h ≥ θ and IoU_o ≥ θ the one with the highest
    σ (ties: higher confidence, then earlier prediction). Missing confidences count as equal.
    """
    gt_image = np.asarray(gt_image, dtype=np.int64)
    n_gt, n_pred = len(gt_image), len(pred_score)
    conf = np.nan_to_num(np.asarray(pred_score, dtype=np.float64), nan=0.0)
    if active is None:
        active = np.ones(n_pred, dtype=bool)
    edge = np.flatnonzero((pairs.iou_h >= iou) & (pairs.iou_o >= iou) & active[pairs.p])
    ep, eg, es = pairs.p[edge], pairs.g[edge], pairs.sigma[edge]
    # edges by ground truth, best candidate first: σ desc, confidence desc, prediction asc
    order = np.lexsort((ep, -conf[ep], -es, eg))
    ep, eg, es = ep[order], eg[order], es[order]
    # turn of each ground truth = its position among its image's ground truths (file order)
    gts = np.unique(eg)
    rank = np.zeros(n_gt, dtype=np.int64)
    if len(gts):
        o = np.lexsort((gts, gt_image[gts]))
        rank[gts] = _ranks(o, gt_image[gts][o])
    chosen = sequential_greedy(eg, ep, rank, n_gt, n_pred)
    gt_pred = np.full(n_gt, -1, dtype=np.int64)
    gt_sigma = np.zeros(n_gt)
    hit = np.flatnonzero(chosen >= 0)
    gt_pred[hit] = ep[chosen[hit]]
    gt_sigma[hit] = es[chosen[hit]]
    pred_matched = np.zeros(n_pred, dtype=bool)
    pred_matched[gt_pred[gt_pred >= 0]] = True
    best_gt, best_sigma = best if best is not None else best_gt_per_prediction(pairs, n_pred)
    return ShoeMatch(gt_pred, gt_sigma, np.asarray(active, dtype=bool), pred_matched, best_gt, best_sigma)


def _soft_ap(labels: np.ndarray, n_gt: int, interpolation: str) -> float:
    """Alg. 1 l.42–47 for one class whose entries are already sorted by confidence."""
    tp = np.cumsum(labels)
    i = np.arange(1, len(labels) + 1, dtype=np.float64)
    fp = i - tp
    precision = tp / (tp + fp + EPS)
    recall = tp / (n_gt + EPS)
    if interpolation == "all-point":
        precision = np.maximum.accumulate(precision[::-1])[::-1]
    return float(np.sum(np.diff(recall, prepend=0.0) * precision))


def shoe_ap(gt_image, gt_class, pred_image, pred_score, match: ShoeMatch, *, n_classes: int,
            delta: float = 0.0, interpolation: str = "none") -> tuple[np.ndarray, np.ndarray]:
    """Per-class SHOE AP (Algorithm 1, lines 25–48) from a :class:`ShoeMatch`.

    Entries per class: (s*, σ) for a matched ground truth, (0, 0) for an unmatched one, and
    (s, 0) for an unmatched prediction in the class of its image's most similar ground truth
    when that σ ≥ δ. Sorted by descending confidence (stable in append order), then
    TP_i = Σ_{j≤i} L[j], FP_i = i − TP_i, P_i = TP_i / (TP_i + FP_i + ε),
    R_i = TP_i / (N_GT + ε), AP = Σ_i (R_i − R_{i−1}) P_i (Eq. 11).

    Returns ``(ap, n_gt)`` over ``range(n_classes)``; AP is NaN for a class without ground truth.
    """
    if interpolation not in INTERPOLATIONS:
        raise InputError(f"unknown AP interpolation {interpolation!r} (choose {', '.join(INTERPOLATIONS)})")
    gt_image = np.asarray(gt_image, dtype=np.int64)
    gt_class = np.asarray(gt_class, dtype=np.int64)
    pred_image = np.asarray(pred_image, dtype=np.int64)
    score = np.asarray(pred_score, dtype=np.float64)
    n_gt_all, n_pred = len(gt_image), len(pred_image)
    matched = match.gt_pred >= 0
    g_score = np.where(matched, score[np.maximum(match.gt_pred, 0)], 0.0) if n_gt_all else np.zeros(0)
    fp = np.flatnonzero(match.active & ~match.pred_matched & (match.pred_best_gt >= 0)
                        & (match.pred_best_sigma >= delta))
    cls = np.concatenate([gt_class, gt_class[match.pred_best_gt[fp]]])
    conf = np.concatenate([g_score, score[fp]])
    label = np.concatenate([match.gt_sigma, np.zeros(len(fp))])
    big = max(n_gt_all, n_pred) + 1
    append_order = np.concatenate([gt_image * (2 * big) + np.arange(n_gt_all),
                                   pred_image[fp] * (2 * big) + big + fp])
    order = np.lexsort((append_order, -conf, cls))
    cls, label = cls[order], label[order]
    n_gt = np.bincount(gt_class, minlength=n_classes)
    ap = np.full(n_classes, np.nan)
    starts, ends = _segments(cls)
    for s, e in zip(starts.tolist(), ends.tolist()):  # one step per class, not per prediction
        c = cls[s]
        ap[c] = _soft_ap(label[s:e], int(n_gt[c]), interpolation)
    return ap, n_gt


@dataclass
class SoftCounts:
    tp: np.ndarray
    fp: np.ndarray
    fn: np.ndarray
    precision: np.ndarray
    recall: np.ndarray
    f1: np.ndarray
    n_gt: np.ndarray


def shoe_f1(gt_class, match: ShoeMatch, *, n_classes: int, delta: float = 0.0,
            fn_mode: str = "algorithm2") -> SoftCounts:
    """Per-class soft TP / FP / FN and F1 (Algorithm 2, lines 14–42).

    Matched ground truth: TP += σ, FP += 1 − σ; unmatched: FN += 1 (``fn_mode="eq5"``: every
    ground truth adds FN += 1 − t_j, Eq. 5, which also gives 1 when unmatched). Unmatched
    prediction: FP += 1 in the class of its image's most similar ground truth when σ ≥ δ.
    P = TP / (TP + FP + ε), R = TP / (TP + FN + ε), F1 = 2PR / (P + R + ε).
    """
    if fn_mode not in FN_MODES:
        raise InputError(f"unknown FN mode {fn_mode!r} (choose {', '.join(FN_MODES)})")
    gt_class = np.asarray(gt_class, dtype=np.int64)
    matched = match.gt_pred >= 0
    sigma = match.gt_sigma
    tp = np.bincount(gt_class, weights=np.where(matched, sigma, 0.0), minlength=n_classes)
    fp = np.bincount(gt_class, weights=np.where(matched, 1.0 - sigma, 0.0), minlength=n_classes)
    fn_w = np.where(matched, 0.0, 1.0) if fn_mode == "algorithm2" else np.where(matched, 1.0 - sigma, 1.0)
    fn = np.bincount(gt_class, weights=fn_w, minlength=n_classes)
    un = np.flatnonzero(match.active & ~match.pred_matched & (match.pred_best_gt >= 0)
                        & (match.pred_best_sigma >= delta))
    fp += np.bincount(gt_class[match.pred_best_gt[un]], minlength=n_classes)
    precision = tp / (tp + fp + EPS)
    recall = tp / (tp + fn + EPS)
    f1 = 2 * precision * recall / (precision + recall + EPS)
    n_gt = np.bincount(gt_class, minlength=n_classes)
    return SoftCounts(tp, fp, fn, precision, recall, np.where(n_gt > 0, f1, np.nan), n_gt)


def miss_rates(match: ShoeMatch) -> tuple[float, float]:
    """(GT miss rate, prediction miss rate), supplementary §2: the share of ground truths
    with no matched prediction and of (τ-filtered) predictions matched to no ground truth.
    A rate over an empty set is 0."""
    n_gt = len(match.gt_pred)
    n_pred = int(match.active.sum())
    gt_rate = float((match.gt_pred < 0).sum() / n_gt) if n_gt else 0.0
    pred_rate = float((match.active & ~match.pred_matched).sum() / n_pred) if n_pred else 0.0
    return gt_rate, pred_rate


# ---------------------------------------------------------------------------- standard mAP
def voc_ap(tp: np.ndarray, n_gt: int) -> float:
    """All-point interpolated AP of one class from TP flags in descending-score order.

    >>> voc_ap(np.array([1, 0, 1]), 2)   # P = 1, 1/2, 2/3 at R = 1/2, 1/2, 1
    0.8333333333333333
    """
    if n_gt <= 0:
        return float("nan")
    tp = np.asarray(tp, dtype=np.float64)
    ctp = np.cumsum(tp)
    precision = ctp / np.arange(1, len(tp) + 1)
    recall = ctp / n_gt
    envelope = np.maximum.accumulate(precision[::-1])[::-1] if len(tp) else precision
    return float(np.sum(np.diff(recall, prepend=0.0) * envelope))


def standard_ap(pairs: PairTable, gt_image, gt_class, pred_image, pred_class, pred_score, *,
                n_classes: int, iou: float = 0.5) -> tuple[np.ndarray, np.ndarray]:
    """Per-class HICO-DET AP (exact class match), as ``(ap, tp_flag_per_prediction)``.

    Predictions with ``pred_class`` −1 (a class without ground truth) are ignored. AP is NaN
    for classes without ground truth.
    """
    gt_image = np.asarray(gt_image, dtype=np.int64)
    gt_class = np.asarray(gt_class, dtype=np.int64)
    pred_image = np.asarray(pred_image, dtype=np.int64)
    pred_class = np.asarray(pred_class, dtype=np.int64)
    score = np.asarray(pred_score, dtype=np.float64)
    n_pred = len(pred_class)
    edge = np.flatnonzero((pairs.iou_h >= iou) & (pairs.iou_o >= iou)
                          & (pred_class[pairs.p] == gt_class[pairs.g]) & (pred_class[pairs.p] >= 0))
    ep, eg = pairs.p[edge], pairs.g[edge]
    min_iou = np.minimum(pairs.iou_h[edge], pairs.iou_o[edge])
    order = np.lexsort((eg, -min_iou, ep))  # by prediction; best overlap first, then file order
    ep, eg = ep[order], eg[order]
    preds = np.unique(ep)
    rank = np.zeros(n_pred, dtype=np.int64)
    if len(preds):
        o = np.lexsort((preds, -score[preds], pred_class[preds], pred_image[preds]))
        block = pred_image[preds][o] * (n_classes + 1) + pred_class[preds][o]
        rank[preds] = _ranks(o, block)
    chosen = sequential_greedy(ep, eg, rank, n_pred, len(gt_class))
    tp = np.zeros(n_pred, dtype=bool)
    tp[np.flatnonzero(chosen >= 0)] = True
    n_gt = np.bincount(gt_class, minlength=n_classes)
    keep = np.flatnonzero(pred_class >= 0)
    order = np.lexsort((keep, -score[keep], pred_class[keep]))
    keep = keep[order]
    cls = pred_class[keep]
    ap = np.where(n_gt > 0, 0.0, np.nan)
    starts, ends = _segments(cls)
    for s, e in zip(starts.tolist(), ends.tolist()):  # one step per class
        c = cls[s]
        if n_gt[c] > 0:
            ap[c] = voc_ap(tp[keep[s:e]], int(n_gt[c]))
    return ap, tp


# ---------------------------------------------------------------------------- detections
SUBSETS_ALWAYS = ("full", "rare", "non_rare")
SPLITS = ("rf_uc", "nf_uc", "uv", "uo")


@dataclass
class Evaluation:
    """Everything :func:`score_detections` computed, before it is turned into a result dict."""

    classes: pd.DataFrame
    ap: np.ndarray | None
    shoe_ap: np.ndarray | None
    f1: SoftCounts
    gt_miss_rate: float
    pred_miss_rate: float
    match_all: ShoeMatch | None
    match_tau: ShoeMatch
    verbs: object
    objects: object
    n_images: int
    n_gt: int
    n_pred: int
    n_pred_tau: int
    has_scores: bool


def _mean(values: np.ndarray, mask: np.ndarray) -> float | None:
    sel = values[mask]
    sel = sel[~np.isnan(sel)]
    return float(sel.mean()) if len(sel) else None


def evaluate(gt, pred, *, verb_sim=None, object_sim=None, vocabulary=None,
             combine: str = "arithmetic", w: float = 0.5, iou: float = 0.5, delta: float = 0.0,
             tau: float = 0.5, interpolation: str = "none", fn_mode: str = "algorithm2") -> Evaluation:
    """Standard mAP, SHOE mAP, SHOE mF1 and miss rates of ``pred`` against ``gt``
    (both :class:`metrics.detections.Detections`); see :func:`score_detections`."""
    from .baseline import load_default
    from .hoi_labels import resolve_labels
    from .similarity import COMBINATIONS, combine as combine_fn
    from .vocabulary import hico

    if combine not in COMBINATIONS:
        raise InputError(f"unknown combination {combine!r} (choose {', '.join(COMBINATIONS)})")
    if not 0.0 <= w <= 1.0:
        raise InputError(f"--w must lie in [0, 1], got {w}")
    if not 0.0 < iou <= 1.0:
        raise InputError(f"--iou must lie in (0, 1], got {iou}")
    if interpolation not in INTERPOLATIONS:
        raise InputError(f"unknown AP interpolation {interpolation!r} (choose {', '.join(INTERPOLATIONS)})")
    if fn_mode not in FN_MODES:
        raise InputError(f"unknown FN mode {fn_mode!r} (choose {', '.join(FN_MODES)})")
    if not len(gt):
        raise InputError(f"{gt.source}: no ground-truth HOIs")
    vocabulary = hico() if vocabulary is None else vocabulary
    verb_sim = load_default("v") if verb_sim is None else verb_sim
    object_sim = load_default("n") if object_sim is None else object_sim
    has_scores = pred.has_scores

    # one image index for both sides: ground-truth images first, then prediction-only images
    images = pd.unique(np.concatenate([gt.images, pred.images]))
    gt, pred = gt.with_images(images), pred.with_images(images)

    def where(role):
        def _where(side, row):
            det = gt if side == "gt" else pred
            return det.where(row, role)
        return _where

    verbs = resolve_labels(gt.verb, pred.verb, "v", verb_sim, vocabulary, where=where("verb"))
    objects = resolve_labels(gt.object, pred.object, "n", object_sim, vocabulary, where=where("object"))

    # classes = distinct (verb, object) class keys of the ground truth
    gkv = np.asarray(verbs.gt_class_key, dtype=object)[verbs.gt_code]
    gko = np.asarray(objects.gt_class_key, dtype=object)[objects.gt_code]
    gt_pairs = pd.MultiIndex.from_arrays([gkv, gko])
    gt_class, class_index = pd.factorize(gt_pairs)
    n_classes = len(class_index)
    pkv = np.asarray(verbs.pred_class_key, dtype=object)[verbs.pred_code]
    pko = np.asarray(objects.pred_class_key, dtype=object)[objects.pred_code]
    pred_class = class_index.get_indexer(pd.MultiIndex.from_arrays([pkv, pko])) if len(pred) else np.zeros(0, np.int64)
    classes = _class_table(class_index, vocabulary)

    vt, ot = verbs.table, objects.table
    gv, go, pv, po = verbs.gt_code, objects.gt_code, verbs.pred_code, objects.pred_code

    def sigma(p, g):
        return combine_fn(vt[pv[p], gv[g]], ot[po[p], go[g]], combine, w)

    pairs = PairTable.build(gt.image, gt.human_box, gt.object_box, pred.image, pred.human_box,
                            pred.object_box, sigma)
    best = best_gt_per_prediction(pairs, len(pred))
    ap = shoe = match_all = None
    if has_scores:
        ap, _ = standard_ap(pairs, gt.image, gt_class, pred.image, pred_class, pred.score,
                            n_classes=n_classes, iou=iou)
        match_all = shoe_match(pairs, gt.image, pred.score, iou=iou, best=best)
        shoe, _ = shoe_ap(gt.image, gt_class, pred.image, pred.score, match_all,
                          n_classes=n_classes, delta=delta, interpolation=interpolation)
        active = pred.score >= tau
    else:
        active = np.ones(len(pred), dtype=bool)
    match_tau = shoe_match(pairs, gt.image, pred.score, iou=iou, active=active, best=best)
    f1 = shoe_f1(gt_class, match_tau, n_classes=n_classes, delta=delta, fn_mode=fn_mode)
    gt_rate, pred_rate = miss_rates(match_tau)
    return Evaluation(classes=classes, ap=ap, shoe_ap=shoe, f1=f1, gt_miss_rate=gt_rate,
                      pred_miss_rate=pred_rate, match_all=match_all, match_tau=match_tau,
                      verbs=verbs, objects=objects, n_images=len(images), n_gt=len(gt),
                      n_pred=len(pred), n_pred_tau=int(active.sum()), has_scores=has_scores)


def _class_table(class_index: pd.MultiIndex, vocabulary) -> pd.DataFrame:
    """Class keys with their HICO-DET id, rare flag and zero-shot flags (NaN outside HICO)."""
    frame = pd.DataFrame({"verb": class_index.get_level_values(0).astype(str),
                          "object": class_index.get_level_values(1).astype(str)})
    meta = vocabulary.classes.copy()
    merged = frame.merge(meta, on=["verb", "object"], how="left")
    return merged


def score_detections(gt, pred, *, split: str | None = None, **params) -> dict:
    """The ``score`` command's result: JSON-able dict with the DESIGN.md keys.

    ``map``, ``shoe_map``, ``shoe_mf1``, ``gt_miss_rate``, ``pred_miss_rate`` are plain
    numbers (Full split; ``map``/``shoe_map`` are None when the predictions have no scores);
    ``splits`` holds Full / Rare / Non-rare (and ``<split>_seen`` / ``_unseen``), ``per_class``
    one record per ground-truth class, ``resolution`` how labels resolved, ``counts`` and
    ``params`` the rest. Classes outside HICO-DET count in Full only.
    """
    if split is not None and split not in SPLITS:
        raise InputError(f"unknown split {split!r} (choose {', '.join(SPLITS)})")
    ev = evaluate(gt, pred, **params)
    classes = ev.classes
    subsets = list(SUBSETS_ALWAYS) + ([f"{split}_seen", f"{split}_unseen"] if split else [])
    in_hico = classes["hoi_id"].notna().to_numpy()
    masks = {"full": np.ones(len(classes), dtype=bool),
             "rare": in_hico & (classes["rare"].to_numpy() == 1),
             "non_rare": in_hico & (classes["rare"].to_numpy() == 0)}
    if split:
        unseen = classes[f"unseen_{split}"].to_numpy() == 1
        masks[f"{split}_seen"] = in_hico & ~unseen
        masks[f"{split}_unseen"] = in_hico & unseen
    splits = {}
    for name in subsets:
        m = masks[name]
        splits[name] = {"map": _mean(ev.ap, m) if ev.ap is not None else None,
                        "shoe_map": _mean(ev.shoe_ap, m) if ev.shoe_ap is not None else None,
                        "shoe_mf1": _mean(ev.f1.f1, m), "n_classes": int(m.sum())}
    per_class = []
    f1 = ev.f1
    for c in range(len(classes)):
        row = classes.iloc[c]
        per_class.append({
            "verb": row["verb"], "object": row["object"],
            "hoi_id": None if pd.isna(row["hoi_id"]) else int(row["hoi_id"]),
            "rare": None if pd.isna(row["rare"]) else bool(row["rare"]),
            "n_gt": int(f1.n_gt[c]),
            "ap": None if ev.ap is None else float(ev.ap[c]),
            "shoe_ap": None if ev.shoe_ap is None else float(ev.shoe_ap[c]),
            "shoe_f1": float(f1.f1[c]), "shoe_precision": float(f1.precision[c]),
            "shoe_recall": float(f1.recall[c]), "shoe_tp": float(f1.tp[c]),
            "shoe_fp": float(f1.fp[c]), "shoe_fn": float(f1.fn[c])})
    m = ev.match_tau
    result = {
        "map": splits["full"]["map"], "shoe_map": splits["full"]["shoe_map"],
        "shoe_mf1": splits["full"]["shoe_mf1"],
        "gt_miss_rate": ev.gt_miss_rate, "pred_miss_rate": ev.pred_miss_rate,
        "splits": splits, "per_class": per_class,
        "counts": {"images": ev.n_images, "gt": ev.n_gt, "predictions": ev.n_pred,
                   "predictions_scored_f1": ev.n_pred_tau, "classes": len(classes),
                   "classes_outside_hico": int((~in_hico).sum()),
                   "gt_matched": int((m.gt_pred >= 0).sum()),
                   "predictions_matched": int(m.pred_matched.sum())},
        "resolution": {"verb": ev.verbs.report("verb"), "object": ev.objects.report("object")},
        "params": {k: params.get(k, d) for k, d in (("combine", "arithmetic"), ("w", 0.5), ("iou", 0.5),
                                                     ("delta", 0.0), ("tau", 0.5), ("interpolation", "none"),
                                                     ("fn_mode", "algorithm2"))}
                  | {"split": split, "confidence_scores": ev.has_scores,
                     "verb_sim": _provenance(params.get("verb_sim")),
                     "object_sim": _provenance(params.get("object_sim"))},
    }
    if not ev.has_scores:
        result["params"]["tau"] = None
    return result


def _provenance(matrix) -> str:
    if matrix is None:
        return "WordNet baseline (default)"
    return str(matrix.meta.get("source") or matrix.meta.get("method") or repr(matrix))
