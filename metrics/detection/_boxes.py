"""Boxes ``[x1, y1, x2, y2]`` (pixel corners): the one IoU of the package and the one check of
a box given in a file.

docs/contracts.md: IoU uses continuous coordinates (no +1). The official HICO-DET and VOC code counts
inclusive pixels (``iw = x2 − x1 + 1``); ``pixel_offset=1`` gives that convention.
"""

from __future__ import annotations

import math

import numpy as np

from metrics.core._constraints import Options, validate_params
from metrics.core._errors import InputError


@validate_params({"pixel_offset": Options((0.0, 1.0))})   # continuous boxes, or the +1-pixel convention
def box_iou(a, b, *, pixel_offset: float = 0.0, dtype=np.float64) -> np.ndarray:
    """IoU of the boxes in the last axis of ``a`` and ``b`` (other axes broadcast; two single
    boxes give one number).

    IoU = |a ∩ b| / (|a| + |b| − |a ∩ b|), 0 when the union is empty; widths are
    ``x2 − x1 + pixel_offset``. ``dtype`` is the arithmetic's: ``np.float32`` gives, operation
    for operation, the single-precision IoU of code that keeps boxes in float32 (V-COCO's
    ``vsrl_eval.py``).

    >>> box_iou([[0., 0, 2, 2]], [[1., 0, 3, 2]]).round(4).tolist()
    [0.3333]
    >>> float(box_iou([0, 0, 9, 9], [5, 0, 14, 9], pixel_offset=1))   # 50 / 150
    0.3333333333333333
    """
    a = np.asarray(a, dtype=dtype)
    b = np.asarray(b, dtype=dtype)
    if a.ndim == b.ndim == 1:
        return box_iou(a[None], b[None], pixel_offset=pixel_offset, dtype=dtype)[0]
    iw = np.minimum(a[..., 2], b[..., 2])
    iw -= np.maximum(a[..., 0], b[..., 0])
    ih = np.minimum(a[..., 3], b[..., 3])
    ih -= np.maximum(a[..., 1], b[..., 1])
    if pixel_offset:
        iw += pixel_offset
        ih += pixel_offset
    np.maximum(iw, 0.0, out=iw)
    np.maximum(ih, 0.0, out=ih)
    inter = iw
    inter *= ih
    area_a = (a[..., 2] - a[..., 0] + pixel_offset) * (a[..., 3] - a[..., 1] + pixel_offset)
    area_b = (b[..., 2] - b[..., 0] + pixel_offset) * (b[..., 3] - b[..., 1] + pixel_offset)
    union = area_a + area_b
    union -= inter
    with np.errstate(divide="ignore", invalid="ignore"):
        inter /= union
    inter[union <= 0] = 0.0
    return inter


def parse_box(value, where: str) -> list[float]:
    """A box from a file: four finite numbers with ``x1 ≤ x2`` and ``y1 ≤ y2``.

    >>> parse_box([0, 1, 2, 3], "f: box")
    [0.0, 1.0, 2.0, 3.0]
    >>> parse_box([2, 0, 1, 1], "f: box")
    Traceback (most recent call last):
    metrics.core._errors.InputError: f: box has x2 < x1 or y2 < y1: [2, 0, 1, 1]
    """
    if (not isinstance(value, (list, tuple)) or len(value) != 4
            or not all(isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)
                       for v in value)):
        raise InputError(f"{where} must be four numbers [x1, y1, x2, y2], got {value!r}")
    x1, y1, x2, y2 = (float(v) for v in value)
    if x2 < x1 or y2 < y1:
        raise InputError(f"{where} has x2 < x1 or y2 < y1: {value!r}")
    return [x1, y1, x2, y2]
