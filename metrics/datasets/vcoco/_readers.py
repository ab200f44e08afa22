"""Readers for V-COCO's official files, as ``vsrl_eval.py`` (``s-gupta/v-coco``) reads them.

- ``vcoco_{train,val,test,trainval}.json`` (:func:`read_vcoco`): a list of 26 actions, each with
  ``action_name``, ``role_name`` (``agent`` first, then up to two of ``obj`` / ``instr``) and one
  row per annotated person: ``image_id``, ``ann_id`` (a COCO annotation id), ``label`` (1 = does
  the action) and ``role_object_id``, flattened role-major (``K`` roles: ``K`` blocks of one entry
  per row; block 0 repeats ``ann_id``; 0 = no object for that role) — ``_load_vcoco``,
  ``vsrl_eval.py`` l.426–435, reshapes it to rows × roles.
- COCO's ``instances_*.json`` (:func:`read_coco`): only the fields the evaluation reads —
  ``images`` (``id``, ``width``, ``height``), ``annotations`` (``id``, ``image_id``,
  ``category_id``, ``bbox`` as x, y, w, h, ``area``, optional ``ignore``) and ``categories``
  (``id``, ``name``; the first one listed is the person class, l.55–64). The file is parsed with
  the standard library's C parser and no per-value hooks (COCO's full instances file is ~0.5 GB).
- the split's ``.ids`` file (:func:`read_ids`): one COCO image id per line (``np.loadtxt``, l.38).
- detections (:func:`read_vcoco_detections`): the list of dicts ``vsrl_eval.py`` unpickles (l.199, 331),
  one per detected person: ``image_id``, ``person_box`` (x1, y1, x2, y2), ``<action>_agent`` (the
  agent score) and ``<action>_<role>`` (5 numbers: the role object's box and the triplet's
  score). Read from a pickle (restricted: :mod:`metrics.core._pickles`), or from JSON with the same
  list (``NaN`` / ``null`` allowed), or from NPZ with one array per key (``image_id`` (n,),
  ``person_box`` (n, 4), agent keys (n,), role keys (n, 5)). A detection without a key, a ``None``
  / ``null`` value, or an NPZ without the key's array: no prediction for that key (NaN, which
  ``vsrl_eval.py`` drops); ``image_id`` and ``person_box`` are required.

Every refusal is a one-line :class:`~metrics.core._errors.InputError` naming the file and field.
"""

from __future__ import annotations

import io
import itertools
import math
import operator
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from metrics.core._errors import InputError
from metrics.core._inputs import check_readable, decode, parse_json, read_bytes

ROLE_WIDTH = 5          # a role value: x1, y1, x2, y2, score


# ------------------------------------------------------------------------------------ JSON
def _json(data: bytes, where: str, *, constants: bool):
    """JSON text (UTF-8, BOM allowed) under the package's policy (no repeated keys); the
    numbers of the fields read are checked by their readers, so no per-number hook slows a
    0.5 GB COCO file; ``NaN`` / ``Infinity`` only with ``constants``."""
    return parse_json(decode(data, where), where, per_number=False, constants=constants)


def _ints(value, where: str) -> np.ndarray:
    """A JSON list of whole numbers as int64."""
    if not isinstance(value, list):
        raise InputError(f"{where}: must be a list of whole numbers, got {type(value).__name__}")
    bad = next((k for k, v in enumerate(value) if type(v) is not int or not -2 ** 63 <= v < 2 ** 63), None)
    if bad is None:
        return np.asarray(value, dtype=np.int64).reshape(len(value))
    raise InputError(f"{where}[{bad}]: must be a whole number, got {value[bad]!r}")


# --------------------------------------------------------------------------------- V-COCO
@dataclass(frozen=True)
class VcocoAction:
    """One action of a ``vcoco_*.json`` file (one row per annotated person)."""

    name: str
    roles: tuple[str, ...]               # ("agent", "obj"), ("agent",), ("agent", "instr", "obj")
    image_id: np.ndarray                 # (n,) int64
    ann_id: np.ndarray                   # (n,) int64, the person's COCO annotation id
    label: np.ndarray                    # (n,) int64, 1 = does the action
    role_object_id: np.ndarray           # (n, len(roles)) int64; column 0 = ann_id; 0 = no object


