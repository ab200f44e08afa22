"""Plain transcriptions of the array primitives of ``metrics.core._segments``: what each fast form
computes, written as the obvious numpy call or Python loop (checked in tests/metrics/test_segments.py)."""

from __future__ import annotations

import numpy as np


def segments(key) -> tuple[list[int], list[int]]:
    starts = [i for i in range(len(key)) if i == 0 or key[i] != key[i - 1]]
    return starts, (starts[1:] + [len(key)]) if starts else []


def segment_cumsum(values, starts) -> list[float]:
    ends = list(starts[1:]) + [len(values)]
    out = []
    for s, e in zip(starts, ends):
        total = 0.0
        for v in values[s:e]:
            total += v
            out.append(total)
    return out


def segment_suffix_max(values, starts) -> list[float]:
    ends = list(starts[1:]) + [len(values)]
    return [max(values[i:e]) for s, e in zip(starts, ends) for i in range(s, e)]


def stable_order(key) -> np.ndarray:
    return np.argsort(key, kind="stable")


def order_by_class_then_position(cls, pos) -> np.ndarray:
    return np.lexsort((pos, cls))


def first_occurrences(values) -> np.ndarray:
    return np.sort(np.unique(values, return_index=True)[1])


def distinct_indices(rows) -> np.ndarray:
    return np.unique(rows)


def rank_within_blocks(block, pos, n, rows) -> list[int]:
    """Each row's turn in its block: how many rows of the block come before it by (pos, order)."""
    rank = [0] * n
    for i, (r, b, p) in enumerate(zip(rows, block, pos)):
        rank[r] = sum(1 for j, (b2, p2) in enumerate(zip(block, pos)) if b2 == b and (p2, j) < (p, i))
    return rank
