"""HOI detections (ground truth or predictions) as flat numpy arrays.

Two input formats, detected automatically by :func:`read_detections`:

**JSON Lines** (docs/contracts.md), one image per line::

    {"image": "HICO_test2015_00000001.jpg",
     "hois": [{"human_box": [x1, y1, x2, y2], "object_box": [x1, y1, x2, y2],
               "verb": "ride", "object": "bicycle", "score": 0.93}]}

``score`` is optional (needed for mAP-style scores); an image may have an empty ``hois``
list; an image may appear only once per file (a second line for it is an error).

**HICO-DET as used by QPIC/CDN** (a JSON list, or an object with an ``annotations`` list),
one record per image::

    {"file_name": "HICO_test2015_00000001.jpg",
     "annotations": [{"bbox": [x1, y1, x2, y2], "category_id": 1}, ...],
     "hoi_annotation": [{"subject_id": 0, "object_id": 1, "category_id": 77}, ...]}

``subject_id`` / ``object_id`` index the record's ``annotations``; the HOI's ``category_id``
is the HICO-DET verb id (1–117, in the order of ``metrics/datasets/hico_det/data/hico_verbs.csv``, which is
HICO-DET's ``verbs.txt`` order); a box's ``category_id`` is the COCO category id QPIC uses
(1–90 with gaps, :data:`COCO_OBJECT_IDS`, mapped to the 80 HICO-DET objects in order).
Predictions in the same style use ``predictions`` / ``hoi_prediction`` and carry a
``score`` per HOI.

Rows keep file order: the i-th HOI of the file is row i, and ``image`` holds the index of its
image in ``images`` (images in first-appearance order).
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from metrics.core._constraints import Boolean, validate_params
from metrics.core._errors import InputError
from metrics.core._inputs import parse_json, read_text, sniff_json
from metrics.core._types import Boxes, Ids, Numbers, Texts

# QPIC/CDN `_valid_obj_ids`: the COCO category id of each of the 80 HICO-DET objects, in order.
COCO_OBJECT_IDS = (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23,
                   24, 25, 27, 28, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 46, 47,
                   48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 61, 62, 63, 64, 65, 67, 70,
                   72, 73, 74, 75, 76, 77, 78, 79, 80, 81, 82, 84, 85, 86, 87, 88, 89, 90)


@dataclass
class Detections:
    """HOIs of a set of images as parallel arrays (one row per HOI, in file order).

    ``images`` : (m,) image names; ``image`` : (n,) int index into ``images``;
    ``human_box`` / ``object_box`` : (n, 4) float64 corners ``x1, y1, x2, y2``;
    ``verb`` / ``object`` : (n,) label strings as given; ``score`` : (n,) float64, NaN when
    absent; ``line`` : (n,) the 1-based line (JSON Lines) or record number (QPIC) of each row;
    ``source`` names the file in error messages.
    """

    images: np.ndarray
    image: np.ndarray
    human_box: np.ndarray
    object_box: np.ndarray
    verb: np.ndarray
    object: np.ndarray
    score: np.ndarray
    line: np.ndarray | None = None
    source: str = "<arrays>"
    format: str = "arrays"
    unit: str = field(default="line")

    def __post_init__(self):
        n = len(self.image)
        self.images = np.asarray(self.images, dtype=object)
        self.image = np.asarray(self.image, dtype=np.int64)
        self.human_box = np.asarray(self.human_box, dtype=np.float64).reshape(n, 4)
        self.object_box = np.asarray(self.object_box, dtype=np.float64).reshape(n, 4)
        self.verb = np.asarray(self.verb, dtype=object)
        self.object = np.asarray(self.object, dtype=object)
        self.score = (np.full(n, np.nan) if self.score is None
                      else np.asarray(self.score, dtype=np.float64))
        if self.line is None:
            self.line = np.arange(1, n + 1)
        for name in ("verb", "object", "score", "line"):
            if len(getattr(self, name)) != n:
                raise InputError(f"{self.source}: '{name}' has {len(getattr(self, name))} rows, expected {n}")
        if n and (self.image.min() < 0 or self.image.max() >= len(self.images)):
            raise InputError(f"{self.source}: image index outside 0..{len(self.images) - 1}")
        _check_boxes(self, "human_box")
        _check_boxes(self, "object_box")
        bad = ~np.isnan(self.score) & ~np.isfinite(self.score)
        if bad.any():
            raise InputError(self.where(np.flatnonzero(bad)[0], "score") + " is not a finite number")

    def __len__(self) -> int:
        return len(self.image)

    @property
    def has_scores(self) -> bool:
        """True when every HOI has a score (raises when only some have one)."""
        missing = np.isnan(self.score)
        if missing.all() and len(self):
            return False
        if missing.any():
            raise InputError(self.where(np.flatnonzero(missing)[0], "score")
                             + " is missing (give a score for every HOI or for none)")
        return True

    def where(self, row: int, field_name: str) -> str:
        """``file: line N: hois[k].field`` for error messages."""
        assert self.line is not None   # set by __post_init__
        return f"{self.source}: {self.unit} {int(self.line[row])}: {field_name}"

    @classmethod
    def from_arrays(cls, image: Ids, human_box: Boxes, object_box: Boxes, verb: Texts, object: Texts,
                    score: Numbers | None = None, *, source: str = "<arrays>") -> Detections:
        """Build from in-memory arrays; ``image`` may be names or any hashable ids.

        >>> d = Detections.from_arrays(["a.jpg"], [[0, 0, 10, 10]], [[5, 5, 20, 20]], ["ride"], ["horse"])
        >>> len(d), d.images.tolist()
        (1, ['a.jpg'])
        """
        import pandas as pd
        codes, names = pd.factorize(np.asarray(image, dtype="O"))
        scores = np.full(len(codes), np.nan) if score is None else np.asarray(score, dtype=np.float64)
        return cls(images=np.asarray(names, dtype="O"), image=codes,
                   human_box=np.asarray(human_box, dtype=np.float64), object_box=np.asarray(object_box, dtype=np.float64),
                   verb=np.asarray(verb, dtype="O"), object=np.asarray(object, dtype="O"), score=scores,
                   source=source)

    def with_images(self, images: np.ndarray) -> Detections:
        """Re-index ``image`` against a (super)set of image names."""
        import pandas as pd
        index = pd.Index(images)
        codes = index.get_indexer(self.images)
        if (codes < 0).any():
            raise InputError(f"{self.source}: image {self.images[codes < 0][0]!r} not in the image list")
        out = copy.copy(self)  # rows are validated already; only the image index changes
        out.images, out.image = np.asarray(images, dtype=object), codes[self.image]
        return out


def _check_boxes(det: Detections, name: str) -> None:
    box = getattr(det, name)
    bad = ~np.isfinite(box).all(axis=1)
    if bad.any():
        raise InputError(det.where(np.flatnonzero(bad)[0], name) + " has a value that is not a finite number")
    bad = (box[:, 2] < box[:, 0]) | (box[:, 3] < box[:, 1])
    if bad.any():
        k = np.flatnonzero(bad)[0]
        raise InputError(det.where(k, name) + f" {box[k].tolist()} has x2 < x1 or y2 < y1 "
                         "(boxes are [x1, y1, x2, y2])")


def _read_validating(path: Path) -> Detections:
    """The reference reader: Python's ``json`` line by line (or whole), every field checked."""
    text = read_text(path)
    stripped = text.lstrip()
    if not stripped:
        return _empty(str(path))
    if stripped[0] == "[":
        return _read_qpic(_load_whole(text, path), path)
    head = sniff_json(stripped.split("\n", 1)[0])
    if isinstance(head, dict) and "image" in head:
        return _read_jsonl(text, path)
    if isinstance(head, dict) and "file_name" in head:      # QPIC records, one per line
        return _read_qpic(_load_lines_as_list(text, path), path)
    if stripped[0] == "{":
        whole = sniff_json(text)
        if isinstance(whole, dict) and isinstance(whole.get("annotations"), list):
            return _read_qpic(whole["annotations"], path)
    return _read_jsonl(text, path)


