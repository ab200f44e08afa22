"""Reading input files, with one policy everywhere:

- text is UTF-8, with or without a byte-order mark; UTF-16 / UTF-32 (recognised by their mark)
  and any other bytes are refused as not UTF-8, naming the line;
- JSON objects may not repeat a key, and ``NaN``, ``Infinity`` and numbers too large for a
  float are refused, naming the field;
- CSV line numbers are those of the ``csv`` reader (the line a row starts on: blank lines and
  quoted line breaks do not shift them);
- names (ids, pseudonyms, labels) may not hold control characters.

Every refusal is a one-line :class:`InputError` naming the file, then the line or field, in
the words of the functions here: :func:`check_readable` (a path), :func:`require_columns` (a
table's columns) and :func:`refuse_first_row` (a value in a row), besides the readers.
"""

from __future__ import annotations

import codecs
import csv
import io
import json
import math
import os
import unicodedata
from collections.abc import Hashable, Iterable
from pathlib import Path

from metrics.core._constraints import Boolean, validate_params
from metrics.core._errors import InputError

_WIDE = ((codecs.BOM_UTF32_LE, "UTF-32"), (codecs.BOM_UTF32_BE, "UTF-32"),
         (codecs.BOM_UTF16_LE, "UTF-16"), (codecs.BOM_UTF16_BE, "UTF-16"))


@validate_params({"folder_ok": Boolean()})
def check_readable(path: str | Path, *, folder_ok: bool = False) -> Path:
    """``path`` when it names an existing, readable file (or folder, with ``folder_ok``).

    >>> check_readable("/nonexistent/ratings.csv")
    Traceback (most recent call last):
    metrics.core._errors.InputError: /nonexistent/ratings.csv: no such file
    """
    path = Path(path)
    try:
        if not path.exists():
            raise InputError(f"{path}: no such file")
        if path.is_dir() and not folder_ok:
            raise InputError(f"{path}: is a folder; give a file")
        if not (path.is_dir() or path.is_file()):
            raise InputError(f"{path}: is not a regular file")
        if not os.access(path, os.R_OK):
            raise InputError(f"{path}: not readable (permission denied)")
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None
    return path


def read_bytes(path: str | Path) -> bytes:
    """The bytes of a file; a missing, folder or unreadable path is a one-line error
    (:func:`check_readable`'s words)."""
    path = Path(path)
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path}: is a folder; give a file") from None
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror})") from None


def decode(data: bytes, where: str) -> str:
    """UTF-8 text without its byte-order mark.

    >>> decode(b"\\xef\\xbb\\xbfa,b", "f.csv")
    'a,b'
    >>> decode("café".encode("latin-1"), "f.csv")
    Traceback (most recent call last):
    metrics.core._errors.InputError: f.csv: line 1: not UTF-8 text (byte 3: unexpected end of data); save it as UTF-8
    """
    for mark, name in _WIDE:
        if data.startswith(mark):
            raise InputError(f"{where}: {name} text, not UTF-8; save it as UTF-8")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise InputError(f"{where}: line {line}: not UTF-8 text (byte {exc.start}: {exc.reason}); "
                         "save it as UTF-8") from None
    return text


def read_text(path: str | Path) -> str:
    """A UTF-8 text file (see :func:`decode`)."""
    return decode(read_bytes(path), str(path))


# ---------------------------------------------------------------------------------- JSON
class _Refused:
    """Stands in for a value JSON may not hold, until its field is known."""

    def __init__(self, reason: str):
        self.reason = reason


def _float(text: str):
    value = float(text)
    return value if math.isfinite(value) else _Refused(f"{text} is too large for a number")


def _int(text: str):
    if len(text.lstrip("-")) > 300:
        return _Refused(f"a {len(text.lstrip('-'))}-digit number is too large")
    return int(text)


def first_repeat(values: Iterable[Hashable]) -> Hashable | None:
    """The first value met a second time in ``values``, or None when all differ.

    >>> first_repeat(["a", "b", "b", "a"])
    'b'
    """
    seen: set[Hashable] = set()
    for value in values:
        if value in seen:
            return value
        seen.add(value)
    return None


