"""SWIG-HOI's files: the annotation JSON and the predictions ``write_hoi_results`` writes.

Ground truth (``swig_test_1000.json``, ``scwangdyd/large_vocabulary_hoi_detection``): a list of
images, each ``{"img_id", "box_annotations": [{"bbox": [x1, y1, x2, y2], "category_id"}, ...],
"hoi_annotations": [{"subject_id", "object_id", "action_id"}, ...]}`` (``subject_id`` /
``object_id`` index ``box_annotations``). It becomes one row per (person, object, action) as the
released code builds it (``choir/data/datasets/swig.py`` l.52-108, then
``choir/evaluation/swig_evaluation.py`` ``_convert_to_hico_dict`` l.711-739):

- an image without boxes or without HOI annotations is skipped (``swig.py`` l.59);
- a (person, object) pair annotated twice with one action counts once (l.93-94);
- rows come person by person (first mention), then object by object, then actions ascending:
  the order the evaluator scans ground truth in, which decides ties between equal overlaps;
- boxes go xyxy → xywh in the image's NumPy array (int64 when every coordinate of the image is
  a JSON integer, else float64), back to xyxy in float32 as ``BoxMode.convert`` does with
  ``torch.tensor``, and are rounded to 3 decimals with Python's ``round`` (l.720-728).

Predictions (``write_hoi_results``, ``swig_evaluation.py`` l.463-480): a list indexed by image id
(20,000 slots) of per-image lists of ``[interaction_id, person x1, y1, x2, y2, object x1, y1,
x2, y2, score, offset]`` (``instances_to_swig`` l.452-458; the offset is not used). Accepted as
that pickle (read with a restricted unpickler: plain containers, numbers, strings and NumPy
arrays only), as JSON with the same list, or as NPZ with ``image_id`` (n,) and ``detections``
(n, 11). Detections are kept image by image in image-id order, each image in file order.

>>> import json, tempfile, pathlib
>>> folder = pathlib.Path(tempfile.mkdtemp())
>>> _ = (folder / "gt.json").write_text(json.dumps([{"img_id": 3, "box_annotations": [
...     {"bbox": [0, 0, 10, 10], "category_id": 0}, {"bbox": [5.5, 5, 20, 20], "category_id": 7}],
...     "hoi_annotations": [{"subject_id": 0, "object_id": 1, "action_id": 2}]}]))
>>> gt = read_ground_truth(folder / "gt.json", action_id=[2], object_id=[7])
>>> gt.image.tolist(), gt.interaction.tolist(), gt.boxes.tolist()
([3], [0], [[0.0, 0.0, 10.0, 10.0, 5.5, 5.0, 20.0, 20.0]])
"""

from __future__ import annotations

import io
import numbers
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from metrics.core._constraints import OrNone, Whole, validate_params
from metrics.core._errors import InputError
from metrics.core._inputs import read_bytes, read_json
from metrics.core._pickles import load_restricted

N_FIELDS = 11          # interaction id, person box, object box, score, offset


@dataclass(frozen=True)
class GroundTruth:
    """One row per annotated (person, object, action): ``image`` and ``interaction`` ids, and
    ``boxes`` (n, 8): person x1 y1 x2 y2, object x1 y1 x2 y2, in the evaluator's scan order."""

    image: np.ndarray
    interaction: np.ndarray
    boxes: np.ndarray

    def __len__(self) -> int:
        return len(self.image)


@dataclass(frozen=True)
class SwigDetections:
    """One row per detection: ``image``, ``interaction``, ``boxes`` (n, 8) and ``score``, image
    by image in image-id order, each image in file order."""

    image: np.ndarray
    interaction: np.ndarray
    boxes: np.ndarray
    score: np.ndarray

    def __len__(self) -> int:
        return len(self.image)


# ------------------------------------------------------------------------ ground truth
def _whole(value, where: str, low: int = 0, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"{where} must be a whole number, got {value!r}")
    if value < low or (high is not None and value >= high):
        bound = f"in {low}..{high - 1}" if high is not None else f">= {low}"
        raise InputError(f"{where} must be {bound}, got {value}")
    return value


def _box(value, where: str) -> list:
    if (not isinstance(value, list) or len(value) != 4
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in value)):
        raise InputError(f"{where} must be four numbers [x1, y1, x2, y2], got {value!r}")
    return value


