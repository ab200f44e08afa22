"""The official SWIG-HOI evaluation, vectorized: per-interaction AP as the released ``calc_ap``
computes it (``scwangdyd/large_vocabulary_hoi_detection``, ``choir/evaluation/swig_evaluation.py``;
transcribed line by line in ``tests/reference/swig_eval.py``).

- Each evaluated interaction's detections are ranked by ``np.argsort(scores)[::-1]`` (l.750),
  on the scores in the order the evaluator collects them (image by image, l.303-308): NumPy's
  default sort is not stable, and the same call on the same array is kept here so that ties
  fall as they fall there. NaN scores sort last and so rank *first*.
- Only the first 19,999 ranked detections of an interaction count (l.758, :data:`CAP`).
- A detection looks at every ground truth of its interaction in its image and takes the one
  with the largest ``min(IoU_h, IoU_o)`` (Python's ``min``: a NaN object IoU leaves the human
  IoU), the first on ties, none when no overlap is above 0 (l.763-769). It is a true positive
  when that overlap is ≥ 0.5 and no earlier detection took that ground truth, a false positive
  otherwise, with no fall-back to another ground truth (l.770-774).
- IoU has no +1 pixel (l.797-825; :func:`metrics.detection._boxes.box_iou`).
- AP is 11-point interpolated at the recall levels ``i / 10.0`` (l.782-785,
  :data:`RECALL_THRESHOLDS`). An interaction without detections has AP 0 (l.743-744); one with
  detections but no ground truth has AP 0 and recall NaN.
- ``full`` is the mean AP over the evaluated interactions that are not novel, ``rare`` /
  ``non_rare`` / ``novel`` over the evaluated ones of frequency 1 / 2 / 0 (l.330-343); the
  released code prints them in percent, here they are fractions.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from metrics.core._constraints import POSITIVE_FRACTION, Constraint, Whole, validate_params
from metrics.core._errors import InputError
from metrics.core._segments import first_occurrences, stable_order
from metrics.detection._ap import eleven_point_ap
from metrics.detection._boxes import box_iou

CAP = 19_999
SWIG_OPTIONS: dict[str, Constraint] = {"cap": Whole(1), "iou": POSITIVE_FRACTION}   # detections kept per interaction, IoU threshold
RECALL_THRESHOLDS = np.arange(11) / 10.0      # calc_ap l.783: i / 10.0
NOVEL, RARE, COMMON = 0, 1, 2                  # SWIG_INTERACTIONS "frequency"


@dataclass(frozen=True)
class SwigResult:
    """Per-interaction ``ap`` and ``recall`` (NaN where not evaluated) and the four means."""

    ap: np.ndarray
    recall: np.ndarray
    evaluated: np.ndarray
    frequency: np.ndarray

    def mean(self, subset: str) -> float:
        """Mean AP over ``full`` (evaluated, not novel), ``rare``, ``non_rare`` or ``novel``
        (NaN when the subset is empty, as the released ``np.mean`` gives)."""
        select = {"full": self.frequency != NOVEL, "rare": self.frequency == RARE,
                  "non_rare": self.frequency == COMMON, "novel": self.frequency == NOVEL}[subset]
        values = self.ap[self.evaluated & select]
        return float(np.mean(values)) if len(values) else float("nan")

    def to_dict(self) -> dict:
        ids = np.flatnonzero(self.evaluated)
        return {"full": self.mean("full"), "rare": self.mean("rare"), "non_rare": self.mean("non_rare"),
                "novel": self.mean("novel"),
                "ap": {str(k): float(a) for k, a in zip(ids.tolist(), self.ap[ids].tolist())}}


def _check(name: str, array, n: int, dtype, ndim: int = 1) -> np.ndarray:
    array = np.asarray(array, dtype=dtype)
    if array.ndim != ndim or len(array) != n or (ndim == 2 and array.shape[1] != 8):
        shape = f"({n},)" if ndim == 1 else f"({n}, 8)"
        raise InputError(f"{name} must have shape {shape}, got {array.shape}")
    return array


@validate_params(SWIG_OPTIONS)
def swig_ap(gt_image, gt_interaction, gt_boxes, pred_image, pred_interaction, pred_boxes, pred_score, *,
            frequency, evaluated, cap: int = CAP, iou: float = 0.5) -> SwigResult:
    """Per-interaction 11-point AP of SWIG-HOI's released evaluator (module doc).

    Ground truth: one row per (person, object, action) with its image, interaction id and
    8 box numbers (person xyxy, object xyxy), in the evaluator's scan order
    (:func:`metrics.datasets.swig_hoi._readers.read_ground_truth`); predictions likewise with a
    score, image by image in the order they are collected. ``frequency[k]`` is interaction k's
    0 novel / 1 rare / 2 common, ``evaluated[k]`` whether it is evaluated.

    AP_k = Σ_{i=0..10} max{prec_j : rec_j ≥ i/10} / 11 over the first ``cap`` detections of k in
    ``np.argsort(score)[::-1]`` order (0 when no rec_j reaches i/10), with rec_j = TP_j / n_gt_k
    and prec_j = TP_j / j (``calc_ap``, swig_evaluation.py l.742-787).

    >>> gt = [0], [0], [[0, 0, 10, 10, 0, 0, 10, 10]]
    >>> pred = [0, 0], [0, 0], [[0, 0, 10, 10, 0, 0, 10, 10], [0, 0, 10, 10, 0, 0, 10, 9]], [0.9, 0.8]
    >>> r = swig_ap(*gt, *pred, frequency=[2], evaluated=[True])
    >>> round(float(r.ap[0]), 12)    # the duplicate is a false positive after R = 1: 11 × 1/11
    1.0
    """
    frequency = np.asarray(frequency, dtype=np.int64)
    n_classes = len(frequency)
    evaluated = _check("evaluated", evaluated, n_classes, bool)
    gt_image = np.asarray(gt_image, dtype=np.int64)
    n_gt_rows = len(gt_image)
    gt_interaction = _check("gt_interaction", gt_interaction, n_gt_rows, np.int64)
    gt_boxes = _check("gt_boxes", gt_boxes, n_gt_rows, np.float64, 2)
    pred_image = np.asarray(pred_image, dtype=np.int64)
    n = len(pred_image)
    pred_interaction = _check("pred_interaction", pred_interaction, n, np.int64)
    pred_boxes = _check("pred_boxes", pred_boxes, n, np.float64, 2)
    pred_score = _check("pred_score", pred_score, n, np.float64)
    for name, ids in (("gt_interaction", gt_interaction), ("pred_interaction", pred_interaction)):
        if len(ids) and (ids.min() < 0 or ids.max() >= n_classes):
            raise InputError(f"{name} must hold interaction ids in 0..{n_classes - 1}")

    # l.303-308 and l.750/758: per evaluated interaction, np.argsort(scores)[::-1], the first cap
    kept = np.flatnonzero(evaluated[pred_interaction])
    grouped = kept[stable_order(pred_interaction[kept], n_classes)]
    bounds = np.searchsorted(pred_interaction[grouped], np.arange(n_classes + 1))
    ranked = []
    for k in np.flatnonzero(np.diff(bounds)):
        members = grouped[bounds[k]:bounds[k + 1]]
        ranked.append(members[np.argsort(np.array(pred_score[members]))[::-1][:cap]])
    order = np.concatenate(ranked) if ranked else np.zeros(0, dtype=np.int64)
    cls_sorted = pred_interaction[order]

    j_max, ov_max = _best_overlap(gt_image, gt_interaction, gt_boxes, pred_image[order], cls_sorted,
                                  pred_boxes[order])
    claim = np.where(ov_max >= iou, j_max, -1)                 # l.770: maxi < 0.5 is a miss
    tp = np.zeros(len(order), dtype=bool)
    claimed = np.flatnonzero(claim >= 0)
    tp[claimed[first_occurrences(claim[claimed])]] = True      # l.770-774: used[key]
    n_gt = np.bincount(gt_interaction, minlength=n_classes)
    ap, rec = eleven_point_ap(cls_sorted, tp, n_gt, thresholds=RECALL_THRESHOLDS)
    ap = np.where(evaluated, ap, np.nan)
    rec = np.where(evaluated, rec, np.nan)
    return SwigResult(ap=ap, recall=rec, evaluated=evaluated, frequency=frequency)


def _best_overlap(gt_image, gt_class, gt_boxes, pred_image, pred_class, pred_boxes):
    """``calc_ap`` l.762-769 for every prediction: the first ground truth of its (image,
    interaction) with the largest ``min(IoU_h, IoU_o)`` above 0, as ``(j_max, ov_max)``
    (−1 / 0 when none)."""
    images = np.unique(np.r_[gt_image, pred_image])
    n_images = max(len(images), 1)
    gt_key = gt_class * n_images + np.searchsorted(images, gt_image)
    key = pred_class * n_images + np.searchsorted(images, pred_image)
    gt_sorted = np.argsort(gt_key, kind="stable")              # per (interaction, image): file order
    gt_key_sorted = gt_key[gt_sorted]
    lo = np.searchsorted(gt_key_sorted, key, "left")
    count = np.searchsorted(gt_key_sorted, key, "right") - lo
    first_edge = np.cumsum(count) - count
    edge_det = np.repeat(np.arange(len(key)), count)
    edge_gt = gt_sorted[np.repeat(lo, count) + np.arange(len(edge_det)) - np.repeat(first_edge, count)]
    h = box_iou(pred_boxes[edge_det, :4], gt_boxes[edge_gt, :4])
    o = box_iou(pred_boxes[edge_det, 4:], gt_boxes[edge_gt, 4:])
    ov = np.where(o < h, o, h)                                  # calc_hit l.794: Python's min(hiou, oiou)
    ov[~(ov > 0)] = 0.0                                         # l.767: only maxi < tmp from 0.0 updates
    j_max = np.full(len(key), -1)
    ov_max = np.zeros(len(key))
    has = count > 0
    if has.any():
        starts = first_edge[has]
        best = np.maximum.reduceat(ov, starts)
        at_max = np.where((ov == np.repeat(best, count[has])) & (ov > 0), np.arange(len(ov)), len(ov))
        first = np.minimum.reduceat(at_max, starts)
        found = first < len(ov)
        rows = np.flatnonzero(has)[found]
        j_max[rows] = edge_gt[first[found]]
        ov_max[rows] = best[found]
    return j_max, ov_max


@validate_params(SWIG_OPTIONS)
def evaluate(ground_truth, detections, *, frequency, evaluated, cap: int = CAP, iou: float = 0.5) -> SwigResult:
    """:func:`swig_ap` on the readers' :class:`~metrics.datasets.swig_hoi._readers.GroundTruth`
    and :class:`~metrics.datasets.swig_hoi._readers.SwigDetections`."""
    return swig_ap(ground_truth.image, ground_truth.interaction, ground_truth.boxes, detections.image,
                   detections.interaction, detections.boxes, detections.score, frequency=frequency,
                   evaluated=evaluated, cap=cap, iou=iou)


def evaluate_files(gt_path, pred_path, *, vocabulary=None) -> SwigResult:
    """SWIG-HOI's official numbers for an annotation JSON (``swig_test_1000.json``) and a
    predictions file (the ``write_hoi_results`` pickle, or JSON / NPZ with its content), over
    the interactions of ``vocabulary`` (SWIG-HOI's own when ``None``)."""
    from metrics.datasets.swig_hoi._readers import read_ground_truth, read_swig_detections
    from metrics.datasets.swig_hoi._vocabulary import interaction_table, swig

    vocabulary = vocabulary or swig()
    table = interaction_table(vocabulary)
    gt = read_ground_truth(gt_path, action_id=table["action_id"], object_id=table["object_id"],
                           n_actions=len(vocabulary.verbs), n_objects=len(vocabulary.objects))
    detections = read_swig_detections(pred_path, n_interactions=len(table["frequency"]))
    return evaluate(gt, detections, frequency=table["frequency"], evaluated=table["evaluated"])


def standard_ap(classes, gt_image, gt_class, gt_boxes, pred_image, pred_class, pred_boxes, pred_score, *,
                iou: float = 0.5):
    """``(ap, recall)`` per class of a ``score --dataset swig-hoi`` class table (its ``frequency``
    column; every class evaluated) by :func:`swig_ap`; predictions of other classes (−1) take no
    part. The :class:`metrics.datasets.StandardMap` hook of SWIG-HOI."""
    kept = np.flatnonzero(np.asarray(pred_class) >= 0)
    result = swig_ap(gt_image, gt_class, gt_boxes, np.asarray(pred_image)[kept], np.asarray(pred_class)[kept],
                     np.asarray(pred_boxes)[kept], np.asarray(pred_score)[kept],
                     frequency=classes["frequency"].to_numpy(np.int64), evaluated=np.ones(len(classes), dtype=bool),
                     iou=iou)
    return result.ap, result.recall


def procedure(iou: float) -> dict:
    """The protocol card's entries for :func:`standard_ap`."""
    return {"interpolation": "11-point at recall i / 10.0 (calc_ap l.782-785)",
            "iou": f"no +1 pixel, min(IoU_human, IoU_object) ≥ {iou:g}",
            "assignment": "the ground truth of the interaction in the image with the largest min IoU above 0, "
                          "first on ties; a false positive when it is already taken",
            "sort": "np.argsort(scores)[::-1] per interaction (not stable), the first 19,999",
            "settings": "default (SWIG-HOI has no Known-Object setting)"}