def _pairs(pairs: list):
    keys = [k for k, _ in pairs]
    if len(set(keys)) != len(keys):
        duplicate = first_repeat(keys)
        return _Refused(f"the key {duplicate!r} appears twice")
    return dict(pairs)


def _find_refused(value, path: str = ""):
    """(field path, reason) of the first refused value inside ``value``, else None."""
    if isinstance(value, _Refused):
        return path or "(top level)", value.reason
    if isinstance(value, dict):
        for key, item in value.items():
            found = _find_refused(item, f"{path}.{key}" if path else str(key))
            if found:
                return found
    elif isinstance(value, list):
        for k, item in enumerate(value):
            found = _find_refused(item, f"{path}[{k}]")
            if found:
                return found
    return None


def sniff_json(text: str | bytes):
    """The JSON value of ``text`` when it is one JSON document, else None — for telling a file's
    layout apart before :func:`parse_json` reads it under the policy (nesting too deep for
    Python's parser counts as not JSON here; :func:`parse_json` refuses it).

    >>> sniff_json('{"a": 1}'), sniff_json('{"a": 1} {"a": 2}'), sniff_json("[" * 100_000)
    ({'a': 1}, None, None)
    """
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        return None


def _refused_constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a finite number")


def _noting_refused(parse, refused: list):
    """``parse`` that also notes in ``refused`` each value it refuses."""
    def noted(arg):
        value = parse(arg)
        if isinstance(value, _Refused):
            refused.append(value)
        return value
    return noted


def _json_hooks(refused: list, *, per_number: bool, constants: bool) -> tuple:
    """The object-pairs hook and the other :func:`json.loads` hooks of :func:`parse_json`."""
    hooks = {"parse_float": _noting_refused(_float, refused),
             "parse_int": _noting_refused(_int, refused)} if per_number else {}
    if not constants:
        hooks["parse_constant"] = _noting_refused(_refused_constant, refused)
    return _noting_refused(_pairs, refused), hooks


@validate_params({"per_number": Boolean(), "constants": Boolean()})
def parse_json(text: str, where: str, line: int | None = None, *, per_number: bool = True,
               constants: bool = False):
    """JSON under the policy above; ``where`` names the file in messages, ``line`` the line
    ``text`` is (JSON Lines). ``per_number=False`` leaves out the per-number hooks (big files
    such as COCO's instances, whose reader checks the numbers of the fields it reads: a number
    too large for a float is then ``inf``); ``constants=True`` reads ``NaN`` / ``Infinity`` as
    floats (formats where NaN means "no value").

    >>> parse_json('{"a": [1, NaN]}', "f.json")
    Traceback (most recent call last):
    metrics.core._errors.InputError: f.json: field a[1]: NaN is not a finite number
    >>> parse_json('{"a": 1, "a": 2}', "f.json")
    Traceback (most recent call last):
    metrics.core._errors.InputError: f.json: field (top level): the key 'a' appears twice
    """
    refused: list = []
    pairs, hooks = _json_hooks(refused, per_number=per_number, constants=constants)
    try:
        value = json.loads(text, object_pairs_hook=pairs, **hooks)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: line {line or exc.lineno} column {exc.colno}: invalid JSON "
                         f"({exc.msg})") from None
    except RecursionError:
        raise InputError(f"{where}: {f'line {line}: ' if line else ''}invalid JSON (nested too deeply)") from None
    if refused:
        field, reason = _find_refused(value)
        raise InputError(f"{where}: {f'line {line}: ' if line else ''}field {field}: {reason}")
    return value


def read_json(path: str | Path):
    """A JSON file under the policy above."""
    return parse_json(read_text(path), str(path))


# ---------------------------------------------------------------------------------- CSV
def csv_rows(text: str, where: str):
    """``(header, rows)`` of CSV text: each row is ``(line, fields)`` with the line it starts
    on; blank lines are skipped; a row with more fields than the header is refused."""
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)
    header, rows, start = None, [], 1
    try:
        for fields in reader:
            line, start = start, reader.line_num + 1
            if not fields:
                continue
            if header is None:
                header = [f.strip() for f in fields]
                if not any(header):   # pandas finds no columns in a line of spaces
                    raise InputError(f"{where}: line {line}: the header line is blank (a CSV starts "
                                     "with its column names)")
                continue
            if len(fields) > len(header):
                raise InputError(f"{where}: line {line}: {len(fields)} fields, the header has "
                                 f"{len(header)}")
            rows.append((line, fields))
    except csv.Error as exc:
        raise InputError(f"{where}: line {start}: not valid CSV ({exc})") from None
    if header is None:
        raise InputError(f"{where}: empty file (a CSV with a header line is needed)")
    return header, rows