def released_gt_boxes(boxes, integer=None) -> np.ndarray:
    """Boxes (xyxy) as the released code turns them into ground truth (module doc): xyxy → xywh in
    the image's array (float64), ``BoxMode.convert`` back in float32, Python's ``round(x, 3)``;
    boxes of an image whose coordinates are all integers (``integer``, default: all of
    ``boxes`` are) stay as they are (int64 there: ``x1 + (x2 - x1)`` is exact).

    >>> released_gt_boxes([[0.1, 0.2, 10.3, 20.7]]).tolist()
    [[0.1, 0.2, 10.3, 20.7]]
    """
    if integer is None:
        integer = np.full(len(boxes), all(isinstance(v, int) for box in boxes for v in box))
    array = np.array(boxes, dtype=np.float64).reshape(-1, 4)
    x1, y1 = array[:, 0], array[:, 1]
    w, h = array[:, 2] - x1, array[:, 3] - y1                 # swig.py l.116-117, float64
    t = np.stack([x1, y1, w, h], axis=1).astype(np.float32)   # torch.tensor(list of floats)
    t[:, 2] += t[:, 0]                                        # boxes.py l.113-114, float32
    t[:, 3] += t[:, 1]
    rounded = np.array([round(v, 3) for v in t.astype(np.float64).ravel().tolist()]).reshape(-1, 4)
    return np.where(np.asarray(integer, dtype=bool)[:, None], array, rounded)


def _image_annotations(image, at: str) -> tuple[int, list, list]:
    """An image's img_id, box_annotations and hoi_annotations, checked for presence and type."""
    if not isinstance(image, dict):
        raise InputError(f"{at} must be an object, got {type(image).__name__}")
    for key in ("img_id", "box_annotations", "hoi_annotations"):
        if key not in image:
            raise InputError(f"{at} has no field {key!r}")
    img_id = _whole(image["img_id"], f"{at} field img_id", low=-2**62)
    box_annotations, hoi_annotations = image["box_annotations"], image["hoi_annotations"]
    for key, value in (("box_annotations", box_annotations), ("hoi_annotations", hoi_annotations)):
        if not isinstance(value, list):
            raise InputError(f"{at} field {key} must be a list, got {type(value).__name__}")
    return img_id, box_annotations, hoi_annotations


def _image_boxes(box_annotations: list, at: str, n_objects) -> tuple[list, list, bool]:
    """An image's boxes, their categories, and whether every coordinate is an integer."""
    boxes, category, ints = [], [], True
    for b, box in enumerate(box_annotations):
        field = f"{at} field box_annotations[{b}]"
        if not isinstance(box, dict) or "bbox" not in box or "category_id" not in box:
            raise InputError(f"{field} must be an object with bbox and category_id")
        bbox = _box(box["bbox"], f"{field}.bbox")
        ints = ints and all(isinstance(v, int) for v in bbox)
        boxes.append(bbox)
        category.append(_whole(box["category_id"], f"{field}.category_id", 0, n_objects))
    return boxes, category, ints


def _image_pairs(hoi_annotations: list, at: str, category: list, n_actions, interaction_of: dict) -> dict:
    """subject -> object -> set of actions of an image (swig.py l.73-81)."""
    pairs: dict[int, dict[int, set]] = {}
    for h, hoi in enumerate(hoi_annotations):
        field = f"{at} field hoi_annotations[{h}]"
        if not isinstance(hoi, dict) or not all(k in hoi for k in ("subject_id", "object_id", "action_id")):
            raise InputError(f"{field} must be an object with subject_id, object_id and action_id")
        subject = _whole(hoi["subject_id"], f"{field}.subject_id", 0, len(category))
        obj = _whole(hoi["object_id"], f"{field}.object_id", 0, len(category))
        action = _whole(hoi["action_id"], f"{field}.action_id", 0, n_actions)
        if category[subject] != 0:
            raise InputError(f"{field}.subject_id: box {subject} is category {category[subject]}, "
                             "not a person (0)")
        if (action, category[obj]) not in interaction_of:
            raise InputError(f"{field}: action {action} with object category {category[obj]} "
                             "is not a SWIG-HOI interaction")
        pairs.setdefault(subject, {}).setdefault(obj, set()).add(action)
    return pairs


