"""Standard HICO-DET mAP, SHOE mAP (Algorithm 1), SHOE mF1 (Algorithm 2) and miss rates.

Source: SHOE paper §3.1–3.2, supplementary §2 (miss rates) and §6.4 (Algorithms 1 and 2).

Everything is computed from flat arrays. The one shared structure is the *pair table*: the
(ground truth, prediction) pairs of the same image whose human and object boxes both reach
IoU ≥ θ, with both IoUs and the HOI similarity σ, plus each prediction's most similar ground
truth and the confidence order. The three scores only differ in which pairs they use and how
they match greedily. Same-image pairs are evaluated in dense blocks: images with the same
numbers of ground truths and predictions form one broadcast (images × k × m) array operation,
so no per-pair index is ever built for the ~all pairs that fail the IoU test.

Greedy matching is sequential inside an image but independent across images, so it is run
*step-wise*: step k lets the k-th acting item (ground truth for SHOE, prediction for standard
mAP) of every image act at once, as numpy operations. Items acting in the same step belong to
different images (or image-class blocks), so they never compete for the same partner and the
result is exactly the sequential algorithm's.

Decisions where the paper leaves room (also in docs/method.md, "SHOE mAP and SHOE mF1"):

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
- Standard mAP: per class, predictions in descending score (ties: image order, then file
  order within the image, which is plain file order for JSON Lines); a
  prediction takes the unmatched same-class ground truth of its image with both IoUs ≥ θ and
  the largest min(IoU_h, IoU_o) (ties: first in file order); all-point interpolated AP
  (VOC 2010+); mean over the classes that have ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np
import pandas as pd

from metrics.detection._boxes import box_iou
from metrics.core._choices import COMBINATIONS, FN_MODES, INTERPOLATIONS, MAP_PROTOCOLS, SPLITS
from metrics.core._errors import InputError
from metrics.detection._ap import sequential_greedy   # the one greedy matcher (and the one AP: detection.ap)
from metrics.core._segments import (class_bounds, run_starts, segment_cumsum, segment_diff, segment_suffix_max,
                       segment_sums_into, segments, stable_order)
from metrics.core._validation import ParameterError, check_choice, check_fraction, check_in_range

EPS = 1e-8
SIGMA_TABLE_MAX = 1 << 24  # entries of the label-pair σ table (128 MiB); beyond, σ per pair


@dataclass(frozen=True)
class SigmaTable:
    """σ as one lookup, ``table[pred_code[p], gt_code[g]]``: a callable ``sigma(p, g)`` for
    :meth:`PairTable.build` that also accepts index arrays of different, broadcastable shapes.

    >>> SigmaTable(np.array([0, 1]), np.array([1, 0]), np.array([[.1, .2], [.3, .4]]))(np.array([0, 1]), np.array([0, 0])).tolist()
    [0.2, 0.4]
    """

    pred_code: np.ndarray
    gt_code: np.ndarray
    table: np.ndarray

    def __call__(self, p: np.ndarray, g: np.ndarray) -> np.ndarray:
        return self.table.ravel().take(self.pred_code.take(p) * self.table.shape[1] + self.gt_code.take(g))


def _group(image: np.ndarray, n_img: int):
    """Stable order by image, per-image counts and starts, and each row's rank in its image."""
    if len(image) and np.all(image[1:] >= image[:-1]):
        order = np.arange(len(image))
    else:
        order = np.argsort(image, kind="stable")
    count = np.bincount(image, minlength=n_img)
    start = np.cumsum(count) - count
    rank = np.empty(len(image), dtype=np.int64)
    rank[order] = np.arange(len(image)) - start[image[order]]
    return order, count, start, rank


def image_pairs(gt_image: np.ndarray, pred_image: np.ndarray, *, by: str = "pred"):
    """All (prediction, ground truth) index pairs sharing an image.

    ``by="pred"``: ordered by prediction, then ground truth in index (file) order;
    ``by="gt"``: by ground truth, then prediction.

    >>> p, g = image_pairs(np.array([0, 1, 0]), np.array([0, 2, 1]))
    >>> p.tolist(), g.tolist()
    ([0, 0, 2], [0, 2, 1])
    """
    gt_image = np.asarray(gt_image, dtype=np.int64)
    pred_image = np.asarray(pred_image, dtype=np.int64)
    if not len(gt_image) or not len(pred_image):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    n_img = int(max(gt_image.max(), pred_image.max())) + 1
    if by == "pred":
        return _expand(pred_image, gt_image, n_img)
    g, p = _expand(gt_image, pred_image, n_img)
    return p, g