def read_csv(path: str | Path, *, required: tuple[str, ...] = (), **pandas_options):
    """A CSV file as a DataFrame, checked against the policy above (encoding, rows longer than
    the header, unclosed quotes, repeated or ``required`` columns) before pandas reads it
    (by default as strings, empty cells ``""``); row ``k``'s line is ``line_of(path, k)``."""
    import pandas as pd

    where = str(path)
    text = read_text(path)
    header, _rows = csv_rows(text, where)
    require_columns(header, required, where, why=f"the header is {','.join(header)}")
    if len(set(header)) != len(header):
        duplicate = first_repeat(header)
        raise InputError(f"{where}: line 1: the column {duplicate!r} appears twice")
    options = {"dtype": str, "keep_default_na": False, **pandas_options}
    return pd.read_csv(io.StringIO(text), **options)


def require_columns(columns, required, where: str, *, why: str | None = None) -> None:
    """Refuse a table whose ``columns`` lack any of ``required``: ``where`` names the table,
    ``why`` says what needs them.

    >>> require_columns(["item_id"], ("item_id", "rating"), "ratings.csv")
    Traceback (most recent call last):
    metrics.core._errors.InputError: ratings.csv: missing column 'rating'
    """
    have = set(columns)
    missing = [c for c in required if c not in have]
    if missing:
        raise InputError(f"{where}: missing column {', '.join(repr(c) for c in missing)}"
                         + (f" ({why})" if why else ""))


def refuse_first_row(source: str | Path, bad, problem) -> None:
    """Refuse the first data row flagged in ``bad`` (a boolean mask over the rows of a table
    read by :func:`read_csv` from ``source``): ``{source}: line {n}: {problem(k)}`` for row k.

    >>> refuse_first_row("r.csv", [False, True], lambda k: f"row {k} is bad")
    Traceback (most recent call last):
    metrics.core._errors.InputError: r.csv: line 3: row 1 is bad
    """
    import numpy as np

    flagged = np.flatnonzero(np.asarray(bad, dtype=bool))
    if len(flagged):
        k = int(flagged[0])
        raise InputError(f"{source}: line {line_of(source, k)}: {problem(k)}")


def line_of(source: str | Path, k: int) -> int:
    """The line on which data row ``k`` (0-based, as read by :func:`read_csv`) of the CSV file
    ``source`` starts; ``k + 2`` when ``source`` is not a readable file."""
    try:
        _header, rows = csv_rows(read_text(source), str(source))
        return rows[k][0]
    except (InputError, IndexError, OSError):
        return k + 2


def numbers(values):
    """``pd.to_numeric(values, errors="coerce")`` -- text becomes NaN, for the caller to refuse
    naming the row -- that also survives numbers too large for a float (pandas raises
    OverflowError on a 400-digit integer): those become infinite, outside every range.

    >>> numbers(["1", "x", "9" * 400]).tolist()
    [1.0, nan, inf]
    """
    import pandas as pd

    try:
        return pd.to_numeric(values, errors="coerce")
    except (OverflowError, ValueError):
        return pd.Series(values).map(_number_or_nan).astype(float)


def _number_or_nan(value) -> float:
    try:
        return float(value)
    except OverflowError:
        return (math.inf if value > 0 else -math.inf) if isinstance(value, int) else math.nan
    except (TypeError, ValueError):
        return math.nan


def check_name(value: str, where: str) -> str:
    """``value`` stripped; control characters (line breaks, tabs, NUL ...) are refused.

    >>> check_name("ann\\n1", "ratings.csv: line 3: annotator")
    Traceback (most recent call last):
    metrics.core._errors.InputError: ratings.csv: line 3: annotator 'ann\\n1' holds a control character
    """
    if any(unicodedata.category(ch) == "Cc" for ch in value):
        raise InputError(f"{where} {value!r} holds a control character")
    return value.strip()
