"""V-COCO's official files as HOIs of the project's own format, for SHOE scores and Diag-HOI.

One HOI per person V-COCO labelled, action the person does and role with an object
(``role_object_id`` ≠ 0): the person's box and the role object's box as ``vsrl_eval.py``
sanitizes them (x2 = x1 + w − 1, clipped to the image), the verb the action-role label
(``hit-instr``) and the object the COCO category of the role object. Actions without a role
(``stand``, ``walk``, ``run``, ``smile``), roles without a visible object and people V-COCO did
not label give no HOI; the image is the COCO image id as text.

The detections (``vsrl_eval.py``'s pickle) become HOIs the same way
(:func:`prediction_hois`): one per detection and action-role with a role box and a score, the
person box as human box, the role box as object box and the role score as score. The pickle
names no object category, so each role box takes the COCO category of the COCO box of its image
(any category, people included, boxes as ``vsrl_eval.py`` sanitizes them) it overlaps most,
when that +1-pixel IoU is ≥ 0.5; a role box overlapping no COCO box that much is counted
(``no_coco_box``) and left out, and so are role values that are missing or not finite, and
boxes with x2 < x1 or y2 < y1 (``invalid``). A detection whose person box is not finite or
has x2 < x1 or y2 < y1 gives no HOI at all and is counted once
(``detections_invalid_person_box``; ``vsrl_eval.py`` scores it, its IoU being 0 or NaN). The
category comes from the annotations, so a role box on the wrong object is scored as an HOI
with that object.

>>> import numpy as np
>>> from metrics.datasets.vcoco._evaluation import GroundTruth
>>> from metrics.datasets.vcoco._readers import VcocoAction
>>> hit = VcocoAction("hit", ("agent", "instr", "obj"), np.array([9]), np.array([1]), np.array([1]),
...                   np.array([[1, 2, 0]]))
>>> gt = GroundTruth(np.array([9]), np.array([0]), np.array([[0., 0, 9, 9]], np.float32), np.array([True]),
...                  np.array([[1]], np.int8), np.array([[[[5., 5, 20, 20], [-1, -1, -1, -1]]]], np.float32),
...                  np.array([[[True, False]]]), role_category=np.array([[[43, -1]]]))
>>> d = ground_truth_hois(gt, [hit], {43: "tennis racket"})
>>> d.images.tolist(), d.verb.tolist(), d.object.tolist(), d.object_box.tolist()
(['9'], ['hit-instr'], ['tennis racket'], [[5.0, 5.0, 20.0, 20.0]])
"""

from __future__ import annotations

import numpy as np

from metrics.detection._boxes import box_iou


def ground_truth_hois(gt, actions, category_names: dict, *, source: str = "<vcoco>"):
    """:class:`~metrics.detection._detections.Detections` of the ground truth's HOIs (module doc);
    ``category_names`` maps a COCO category id to its name."""
    from metrics.datasets.vcoco._vocabulary import role_label
    from metrics.detection._detections import Detections

    person, action, role = np.nonzero((gt.action[:, :, None] == 1) & gt.has_role & gt.labelled[:, None, None])
    labels = np.array([[role_label(a.name, r) for r in (list(a.roles[1:]) + ["", ""])[:2]] for a in actions],
                      dtype=object)
    objects = np.array([category_names[c] for c in gt.role_category[person, action, role].tolist()], dtype=object)
    return Detections.from_arrays(gt.image_ids[gt.person_image[person]].astype(str),
                                  gt.person_box[person].astype(np.float64),
                                  gt.role_box[person, action, role].astype(np.float64),
                                  labels[action, role], objects, source=source)


def coco_boxes(coco, image_ids):
    """The COCO boxes of the split's images as ``vsrl_eval.py`` keeps them (``_sanitize``):
    ``(image position in image_ids, box (n, 4), category id)``, image by image."""
    from metrics.datasets.vcoco._evaluation import _sanitize

    image_ids = np.asarray(image_ids, dtype=np.int64)
    row = {int(i): k for k, i in enumerate(coco.image_id.tolist())}
    width = np.array([coco.width[row[i]] if i in row else 0.0 for i in image_ids.tolist()])
    height = np.array([coco.height[row[i]] if i in row else 0.0 for i in image_ids.tolist()])
    pos = np.searchsorted(image_ids, coco.ann_image_id)
    n = len(image_ids)
    sel = np.flatnonzero((pos < n) & (image_ids[np.minimum(pos, max(n - 1, 0))] == coco.ann_image_id)) if n else \
        np.zeros(0, dtype=np.int64)
    sel = sel[np.argsort(pos[sel], kind="stable")]
    kept, boxes = _sanitize(coco, sel, width[pos[sel]], height[pos[sel]])
    return pos[sel][kept], boxes[kept], coco.category_id[sel][kept]


