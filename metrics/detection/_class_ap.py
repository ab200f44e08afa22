"""The official HICO-DET evaluation, vectorized: per-class AP as ``ywchao/ho-rcnn`` computes it.
It is also the standard mAP procedure of every dataset without AP code of its own
(:class:`ClassAP`, over the class set the dataset's :class:`~metrics.core._registry.StandardMap` names).

Reference (transcribed line by line in ``tests/reference/hico_official.py``):
``evaluation/VOCevaldet_bboxpair.m`` (assignment, 11-point AP) and ``evaluation/eval_one.m``
(class set, Default / Known-Object settings, rare split, mean recall).

- Detections of a class are sorted by descending confidence with MATLAB's stable ``sort(-conf)``
  (``VOCevaldet_bboxpair.m`` l.15): ties keep the order of the detection list, which
  ``eval_one.m`` (l.184–193) builds image by image.
- Each detection looks at *every* ground truth of its class in its image and takes the one with
  the largest min(IoU_h, IoU_o), the first on ties (l.26–66, strict ``>``). It is a true
  positive when that overlap is ≥ θ and that ground truth is not taken yet; otherwise a false
  positive — it never falls back to another, unmatched ground truth (l.68–77).
- IoU uses the +1-pixel convention: ``iw = x2 − x1 + 1``, areas ``(x2 − x1 + 1)(y2 − y1 + 1)``
  (l.35–45).
- AP is 11-point interpolated: ``for t = 0:0.1:1, p = max(prec(rec >= t)) (0 if none),
  ap = ap + p/11`` (l.86–93), with the thresholds as MATLAB's colon operator computes them
  (:data:`RECALL_THRESHOLDS`).
- A class without ground truth has AP 0 (``npos = 0`` makes every recall NaN, so no threshold
  is reached) and recall NaN when it has detections, 0 when it has none (``eval_one.m``
  l.211–214); the official mean recall is then NaN.
- Known-Object (``eval_one.m`` l.199–206): a class's detections are kept only in images whose
  ground truth contains that class's object.
"""

from __future__ import annotations

import math

import numpy as np

from metrics.core._segments import first_occurrences, stable_order
from metrics.detection._ap import eleven_point_ap, standard_ap
from metrics.detection._boxes import box_iou


def best_overlap(gt_image, gt_class, gt_human, gt_object, pred_image, pred_class, pred_human,
                 pred_object, *, n_classes: int, pixel_offset: float = 1.0):
    """Each prediction's best ground truth by ``VOCevaldet_bboxpair.m`` l.26–66: among *all*
    ground truths of its class in its image, the largest min(IoU_h, IoU_o), the first on ties
    (strict ``>``). Returns ``(j_max, ov_max)`` per prediction (−1 / −inf: none; class −1:
    none). It does not depend on the other predictions, so the Default and Known-Object settings
    share it."""
    pred_class = np.asarray(pred_class, dtype=np.int64)
    gt_key = np.asarray(gt_image, dtype=np.int64) * n_classes + np.asarray(gt_class, dtype=np.int64)
    gt_sorted = np.argsort(gt_key, kind="stable")          # per (image, class): file order
    gt_key_sorted = gt_key[gt_sorted]
    dets = np.flatnonzero(pred_class >= 0)
    key = pred_image[dets].astype(np.int64) * n_classes + pred_class[dets]
    lo = np.searchsorted(gt_key_sorted, key, "left")
    count = np.searchsorted(gt_key_sorted, key, "right") - lo
    first_edge = np.cumsum(count) - count
    edge_det = np.repeat(np.arange(len(dets)), count)
    edge_gt = gt_sorted[np.repeat(lo, count) + np.arange(len(edge_det)) - np.repeat(first_edge, count)]
    p = dets[edge_det]
    ov = np.minimum(box_iou(pred_human[p], gt_human[edge_gt], pixel_offset=pixel_offset),
                    box_iou(pred_object[p], gt_object[edge_gt], pixel_offset=pixel_offset))
    j_max = np.full(len(pred_class), -1)
    ov_max = np.full(len(pred_class), -np.inf)
    has = count > 0
    if has.any():
        starts = first_edge[has]
        best = np.maximum.reduceat(ov, starts)
        at_max = np.where(ov == np.repeat(best, count[has]), np.arange(len(ov)), len(ov))
        j_max[dets[has]] = edge_gt[np.minimum.reduceat(at_max, starts)]
        ov_max[dets[has]] = best
    return j_max, ov_max