@validate_params({"n_actions": OrNone(Whole(1)), "n_objects": OrNone(Whole(1))})
def read_ground_truth(path: str | Path, *, action_id, object_id, n_actions: int | None = None,
                      n_objects: int | None = None) -> GroundTruth:
    """The rows of SWIG-HOI's annotation JSON (module doc). ``action_id[k]`` / ``object_id[k]``
    are interaction ``k``'s action and object category; a pair that is no interaction, a
    subject that is not a person (category 0), an index outside ``box_annotations`` or an id
    outside ``n_actions`` / ``n_objects`` is refused, naming the image and the field."""
    where = str(path)
    data = read_json(path)
    interaction_of = {pair: k for k, pair in enumerate(zip(np.asarray(action_id).tolist(),
                                                           np.asarray(object_id).tolist()))}
    if not isinstance(data, list):
        raise InputError(f"{where}: must be a list of images (swig_test_1000.json), got {type(data).__name__}")
    images, interactions, subjects, objects_ = [], [], [], []
    all_boxes: list = []                        # every box of the kept images
    integer: list = []                          # and the int flag of each box's image
    for i, image in enumerate(data):
        at = f"{where}: image [{i}]"
        img_id, box_annotations, hoi_annotations = _image_annotations(image, at)
        if not box_annotations or not hoi_annotations:                       # swig.py l.59-61
            continue
        first = len(all_boxes)
        boxes, category, ints = _image_boxes(box_annotations, at, n_objects)
        all_boxes += boxes
        integer.extend([ints] * len(box_annotations))                        # swig.py l.115: one array per image
        pairs = _image_pairs(hoi_annotations, at, category, n_actions, interaction_of)
        for subject, objects in pairs.items():                               # l.84-105, l.719-733
            for obj, actions in objects.items():
                for action in sorted(actions):
                    images.append(img_id)
                    interactions.append(interaction_of[(action, category[obj])])
                    subjects.append(first + subject)
                    objects_.append(first + obj)
    converted = released_gt_boxes(all_boxes, integer)
    pair_boxes = np.concatenate([converted[subjects], converted[objects_]], axis=1) if subjects else np.zeros((0, 8))
    return GroundTruth(np.array(images, dtype=np.int64), np.array(interactions, dtype=np.int64), pair_boxes)


# ------------------------------------------------------------------------ predictions
def _rows_of(entry, where: str) -> np.ndarray:
    """One image's detections as an (n, 11) float64 array."""
    if not isinstance(entry, (list, tuple, np.ndarray)):
        raise InputError(f"{where} must be a list of detections, got {type(entry).__name__}")
    if len(entry) == 0:
        return np.zeros((0, N_FIELDS))
    try:
        rows = np.asarray(entry)
    except (ValueError, TypeError):     # ragged
        rows = None
    if rows is None or rows.ndim != 2 or rows.shape[1] != N_FIELDS or rows.dtype.kind not in "iuf":
        for d, det in enumerate(entry):
            if (not isinstance(det, (list, tuple, np.ndarray)) or len(det) != N_FIELDS
                    or not all(isinstance(v, numbers.Real) and not isinstance(v, bool) for v in det)):
                raise InputError(f"{where} detection [{d}] must be {N_FIELDS} numbers [interaction_id, person "
                                 f"x1 y1 x2 y2, object x1 y1 x2 y2, score, offset], got {_shown(det)}")
        raise InputError(f"{where} must be an array of shape (n, {N_FIELDS}) of numbers, got "
                         f"{getattr(rows, 'dtype', 'ragged')} {getattr(rows, 'shape', '')}")
    return rows.astype(np.float64)


def _shown(value) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."


def _detections(image: np.ndarray, rows: np.ndarray, where, n_interactions: int | None) -> SwigDetections:
    """Checks the columns of the stacked rows; ``where(k)`` names row k in messages."""
    hoi = rows[:, 0]
    bad = ~np.isfinite(hoi) | (hoi != np.floor(hoi)) | (hoi < 0)
    if n_interactions is not None:
        bad |= hoi >= n_interactions
    if bad.any():
        k = int(np.argmax(bad))
        bound = f"in 0..{n_interactions - 1}" if n_interactions is not None else ">= 0"
        raise InputError(f"{where(k)}: interaction id must be a whole number {bound}, got {float(rows[k, 0])!r}")
    boxes = rows[:, 1:9]
    infinite = np.isinf(boxes).any(axis=1)
    if infinite.any():
        k = int(np.argmax(infinite))
        raise InputError(f"{where(k)}: box coordinates must be finite (or NaN), got {boxes[k].tolist()}")
    return SwigDetections(image.astype(np.int64), hoi.astype(np.int64), np.ascontiguousarray(boxes),
                      np.ascontiguousarray(rows[:, 9]))


