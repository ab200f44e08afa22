"""The array primitives of metrics.core._segments equal their plain transcriptions in
tests/reference/segments.py, on random inputs with many ties and on empty ones."""

from __future__ import annotations

import numpy as np
import pytest

from metrics.core import _segments as fast
from tests.reference import segments as ref

RNG = np.random.default_rng(17)


def sorted_key(n, n_values=30):
    return np.sort(RNG.integers(0, n_values, n))


@pytest.mark.parametrize("n", [0, 1, 7, 500])
def test_segments_and_sums_within_them(n):
    key = sorted_key(n)
    starts, ends = fast.segments(key)
    assert (starts.tolist(), ends.tolist()) == ref.segments(key.tolist())
    values = np.round(RNG.random(n), 2)          # many ties
    assert np.allclose(fast.segment_cumsum(values, starts), ref.segment_cumsum(values.tolist(), starts.tolist()))
    assert fast.segment_suffix_max(values, starts).tolist() == ref.segment_suffix_max(values.tolist(), starts.tolist())


@pytest.mark.parametrize("few", [0, 10**9])            # the whole-array rank form, one accumulate per segment
@pytest.mark.parametrize("n_values", [3, 10_000])
def test_suffix_max_in_both_forms(monkeypatch, few, n_values):
    monkeypatch.setattr(fast, "FEW_SEGMENTS", few)
    for n in (1, 2, 999):
        key = sorted_key(n, n_values)
        starts, _ = fast.segments(key)
        values = np.round(RNG.random(n), 1) * RNG.choice([1.0, -1.0, 1e-300], n)   # ties, negatives, tiny
        assert fast.segment_suffix_max(values, starts).tolist() == ref.segment_suffix_max(values.tolist(),
                                                                                           starts.tolist())


def test_suffix_max_skips_nan_as_pandas_cummax_does():
    values = np.array([0.2, np.nan, 0.1, 0.5, np.nan])
    out = fast.segment_suffix_max(values, np.array([0, 3]))
    assert out[[0, 2, 3]].tolist() == [0.2, 0.1, 0.5] and np.isnan(out[[1, 4]]).all()


@pytest.mark.parametrize("n_keys", [5, 40_000])      # the radix sort and the plain stable sort
def test_orders(n_keys):
    key = RNG.integers(0, n_keys, 3000)
    assert np.array_equal(fast.stable_order(key, n_keys), ref.stable_order(key))
    cls = RNG.integers(0, 20, 3000)
    for pos in (RNG.permutation(3000), RNG.integers(0, 100, 3000), RNG.random(3000)):   # ranks, ties, floats
        assert np.array_equal(fast.order_by_class_then_position(cls, pos, 20), ref.order_by_class_then_position(cls, pos))


def test_first_occurrences_distinct_and_ranks():
    values = RNG.integers(0, 300, 2000)
    assert np.array_equal(fast.first_occurrences(values), ref.first_occurrences(values))
    assert np.array_equal(fast.distinct_indices(values, 400), ref.distinct_indices(values))
    assert len(fast.first_occurrences(np.zeros(0, np.int64))) == len(fast.distinct_indices(np.zeros(0, np.int64), 5)) == 0
    rows = RNG.permutation(60)[:40]
    block, pos = RNG.integers(0, 5, 40), RNG.integers(0, 10, 40)
    assert fast.rank_within_blocks(block, pos, 60, rows).tolist() == ref.rank_within_blocks(block, pos, 60, rows)
