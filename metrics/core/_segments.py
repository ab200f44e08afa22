"""Array primitives of the vectorized scorers: runs (*segments*) of equal keys in a sorted
array, sums and maxima within them, and the orders the greedy matchers need.

Every scorer of the package (SHOE AP and F1, the standard and official mAP, Diag-HOI) works
on flat arrays grouped by class or image; these are the pieces they share. Where a function
is a faster form of a plain numpy or Python expression (a radix sort, a linear-time scatter),
its docstring names that expression and ``tests/reference/segments.py`` holds it, checked
against the fast form by ``tests/metrics/test_segments.py``.
"""

from __future__ import annotations

import numpy as np


def run_starts(key: np.ndarray) -> np.ndarray:
    """True at the first element of each run of equal values.

    >>> run_starts(np.array([3, 3, 1, 1, 1, 3])).tolist()
    [True, False, True, False, False, True]
    """
    return np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)


def segments(key: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(starts, ends)`` of the runs of equal values of ``key`` (ends exclusive).

    >>> [x.tolist() for x in segments(np.array([3, 3, 1, 1, 1, 3]))]
    [[0, 2, 5], [2, 5, 6]]
    """
    if not len(key):
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    starts = np.flatnonzero(run_starts(key))
    return starts, np.r_[starts[1:], len(key)]


def segment_cumsum(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """Cumulative sum restarting at each segment start.

    >>> segment_cumsum(np.array([1., 1, 1, 2, 2]), np.array([0, 3])).tolist()
    [1.0, 2.0, 3.0, 2.0, 4.0]
    """
    total = np.cumsum(values)
    before = total[starts] - values[starts]
    return total - np.repeat(before, np.diff(np.r_[starts, len(values)]))


def segment_diff(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``values[i] − values[i − 1]`` within each segment, ``values[i]`` at a segment start.

    >>> segment_diff(np.array([.2, .5, .1, .4]), np.array([0, 2])).round(2).tolist()
    [0.2, 0.3, 0.1, 0.3]
    """
    out = np.diff(values, prepend=0.0)
    out[starts] = values[starts]
    return out


def segment_suffix_max(values: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """``max(values[i:end of i's segment])`` for every i, exactly (NaN skipped as pandas'
    grouped ``cummax`` skips it): a running maximum per segment over the reversed values, one
    ``np.maximum.accumulate`` per segment when there are few, else one over the whole array of
    the values' ranks offset by segment (ranks are integers, so the result is exact).

    >>> segment_suffix_max(np.array([.1, .5, .2, .3, .1]), np.array([0, 3])).tolist()
    [0.5, 0.5, 0.2, 0.3, 0.1]
    """
    n = len(values)
    if not n:
        return values
    if np.isnan(values).any():
        import pandas as pd

        segment = np.repeat(np.arange(len(starts)), np.diff(np.r_[starts, n]))
        return pd.Series(values[::-1]).groupby(segment[::-1], sort=False).cummax().to_numpy()[::-1]
    ends = np.r_[starts[1:], n]
    if len(starts) <= FEW_SEGMENTS:
        out = np.empty_like(values)
        for lo, hi in zip(starts.tolist(), ends.tolist()):
            out[lo:hi] = np.maximum.accumulate(values[lo:hi][::-1])[::-1]
        return out
    distinct, rank = np.unique(values, return_inverse=True)
    # reversed, the segments come last first: offset each by its position in that order
    offset = np.repeat(np.arange(len(starts))[::-1] * len(distinct), ends - starts)
    reversed_max = np.maximum.accumulate((offset + rank)[::-1])
    return distinct[(reversed_max - offset[::-1])[::-1]]


FEW_SEGMENTS = 4096   # segment_suffix_max: up to this many segments, one accumulate per segment


def segment_sums_into(out: np.ndarray, key: np.ndarray, starts: np.ndarray, terms: np.ndarray) -> None:
    """``out[key of a segment] = Σ terms`` over each segment (``key`` given per term).

    >>> out = np.zeros(3); segment_sums_into(out, np.array([2, 2, 0]), np.array([0, 2]), np.array([1., 2, 5]))
    >>> out.tolist()
    [5.0, 0.0, 3.0]
    """
    if len(starts):
        out[key[starts]] = np.add.reduceat(terms, starts)


def class_bounds(sorted_class: np.ndarray, n_classes: int) -> np.ndarray:
    """Start of each class (and the end) in an array sorted by class.

    >>> class_bounds(np.array([0, 0, 2]), 3).tolist()
    [0, 2, 2, 3]
    """
    return np.r_[0, np.cumsum(np.bincount(sorted_class, minlength=n_classes))]


def stable_order(key: np.ndarray, n_keys: int) -> np.ndarray:
    """``np.argsort(key, kind="stable")`` for integer keys in ``[0, n_keys)``, as numpy's radix
    sort when they fit 16 bits.

    >>> stable_order(np.array([2, 0, 2, 1]), 3).tolist()
    [1, 3, 0, 2]
    """
    return np.argsort(key.astype(np.int16) if n_keys < 2 ** 15 else key, kind="stable")


def order_by_class_then_position(cls: np.ndarray, pos: np.ndarray, n_classes: int) -> np.ndarray:
    """``np.lexsort((pos, cls))`` for integer classes in ``[0, n_classes)``: the rows in
    ``pos`` order — scattered into place in linear time when the positions are distinct
    non-negative integers of moderate range (ranks), else a stable sort — then one stable
    (radix) sort by class.

    >>> order_by_class_then_position(np.array([1, 0, 1, 0]), np.array([3, 2, 0, 1]), 2).tolist()
    [3, 1, 2, 0]
    """
    pos = np.asarray(pos)
    n = len(pos)
    by_pos = None
    if n and pos.dtype.kind in "iu" and pos.min() >= 0 and pos.max() < 4 * n + 1024:
        slot = np.full(int(pos.max()) + 1, -1, dtype=np.int64)
        slot[pos] = np.arange(n)
        by_pos = slot[slot >= 0]
        if len(by_pos) != n:   # repeated positions: ties keep row order in a stable sort
            by_pos = None
    if by_pos is None:
        by_pos = np.argsort(pos, kind="stable")
    cls = np.asarray(cls)[by_pos]
    return by_pos[stable_order(cls, max(n_classes, int(cls.max(initial=-1)) + 1))]


def first_occurrences(values: np.ndarray) -> np.ndarray:
    """Positions of the first occurrence of each distinct non-negative integer in ``values``,
    ascending: ``np.sort(np.unique(values, return_index=True)[1])`` in linear time.

    >>> first_occurrences(np.array([3, 1, 3, 0, 1])).tolist()
    [0, 1, 3]
    """
    if not len(values):
        return np.zeros(0, dtype=np.int64)
    first = np.full(int(values.max()) + 1, len(values), dtype=np.int64)
    np.minimum.at(first, values, np.arange(len(values)))
    return np.sort(first[first < len(values)])


def distinct_indices(rows: np.ndarray, n: int) -> np.ndarray:
    """The distinct values of ``rows`` (indices < n), ascending: ``np.unique(rows)`` in linear
    time (numpy 2.4's ``np.unique`` hashes, ~100x slower on millions of candidate rows).

    >>> distinct_indices(np.array([4, 1, 4]), 6).tolist()
    [1, 4]
    """
    return np.flatnonzero(np.bincount(rows, minlength=n))


def rank_within_blocks(block: np.ndarray, pos: np.ndarray, n: int, rows: np.ndarray) -> np.ndarray:
    """For ``rows`` (indices < n), their turn within their ``block`` by ascending ``pos``
    (0 for every other index).

    >>> rank_within_blocks(np.array([7, 7, 5]), np.array([2, 1, 0]), 4, np.array([0, 1, 3])).tolist()
    [1, 0, 0, 0]
    """
    rank = np.zeros(n, dtype=np.int64)
    if not len(rows):
        return rank
    o = np.lexsort((pos, block))
    i = np.arange(len(o))
    rank[rows[o]] = i - np.maximum.accumulate(np.where(run_starts(block[o]), i, 0))
    return rank