def prediction_hois(dets, actions, coco, image_ids, *, iou: float = 0.5, source: str = "<vcoco>"):
    """``(Detections, counts)``: the HOIs of V-COCO detections ``dets`` (a
    :class:`~metrics.datasets.vcoco._readers.VcocoDetections`) of the split's images, with the
    COCO category of the best-overlapping COCO box (module doc); ``counts`` holds the role
    values left out by reason."""
    from metrics.datasets.vcoco._vocabulary import role_label
    from metrics.detection._detections import Detections

    image_ids = np.asarray(image_ids, dtype=np.int64)
    box_image, boxes, category = coco_boxes(coco, image_ids)
    names = dict(zip(coco.category_ids.tolist(), coco.category_names))
    n = len(image_ids)
    pos = np.searchsorted(image_ids, dets.image_id)
    in_split = (pos < n) & (image_ids[np.minimum(pos, max(n - 1, 0))] == dets.image_id) if n else \
        np.zeros(len(dets), dtype=bool)
    starts = np.searchsorted(box_image, np.arange(n + 1))
    person = np.asarray(dets.person_box, dtype=np.float64)
    person_valid = np.isfinite(person).all(axis=1) & (person[:, 2] >= person[:, 0]) & (person[:, 3] >= person[:, 1])
    counts = {"detections_outside_split": int((~in_split).sum()),
              "detections_invalid_person_box": int((in_split & ~person_valid).sum()),
              "missing": 0, "invalid": 0, "no_coco_box": 0}
    in_split = in_split & person_valid       # a detection without a usable person box gives no HOI
    parts = []
    for action in actions:
        for role in action.roles[1:]:
            value = np.asarray(dets.scores[f"{action.name}_{role}"], dtype=np.float64)
            box, score = value[:, :4], value[:, 4]
            finite = np.isfinite(value).all(axis=1)
            none = ~finite & np.isnan(value).all(axis=1) | finite & (box == 0).all(axis=1)
            valid = finite & ~none & (box[:, 2] >= box[:, 0]) & (box[:, 3] >= box[:, 1])
            counts["missing"] += int((in_split & none).sum())
            counts["invalid"] += int((in_split & ~none & ~valid).sum())
            rows = np.flatnonzero(in_split & valid)
            best = _best_box(box[rows], pos[rows], starts, boxes, iou)
            counts["no_coco_box"] += int((best < 0).sum())
            rows, best = rows[best >= 0], best[best >= 0]
            parts.append((rows, box[rows], score[rows], category[best], role_label(action.name, role)))
    rows = np.concatenate([p[0] for p in parts]) if parts else np.zeros(0, dtype=np.int64)
    order = np.argsort(pos[rows], kind="stable")
    column = lambda k: np.concatenate([p[k] for p in parts])[order] if parts else np.zeros(0)
    verbs = np.concatenate([np.full(len(p[0]), p[4], dtype=object) for p in parts])[order] if parts else np.zeros(0, dtype=object)
    rows = rows[order]
    det = Detections.from_arrays(dets.image_id[rows].astype(str), dets.person_box[rows].astype(np.float64),
                                 column(1).reshape(-1, 4), verbs,
                                 np.array([names[c] for c in column(3).tolist()], dtype=object), column(2),
                                 source=source)
    return det, counts


def _best_box(box, image, starts, boxes, iou):
    """Per role box, the index of the COCO box of its image with the largest +1-pixel IoU
    (first on ties) when that is ≥ ``iou``, else −1."""
    count = starts[image + 1] - starts[image]
    edge = np.repeat(np.arange(len(box)), count)
    first = np.cumsum(count) - count
    target = np.repeat(starts[image], count) + np.arange(len(edge)) - np.repeat(first, count)
    overlap = box_iou(box[edge], boxes[target], pixel_offset=1.0)
    best = np.full(len(box), -1)
    has = np.flatnonzero(count > 0)
    if len(has):
        top = np.maximum.reduceat(overlap, first[has])
        at_top = np.where(overlap == np.repeat(top, count[has]), np.arange(len(overlap)), len(overlap))
        pick = target[np.minimum.reduceat(at_top, first[has])]
        best[has] = np.where(top >= iou, pick, -1)
    return best


def write_hois(out_dir, actions, instances, image_ids, *, ground_truth, dets=None, iou: float = 0.5,
               sources: dict) -> dict:
    """Write ``out_dir/gt.jsonl`` (the HOIs of ``ground_truth``, a
    :class:`~metrics.datasets.vcoco._evaluation.GroundTruth`) and, with ``dets``,
    ``out_dir/pred.jsonl`` (:func:`prediction_hois`), in the JSON Lines format
    ``score --dataset vcoco`` reads. ``sources`` names the ``vcoco`` and ``pred`` files. Returns
    the files, their HOI counts and the role values left out."""
    from pathlib import Path

    from metrics.detection._detections import write_jsonl

    names = dict(zip(instances.category_ids.tolist(), instances.category_names))
    truth = ground_truth_hois(ground_truth, actions, names, source=sources["vcoco"])
    predicted = None if dets is None else prediction_hois(dets, actions, instances, image_ids, iou=iou,
                                                           source=sources["pred"])
    out = Path(out_dir)
    written = {"gt": {"file": str(write_jsonl(truth, out / "gt.jsonl", with_scores=False)), "hois": len(truth)}}
    if predicted is not None:
        det, counts = predicted
        written["pred"] = {"file": str(write_jsonl(det, out / "pred.jsonl")), "hois": len(det), "left_out": counts}
    return written
