"""Reading HOI detections: :func:`read_detections` parses a well-formed file with pyarrow's
JSON reader straight into columns (:func:`_read_fast`) and hands everything else to the
validating reader of :mod:`metrics.detection._detections`, which names the culprit.
``tests/metrics/test_detections_fast.py`` keeps the two readers' results equal.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np

from metrics.core._errors import InputError
from metrics.core._inputs import read_bytes
from metrics.detection._detections import COCO_OBJECT_IDS, Detections, _read_validating


def read_detections(path: str | Path) -> Detections:
    """Read HOI detections from JSON Lines or the QPIC/CDN HICO-DET JSON (auto-detected).

    Every problem raises :class:`InputError` with one line naming the file, the line (or
    record) and the field. Well-formed files are parsed by pyarrow's JSON reader straight into
    columns (:func:`_read_fast`); anything that reader cannot vouch for — a parse error, a
    missing or mistyped field, duplicate keys, blank lines, a duplicate image — goes through
    the validating reader (:func:`_read_validating`), which gives the same result or names the
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
    field = lambda name: pc.struct_field(hois, name)
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