def _empty(source: str) -> Detections:
    return Detections(images=np.zeros(0, dtype=object), image=np.zeros(0, dtype=np.int64),
                      human_box=np.zeros((0, 4)), object_box=np.zeros((0, 4)),
                      verb=np.zeros(0, dtype=object), object=np.zeros(0, dtype=object),
                      score=np.zeros(0), source=source)


def _load_whole(text: str, path: Path):
    return parse_json(text, str(path))


def _load_lines_as_list(text: str, path: Path) -> list:
    out = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if line.strip():
            out.append(parse_json(line, str(path), lineno))
    return out


def _read_jsonl(text: str, path: Path) -> Detections:
    names: list[str] = []
    seen: dict[str, int] = {}
    counts: list[int] = []
    linenos: list[int] = []
    hois: list = []
    for lineno, line in enumerate(text.split("\n"), 1):
        if not line.strip():
            continue
        rec = parse_json(line, str(path), lineno)
        if not isinstance(rec, dict):
            raise InputError(f"{path}: line {lineno}: expected a JSON object with 'image' and 'hois'")
        image = rec.get("image")
        if not isinstance(image, str) or not image:
            raise InputError(f"{path}: line {lineno}: image: missing or not a non-empty string")
        items = rec.get("hois")
        if not isinstance(items, list):
            raise InputError(f"{path}: line {lineno}: hois: missing or not a list")
        if image in seen:
            raise InputError(f"{path}: line {lineno}: image: {image!r} already given on line {seen[image]}")
        seen[image] = lineno
        names.append(image)
        counts.append(len(items))
        linenos.append(lineno)
        hois.extend(items)
    counts_a = np.asarray(counts, dtype=np.int64)
    image = np.repeat(np.arange(len(names)), counts_a)
    row_line = np.repeat(np.asarray(linenos, dtype=np.int64), counts_a)
    slot = np.arange(len(hois)) - np.repeat(np.cumsum(counts_a) - counts_a, counts_a)
    try:
        arrays = _columns(hois)
    except _Bad as bad:
        k = bad.row
        raise InputError(f"{path}: line {row_line[k]}: hois[{slot[k]}].{bad.field}: {bad.message}") from None
    det = Detections(images=np.asarray(names, dtype=object), image=image, line=row_line,
                     source=str(path), format="jsonl", **arrays)
    return det


