"""The average precision primitives every evaluation here shares: greedy matching
(:func:`sequential_greedy`), AP over true-positive flags per class (:func:`class_ap`: VOC
all-point, or the official HICO-DET 11-point :func:`eleven_point_ap`) and the standard HICO-DET
class AP of a pair table (:func:`standard_ap`).

Kept apart from :mod:`metrics.detection._scoring` and :mod:`metrics.detection._shoe` (SHOE's scores) and the datasets' official
evaluations (:mod:`metrics.datasets`), which both build on it, so neither imports the other.
"""

from __future__ import annotations

import numpy as np

from metrics.core._choices import MAP_PROTOCOLS
from metrics.core._constraints import Options, Whole, validate_params
from metrics.core._segments import (
    order_by_class_then_position,
    run_starts,
    segment_cumsum,
    segment_suffix_max,
    segments,
    stable_order,
)


def matlab_colon(a: float, d: float, b: float) -> np.ndarray:
    """``a:d:b`` as MATLAB computes it: the first half as ``a + k·d``, the second half as
    ``b − (n − k)·d``, so the end points are exact (C. Moler, "The colon operator", 2014).

    >>> [repr(float(x)) for x in matlab_colon(0, 0.1, 1)[[3, 6, 7]]]
    ['0.30000000000000004', '0.6', '0.7']
    """
    n = int(np.floor((b - a) / d + 1e-10))
    k = np.arange(n + 1, dtype=np.float64)
    low = a + k * d
    high = b - (n - k) * d
    return np.where(k <= n / 2, low, high)


RECALL_THRESHOLDS = matlab_colon(0.0, 0.1, 1.0)


def eleven_point_ap(cls_sorted: np.ndarray, tp: np.ndarray, n_gt: np.ndarray, *,
                    thresholds: np.ndarray = RECALL_THRESHOLDS):
    """11-point AP and final recall per class from TP flags grouped by class (``order`` of
    :func:`metrics.detection._class_ap.best_overlap_assignment`); ``n_gt`` holds each class's ground-truth count.
    ``thresholds``: the recall levels t, ``sum(max(prec[rec >= t]) / 11)`` added in their order
    (MATLAB's ``0:0.1:1`` by default; SWIG-HOI's ``calc_ap`` uses ``i / 10.0``).

    >>> ap, rec = eleven_point_ap(np.array([0, 0, 0]), np.array([True, False, True]), np.array([2]))
    >>> round(float(ap[0]), 6), float(rec[0])   # P = 1 up to R = .5, 2/3 at R = 1: (6 + 5·2/3)/11
    (0.848485, 1.0)
    """
    n_classes = len(n_gt)
    ap = np.zeros(n_classes)
    rec_end = np.zeros(n_classes)
    if not len(cls_sorted):
        return ap, rec_end
    starts, ends = segments(cls_sorted)
    lengths = ends - starts
    ctp = segment_cumsum(tp.astype(np.float64), starts)
    rank = np.arange(1, len(cls_sorted) + 1) - np.repeat(starts, lengths)   # = tp + fp (l.82-86)
    with np.errstate(divide="ignore", invalid="ignore"):
        rec = ctp / n_gt[cls_sorted].astype(np.float64)
    prec = ctp / rank
    suffix = segment_suffix_max(prec, starts)     # max(prec(i:end of class))
    cls = cls_sorted[starts]
    total = np.zeros(len(starts))
    for t in thresholds:
        below = np.add.reduceat((~(rec >= t)).astype(np.int64), starts)
        reached = below < lengths
        p = np.where(reached, suffix[np.minimum(starts + below, len(prec) - 1)], 0.0)
        total = total + p / 11
    ap[cls] = total
    rec_end[cls] = rec[starts + lengths - 1]
    return ap, rec_end


@validate_params({"protocol": Options(MAP_PROTOCOLS)})
def class_ap(cls: np.ndarray, tp: np.ndarray, pos: np.ndarray, n_gt: np.ndarray, *,
             protocol: str = "all-point") -> np.ndarray:
    """AP per class from per-prediction class, TP flag and rank: all-point interpolated, or
    11-point as the official evaluation (``protocol="official"``,
    :func:`eleven_point_ap`).

    ``pos`` orders the predictions (ascending = descending confidence); ``n_gt[c]`` is the
    ground-truth count of class c. A class with ``n_gt`` 0 gets AP 1 when it has no
    prediction and 0 otherwise (Diag-HOI's rule for a class an oracle empties, see
    :mod:`metrics.diagnosis._core`). Vectorized over all classes (exact segment suffix maxima).

    >>> class_ap(np.array([0, 0, 0]), np.array([1, 0, 1]), np.arange(3), np.array([2])).round(4).tolist()
    [0.8333]
    """
    n_classes = len(n_gt)
    cls = np.asarray(cls, dtype=np.int64)
    n_gt = np.asarray(n_gt, dtype=np.float64)
    has_pred = np.bincount(cls, minlength=n_classes) > 0 if len(cls) else np.zeros(n_classes, bool)
    ap = np.where(n_gt > 0, 0.0, np.where(has_pred, 0.0, 1.0))
    if not len(cls):
        return ap
    o = order_by_class_then_position(cls, pos, n_classes)
    if protocol == "official":
        pos_gt = n_gt > 0
        ap[pos_gt] = eleven_point_ap(cls[o], np.asarray(tp, dtype=bool)[o], n_gt.astype(np.int64))[0][pos_gt]
        return ap
    c = cls[o]
    t = np.asarray(tp, dtype=np.float64)[o]
    starts, ends = segments(c)
    ctp = segment_cumsum(t, starts)
    prec = ctp / (np.arange(1, len(c) + 1) - np.repeat(starts, ends - starts))
    env = segment_suffix_max(prec, starts)          # max(P_j, j ≥ i) within the class
    gain = np.bincount(c, weights=t * env, minlength=n_classes)
    pos_gt = n_gt > 0
    ap[pos_gt] = gain[pos_gt] / n_gt[pos_gt]
    return ap