def assign_best_overlap(pred_image, pred_class, pred_score, j_max, ov_max, *, iou: float = 0.5,
                        confidence_order=None):
    """``VOCevaldet_bboxpair.m`` l.14–17 and l.68–80 given :func:`best_overlap`: per class,
    predictions in MATLAB's stable descending-score order; a prediction is a true positive of
    its best ground truth when that overlap is ≥ θ and no earlier prediction took it.

    ``confidence_order``: all predictions in descending score, ties in image, then row order
    (as :meth:`metrics.detection._pairs.PairTable.confidence_order` gives it; computed here when not given).

    Returns ``(order, matched)``: ``order`` lists the predictions with ``pred_class ≥ 0`` grouped
    by class, each class in descending score (stable in image, then row order); ``matched[i]``
    is the ground truth ``order[i]`` is a true positive of, −1 for a false positive.
    """
    pred_class = np.asarray(pred_class, dtype=np.int64)
    if confidence_order is None:
        confidence_order = np.lexsort((np.arange(len(pred_class)), pred_image, -np.asarray(pred_score)))
    kept = confidence_order[pred_class[confidence_order] >= 0]
    order = kept[stable_order(pred_class[kept], int(pred_class.max(initial=0)) + 1)]
    claim = np.where(ov_max[order] >= iou, j_max[order], -1)
    matched = np.full(len(order), -1)
    claimed = np.flatnonzero(claim >= 0)
    first = first_occurrences(claim[claimed])                 # earliest claim of each GT wins
    matched[claimed[first]] = claim[claimed[first]]
    return order, matched


def best_overlap_assignment(gt_image, gt_class, gt_human, gt_object, pred_image, pred_class,
                            pred_human, pred_object, pred_score, *, n_classes: int,
                            iou: float = 0.5, pixel_offset: float = 1.0):
    """VOC best-overlap assignment of ``VOCevaldet_bboxpair.m``, all classes at once:
    :func:`best_overlap` then :func:`assign_best_overlap`."""
    j_max, ov_max = best_overlap(gt_image, gt_class, gt_human, gt_object, pred_image, pred_class,
                                 pred_human, pred_object, n_classes=n_classes, pixel_offset=pixel_offset)
    return assign_best_overlap(pred_image, pred_class, pred_score, j_max, ov_max, iou=iou)


def _ap_and_recall_all_point(pairs, gt_class, pred_class, pred_score, n_classes):
    """Today's reading (``--map-protocol all-point``): best *unmatched* ground truth, continuous
    IoU, all-point AP (:func:`metrics.detection._ap.standard_ap`), with its per-class recall."""
    ap, tp = standard_ap(pairs, gt_class, pred_class, pred_score, n_classes=n_classes)
    n_gt = np.bincount(gt_class, minlength=n_classes)
    with np.errstate(divide="ignore", invalid="ignore"):
        rec = np.bincount(pred_class[tp], minlength=n_classes) / n_gt
    return np.nan_to_num(ap, nan=0.0), rec