class _Bad(Exception):
    def __init__(self, row: int, field_name: str, message: str):
        super().__init__(message)
        self.row, self.field, self.message = row, field_name, message


def _columns(hois: list) -> dict:
    """Columns of a list of HOI dicts; fast path, then a slow scan to name the first culprit."""
    n = len(hois)
    if n == 0:
        return dict(human_box=np.zeros((0, 4)), object_box=np.zeros((0, 4)),
                    verb=np.zeros(0, dtype=object), object=np.zeros(0, dtype=object), score=np.zeros(0))
    try:
        hb = np.array([h["human_box"] for h in hois])
        ob = np.array([h["object_box"] for h in hois])
        verb = [h["verb"] for h in hois]
        obj = [h["object"] for h in hois]
        score = [h.get("score") for h in hois]
        ok = (hb.dtype.kind in "if" and ob.dtype.kind in "if" and hb.shape == (n, 4)
              and ob.shape == (n, 4) and {type(v) for v in verb} == {str}
              and {type(v) for v in obj} == {str} and {type(s) for s in score} <= {float, int, type(None)}
              and all(verb) and all(obj))
    except (KeyError, TypeError, ValueError, AttributeError):
        ok = False
    if not ok:
        _scan(hois)
        raise _Bad(0, "?", "malformed HOI")  # pragma: no cover - _scan always finds the culprit
    score_a = np.array([np.nan if s is None else s for s in score], dtype=np.float64)
    return dict(human_box=hb.astype(np.float64), object_box=ob.astype(np.float64),
                verb=np.asarray(verb, dtype=object), object=np.asarray(obj, dtype=object), score=score_a)


