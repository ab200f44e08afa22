"""Writing results as JSON (numpy scalars and arrays included)."""

from __future__ import annotations

import json
from pathlib import Path


def to_jsonable(value):
    """``json.dumps`` fallback for numpy scalars (``.item()``) and arrays (``.tolist()``)."""
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


def write_json(result: dict, path: str | Path) -> Path:
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(json.dumps(result, indent=2, default=to_jsonable) + "\n")
    return target