def _expand(outer_image, inner_image, n_img, inner_group=None):
    """For each outer row (in index order), every inner row of its image (in index order)."""
    order, count, start, _ = inner_group if inner_group is not None else _group(inner_image, n_img)
    per = count[outer_image]
    total = int(per.sum())
    outer = np.repeat(np.arange(len(outer_image)), per)
    offset = np.arange(total) - np.repeat(np.cumsum(per) - per, per)
    inner = order[np.repeat(start[outer_image], per) + offset]
    return outer, inner


@dataclass
class PairTable:
    """Candidate pairs of an evaluation, built once and shared by the three scores.

    ``g``, ``p``, ``iou_h``, ``iou_o``, ``sigma``: the (ground truth, prediction) pairs of the
    same image whose human and object boxes both reach IoU ≥ ``iou``, grouped by ground truth
    (each one's pairs contiguous, in prediction file order). ``best_gt`` / ``best_sigma``: per
    prediction the ground truth of its image with the highest σ over *all* of them (ties:
    first in file order), −1 / 0 when the image has none (Algorithm 1, l.30). ``gt_rank``: position of each ground truth among
    its image's (file order). ``pred_order``: predictions ordered by image (stable).
    """

    iou: float
    g: np.ndarray
    p: np.ndarray
    iou_h: np.ndarray
    iou_o: np.ndarray
    sigma: np.ndarray
    best_gt: np.ndarray
    best_sigma: np.ndarray
    gt_image: np.ndarray
    pred_image: np.ndarray
    gt_rank: np.ndarray
    gt_order: np.ndarray
    pred_order: np.ndarray
    n_images: int
    confidence_cache: tuple | None = None   # (score array, its confidence order) last asked for

    def confidence_order(self, score: np.ndarray):
        """Descending-score order of the predictions (ties: image order, then file order within
        the image — the file order for JSON Lines input), their dense confidence levels
        (0 = highest distinct value) and the level of the confidence 0 (given to unmatched
        ground truths) among the same values; kept for the last score array asked for."""
        if self.confidence_cache is None or self.confidence_cache[0] is not score:
            self.confidence_cache = (score, _score_levels(np.asarray(score, dtype=np.float64), self.pred_order))
        return self.confidence_cache[1]

    @classmethod
    def build(cls, gt_image, gt_human, gt_object, pred_image, pred_human, pred_object,
              sigma: Callable[[np.ndarray, np.ndarray], np.ndarray], *, iou: float = 0.5,
              pred_score=None) -> "PairTable":
        """``sigma(p, g)`` returns the HOI similarity of predictions ``p`` and ground truths ``g``
        (index arrays of one shape; a :class:`SigmaTable` is evaluated on broadcast blocks
        instead); ``iou`` is the threshold θ for both boxes; ``pred_score``, when given, lets
        the confidence order be prepared alongside."""
        with cls.start(gt_image, gt_human, gt_object, pred_image, pred_human, pred_object,
                       iou=iou, pred_score=pred_score) as pending:
            return pending.finish(sigma)

    @classmethod
    def start(cls, gt_image, gt_human, gt_object, pred_image, pred_human, pred_object, *,
              iou: float = 0.5, pred_score=None) -> "PendingPairs":
        """:meth:`build` in two halves, for a caller with σ not ready yet: the geometry (both
        IoUs of every same-image pair, and the confidence order when ``pred_score`` is given)
        starts now in a second thread; ``finish(sigma)`` on the returned context manager
        adds σ and returns the table."""
        return PendingPairs(gt_image, gt_human, gt_object, pred_image, pred_human, pred_object,
                            iou, pred_score)