def _is_number(x) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool)


def _scan(hois: list) -> None:
    for k, h in enumerate(hois):
        if not isinstance(h, dict):
            raise _Bad(k, "", "expected an object with human_box, object_box, verb, object")
        for name in ("human_box", "object_box"):
            box = h.get(name)
            if box is None:
                raise _Bad(k, name, "missing")
            if not isinstance(box, list) or len(box) != 4 or not all(_is_number(x) for x in box):
                raise _Bad(k, name, f"expected 4 numbers [x1, y1, x2, y2], got {json.dumps(box)[:60]}")
        for name in ("verb", "object"):
            value = h.get(name)
            if value is None:
                raise _Bad(k, name, "missing")
            if not isinstance(value, str) or not value.strip():
                raise _Bad(k, name, f"expected a non-empty string, got {json.dumps(value)[:60]}")
        s = h.get("score")
        if s is not None and not _is_number(s):
            raise _Bad(k, "score", f"expected a number, got {json.dumps(s)[:60]}")


# ---------------------------------------------------------------------------- QPIC / CDN
def _qpic_record(rec, where: str, r: int, seen: dict) -> tuple[str, str, list, str, list]:
    """A record's file_name, then its box list and HOI list with their keys (annotation or prediction)."""
    if not isinstance(rec, dict):
        raise InputError(f"{where}: expected an object with file_name, annotations, hoi_annotation")
    name = rec.get("file_name")
    if not isinstance(name, str) or not name:
        raise InputError(f"{where}: file_name: missing or not a string")
    if name in seen:
        raise InputError(f"{where}: file_name: {name!r} already given in record {seen[name]}")
    seen[name] = r
    box_key, hoi_key = (("predictions", "hoi_prediction") if "hoi_prediction" in rec
                        else ("annotations", "hoi_annotation"))
    boxes, hois = rec.get(box_key), rec.get(hoi_key)
    if not isinstance(boxes, list):
        raise InputError(f"{where}: {box_key}: missing or not a list")
    if not isinstance(hois, list):
        raise InputError(f"{where}: {hoi_key}: missing or not a list")
    for b, box in enumerate(boxes):
        if (not isinstance(box, dict) or not isinstance(box.get("bbox"), list) or len(box["bbox"]) != 4
                or not all(_is_number(x) for x in box["bbox"])):
            raise InputError(f"{where}: {box_key}[{b}].bbox: expected 4 numbers [x1, y1, x2, y2]")
    return name, box_key, boxes, hoi_key, hois


def _qpic_hoi(hoi, field_: str, where: str, box_key: str, boxes: list, n_verbs: int,
              coco_to_obj: dict) -> tuple[int, int, int, int, float | None]:
    """(subject index, object index, verb id, COCO object id, score or None) of one HOI, checked."""
    if not isinstance(hoi, dict):
        raise InputError(f"{field_}: expected an object")
    ids = []
    for key in ("subject_id", "object_id"):
        i = hoi.get(key)
        if not isinstance(i, int) or isinstance(i, bool) or not 0 <= i < len(boxes):
            raise InputError(f"{field_}.{key}: {i!r} is not an index into {box_key} (0..{len(boxes) - 1})")
        ids.append(i)
    v = hoi.get("category_id")
    if not isinstance(v, int) or isinstance(v, bool) or not 1 <= v <= n_verbs:
        raise InputError(f"{field_}.category_id: {v!r} is not a HICO-DET verb id (1..{n_verbs})")
    c = boxes[ids[1]].get("category_id")
    if not isinstance(c, int) or isinstance(c, bool) or c not in coco_to_obj:
        raise InputError(f"{where}: {box_key}[{ids[1]}].category_id: {c!r} is not a COCO id of a "
                         "HICO-DET object")
    s = hoi.get("score")
    if s is not None and not _is_number(s):
        raise InputError(f"{field_}.score: expected a number, got {json.dumps(s)[:60]}")
    return ids[0], ids[1], v, c, s