class ClassAP:
    """Per-class AP and recall in the Default and Known-Object settings over a dataset's standard
    mAP class set (see :meth:`compute`); ``ko_ap`` / ``ko_rec`` are ``None`` when the dataset's
    own AP code computes it (it has no Known-Object setting)."""

    def __init__(self, classes, default_ap, default_rec, ko_ap, ko_rec, protocol, own_classes, dataset):
        self.classes, self.protocol, self.own_classes, self.dataset = classes, protocol, own_classes, dataset
        self.default_ap, self.default_rec, self.ko_ap, self.ko_rec = default_ap, default_rec, ko_ap, ko_rec

    @classmethod
    def compute(cls, gt, pred, gt_class, pred_combo, pred_v, pred_o, verbs, objects, class_keys,
                table, vocabulary, *, iou, protocol, pairs, dataset):
        """Class set (``dataset.standard_map``): the dataset's evaluated classes (HICO-DET's 600,
        ``eval_one.m`` ``num_action``) when every ground-truth class is one, listed after the
        ground truth's own classes; otherwise the ground truth's classes. Predictions of other
        classes take no part."""
        from metrics.detection._hoi_labels import class_table, classes_of
        standard = dataset.standard_map
        keys = list(class_keys)
        own = None if standard.classes is None else vocabulary.classes[standard.classes(vocabulary.classes)]
        own_classes = (own is not None and protocol == "official"
                       and set(keys) <= set(zip(own["verb"], own["object"])))
        if own is not None and own_classes:
            seen = set(keys)
            keys += [k for k in zip(own["verb"], own["object"]) if k not in seen]
        n = len(keys)
        pred_class = classes_of(pred_combo, pred_v, pred_o, verbs.pred_class_key, objects.pred_class_key,
                                 {k: i for i, k in enumerate(keys)})[0]
        classes = class_table(keys, vocabulary)
        if own_classes and standard.ap is not None:
            ap, rec = standard.ap(classes, gt.image, gt_class, np.hstack([gt.human_box, gt.object_box]),
                                  pred.image, pred_class, np.hstack([pred.human_box, pred.object_box]),
                                  pred.score, iou=iou)
            return cls(classes, ap, rec, None, None, protocol, own_classes, dataset)
        pred_class_ko = _known_object(gt, pred, keys, pred_class, objects)
        if protocol == "official":
            n_gt = np.bincount(gt_class, minlength=n)
            j_max, ov_max = best_overlap(gt.image, gt_class, gt.human_box, gt.object_box, pred.image, pred_class,
                                         pred.human_box, pred.object_box, n_classes=n)
            confidence_order = pairs.confidence_order(pred.score)[0]   # shared with SHOE AP
            out = []
            for pcls in (pred_class, pred_class_ko):
                order, matched = assign_best_overlap(pred.image, pcls, pred.score, j_max, ov_max, iou=iou,
                                                     confidence_order=confidence_order)
                out += eleven_point_ap(pcls[order], matched >= 0, n_gt)
        else:
            out = []
            for pcls in (pred_class, pred_class_ko):
                gt_only = np.where(pcls < len(class_keys), pcls, -1)
                ap, rec = _ap_and_recall_all_point(pairs, gt_class, gt_only, pred.score, len(class_keys))
                out += [np.r_[ap, np.zeros(n - len(class_keys))], np.r_[rec, np.zeros(n - len(class_keys))]]
        default_ap, default_rec, ko_ap, ko_rec = out
        return cls(classes, default_ap, default_rec, ko_ap, ko_rec, protocol, own_classes, dataset)

    def masks(self, subset_masks: dict) -> dict:
        """The subset masks of the standard mAP: ``subset_masks`` (over :attr:`classes`) with
        Full narrowed to the dataset's Full classes when its own class set is used."""
        full = self.dataset.standard_map.full
        if self.own_classes and full is not None:
            subset_masks = {**subset_masks, "full": np.asarray(full(self.classes), dtype=bool)}
        return subset_masks

    def subsets(self, masks: dict) -> dict:
        """``{"default": {subset: mAP}, "known_object": {...}}`` and the mean recalls
        (``known_object`` ``None`` without that setting)."""
        out: dict[str, dict[str, float | None] | None] = {}
        for setting, ap, rec in (("default", self.default_ap, self.default_rec),
                                 ("known_object", self.ko_ap, self.ko_rec)):
            if ap is None:
                out[setting] = out[setting + "_mrec"] = None
                continue
            out[setting] = {name: (float(ap[m].mean()) if m.any() else None) for name, m in masks.items()}
            out[setting + "_mrec"] = {name: (_nan_none(rec[m].mean()) if m.any() else None)
                                      for name, m in masks.items()}
        return out

    def _procedure_source(self) -> str:
        title, official = self.dataset.title, self.dataset.official
        return (f"the HICO-DET evaluation (ywchao/ho-rcnn eval_one.m, VOCevaldet_bboxpair.m) applied to {title}'s "
                "classes" + (f"; {title}'s own evaluation: {official}" if official else ""))

    def card(self, iou: float) -> dict:
        """How the numbers were made (the ``protocol`` key of the result)."""
        standard, title = self.dataset.standard_map, self.dataset.title
        class_set = standard.class_set if self.own_classes else standard.ground_truth_classes
        rare = standard.rare or f"none ({title} has no rare split)"
        if self.own_classes and standard.ap is not None:
            return {"name": self.protocol, **standard.procedure(iou), "class_set": class_set, "rare": rare,
                    "source": standard.source}
        if self.protocol == "official":
            return {"name": "official",
                    "interpolation": "11-point (t = 0:0.1:1 as MATLAB computes it, p = max precision at recall ≥ t)",
                    "iou": f"+1-pixel (iw = x2 - x1 + 1), min(IoU_human, IoU_object) ≥ {iou:g}",
                    "assignment": "VOC best overlap: the ground truth of the class in the image with the largest "
                                  "min IoU, first on ties; a false positive when it is already taken",
                    "sort": "descending confidence, stable (image order, then file order)",
                    "class_set": class_set, "rare": rare,
                    "settings": "default; known_object = a class's detections only in images whose ground "
                                "truth contains its object",
                    "source": standard.source or self._procedure_source()}
        return {"name": "all-point",
                "interpolation": "all-point (area under the precision envelope)",
                "iou": f"continuous coordinates (no +1), min(IoU_human, IoU_object) ≥ {iou:g}",
                "assignment": "best unmatched ground truth of the class in the image",
                "sort": "descending confidence, stable (image order, then file order)",
                "class_set": standard.ground_truth_classes, "rare": rare,
                "settings": "default; known_object as in the official evaluation",
                "source": "this project's earlier reading (not the official evaluation)"}


def _known_object(gt, pred, keys, pred_class, objects):
    """``eval_one.m`` l.199–206: the prediction classes with a class's detections kept only in
    images whose ground truth contains that class's object (−1 elsewhere)."""
    object_code = {o: i for i, o in enumerate(dict.fromkeys([k[1] for k in keys] + list(objects.gt_class_key)))}
    gt_obj = np.array([object_code[k] for k in objects.gt_class_key], dtype=np.int64)[objects.gt_code]
    class_obj = np.array([object_code[k[1]] for k in keys], dtype=np.int64)
    n_o = len(object_code)
    present = np.unique(gt.image * n_o + gt_obj)
    pc = np.maximum(pred_class, 0)
    known = np.isin(pred.image * n_o + class_obj[pc], present) & (pred_class >= 0)
    return np.where(known, pred_class, -1)


def _nan_none(x) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x
