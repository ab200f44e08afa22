"""Plain transcription of ``metrics.diagnosis._subtasks.unique_pairs``: the distinct (image, human box,
object box, object label) rows, numbered by first appearance, with a dict."""

from __future__ import annotations


def unique_pairs(image, human, obj_box, obj) -> tuple[list[int], list[int]]:
    """``(pair id per row, first row of each pair)``; -0.0 and 0.0 are one value."""
    ids: dict[tuple, int] = {}
    pid, first = [], []
    for row, key in enumerate(zip(image, map(tuple, human), map(tuple, obj_box), obj)):
        key = tuple(float(v) + 0.0 for v in (key[0], *key[1], *key[2], key[3]))
        if key not in ids:
            ids[key] = len(first)
            first.append(row)
        pid.append(ids[key])
    return pid, first