def read_vcoco(path: str | Path) -> list[VcocoAction]:
    """The actions of a ``vcoco_*.json`` file, checked field by field.

    Refused (where ``vsrl_eval.py`` would stop with an exception or an assertion): a role
    list not starting with ``agent`` or with more than two object roles (its arrays hold two,
    l.90, 173), arrays of unequal length, ``role_object_id`` whose length is not roles × rows
    or whose block 0 does not repeat ``ann_id`` (l.160), a person labelled twice for one action
    (l.158), the same action twice, and actions whose rows are not the first action's (l.147
    reads "annotated" from the first action)."""
    return vcoco_actions(_json(read_bytes(path), str(path), constants=False), str(path))


def _action_roles(item: dict, at: str) -> list:
    """role_name: 'agent' then at most two distinct roles."""
    roles = item.get("role_name")
    if (not isinstance(roles, list) or not roles or roles[0] != "agent"
            or not all(isinstance(r, str) and r for r in roles)):
        raise InputError(f"{at}: role_name: must be a list of role names starting with 'agent', got {roles!r}")
    if len(roles) > 3 or len(set(roles)) != len(roles):
        raise InputError(f"{at}: role_name: at most two distinct roles besides 'agent' "
                         f"(vsrl_eval.py holds two), got {roles!r}")
    return roles


def _action_arrays(item: dict, k: int, at: str) -> tuple[dict, np.ndarray]:
    """The action's integer arrays, of one length n, and role_object_id as an (n, k) table."""
    arrays = {}
    for key in ("image_id", "ann_id", "label", "role_object_id"):
        if key not in item:
            raise InputError(f"{at}: {key}: missing")
        arrays[key] = _ints(item[key], f"{at}: {key}")
    n = len(arrays["ann_id"])
    for key in ("image_id", "label"):
        if len(arrays[key]) != n:
            raise InputError(f"{at}: {key}: {len(arrays[key])} entries, but ann_id has {n}")
    if len(arrays["role_object_id"]) != k * n:
        raise InputError(f"{at}: role_object_id: {len(arrays['role_object_id'])} entries, expected "
                         f"{k} roles × {n} rows = {k * n}")
    role_object_id = arrays["role_object_id"].reshape(k, n).T.copy()     # l.431-432
    if not np.array_equal(role_object_id[:, 0], arrays["ann_id"]):
        r = int(np.flatnonzero(role_object_id[:, 0] != arrays["ann_id"])[0])
        raise InputError(f"{at}: role_object_id: block 0 must repeat ann_id; row {r} has "
                         f"{role_object_id[r, 0]}, ann_id {arrays['ann_id'][r]}")
    return arrays, role_object_id


def _vcoco_action(item, a: int, where: str, actions: list) -> VcocoAction:
    """Action ``a`` of the list, checked against the ``actions`` read before it."""
    at = f"{where}: action {a}"
    if not isinstance(item, dict):
        raise InputError(f"{at}: expected an object, got {type(item).__name__}")
    name = item.get("action_name")
    if not isinstance(name, str) or not name:
        raise InputError(f"{at}: action_name: missing or not a non-empty string")
    at = f"{where}: action {a} ({name})"
    roles = _action_roles(item, at)
    arrays, role_object_id = _action_arrays(item, len(roles), at)
    positive = np.sort(arrays["ann_id"][arrays["label"] == 1])
    twice = positive[1:][positive[1:] == positive[:-1]]
    if len(twice):
        raise InputError(f"{at}: label: person (ann_id) {twice[0]} is labelled 1 on two rows "
                         "(vsrl_eval.py asserts one)")
    if any(name == b.name for b in actions):
        raise InputError(f"{at}: action_name: {name!r} given twice")
    return VcocoAction(name, tuple(roles), arrays["image_id"], arrays["ann_id"], arrays["label"],
                       role_object_id)


