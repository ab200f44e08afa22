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
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from metrics.core._errors import InputError
from metrics.core._inputs import parse_json, read_bytes, read_text, sniff_json

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
        return f"{self.source}: {self.unit} {int(self.line[row])}: {field_name}"

    @classmethod
    def from_arrays(cls, image, human_box, object_box, verb, object, score=None, *,
                    source="<arrays>") -> "Detections":
        """Build from in-memory arrays; ``image`` may be names or any hashable ids.

        >>> d = Detections.from_arrays(["a.jpg"], [[0, 0, 10, 10]], [[5, 5, 20, 20]], ["ride"], ["horse"])
        >>> len(d), d.images.tolist()
        (1, ['a.jpg'])
        """
        import pandas as pd
        codes, names = pd.factorize(np.asarray(image, dtype="O"))
        return cls(images=np.asarray(names, dtype="O"), image=codes, human_box=human_box,
                   object_box=object_box, verb=verb, object=object, score=score, source=source)

    def with_images(self, images: np.ndarray) -> "Detections":
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


# ---------------------------------------------------------------------------- reading
def read_detections(path: str | Path) -> Detections:
    """Read HOI detections from JSON Lines or the QPIC/CDN HICO-DET JSON (auto-detected).

    Every problem raises :class:`InputError` with one line naming the file, the line (or
    record) and the field. Well-formed files are parsed by pyarrow's JSON reader straight into
    columns (:func:`_read_fast`); anything that reader cannot vouch for — a parse error, a
    missing or mistyped field, duplicate keys, blank lines, a duplicate image — goes through
    the validating reader (:func:`_read_validating`), which gives today's result or names the
    culprit.
    """
    path = Path(path)
    data = read_bytes(path)
    if data[:1] == b"\x80" and data[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05"):
        raise InputError(f"{path}: a Python pickle, not HOI detections; {PICKLE_CONVERTERS}")
    fast = _read_fast(data, path)
    return fast if fast is not None else _read_validating(path)


PICKLE_CONVERTERS = ("convert V-COCO detections with 'python -m metrics vcoco --pred FILE --hois-out DIR' or "
                     "SWIG-HOI's with 'python -m metrics swig --pred FILE --hois-out DIR', then score DIR/pred.jsonl")


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
    line = np.repeat(np.asarray(linenos, dtype=np.int64), counts_a)
    slot = np.arange(len(hois)) - np.repeat(np.cumsum(counts_a) - counts_a, counts_a)
    try:
        arrays = _columns(hois)
    except _Bad as bad:
        k = bad.row
        raise InputError(f"{path}: line {line[k]}: hois[{slot[k]}].{bad.field}: {bad.message}") from None
    det = Detections(images=np.asarray(names, dtype=object), image=image, line=line,
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
              coco_to_obj: dict) -> tuple[int, int, int, int, object]:
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
    names, rows_img, rows_rec = [], [], []
    hb, ob, vb, obj, sc = [], [], [], [], []
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


# ---------------------------------------------------------------------------- fast path
_LONG_INTEGER = re.compile(rb"(?<![\w.+-])-?[0-9]{19,}(?![\w.])")   # an integer literal of 19+ digits


_INTEGER_MINUS_ZERO = re.compile(rb"-0(?![0-9.eE])")


class _Fallback(Exception):
    """The fast reader cannot vouch for a file: the validating reader takes over."""


def _require(condition) -> None:
    if not condition:
        raise _Fallback


def _read_fast(data: bytes, path: Path) -> Detections | None:
    """Detections parsed by pyarrow's JSON reader straight into columns, or None when the file
    needs the validating reader (:func:`_read_validating`).

    It takes JSON Lines and the QPIC/CDN records (a JSON list, or one record per line) when
    the file is UTF-8, every line holds exactly one JSON object (``}`` + line break + ``{``
    between lines, no blank line; LF or CRLF endings), and every field has the type and range
    the validating reader accepts; everything else returns None. Fields the readers do not use
    are parsed too (pyarrow infers their types), as the validating reader applies its policy
    to the whole file: a repeated key anywhere is a pyarrow error, refused numbers are looked
    for in every column (:func:`_require_numbers_as_json_reads_them`), and unknown fields
    pyarrow cannot type (a list of numbers and strings) take the validating reader. Both
    readers parse numbers to the same, correctly rounded doubles.
    """
    if data[:1] not in (b"{", b"["):
        return None
    if not data.isascii():
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
    import pyarrow as pa

    try:
        if data[:1] == b"[":
            return _fast_qpic(_parse_qpic_list(data), data, path)
        end = data.find(b"\n")
        head = json.loads(data[:end if end >= 0 else len(data)])
        if not isinstance(head, dict):
            return None
        # every line must be one {...} before pyarrow sees the file: pyarrow 26 crashes on
        # some other lines (a first line "null")
        n_lines = _object_lines(data)
        if "image" in head:
            table = _parse_lines(data, _jsonl_schema())
            _require(table.num_rows == n_lines)
            return _fast_jsonl(table, data, path)
        if "file_name" in head:
            table = _parse_lines(data, _qpic_record_schema())
            _require(table.num_rows == n_lines)
            return _fast_qpic(table, data, path)
    except (_Fallback, pa.ArrowException, ValueError, RecursionError):   # the validating reader says why
        return None
    return None


def _require_no_integer_minus_zero(data: bytes, *columns) -> None:
    """``-0`` is the integer 0 to Python's json but -0.0 to pyarrow (``-0.0`` is -0.0 to both):
    a file with a negative zero parsed from such a literal takes the validating reader."""
    if any(np.signbit(v[v == 0]).any() for v in columns):
        _require(_INTEGER_MINUS_ZERO.search(data) is None)


def _object_lines(data: bytes) -> int:
    """Number of lines when every line is one ``{...}``: ``}`` before and ``{`` after each line
    break, LF or CRLF (then no other CR), and maybe one line break at the end."""
    sep = b"\r\n" if b"\r" in data else b"\n"
    end = len(data) - len(sep) if data.endswith(sep) else len(data)
    body = np.frombuffer(data, np.uint8, count=end)
    breaks = np.flatnonzero(body == ord("\n"))
    starts = breaks - (len(sep) - 1)
    _require(data[end - 1:end] == b"}" and (body[starts - 1] == ord("}")).all()
             and (body[breaks + 1] == ord("{")).all())
    if sep == b"\r\n":
        _require((body[starts] == ord("\r")).all() and data.count(b"\r") == len(breaks) + (end < len(data)))
    return len(breaks) + 1


def _parse_lines(data: bytes, schema):
    import pyarrow as pa
    import pyarrow.json as pj

    return pj.read_json(pa.BufferReader(data), read_options=pj.ReadOptions(block_size=1 << 22),
                        parse_options=pj.ParseOptions(explicit_schema=schema,
                                                      unexpected_field_behavior="infer"))


def _parse_qpic_list(data: bytes):
    """A QPIC list as a table, one row per record.

    A list written record after record on one line (``json.dumps``: ``}, {"file_name"`` or
    ``},{"file_name"`` between records) is cut there into JSON Lines and parsed in parallel.
    That is exact: such a cut inside a record leaves a line with an unclosed bracket, which
    pyarrow refuses, or merges lines, and the row count must equal the number of lines; a
    separator left uncut leaves two records on a line with a comma between them, which
    pyarrow refuses too. Any other layout (indented, another first key) is parsed as one
    JSON value in one thread (:func:`_parse_wrapped`).
    """
    import pyarrow as pa

    body = data.strip()
    _require(body[:1] == b"[" and body[-1:] == b"]")
    body = body[1:-1].strip()
    # every cut line starts with "{" (pyarrow 26 crashes on a first line "null")
    if body[:1] == b"{" and b"\n" not in body and b"\r" not in body:
        separator = b'}, {"file_name"' if b'}, {"file_name"' in body else b'},{"file_name"'
        lines = body.replace(separator, b'}\n{"file_name"')
        try:
            table = _parse_lines(lines, _qpic_record_schema())
            _require(table.num_rows == lines.count(b"\n") + 1)
            return table
        except (_Fallback, pa.ArrowException):
            pass  # the cut did not give one record per line: parse the list as one value below
    return _parse_wrapped(data, _qpic_type())


def _parse_wrapped(data: bytes, record_type):
    """A whole-file JSON list of records (the QPIC list) as a table, one row per record."""
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    wrapped = b'{"r":' + data + b"\n}"
    table = pj.read_json(pa.BufferReader(wrapped),
                         read_options=pj.ReadOptions(block_size=len(wrapped) + 1),
                         parse_options=pj.ParseOptions(
                             explicit_schema=pa.schema([("r", pa.list_(record_type))]),
                             newlines_in_values=True, unexpected_field_behavior="infer"))
    records = table.column("r")
    _require(table.num_rows == 1 and records.null_count == 0)
    return pa.Table.from_struct_array(pc.list_flatten(records))


def _jsonl_schema():
    import pyarrow as pa

    box = pa.list_(pa.float64())
    hoi = pa.struct([("human_box", box), ("object_box", box), ("verb", pa.string()),
                     ("object", pa.string()), ("score", pa.float64())])
    return pa.schema([("image", pa.string()), ("hois", pa.list_(hoi))])


def _qpic_record_schema():
    import pyarrow as pa

    return pa.schema(list(_qpic_type()))


def _qpic_type():
    """The struct type of one QPIC/CDN record (both the annotation and the prediction keys)."""
    import pyarrow as pa

    boxes = pa.list_(pa.struct([("bbox", pa.list_(pa.float64())), ("category_id", pa.int64())]))
    hois = pa.list_(pa.struct([("subject_id", pa.int64()), ("object_id", pa.int64()),
                               ("category_id", pa.int64()), ("score", pa.float64())]))
    return pa.struct([("file_name", pa.string()), ("annotations", boxes), ("hoi_annotation", hois),
                      ("predictions", boxes), ("hoi_prediction", hois)])


def _strings(column) -> np.ndarray:
    """A pyarrow string column without nulls or empty strings as an object array in which
    equal texts are one Python object (decoded once per distinct text)."""
    import pyarrow.compute as pc

    _require(column.null_count == 0)
    if not len(column):
        return np.zeros(0, dtype=object)
    _require(pc.min(pc.binary_length(column)).as_py() > 0)
    encoded = column.dictionary_encode().unify_dictionaries()
    texts = np.asarray(encoded.chunk(0).dictionary.to_pylist(), dtype=object)
    codes = np.concatenate([chunk.indices.to_numpy(zero_copy_only=False) for chunk in encoded.chunks])
    return texts[codes]


def _lengths(column) -> np.ndarray:
    """Lengths of a list column without nulls."""
    import pyarrow.compute as pc

    _require(column.null_count == 0)
    return pc.list_value_length(column).to_numpy(zero_copy_only=False).astype(np.int64)


def _box_values(column) -> np.ndarray:
    """A list column of boxes as an (n, 4) float64 array (every box 4 numbers, no null)."""
    import pyarrow.compute as pc

    _require((_lengths(column) == 4).all())
    values = pc.list_flatten(column)
    _require(values.null_count == 0)
    return values.to_numpy(zero_copy_only=False).astype(np.float64).reshape(-1, 4)


def _unique_names(column) -> list:
    names = _strings(column).tolist()
    _require(len(set(names)) == len(names))
    return names


def _require_numbers_as_json_reads_them(table, data: bytes) -> None:
    """Every number of the file, in the fields the readers use and in the unknown ones pyarrow
    inferred, is one the validating reader takes for the same double, or the file goes to it.

    It refuses NaN and infinities (``NaN``, ``Infinity``, also pyarrow's ``Inf``, or a number
    beyond the doubles) and integers of more than 300 digits, anywhere in the file, naming the
    field; and Python's ``json`` keeps an integer beyond int64 exact, which numpy may then
    refuse as a box: a value that large (2**63 or more) with such an integer literal in the
    file takes the validating reader.
    """
    import pyarrow.compute as pc

    for values in _float_leaves(table):
        if not len(values) or values.null_count == len(values):
            continue
        _require(not pc.any(pc.is_nan(values)).as_py() and not pc.any(pc.is_inf(values)).as_py())
        if pc.max(pc.abs(values)).as_py() >= 2.0 ** 63:
            _require(_LONG_INTEGER.search(data) is None)


def _float_leaves(data):
    """The floating-point arrays inside a table or array (through lists and structs)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    if isinstance(data, pa.Table):
        for column in data.columns:
            yield from _float_leaves(column)
    elif pa.types.is_floating(data.type):
        yield data
    elif pa.types.is_list(data.type):
        yield from _float_leaves(pc.list_flatten(data))
    elif pa.types.is_struct(data.type):
        for child in data.type:
            yield from _float_leaves(pc.struct_field(data, child.name))


def _fast_jsonl(table, data: bytes, path: Path) -> Detections:
    """JSON Lines columns (one row per line) as Detections, every check of :func:`_read_jsonl`
    and :func:`_columns` passed or :class:`_Fallback` raised."""
    import pyarrow.compute as pc

    names = _unique_names(table.column("image"))
    counts = _lengths(table.column("hois"))
    hois = pc.list_flatten(table.column("hois"))
    _require(hois.null_count == 0)
    field = lambda name: pc.struct_field(hois, name)  # noqa: E731
    human, obj = _box_values(field("human_box")), _box_values(field("object_box"))
    score = field("score").to_numpy(zero_copy_only=False).astype(np.float64)
    _require_numbers_as_json_reads_them(table, data)
    _require_no_integer_minus_zero(data, human, obj, score)
    rows = np.arange(len(names))
    return Detections(images=np.asarray(names, dtype=object), image=np.repeat(rows, counts),
                      line=np.repeat(rows + 1, counts), human_box=human, object_box=obj,
                      verb=_strings(field("verb")), object=_strings(field("object")), score=score,
                      source=str(path), format="jsonl")


def _fast_qpic(table, data: bytes, path: Path) -> Detections:
    """QPIC/CDN records (one row per record) as Detections, every check of :func:`_read_qpic`
    passed or :class:`_Fallback` raised."""
    import pyarrow.compute as pc

    from metrics.core._registry import get

    names = _unique_names(table.column("file_name"))
    marked = table.column("hoi_prediction")
    if marked.null_count == 0 and len(marked):
        box_key, hoi_key = "predictions", "hoi_prediction"
    else:  # no record may name hoi_prediction (not even with an escaped key)
        _require(marked.null_count == len(marked) and b"hoi_prediction" not in data and b"\\u" not in data)
        box_key, hoi_key = "annotations", "hoi_annotation"
    n_boxes = _lengths(table.column(box_key))
    n_hois = _lengths(table.column(hoi_key))
    boxes = pc.list_flatten(table.column(box_key))
    hois = pc.list_flatten(table.column(hoi_key))
    _require(boxes.null_count == 0 and hois.null_count == 0)
    bbox = _box_values(pc.struct_field(boxes, "bbox"))
    box_category = pc.struct_field(boxes, "category_id").to_numpy(zero_copy_only=False)
    ids = {}
    for key in ("subject_id", "object_id", "category_id"):
        column = pc.struct_field(hois, key)
        _require(column.null_count == 0)
        ids[key] = column.to_numpy(zero_copy_only=False).astype(np.int64)
    record = np.repeat(np.arange(len(names)), n_hois)
    limit = n_boxes[record]
    for key in ("subject_id", "object_id"):
        _require(((ids[key] >= 0) & (ids[key] < limit)).all())
    vocab = get("hico-det").vocabulary()      # QPIC/CDN files hold HICO-DET ids
    verbs = np.asarray(vocab.verb_labels, dtype=object)
    objects = np.asarray(vocab.object_labels, dtype=object)
    _require(((ids["category_id"] >= 1) & (ids["category_id"] <= len(verbs))).all())
    first_box = np.cumsum(n_boxes) - n_boxes
    subject_row, object_row = first_box[record] + ids["subject_id"], first_box[record] + ids["object_id"]
    object_of_coco = np.full(max(COCO_OBJECT_IDS) + 1, -1, dtype=np.int64)
    object_of_coco[list(COCO_OBJECT_IDS)] = np.arange(len(COCO_OBJECT_IDS))
    coco = box_category[object_row] if len(object_row) else np.zeros(0)
    _require(not np.isnan(np.asarray(coco, dtype=np.float64)).any())  # a null category_id
    coco = np.asarray(coco, dtype=np.int64)
    _require(((coco >= 0) & (coco < len(object_of_coco))).all())
    object_index = object_of_coco[coco]
    _require((object_index >= 0).all())
    score = pc.struct_field(hois, "score").to_numpy(zero_copy_only=False).astype(np.float64)
    _require_numbers_as_json_reads_them(table, data)
    _require_no_integer_minus_zero(data, bbox, score)
    return Detections(images=np.asarray(names, dtype=object), image=record, line=record + 1,
                      human_box=bbox[subject_row], object_box=bbox[object_row],
                      verb=verbs[ids["category_id"] - 1], object=objects[object_index], score=score,
                      source=str(path), format="qpic", unit="record")