def _read_qpic(records, path: Path) -> Detections:
    """The QPIC/CDN HICO-DET annotation (or prediction) list as Detections."""
    from metrics.core._registry import get

    if not isinstance(records, list):
        raise InputError(f"{path}: expected a list of per-image records")
    vocab = get("hico-det").vocabulary()      # QPIC/CDN files hold HICO-DET ids
    verbs = np.asarray(vocab.verb_labels, dtype=object)
    objects = np.asarray(vocab.object_labels, dtype=object)
    coco_to_obj = {cid: i for i, cid in enumerate(COCO_OBJECT_IDS)}
    names: list[str] = []
    rows_img: list[int] = []
    rows_rec: list[int] = []
    hb: list[list[float]] = []
    ob: list[list[float]] = []
    vb: list[str] = []
    obj: list[str] = []
    sc: list[float] = []
    seen: dict[str, int] = {}
    for r, rec in enumerate(records, 1):
        where = f"{path}: record {r}"
        name, box_key, boxes, hoi_key, hois = _qpic_record(rec, where, r, seen)
        image_index = len(names)
        names.append(name)
        for k, hoi in enumerate(hois):
            subject, object_, v, c, s = _qpic_hoi(hoi, f"{where}: {hoi_key}[{k}]", where, box_key, boxes,
                                                  len(verbs), coco_to_obj)
            hb.append(boxes[subject]["bbox"])
            ob.append(boxes[object_]["bbox"])
            vb.append(verbs[v - 1])
            obj.append(objects[coco_to_obj[c]])
            sc.append(np.nan if s is None else float(s))
            rows_img.append(image_index)
            rows_rec.append(r)
    n = len(rows_img)
    return Detections(images=np.asarray(names, dtype=object), image=np.asarray(rows_img, dtype=np.int64),
                      human_box=np.asarray(hb, dtype=np.float64).reshape(n, 4),
                      object_box=np.asarray(ob, dtype=np.float64).reshape(n, 4),
                      verb=np.asarray(vb, dtype=object), object=np.asarray(obj, dtype=object),
                      score=np.asarray(sc, dtype=np.float64), line=np.asarray(rows_rec, dtype=np.int64),
                      source=str(path), format="qpic", unit="record")


@validate_params({"with_scores": Boolean()})
def write_jsonl(det: Detections, path: str | Path, *, with_scores: bool = True) -> Path:
    """Write detections as JSON Lines (one image per line, images in ``det.images`` order),
    atomically (:func:`metrics.core._jsonio.atomic_file`)."""
    from metrics.core._jsonio import atomic_file

    order = np.argsort(det.image, kind="stable")
    bounds = np.searchsorted(det.image[order], np.arange(len(det.images) + 1))
    hb, ob = det.human_box.tolist(), det.object_box.tolist()
    verb, obj, score = det.verb.tolist(), det.object.tolist(), det.score.tolist()
    with atomic_file(path) as fh:
        for i, name in enumerate(det.images):
            hois = []
            for k in order[bounds[i]:bounds[i + 1]]:
                h = {"human_box": hb[k], "object_box": ob[k], "verb": verb[k], "object": obj[k]}
                if with_scores and not np.isnan(score[k]):
                    h["score"] = score[k]
                hois.append(h)
            fh.write((json.dumps({"image": str(name), "hois": hois}) + "\n").encode("utf-8"))
    return Path(path)
