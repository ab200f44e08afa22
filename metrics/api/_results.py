"""The base of the result dataclasses and the readers of the functions' plain inputs (a path or
the object it holds)."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Self


def hidden(**options):
    """A result field that ``to_dict`` leaves out (tables and objects behind the JSON)."""
    return field(metadata={"json": False}, repr=False, compare=False, **options)


def optional(**options):
    """A result field that ``to_dict`` leaves out when it is None (a key the JSON has only
    in some cases)."""
    return field(default=None, metadata={"optional": True}, **options)


@dataclass(frozen=True)
class Result:
    """Base of the result dataclasses: one field per key of the JSON result, in its order."""

    def to_dict(self) -> dict:
        """The JSON-able result (a copy): the keys the command writes, in its order."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("json") is False or (f.metadata.get("optional") and value is None):
                continue
            out[f.name] = copy.deepcopy(value)
        return out

    @classmethod
    def from_dict(cls, result: dict, **hidden_fields: object) -> Self:
        """The result holding ``result``'s keys (each field's, the others ignored)."""
        names = {f.name for f in fields(cls) if f.metadata.get("json") is not False}
        return cls(**{k: v for k, v in result.items() if k in names}, **hidden_fields)


def _detections(value):
    """Detections, or the Detections a path holds."""
    if isinstance(value, (str, Path)):
        from metrics.detection._detections_fast import read_detections
        return read_detections(value)
    return value


def _matrix(value):
    """A SimilarityMatrix, the one a path holds, or None."""
    if isinstance(value, (str, Path)):
        from metrics.vocab._similarity import SimilarityMatrix
        return SimilarityMatrix.load(value)
    return value


def _ratings(value):
    """(ratings, source name): a ratings DataFrame checked as ``ratings.csv`` is, or read from a path."""
    from metrics.study._agreement import read_ratings, validate_ratings
    if isinstance(value, (str, Path)):
        return read_ratings(value), str(value)
    return validate_ratings(value, source="ratings"), "ratings"


def _items(value):
    """(items, source name): an items DataFrame checked as ``items.csv`` is, or read from a path."""
    from metrics.study._study_items import read_items, validate_items
    if isinstance(value, (str, Path)):
        return read_items(value), str(value)
    return validate_items(value, "items"), "items"
