"""V-COCO's official files as HOIs of the project's own format, for SHOE scores and Diag-HOI.

One HOI per person V-COCO labelled, action the person does and role with an object
(``role_object_id`` ≠ 0): the person's box and the role object's box as ``vsrl_eval.py``
sanitizes them (x2 = x1 + w − 1, clipped to the image), the verb the action-role label
(``hit-instr``) and the object the COCO category of the role object. Actions without a role
(``stand``, ``walk``, ``run``, ``smile``), roles without a visible object and people V-COCO did
not label give no HOI; the image is the COCO image id as text.

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


def write_hois(result, out_dir, *, source: str = "<vcoco>") -> dict:
    """Write ``gt.jsonl`` in ``out_dir``: the HOIs of the ground truth ``result`` (a
    :class:`~metrics.datasets.vcoco._evaluation.VcocoResult`) was computed on, in the JSON Lines
    format ``score --dataset vcoco`` reads. Returns the file and its HOI count."""
    from pathlib import Path

    from metrics.detection._detections import write_jsonl

    det = result.hois(source)
    path = write_jsonl(det, Path(out_dir) / "gt.jsonl", with_scores=False)
    return {"gt": {"file": str(path), "hois": len(det)}}
