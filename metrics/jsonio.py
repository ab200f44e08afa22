"""Writing results: JSON (numpy scalars and arrays included) and text, atomically."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to a temporary file in the target's folder and rename it into place, so a
    reader (or a crash) never sees a partial file and the previous content survives a failure."""
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


def write_text_atomic(path: str | Path, text: str) -> Path:
    """:func:`write_bytes_atomic` of ``text`` in UTF-8."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def to_jsonable(value):
    """``json.dumps`` fallback for numpy scalars (``.item()``) and arrays (``.tolist()``)."""
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def write_json(result: dict, path: str | Path) -> Path:
    return write_text_atomic(path, json.dumps(result, indent=2, default=to_jsonable) + "\n")
