"""SWIG-HOI's official files as HOIs of the project's own format, for SHOE scores and Diag-HOI.

Every ground-truth row of :func:`~metrics.datasets.swig_hoi._readers.read_ground_truth` (one per
person, object and action, boxes as the released evaluator converts them) and every detection
of the ``write_hoi_results`` predictions becomes one HOI whose verb and object are the labels
of its interaction (``swig_hoi_classes.csv``); the image is the SWIG-HOI image id as text.

>>> import numpy as np
>>> from metrics.datasets.swig_hoi._readers import GroundTruth
>>> gt = GroundTruth(np.array([7]), np.array([0]), np.array([[0., 0, 10, 10, 5, 5, 20, 20]]))
>>> d = as_detections(gt)
>>> d.images.tolist(), d.verb.tolist(), d.object_box.tolist()
(['7'], ['injecting'], [[5.0, 5.0, 20.0, 20.0]])
"""

from __future__ import annotations

import numpy as np


def as_detections(rows, *, vocabulary=None, source: str = "<swig-hoi>"):
    """:class:`~metrics.detection._detections.Detections` of SWIG-HOI ground-truth rows or
    detections (``image``, ``interaction``, ``boxes`` (n, 8) and, for detections, ``score``)."""
    from metrics.datasets.swig_hoi._vocabulary import swig
    from metrics.detection._detections import Detections

    classes = (vocabulary or swig()).classes
    verbs = classes["verb"].to_numpy(dtype=object)[rows.interaction]
    objects = classes["object"].to_numpy(dtype=object)[rows.interaction]
    score = getattr(rows, "score", None)
    boxes = np.asarray(rows.boxes, dtype=np.float64).reshape(-1, 8)
    return Detections.from_arrays(rows.image.astype(str), boxes[:, :4], boxes[:, 4:], verbs, objects,
                                  None if score is None else np.asarray(score, dtype=np.float64), source=source)


def write_hois(gt_path, pred_path, out_dir) -> dict:
    """Write ``gt.jsonl`` (and ``pred.jsonl`` when ``pred_path`` is given) in ``out_dir``: the
    annotation JSON's and the predictions' HOIs in the JSON Lines format ``score`` reads.
    Detections whose score is NaN (which the released evaluator ranks first) have no place in
    a ranking by score and are left out, counted as ``dropped_without_score``; so are detections
    with a box the HOI format refuses (a coordinate NaN, or x2 < x1 or y2 < y1, which the released
    evaluator scores as IoU 0), counted as ``dropped_invalid_box``. Returns the files and their
    HOI counts; nothing is written when either file is refused."""
    from pathlib import Path

    from metrics.core._jsonio import all_or_nothing
    from metrics.datasets.swig_hoi._readers import read_ground_truth, read_swig_detections
    from metrics.datasets.swig_hoi._vocabulary import interaction_table, swig
    from metrics.detection._detections import write_jsonl

    vocabulary = swig()
    table = interaction_table(vocabulary)
    gt = read_ground_truth(gt_path, action_id=table["action_id"], object_id=table["object_id"],
                           n_actions=len(vocabulary.verbs), n_objects=len(vocabulary.objects))
    sides = [("gt", as_detections(gt, vocabulary=vocabulary, source=str(gt_path)))]
    dropped = invalid = 0
    if pred_path is not None:
        pred = read_swig_detections(pred_path, n_interactions=len(table["frequency"]))
        finite = np.isfinite(pred.score)
        boxes = np.asarray(pred.boxes, dtype=np.float64).reshape(-1, 2, 4)
        valid = np.isfinite(boxes).all(axis=(1, 2)) & (boxes[:, :, 2] >= boxes[:, :, 0]).all(axis=1) \
            & (boxes[:, :, 3] >= boxes[:, :, 1]).all(axis=1)
        dropped, invalid = int((~finite).sum()), int((finite & ~valid).sum())
        keep = finite & valid
        pred = type(pred)(pred.image[keep], pred.interaction[keep], pred.boxes[keep], pred.score[keep])
        sides.append(("pred", as_detections(pred, vocabulary=vocabulary, source=str(pred_path))))
    out = {}
    with all_or_nothing():
        for name, det in sides:
            path = write_jsonl(det, Path(out_dir) / f"{name}.jsonl", with_scores=name == "pred")
            out[name] = {"file": str(path), "hois": len(det)}
    if pred_path is not None:
        out["pred"]["dropped_without_score"] = dropped
        out["pred"]["dropped_invalid_box"] = invalid
    return out