def vcoco_actions(data, where: str = "V-COCO annotations") -> list[VcocoAction]:
    """:func:`read_vcoco` on the parsed JSON list (``where`` names it in messages)."""
    if not isinstance(data, list) or not data:
        raise InputError(f"{where}: expected a non-empty JSON list of actions (action_name, role_name, "
                         "image_id, ann_id, label, role_object_id)")
    actions: list[VcocoAction] = []
    for a, item in enumerate(data):
        actions.append(_vcoco_action(item, a, where, actions))
    first = actions[0]
    for action in actions[1:]:
        if not (np.array_equal(action.ann_id, first.ann_id) and np.array_equal(action.image_id, first.image_id)):
            raise InputError(f"{where}: action {action.name}: its rows (image_id, ann_id) are not those of "
                             f"action {first.name} (every action lists the same annotated people)")
    return actions


# ----------------------------------------------------------------------------------- COCO
@dataclass(frozen=True)
class CocoInstances:
    """The fields of a COCO ``instances_*.json`` file the evaluation reads (file order kept)."""

    image_id: np.ndarray                 # (m,) int64
    width: np.ndarray                    # (m,) float64
    height: np.ndarray                   # (m,) float64
    ann_id: np.ndarray                   # (a,) int64 — only annotations of the images asked for
    ann_image_id: np.ndarray             # (a,) int64
    category_id: np.ndarray              # (a,) int64
    bbox: np.ndarray                     # (a, 4) float64: x, y, w, h
    area: np.ndarray                     # (a,) float64
    ignore: np.ndarray                   # (a,) bool: "ignore" == 1
    category_ids: np.ndarray             # (c,) int64, file order (the first is the person class)
    category_names: tuple[str, ...]
    source: str = ""


def _number(value) -> bool:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(value)
    except OverflowError:           # an integer too large for a float
        return False


def _records(data: dict, key: str, where: str) -> list:
    items = data.get(key)
    if not isinstance(items, list):
        raise InputError(f"{where}: {key}: missing or not a list")
    return items


def _field(items: list, key: str, where: str, list_name: str, check=_number, index=None) -> list:
    """``[item[key] for item in items]``, refusing the first item without it or with a bad value
    (named by its place in the file: ``index[k]`` when ``items`` is a selection)."""
    def name(k):
        return f"{list_name}[{k if index is None else int(index[k])}]"
    try:
        values = [item[key] for item in items]
    except (KeyError, TypeError):
        k = next(k for k, item in enumerate(items) if not isinstance(item, dict) or key not in item)
        raise InputError(f"{where}: {name(k)}: no field {key!r}") from None
    if check is not None and not all(map(check, values)):
        k = next(k for k, v in enumerate(values) if not check(v))
        raise InputError(f"{where}: field {name(k)}.{key}: not {_WHAT.get(check, 'valid')}: "
                         f"{str(values[k])[:60]}")
    return values


def _whole(value) -> bool:
    return type(value) is int or (isinstance(value, float) and value.is_integer())


def _box(value) -> bool:
    return isinstance(value, list) and len(value) == 4 and all(_number(v) for v in value)


def _name(value) -> bool:
    return isinstance(value, str)


#: What each field check accepts, for the error naming a value it refuses.
_WHAT = {_number: "a finite number (not NaN, infinite or too large)", _whole: "a whole number",
         _box: "four finite numbers [x, y, w, h] (none NaN, infinite or too large)", _name: "a string"}


def read_coco(path: str | Path, image_ids=None) -> CocoInstances:
    """COCO instances; with ``image_ids``, only the annotations of those images are kept (and
    checked). Duplicate image or annotation ids are refused (``pycocotools`` would keep the last)."""
    return coco_instances(_json(read_bytes(path), str(path), constants=False), str(path), image_ids)


