"""The pair table shared by the detection scores (see :mod:`metrics.detection._scoring`).

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
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.core._segments import run_starts, segments
from metrics.detection._boxes import box_iou


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
              pred_score=None) -> PairTable:
        """``sigma(p, g)`` returns the HOI similarity of predictions ``p`` and ground truths ``g``
        (index arrays of one shape; a :class:`SigmaTable` is evaluated on broadcast blocks
        instead); ``iou`` is the threshold θ for both boxes; ``pred_score``, when given, lets
        the confidence order be prepared alongside."""
        with cls.start(gt_image, gt_human, gt_object, pred_image, pred_human, pred_object,
                       iou=iou, pred_score=pred_score) as pending:
            return pending.finish(sigma)

    @classmethod
    def start(cls, gt_image, gt_human, gt_object, pred_image, pred_human, pred_object, *,
              iou: float = 0.5, pred_score=None) -> PendingPairs:
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
        gh, go, ph, po = boxes
        return score, _candidate_edges(self.gt_group, self.pred_group, gh, go, ph, po, self.iou)

    def __enter__(self) -> PendingPairs:
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