def detections_from_list(dets, where: str = "predictions", *, n_interactions: int | None = None) -> SwigDetections:
    """The list ``write_hoi_results`` pickles (image id → list of 11-number detections)."""
    if not isinstance(dets, (list, tuple)):
        raise InputError(f"{where}: must be a list indexed by image id (write_hoi_results), "
                         f"got {type(dets).__name__}")
    per_image = [_rows_of(entry, f"{where}: image {i}") for i, entry in enumerate(dets)]
    counts = np.array([len(r) for r in per_image], dtype=np.int64)
    image = np.repeat(np.arange(len(per_image)), counts)
    rows = np.concatenate(per_image) if per_image else np.zeros((0, N_FIELDS))
    first = np.cumsum(counts) - counts

    def at(k: int) -> str:
        i = int(image[k])
        return f"{where}: image {i} detection [{k - first[i]}]"
    return _detections(image, rows, at, n_interactions)


@validate_params({"n_interactions": OrNone(Whole(1))})
def read_swig_detections(path: str | Path, *, n_interactions: int | None = None) -> SwigDetections:
    """Predictions from the pickle ``write_hoi_results`` writes (``.pkl`` / ``.pickle``), JSON
    with the same list (``.json``) or NPZ (``.npz``: ``image_id`` (n,) and ``detections`` (n, 11),
    rows of one image in file order)."""
    suffix = Path(path).suffix.lower()
    if suffix == ".json":
        return detections_from_list(read_json(path), str(path), n_interactions=n_interactions)
    if suffix == ".npz":
        return _read_npz(path, n_interactions)
    if suffix in (".pkl", ".pickle"):
        return detections_from_list(load_restricted(path), str(path), n_interactions=n_interactions)
    raise InputError(f"{path}: unknown predictions format {suffix or '(no suffix)'!r}; give .pkl "
                     "(write_hoi_results), .json or .npz")


def _read_npz(path, n_interactions) -> SwigDetections:
    try:
        with np.load(io.BytesIO(read_bytes(path)), allow_pickle=False) as npz:
            arrays = {name: npz[name] for name in npz.files}
    except ValueError as exc:
        raise InputError(f"{path}: not a plain NPZ file ({exc})") from None
    except Exception as exc:
        raise InputError(f"{path}: not a readable NPZ file ({type(exc).__name__}: {exc})") from None
    for name in ("image_id", "detections"):
        if name not in arrays:
            raise InputError(f"{path}: no array {name!r} (an NPZ holds image_id (n,) and detections (n, {N_FIELDS}))")
    image, rows = arrays["image_id"], arrays["detections"]
    if rows.ndim != 2 or rows.shape[1] != N_FIELDS or rows.dtype.kind not in "iuf":
        raise InputError(f"{path}: array detections must be (n, {N_FIELDS}) numbers, got {rows.dtype} {rows.shape}")
    if image.shape != (len(rows),) or image.dtype.kind not in "iu":
        raise InputError(f"{path}: array image_id must be (n,) whole numbers for n = {len(rows)} detections, "
                         f"got {image.dtype} {image.shape}")
    if len(image) and image.min() < 0:
        raise InputError(f"{path}: array image_id[{int(np.argmax(image < 0))}] is negative")
    order = np.argsort(image, kind="stable")          # image by image, file order within
    return _detections(image[order], rows[order].astype(np.float64),
                       lambda k: f"{path}: detections[{int(order[k])}]", n_interactions)


def write_detections_npz(path: str | Path, detections: SwigDetections) -> None:
    """Writes ``detections`` as the NPZ :func:`read_swig_detections` reads (offset column 0)."""
    from metrics.core._jsonio import write_bytes_atomic
    rows = np.column_stack([detections.interaction, detections.boxes, detections.score,
                            np.zeros(len(detections))])
    buffer = io.BytesIO()
    np.savez(buffer, image_id=detections.image, detections=rows)
    write_bytes_atomic(path, buffer.getvalue())
