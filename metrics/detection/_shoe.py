"""SHOE matching (Algorithm 1, lines 5–28; Algorithm 2, lines 6–27), SHOE AP (Eq. 11), the soft
counts of SHOE mF1 (Algorithm 2) and the miss rates (supplementary §2), over a
:class:`~metrics.detection._pairs.PairTable`. Source: SHOE paper §3.1–3.2 and supplementary §6.4;
the tie rules are those of :mod:`metrics.detection._scoring`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metrics.core._constraints import validate_params
from metrics.core._segments import (
    class_bounds,
    segment_cumsum,
    segment_diff,
    segment_suffix_max,
    segment_sums_into,
    segments,
    stable_order,
)
from metrics.detection._ap import sequential_greedy  # the one greedy matcher (and the one AP: detection.ap)
from metrics.detection._options import score_options
from metrics.detection._pairs import PairTable

EPS = 1e-8


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


def shoe_match(pairs: PairTable, pred_score: np.ndarray, *, active: np.ndarray | None = None) -> ShoeMatch:
    """Algorithm 1, lines 5–28 (and Algorithm 2, lines 6–27), for all images at once.

    Each ground truth, in file order within its image, takes among the still-unmatched
    ``active`` predictions of its image with IoU_h ≥ θ and IoU_o ≥ θ the one with the highest
    σ (ties: higher confidence, then earlier prediction). Missing confidences count as equal.
    """
    n_gt, n_pred = len(pairs.gt_image), len(pairs.pred_image)
    conf = np.nan_to_num(np.asarray(pred_score, dtype=np.float64), nan=0.0)
    active = np.ones(n_pred, dtype=bool) if active is None else np.asarray(active, dtype=bool)
    sel = np.flatnonzero(active[pairs.p]) if not active.all() else slice(None)
    eg, ep, es = pairs.g[sel], pairs.p[sel], pairs.sigma[sel]
    chosen = sequential_greedy(eg, ep, pairs.gt_rank, n_gt, n_pred, keys=(es, conf[ep]))
    gt_pred = np.full(n_gt, -1, dtype=np.int64)
    gt_sigma = np.zeros(n_gt)
    hit = np.flatnonzero(chosen >= 0)
    gt_pred[hit] = ep[chosen[hit]]
    gt_sigma[hit] = es[chosen[hit]]
    pred_matched = np.zeros(n_pred, dtype=bool)
    pred_matched[gt_pred[hit]] = True
    return ShoeMatch(gt_pred, gt_sigma, active, pred_matched, pairs.best_gt, pairs.best_sigma)


@validate_params(score_options("delta", "interpolation"))
def shoe_ap(pairs: PairTable, gt_class, pred_score, match: ShoeMatch, *, n_classes: int,
            delta: float = 0.0, interpolation: str = "none") -> tuple[np.ndarray, np.ndarray]:
    """Per-class SHOE AP (Algorithm 1, lines 25–48) from a :class:`ShoeMatch`.

    Entries per class: (s*, σ) for a matched ground truth, (0, 0) for an unmatched one, and
    (s, 0) for an unmatched prediction in the class of its image's most similar ground truth
    when that σ ≥ δ. Sorted by descending confidence (stable in append order), then
    TP_i = Σ_{j≤i} L[j], FP_i = i − TP_i, P_i = TP_i / (TP_i + FP_i + ε),
    R_i = TP_i / (N_GT + ε), AP = Σ_i (R_i − R_{i−1}) P_i (Eq. 11).

    Only entries with L_i > 0 move R, so the sum runs over them alone, given their position
    i in the sorted list: the number of unmatched-prediction entries of the class before
    them (one binary search in those entries, which are the global confidence order
    filtered and grouped by class) plus the ground-truth entries before them. With
    ``interpolation="all-point"`` P_i becomes max_{j≥i} P_j, which is attained at an entry
    with L_j > 0 (between two such entries TP is constant and P falls).

    Returns ``(ap, n_gt)`` over ``range(n_classes)``; AP is NaN for a class without ground truth.
    """
    gt_class = np.asarray(gt_class, dtype=np.int64)
    n_gt_all, n_pred = len(gt_class), len(pairs.pred_image)
    n_gt = np.bincount(gt_class, minlength=n_classes)
    ap = np.where(n_gt > 0, 0.0, np.nan)
    order_desc, level, zero_level = pairs.confidence_order(pred_score)
    # sort key within a class: confidence level, then Algorithm 1's append position t (per
    # image its ground truths, then its predictions, each in file order); < 2^63 for any
    # workload below 3·10^9 detections
    n_t = n_gt_all + n_pred
    n_g = np.bincount(pairs.gt_image, minlength=pairs.n_images)
    n_p = np.bincount(pairs.pred_image, minlength=pairs.n_images)
    t_gt = np.empty(n_gt_all, dtype=np.int64)
    t_gt[pairs.gt_order] = np.arange(n_gt_all) + (np.cumsum(n_p) - n_p)[pairs.gt_image[pairs.gt_order]]
    t_pred = np.empty(n_pred, dtype=np.int64)
    t_pred[pairs.pred_order] = np.arange(n_pred) + np.cumsum(n_g)[pairs.pred_image[pairs.pred_order]]
    # unmatched predictions that pass δ: confidence order, grouped by class (stable)
    is_fp = match.active & ~match.pred_matched & (match.pred_best_gt >= 0) & (match.pred_best_sigma >= delta)
    fp = order_desc[is_fp.take(order_desc)]
    fp_class = gt_class.take(match.pred_best_gt.take(fp))
    by_class = stable_order(fp_class, n_classes)
    fp_key = (level * n_t + t_pred).take(fp.take(by_class))
    fp_bounds = np.r_[0, np.cumsum(np.bincount(fp_class, minlength=n_classes))]
    # ground-truth entries, sorted by class and key
    matched = match.gt_pred >= 0
    gt_level = np.full(n_gt_all, zero_level, dtype=np.int64)
    gt_level[matched] = level[match.gt_pred[matched]]
    gt_key = gt_level * n_t + t_gt
    o = np.lexsort((gt_key, gt_class))
    gt_key, label, cls = gt_key[o], match.gt_sigma[o], gt_class[o]
    gt_bounds = class_bounds(cls, n_classes)
    at = np.flatnonzero(label > 0)
    c_at = cls[at]
    starts, ends = segments(c_at)
    i = at - gt_bounds[c_at] + 1
    for s, e in zip(starts.tolist(), ends.tolist()):  # one binary search per class
        c = int(c_at[s])
        i[s:e] += np.searchsorted(fp_key[fp_bounds[c]:fp_bounds[c + 1]], gt_key[at[s:e]])
    tp = segment_cumsum(label[at], starts)
    fp_i = i - tp
    precision = tp / (tp + fp_i + EPS)
    recall = tp / (n_gt[c_at] + EPS)
    if interpolation == "all-point":
        precision = segment_suffix_max(precision, starts)
    segment_sums_into(ap, c_at, starts, segment_diff(recall, starts) * precision)
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


@validate_params(score_options("delta", "fn_mode"))
def shoe_soft_counts(gt_class, match: ShoeMatch, *, n_classes: int, delta: float = 0.0,
            fn_mode: str = "algorithm2") -> SoftCounts:
    """Per-class soft TP / FP / FN and F1 (Algorithm 2, lines 14–42).

    Matched ground truth: TP += σ, FP += 1 − σ; unmatched: FN += 1 (``fn_mode="eq5"``: every
    ground truth adds FN += 1 − t_j, Eq. 5, which also gives 1 when unmatched). Unmatched
    prediction: FP += 1 in the class of its image's most similar ground truth when σ ≥ δ.
    P = TP / (TP + FP + ε), R = TP / (TP + FN + ε), F1 = 2PR / (P + R + ε).
    """
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


def match_miss_rates(match: ShoeMatch) -> tuple[float, float]:
    """(GT miss rate, prediction miss rate), supplementary §2: the share of ground truths
    with no matched prediction and of (τ-filtered) predictions matched to no ground truth.
    A rate over an empty set is 0."""
    n_gt = len(match.gt_pred)
    n_pred = int(match.active.sum())
    gt_rate = float((match.gt_pred < 0).sum() / n_gt) if n_gt else 0.0
    pred_rate = float((match.active & ~match.pred_matched).sum() / n_pred) if n_pred else 0.0
    return gt_rate, pred_rate