def coco_instances(data, where: str = "COCO instances", image_ids=None) -> CocoInstances:
    """:func:`read_coco` on the parsed JSON object (``where`` names it in messages)."""
    if not isinstance(data, dict):
        raise InputError(f"{where}: expected a JSON object with images, annotations and categories")
    images = _records(data, "images", where)
    annotations = _records(data, "annotations", where)
    categories = _records(data, "categories", where)
    image_id = np.asarray(_field(images, "id", where, "images", _whole), dtype=np.int64)
    width = np.asarray(_field(images, "width", where, "images"), dtype=np.float64)
    height = np.asarray(_field(images, "height", where, "images"), dtype=np.float64)
    if len(np.unique(image_id)) != len(image_id):
        s = np.sort(image_id)
        raise InputError(f"{where}: images: id {s[1:][s[1:] == s[:-1]][0]} appears twice")
    ann_image = np.asarray(_field(annotations, "image_id", where, "annotations", _whole), dtype=np.int64)
    keep = (np.flatnonzero(np.isin(ann_image, np.asarray(image_ids, dtype=np.int64)))
            if image_ids is not None else np.arange(len(annotations)))
    anns = [annotations[k] for k in keep]

    def column(key, check=_number):
        return _field(anns, key, where, "annotations", check, index=keep)

    ann_id = np.asarray(column("id", _whole), dtype=np.int64)
    category_id = np.asarray(column("category_id", _whole), dtype=np.int64)
    bbox = np.asarray(column("bbox", _box), dtype=np.float64).reshape(len(anns), 4)
    area = np.asarray(column("area"), dtype=np.float64)
    ignore = np.asarray([a.get("ignore") == 1 for a in anns], dtype=bool)       # l.102
    all_ids = np.asarray(_field(annotations, "id", where, "annotations", None) if image_ids is not None
                         else ann_id)
    if all_ids.dtype.kind in "iu" and len(np.unique(all_ids)) != len(all_ids):
        s = np.sort(all_ids)
        raise InputError(f"{where}: annotations: id {s[1:][s[1:] == s[:-1]][0]} appears twice")
    category_ids = np.asarray(_field(categories, "id", where, "categories", _whole), dtype=np.int64)
    names = _field(categories, "name", where, "categories", _name)
    if not len(category_ids):
        raise InputError(f"{where}: categories: empty (the first category is V-COCO's person class)")
    return CocoInstances(image_id, width, height, ann_id, ann_image[keep], category_id, bbox, area, ignore,
                         category_ids, tuple(names), where)


# ------------------------------------------------------------------------------------ ids
def read_ids(path: str | Path) -> np.ndarray:
    """The image ids of a split file (one per line; ``np.loadtxt`` reads them as numbers)."""
    where = str(path)
    text = decode(read_bytes(path), where)
    ids = []
    for line_no, line in enumerate(text.splitlines(), 1):
        word = line.strip()
        if not word:
            continue
        try:
            value = float(word)
        except ValueError:
            value = math.nan
        if not (math.isfinite(value) and value.is_integer() and abs(value) < 2 ** 53):
            raise InputError(f"{where}: line {line_no}: not an image id: {word[:40]!r}")
        ids.append(int(value))
    if not ids:
        raise InputError(f"{where}: no image ids")
    return np.asarray(ids, dtype=np.int64)


# ----------------------------------------------------------------------------- detections
@dataclass
class VcocoDetections:
    """Detections as columns (row k = the file's k-th detection). ``scores[key]`` is (n,) for
    an agent key and (n, 5) for a role key, float32 as ``vsrl_eval.py`` stores them (l.176-184);
    NaN = no prediction."""

    image_id: np.ndarray                 # (n,) int64
    person_box: np.ndarray               # (n, 4) float32
    scores: dict[str, np.ndarray]
    missing: dict[str, int] = field(default_factory=dict)   # key -> detections without it
    source: str = ""
    format: str = ""

    def __len__(self) -> int:
        return len(self.image_id)


def _numbers(value) -> np.ndarray | None:
    """A per-detection value as float64 numbers (None / null inside = NaN); None if it is not
    numbers (a string, a dict, ...)."""
    if isinstance(value, (str, bytes, dict)):
        return None
    try:
        raw = np.asarray(value)
    except (ValueError, TypeError):
        return None
    if raw.dtype.kind == "O":
        items = raw.reshape(-1).tolist()
        if not all(v is None or (isinstance(v, (int, float, np.number)) and not isinstance(v, bool))
                   for v in items):
            return None
    elif raw.dtype.kind not in "biuf":
        return None
    try:
        return raw.astype(np.float64).reshape(-1)
    except (ValueError, TypeError, OverflowError):
        return None