class PendingPairs:
    """A :class:`PairTable` under construction (see :meth:`PairTable.start`); a context
    manager that owns the second thread.

    The second thread computes the confidence order, then the IoUs and the candidate pairs
    (numpy releases the GIL), while the caller prepares σ; :meth:`finish` then finds each
    prediction's most similar ground truth in the calling thread, waits for the geometry and
    looks up σ of the candidate pairs.
    """

    def __init__(self, gt_image, gt_human, gt_object, pred_image, pred_human, pred_object, iou,
                 pred_score):
        gt_image = np.asarray(gt_image, dtype=np.int64)
        pred_image = np.asarray(pred_image, dtype=np.int64)
        n_gt, n_pred = len(gt_image), len(pred_image)
        self.iou, self.gt_image, self.pred_image, self.pred_score = float(iou), gt_image, pred_image, pred_score
        self.n_img = int(max(gt_image.max(initial=-1), pred_image.max(initial=-1))) + 1
        self.gt_group = _group(gt_image, self.n_img)
        self.pred_group = _group(pred_image, self.n_img)
        boxes = [np.asarray(b, dtype=np.float64).reshape(n, 4)
                 for b, n in ((gt_human, n_gt), (gt_object, n_gt), (pred_human, n_pred), (pred_object, n_pred))]
        self._pool = ThreadPoolExecutor(max_workers=1)
        self._pool.__enter__()
        self._geometry = self._pool.submit(self._compute_geometry, boxes)

    def _compute_geometry(self, boxes):
        score = (None if self.pred_score is None
                 else _score_levels(np.asarray(self.pred_score, dtype=np.float64), self.pred_group[0]))
        return score, _candidate_edges(self.gt_group, self.pred_group, *boxes, self.iou)

    def __enter__(self) -> "PendingPairs":
        return self

    def __exit__(self, *exc):
        self._pool.__exit__(*exc)
        return False

    def finish(self, sigma: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> PairTable:
        """The pair table with σ (see :meth:`PairTable.build`)."""
        best_gt, best_sigma = _best_gt(sigma, self.gt_group, self.pred_group, len(self.pred_image))
        score, (g, p, iou_h, iou_o) = self._geometry.result()
        return PairTable(iou=self.iou, g=g, p=p, iou_h=iou_h, iou_o=iou_o, sigma=_call_sigma(sigma, p, g),
                         best_gt=best_gt, best_sigma=best_sigma, gt_image=self.gt_image,
                         pred_image=self.pred_image, gt_rank=self.gt_group[3], gt_order=self.gt_group[0],
                         pred_order=self.pred_group[0], n_images=self.n_img,
                         confidence_cache=None if score is None else (self.pred_score, score))


BLOCK = 1 << 16  # pairs per dense block: keeps a block's temporaries in the CPU cache


def _image_blocks(gt_group, pred_group):
    """The images that have both ground truths and predictions, as dense blocks.

    Images are bucketed by (k ground truths, m predictions) and cut into cache-sized chunks;
    each chunk of n images is yielded as ``(G, P)``: the (n, k) ground-truth and (n, m)
    prediction indices of its images, each row in file order. A pair table of a chunk is
    then a broadcast (n, k, m) array operation, and every box is gathered only once.
    """
    g_order, g_count, g_start, _ = gt_group
    p_order, p_count, p_start, _ = pred_group
    images = np.flatnonzero((g_count > 0) & (p_count > 0))
    if not len(images):
        return
    shape = g_count[images] * (int(p_count.max()) + 1) + p_count[images]
    images = images[np.argsort(shape, kind="stable")]
    starts, ends = segments(np.sort(shape))
    for lo, hi in zip(starts.tolist(), ends.tolist()):
        k, m = int(g_count[images[lo]]), int(p_count[images[lo]])
        step = max(1, BLOCK // (k * m))
        for c in range(lo, hi, step):
            chunk = images[c:min(c + step, hi)]
            yield _windows(g_order, g_start[chunk], k), _windows(p_order, p_start[chunk], m)


def _windows(column: np.ndarray, at: np.ndarray, m: int) -> np.ndarray:
    """``column[at[i] + j]`` as an ``(len(at), m)`` matrix (a gather of contiguous rows)."""
    return column.take(at[:, None] + np.arange(m))


def _candidate_edges(gt_group, pred_group, gh, go, ph, po, iou):
    """Pairs of the same image with both IoUs ≥ θ, as ``(g, p, iou_h, iou_o)``.

    Both IoUs are computed for every same-image pair, in the dense blocks of
    :func:`_image_blocks`. Each ground truth's pairs are contiguous and in prediction file
    order (blocks are concatenated as they come, so ground truths are not sorted)."""
    out = []
    for G, P in _image_blocks(gt_group, pred_group):
        gbh, gbo = gh.take(G, axis=0)[:, :, None, :], go.take(G, axis=0)[:, :, None, :]
        pbh, pbo = ph.take(P, axis=0)[:, None, :, :], po.take(P, axis=0)[:, None, :, :]
        iou_h, iou_o = box_iou(pbh, gbh), box_iou(pbo, gbo)
        i, j, c = np.nonzero((iou_h >= iou) & (iou_o >= iou))
        out.append((G[i, j], P[i, c], iou_h[i, j, c], iou_o[i, j, c]))
    if not out:
        e = np.zeros(0, np.int64)
        return e, e, np.zeros(0), np.zeros(0)
    return tuple(np.concatenate(x) for x in zip(*out))


def _best_gt(sigma, gt_group, pred_group, n_pred):
    """Per prediction, the most similar ground truth of its image (ties: first in file order),
    as ``(best_gt, best_sigma)``; −1 / 0 when the image has none. One σ evaluation and one
    argmax per dense block of :func:`_image_blocks`."""
    best_gt = np.full(n_pred, -1, dtype=np.int64)
    best_sigma = np.zeros(n_pred)
    for G, P in _image_blocks(gt_group, pred_group):
        s = _sigma_block(sigma, P[:, :, None], G[:, None, :])
        j = s.argmax(axis=2)
        best_gt[P] = np.take_along_axis(G, j, axis=1)
        best_sigma[P] = np.take_along_axis(s, j[:, :, None], axis=2)[:, :, 0]
    return best_gt, best_sigma


def _sigma_block(sigma, p, g):
    """σ over the broadcast shape of index arrays ``p`` and ``g``."""
    if isinstance(sigma, SigmaTable):
        return sigma(p, g)
    pp, gg = np.broadcast_arrays(p, g)
    return _call_sigma(sigma, pp.ravel(), gg.ravel()).reshape(pp.shape)


def _call_sigma(sigma, p, g):
    if not len(p):
        return np.zeros(0)
    s = np.asarray(sigma(p, g), dtype=np.float64)
    if s.shape != p.shape:
        raise InputError(f"sigma returned shape {s.shape}, expected {p.shape}")
    return s


# ---------------------------------------------------------------------------- greedy core
def _score_levels(score: np.ndarray, by_image: np.ndarray):
    """Descending confidence order (ties: ``by_image`` order), dense level per prediction and
    the level of an appended confidence 0 (see :meth:`PairTable.confidence_order`).

    Confidences usually take few distinct values: they are then hashed to their distinct
    values, which are ranked, and the order is one stable radix sort of the 16-bit levels;
    otherwise one stable sort of the values."""
    n = len(score)
    values = np.append(score.take(by_image), 0.0) + 0.0  # −0.0 + 0.0 is 0.0: one level for zero
    codes, distinct = pd.factorize(values)
    if len(distinct) < 2 ** 15:
        rank = np.empty(len(distinct), dtype=np.int64)
        rank[np.argsort(-distinct)] = np.arange(len(distinct))
        level_local = rank.take(codes)
        order = np.argsort(level_local.astype(np.int16), kind="stable")
    else:
        order = np.argsort(-values, kind="stable")
        v = values[order]
        level_local = np.empty(n + 1, dtype=np.int64)
        level_local[order] = np.cumsum(run_starts(v)) - 1
    level = np.empty(n, dtype=np.int64)
    level[by_image] = level_local[:n]
    return by_image[order[order != n]], level, int(level_local[n])  # appended 0: last among zeros


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
    check_choice("interpolation", interpolation, INTERPOLATIONS)
    check_fraction("delta", delta)
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


def shoe_soft_counts(gt_class, match: ShoeMatch, *, n_classes: int, delta: float = 0.0,
            fn_mode: str = "algorithm2") -> SoftCounts:
    """Per-class soft TP / FP / FN and F1 (Algorithm 2, lines 14–42).

    Matched ground truth: TP += σ, FP += 1 − σ; unmatched: FN += 1 (``fn_mode="eq5"``: every
    ground truth adds FN += 1 − t_j, Eq. 5, which also gives 1 when unmatched). Unmatched
    prediction: FP += 1 in the class of its image's most similar ground truth when σ ≥ δ.
    P = TP / (TP + FP + ε), R = TP / (TP + FN + ε), F1 = 2PR / (P + R + ε).
    """
    check_choice("fn_mode", fn_mode, FN_MODES)
    check_fraction("delta", delta)
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


# ---------------------------------------------------------------------------- standard mAP
# ---------------------------------------------------------------------------- detections
SUBSET_ORDER = ("full", "rare", "non_rare", "novel")   # those of them a dataset has


@dataclass
class Evaluation:
    """Everything :func:`score_dict` computed, before it is turned into a result dict."""

    classes: pd.DataFrame
    ap: np.ndarray | None
    hico: object
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
             tau: float = 0.5, interpolation: str = "none", fn_mode: str = "algorithm2",
             map_protocol: str = "official", dataset=None) -> Evaluation:
    """Standard mAP, SHOE mAP, SHOE mF1 and miss rates of ``pred`` against ``gt``
    (both :class:`metrics.detection._detections.Detections`) on ``dataset`` (see
    :func:`as_dataset`); see :func:`score_dict`."""
    from metrics.detection._class_ap import ClassAP
    from metrics.detection._hoi_labels import class_table, classes_of, label_pairs, resolve_labels
    from metrics.vocab._similarity import SimilarityMatrix, combine as combine_fn

    check_choice("combine", combine, COMBINATIONS)
    check_fraction("w", w)
    check_in_range("iou", iou, 0.0, 1.0, low_open=True)
    check_fraction("delta", delta)
    check_fraction("tau", tau)
    check_choice("interpolation", interpolation, INTERPOLATIONS)
    check_choice("fn_mode", fn_mode, FN_MODES)
    check_choice("map_protocol", map_protocol, MAP_PROTOCOLS)
    if not len(gt):
        raise InputError(f"{gt.source}: no ground-truth HOIs")
    dataset = as_dataset(dataset)
    vocabulary = dataset.vocabulary() if vocabulary is None else vocabulary
    verb_sim = SimilarityMatrix.load(dataset.baseline_path("v")) if verb_sim is None else verb_sim
    object_sim = SimilarityMatrix.load(dataset.baseline_path("n")) if object_sim is None else object_sim
    has_scores = pred.has_scores

    # one image index for both sides: ground-truth images first, then prediction-only images
    images = pd.unique(np.concatenate([gt.images, pred.images]))
    gt, pred = gt.with_images(images), pred.with_images(images)

    def where(role):
        def _where(side, row):
            det = gt if side == "gt" else pred
            return det.where(row, role)
        return _where

    # the geometry (IoUs, confidence order) needs no labels: it runs while they are resolved
    with PairTable.start(gt.image, gt.human_box, gt.object_box, pred.image, pred.human_box,
                         pred.object_box, iou=iou, pred_score=pred.score if has_scores else None) as pending:
        verbs = resolve_labels(gt.verb, pred.verb, "v", verb_sim, vocabulary, where=where("verb"))
        objects = resolve_labels(gt.object, pred.object, "n", object_sim, vocabulary, where=where("object"))

        # classes = distinct (verb, object) class keys of the ground truth, in order of appearance
        n_o = max(len(objects.gt_texts), len(objects.pred_texts), 1)
        gt_combo, gt_v, gt_o = label_pairs(verbs.gt_code, objects.gt_code, n_o)
        pred_combo, pred_v, pred_o = label_pairs(verbs.pred_code, objects.pred_code, n_o)
        gt_class, class_keys = classes_of(gt_combo, gt_v, gt_o, verbs.gt_class_key, objects.gt_class_key)
        n_classes = len(class_keys)
        classes = class_table(class_keys, vocabulary)
        # σ of every (predicted label pair, ground-truth label pair), looked up per detection pair;
        # per detection pair when there are too many distinct label pairs for one table
        if len(pred_v) * len(gt_v) <= SIGMA_TABLE_MAX:
            sigma = SigmaTable(pred_combo, gt_combo,
                               combine_fn(verbs.table[pred_v[:, None], gt_v[None, :]],
                                          objects.table[pred_o[:, None], gt_o[None, :]], method=combine, w=w))
        else:
            vt, ot = verbs.table, objects.table
            gv, go, pv, po = verbs.gt_code, objects.gt_code, verbs.pred_code, objects.pred_code

            def sigma(p, g):
                return combine_fn(vt[pv[p], gv[g]], ot[po[p], go[g]], method=combine, w=w)
        pairs = pending.finish(sigma)
    ap = shoe = match_all = hico_map = None
    # second thread: the standard mAP (it shares nothing with the SHOE scores but the pair
    # table), then the τ-filtered matching when τ filters something
    with ThreadPoolExecutor(max_workers=1) as pool:
        if has_scores:
            active = pred.score >= tau
            map_job = pool.submit(lambda: ClassAP.compute(
                gt, pred, gt_class, pred_combo, pred_v, pred_o, verbs, objects, class_keys, classes,
                vocabulary, iou=iou, protocol=map_protocol, pairs=pairs, dataset=dataset))
            tau_job = None if active.all() else pool.submit(lambda: shoe_match(pairs, pred.score, active=active))
            match_all = shoe_match(pairs, pred.score)
            shoe, _ = shoe_ap(pairs, gt_class, pred.score, match_all, n_classes=n_classes, delta=delta,
                              interpolation=interpolation)
            match_tau = match_all if tau_job is None else tau_job.result()
            hico_map = map_job.result()
            ap = hico_map.default_ap[:n_classes]
        else:
            active = np.ones(len(pred), dtype=bool)
            match_tau = shoe_match(pairs, pred.score, active=active)
    f1 = shoe_soft_counts(gt_class, match_tau, n_classes=n_classes, delta=delta, fn_mode=fn_mode)
    gt_rate, pred_rate = match_miss_rates(match_tau)
    return Evaluation(classes=classes, ap=ap, hico=hico_map, shoe_ap=shoe, f1=f1, gt_miss_rate=gt_rate,
                      pred_miss_rate=pred_rate, match_all=match_all, match_tau=match_tau,
                      verbs=verbs, objects=objects, n_images=len(images), n_gt=len(gt),
                      n_pred=len(pred), n_pred_tau=int(active.sum()), has_scores=has_scores)


def score_dict(gt, pred, *, split: str | None = None, **params) -> dict:
    """The ``score`` command's result: JSON-able dict with the keys of docs/contracts.md.

    ``map``, ``shoe_map``, ``shoe_mf1``, ``gt_miss_rate``, ``pred_miss_rate`` are plain
    numbers (Full split; ``map``/``shoe_map`` are None when the predictions have no scores);
    ``splits`` holds the dataset's subsets (Full / Rare / Non-rare / Novel, and a zero-shot
    split's ``<split>_seen`` / ``_unseen``), ``per_class`` one record per ground-truth class,
    ``resolution`` how labels resolved, ``counts`` and ``params`` the rest. Classes outside the
    dataset's class list count in Full only. ``dataset``: see :func:`as_dataset`.
    """
    dataset = params["dataset"] = as_dataset(params.get("dataset"))
    if split is not None:
        check_choice("split", split, SPLITS)
        if split not in dataset.splits:
            raise ParameterError("split", f"{split!r}: {dataset.title} has no zero-shot splits")
    ev = evaluate(gt, pred, **params)
    classes = ev.classes
    subsets = [s for s in SUBSET_ORDER if s in dataset.subsets] + (
        [f"{split}_seen", f"{split}_unseen"] if split else [])
    masks = _subset_masks(classes, split)
    hico = hico_masks = None
    if ev.hico is not None:
        hico_masks = ev.hico.masks(_subset_masks(ev.hico.classes, split))
        hico = ev.hico.subsets(hico_masks)
    splits = {}
    for name in subsets:
        m = masks[name]
        splits[name] = {"map": hico["default"][name] if hico else None,
                        "shoe_map": _mean(ev.shoe_ap, m) if ev.shoe_ap is not None else None,
                        "shoe_mf1": _mean(ev.f1.f1, m), "n_classes": int(m.sum()),
                        "n_classes_map": int(hico_masks[name].sum()) if hico else None}
    in_hico = classes["hoi_id"].notna().to_numpy()
    per_class = []
    f1 = ev.f1
    for c, row in enumerate(classes[["verb", "object", "hoi_id", "rare"]].to_dict("records")):
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
    iou = params.get("iou", 0.5)
    result = {
        "map": splits["full"]["map"],
        "hico": None if hico is None else {s: hico[s] for s in ("default", "known_object")},
        "mrec": None if hico is None else hico["default_mrec"]["full"],
        "mrec_by_subset": None if hico is None else {s: hico[s + "_mrec"] for s in ("default", "known_object")},
        "protocol": None if ev.hico is None else ev.hico.card(iou),
        "shoe_map": splits["full"]["shoe_map"],
        "shoe_mf1": splits["full"]["shoe_mf1"],
        "gt_miss_rate": ev.gt_miss_rate, "pred_miss_rate": ev.pred_miss_rate,
        "splits": splits, "per_class": per_class,
        "counts": {"images": ev.n_images, "gt": ev.n_gt, "predictions": ev.n_pred,
                   "predictions_scored_f1": ev.n_pred_tau, "classes": len(classes),
                   "classes_outside_hico": int((~in_hico).sum()),
                   "gt_matched": int((m.gt_pred >= 0).sum()),
                   "predictions_matched": int(m.pred_matched.sum())}
                  # HICO-DET classes predicted but without ground truth: recall 0/0 (official mRec NaN)
                  | ({} if ev.hico is None else {"recall_undefined_classes": int(np.isnan(ev.hico.default_rec).sum())}),
        "resolution": {"verb": ev.verbs.report("verb"), "object": ev.objects.report("object")},
        "params": {k: params.get(k, d) for k, d in (("combine", "arithmetic"), ("w", 0.5), ("iou", 0.5),
                                                     ("delta", 0.0), ("tau", 0.5), ("interpolation", "none"),
                                                     ("fn_mode", "algorithm2"), ("map_protocol", "official"))}
                  | {"split": split, "confidence_scores": ev.has_scores,
                     "verb_sim": _provenance(params.get("verb_sim")),
                     "object_sim": _provenance(params.get("object_sim"))},
    }
    if not ev.has_scores:
        result["params"]["tau"] = None
    if not dataset.is_default:
        result["params"]["dataset"] = dataset.name
    return result


def as_dataset(dataset):
    """The :class:`metrics.datasets.Dataset` the scores are made on: ``dataset`` itself, or the
    registered one of that name (the default dataset when ``None``; the registry,
    :mod:`metrics.core._registry`, not a dataset package). The scorer asks it for its
    vocabulary, baseline matrices, class set and protocol card; it keeps none of its own."""
    if dataset is None or isinstance(dataset, str):
        from metrics.core._registry import get
        return get(dataset)
    return dataset


def _subset_masks(classes: pd.DataFrame, split: str | None) -> dict:
    """Full / Rare / Non-rare (Novel where the vocabulary flags novel classes; a zero-shot
    split's seen / unseen) masks over a class table; classes outside the vocabulary's class list
    count in Full only."""
    in_hico = classes["hoi_id"].notna().to_numpy()
    rare = classes["rare"].to_numpy()
    masks = {"full": np.ones(len(classes), dtype=bool), "rare": in_hico & (rare == 1),
             "non_rare": in_hico & (rare == 0)}
    if "novel" in classes:      # SWIG-HOI: novel (unseen in training) apart, evaluated classes only
        evaluated = classes["evaluated"].to_numpy() == 1 if "evaluated" in classes else in_hico
        novel = classes["novel"].to_numpy() == 1
        masks["rare"] &= evaluated
        masks["non_rare"] &= evaluated & ~novel
        masks["novel"] = in_hico & evaluated & novel
    if split:
        unseen = classes[f"unseen_{split}"].to_numpy() == 1
        masks[f"{split}_seen"] = in_hico & ~unseen
        masks[f"{split}_unseen"] = in_hico & unseen
    return masks


def _provenance(matrix) -> str:
    if matrix is None:
        return "WordNet baseline (default)"
    return str(matrix.meta.get("source") or matrix.meta.get("method") or repr(matrix))