def sequential_greedy(agent: np.ndarray, resource: np.ndarray, agent_rank: np.ndarray,
                      n_agents: int, n_resources: int, keys: tuple = ()) -> np.ndarray:
    """Exact vectorized form of "agents in turn take their best still-free resource".

    ``agent``/``resource`` are the candidate edges, grouped by agent. An agent prefers the
    free edge with the largest ``keys[0]``, then ``keys[1]``, …, then the first in edge order.
    ``agent_rank[a]`` is the turn of agent ``a``; agents sharing a turn must never share a
    candidate resource (they belong to different images). One numpy step per turn. Returns
    the chosen edge per agent (−1 when none is left).

    >>> sequential_greedy(np.array([0, 0, 1]), np.array([5, 6, 5]), np.array([0, 1]), 2, 7).tolist()
    [0, -1]
    """
    chosen = np.full(n_agents, -1, dtype=np.int64)
    if not len(agent):
        return chosen
    taken = np.zeros(n_resources, dtype=bool)
    starts, ends = segments(agent)
    turn = agent_rank[agent[starts]]
    n_turns = int(turn.max()) + 1
    # reorder the agents' edge runs by turn once, so that each turn is one contiguous slice
    seg = stable_order(turn, n_turns)
    lens = ends[seg] - starts[seg]
    seg_start = np.cumsum(lens) - lens
    edge = np.repeat(starts[seg] - seg_start, lens) + np.arange(len(agent))
    seg_of = np.repeat(np.arange(len(seg)), lens)
    res = resource.take(edge)
    key_vals = [np.asarray(k).take(edge) for k in keys]
    turn_bounds = np.searchsorted(turn[seg], np.arange(n_turns + 1))
    seg_bounds = np.r_[seg_start, len(agent)]
    for k in range(n_turns):
        sa, sb = int(turn_bounds[k]), int(turn_bounds[k + 1])
        if sa == sb:
            continue
        ea, eb = int(seg_bounds[sa]), int(seg_bounds[sb])
        cand = ~taken[res[ea:eb]]
        if key_vals and cand.any():
            local = seg_start[sa:sb] - ea
            seg_local = seg_of[ea:eb] - sa
            for key in key_vals:
                v = np.where(cand, key[ea:eb], -np.inf)
                cand &= v == np.maximum.reduceat(v, local)[seg_local]
        hit = np.flatnonzero(cand) + ea
        if not len(hit):
            continue
        seg_hit = seg_of[hit]
        first = hit[run_starts(seg_hit)]
        chosen[agent[edge[first]]] = edge[first]
        taken[res[first]] = True
    return chosen


@validate_params({"n_classes": Whole(0)})
def standard_ap(pairs, gt_class, pred_class, pred_score, *,
                n_classes: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-class HICO-DET AP (exact class match), as ``(ap, tp_flag_per_prediction)``.

    Per class, predictions in descending score (ties: image order, then file order) each take the unmatched
    ground truth of the same class and image with both IoUs ≥ θ and the largest
    min(IoU_h, IoU_o) (ties: first in file order); AP is all-point interpolated. Predictions
    with ``pred_class`` −1 (a class without ground truth) are ignored; AP is NaN for classes
    without ground truth. Vectorized: one greedy step per prediction turn within its
    (image, class) block.
    """
    gt_class = np.asarray(gt_class, dtype=np.int64)
    pred_class = np.asarray(pred_class, dtype=np.int64)
    n_pred = len(pred_class)
    order_desc, _, _ = pairs.confidence_order(pred_score)
    edge_class = pred_class[pairs.p]
    same = np.flatnonzero((edge_class == gt_class[pairs.g]) & (edge_class >= 0))
    ep, eg = pairs.p[same], pairs.g[same]
    min_iou = np.minimum(pairs.iou_h[same], pairs.iou_o[same])
    by_pred = np.argsort(ep, kind="stable")          # grouped by prediction, GTs in file order
    ep, eg, min_iou = ep[by_pred], eg[by_pred], min_iou[by_pred]
    # all predictions in descending score, grouped stably by class: the greedy turn order below
    by_class = order_desc.take(stable_order(pred_class.take(order_desc), n_classes))
    # turn of a prediction = its rank by score within its (image, class) block: the
    # predictions with candidates in class lists, grouped stably by image
    has_edge = np.zeros(n_pred, dtype=bool)
    has_edge[ep] = True
    ranked = by_class[has_edge[by_class]]
    ranked = ranked[stable_order(pairs.pred_image[ranked], pairs.n_images)]
    block = pairs.pred_image[ranked] * (n_classes + 1) + pred_class[ranked]
    block_start, _ = segments(block)
    rank = np.zeros(n_pred, dtype=np.int64)
    rank[ranked] = np.arange(len(ranked)) - np.repeat(block_start, np.diff(np.r_[block_start, len(ranked)]))
    chosen = sequential_greedy(ep, eg, rank, n_pred, len(gt_class), keys=(min_iou,))
    tp = chosen >= 0
    n_gt = np.bincount(gt_class, minlength=n_classes)
    rank[order_desc] = np.arange(n_pred)
    valid = pred_class >= 0
    ap = class_ap(pred_class[valid], tp[valid], rank[valid], n_gt)
    ap[n_gt == 0] = np.nan
    return ap, tp