def _column(values, width: int, where: str, key: str, *, required: bool) -> tuple[np.ndarray, int]:
    """float64 (n, width) from per-detection values: a number, or ``width`` numbers; None (a
    missing key) = NaN. A single number for a role fills all five, as numpy's assignment in
    ``vsrl_eval.py`` l.184 does; a person box needs four. Also returns how many were None."""
    n = len(values)
    out = np.full((n, width), np.nan)
    given = list(map(operator.is_not, values, itertools.repeat(None)))
    m = sum(given)
    if required and m < n:
        raise InputError(f"{where}: detection {given.index(False)}: no {key!r}")
    if m == 0:
        return out, n
    present: slice | np.ndarray = slice(None)
    rows = values
    if m < n:
        present = np.flatnonzero(np.array(given, dtype=bool))
        rows = list(itertools.compress(values, given))
    alike = _alike_floats(rows, width)
    if alike is not None:               # the commonest case of a score
        out[present] = alike
        return out, n - m
    try:                                # the common case: all alike, numbers
        arr = np.asarray(rows)
    except (ValueError, TypeError):
        arr = None
    if arr is not None and arr.dtype.kind in "biuf" and arr.shape == ((m,) if width == 1 else (m, width)):
        out[present] = arr.astype(np.float64).reshape(m, width)
        return out, n - m
    sizes = (1,) if width == 1 else (width,) if key == "person_box" else (1, width)
    for k in itertools.compress(range(n), given):   # one at a time, to name the detection that is wrong
        v = _numbers(values[k])
        if v is None:
            raise InputError(f"{where}: detection {k}: {key}: not a number or list of numbers: "
                             f"{str(values[k])[:60]}")
        if v.size not in sizes:
            raise InputError(f"{where}: detection {k}: {key}: {v.size} numbers, expected "
                             f"{' or '.join(map(str, sizes))}")
        out[k] = v
    return out, n - m


FLOAT_SCALARS = {float, np.float64, np.float32}


def _alike_floats(rows, width: int) -> np.ndarray | None:
    """``rows`` as an (m, 1) float64 array when every row is a float scalar (an agent score, as
    a detector's pickle holds it), read without numpy's shape discovery; else None (the general
    path decides). The values are those ``np.asarray(rows)`` gives, exactly."""
    if width == 1 and rows and set(map(type, rows)) <= FLOAT_SCALARS:
        return np.fromiter(rows, np.float64, len(rows)).reshape(-1, 1)
    return None


def _image_ids(values: np.ndarray, where: str) -> np.ndarray:
    flat = values[:, 0]
    bad = ~(np.isfinite(flat) & (flat == np.round(flat)))
    if bad.any():
        k = int(np.flatnonzero(bad)[0])
        raise InputError(f"{where}: detection {k}: image_id: not a whole number: {flat[k]!r}")
    return flat.astype(np.int64)


def _from_columns(image_id, person_box, scores, missing, where, fmt) -> VcocoDetections:
    return VcocoDetections(_image_ids(image_id, where), person_box.astype(np.float32),
                           {k: (v[:, 0] if v.shape[1] == 1 else v).astype(np.float32) for k, v in scores.items()},
                           missing, where, fmt)


def detections_from_records(records, agent_keys, role_keys, where: str = "detections",
                            fmt: str = "records") -> VcocoDetections:
    """Columns from the list of dicts ``vsrl_eval.py`` reads (extra keys are ignored, as there)."""
    if not isinstance(records, (list, tuple)):
        raise InputError(f"{where}: expected a list of detections (dicts with image_id, person_box, "
                         f"<action>_agent, <action>_<role>), got {type(records).__name__}")
    for k, r in enumerate(records):
        if not isinstance(r, dict):
            raise InputError(f"{where}: detection {k}: expected a dict, got {type(r).__name__}")
    agent_keys, role_keys = list(agent_keys), list(role_keys)
    keys = ["image_id", "person_box", *agent_keys, *role_keys]
    all_keys = operator.itemgetter(*keys)

    def row(record: dict) -> tuple:     # one detection's values; None for a key it lacks
        try:
            return all_keys(record)
        except KeyError:
            return tuple(map(record.get, keys))

    column = dict(zip(keys, list(zip(*map(row, records))) or [()] * len(keys)))
    image_id, _ = _column(column["image_id"], 1, where, "image_id", required=True)
    person_box, _ = _column(column["person_box"], 4, where, "person_box", required=True)
    scores, missing = {}, {}
    for keys_, width in ((agent_keys, 1), (role_keys, ROLE_WIDTH)):
        for key in keys_:
            scores[key], missing[key] = _column(column[key], width, where, key, required=False)
    return _from_columns(image_id, person_box, scores, missing, where, fmt)


def _npz_arrays(data: bytes, where: str) -> dict[str, np.ndarray]:
    """Every array of an NPZ archive; object arrays and unreadable archives are refused."""
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            return {name: z[name] for name in z.files}
    except ValueError as exc:
        raise InputError(f"{where}: NPZ arrays must be numbers (object arrays are refused): "
                         f"{' '.join(str(exc).split())[:120]}") from None
    except (OSError, zipfile.BadZipFile, EOFError) as exc:
        raise InputError(f"{where}: not a readable NPZ file ({' '.join(str(exc).split())[:120]})") from None


def _npz_column(arrays: dict, name: str, width: int, n: int, where: str) -> np.ndarray:
    """Array ``name`` as an (n, width) float table; (n,) and (n, 1) both do for width 1."""
    a = arrays[name]
    if a.dtype.kind not in "biuf":
        raise InputError(f"{where}: array {name!r}: numbers expected, got dtype {a.dtype}")
    shape = (n,) if width == 1 else (n, width)
    if a.shape != shape and not (width == 1 and a.shape == (n, 1)):
        raise InputError(f"{where}: array {name!r}: shape {a.shape}, expected {shape}")
    return a.astype(np.float64).reshape(n, width)


def _npz(data: bytes, where: str, agent_keys, role_keys) -> VcocoDetections:
    arrays = _npz_arrays(data, where)
    for name in ("image_id", "person_box"):
        if name not in arrays:
            raise InputError(f"{where}: no array {name!r} (NPZ: one array per key, a row per detection)")
    n = len(arrays["image_id"]) if arrays["image_id"].ndim else -1
    image_id = _npz_column(arrays, "image_id", 1, n, where)
    person_box = _npz_column(arrays, "person_box", 4, n, where)
    scores, missing = {}, {}
    for keys, width in ((agent_keys, 1), (role_keys, ROLE_WIDTH)):
        for key in keys:
            if key in arrays:
                scores[key] = _npz_column(arrays, key, width, n, where)
                missing[key] = 0
            else:
                scores[key] = np.full((n, width), np.nan)
                missing[key] = n
    return _from_columns(image_id, person_box, scores, missing, where, "npz")


def read_vcoco_detections(path: str | Path, agent_keys, role_keys) -> VcocoDetections:
    """Detections from a pickle (restricted unpickler), JSON or NPZ file, told apart by their
    content: NPZ is a zip archive, JSON starts with ``[`` (after blanks), anything else is read
    as a pickle. ``agent_keys`` / ``role_keys`` name the columns to read
    (``hold_agent``, ``hold_obj``, ...)."""
    where = str(path)
    check_readable(path)
    try:
        with open(path, "rb") as f:
            head = f.read(64)
    except OSError as exc:
        raise InputError(f"{where}: cannot be read ({exc.strerror})") from None
    if head[:4] == b"PK\x03\x04":
        return _npz(read_bytes(path), where, agent_keys, role_keys)
    if head.lstrip(b" \t\r\n\xef\xbb\xbf")[:1] in (b"[", b"{"):
        return detections_from_records(_json(read_bytes(path), where, constants=True), agent_keys, role_keys,
                                       where, "json")
    from metrics.core._pickles import collector_paused, load_restricted
    with collector_paused():            # the records' columns are built from the same small objects
        return detections_from_records(load_restricted(path), agent_keys, role_keys, where, "pickle")
