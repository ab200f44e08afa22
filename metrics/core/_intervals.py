"""Confidence intervals, all returned as one type, :class:`Interval` ``(low, high)``.

- :func:`percentile_interval`: the percentile interval of a bootstrap distribution (its finite
  values), the one every bootstrap of the package uses;
- :func:`bootstrap_mean_interval`: a percentile bootstrap of a mean (values resampled with
  replacement);
- :func:`kalpha_interval`: Hayes & Krippendorff's KALPHA ranks of a bootstrap distribution;
- :func:`fisher_interval`: a correlation's Fisher-z interval;
- :func:`t_interval`: a mean's Student-t interval;
- :func:`wald_interval`, :func:`wilson_interval`: a proportion's intervals.

An :class:`Interval` is a named tuple, so JSON writes it as ``[low, high]``; an interval that
cannot be computed is ``(nan, nan)`` (written as ``[null, null]``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from metrics.core._constraints import OPEN_FRACTION, Whole, validate_params


class Interval(NamedTuple):
    """A confidence interval ``(low, high)``."""

    low: float
    high: float

    @classmethod
    def undefined(cls) -> Interval:
        return cls(float("nan"), float("nan"))


def _z(confidence: float) -> float:
    """The two-sided normal quantile of ``confidence`` (1.96 for 0.95)."""
    from scipy import stats
    return float(stats.norm.ppf(0.5 + confidence / 2))


@validate_params({"confidence": OPEN_FRACTION})
def percentile_interval(values, confidence: float = 0.95) -> Interval:
    """The ``(1 − c)/2`` and ``(1 + c)/2`` percentiles of the finite ``values``.

    >>> percentile_interval([0.0, 1.0, 2.0, 3.0, 4.0, float("nan")], 0.5)
    Interval(low=1.0, high=3.0)
    """
    tail = (1 - confidence) / 2 * 100
    values = np.asarray(values, float)
    values = values[np.isfinite(values)]
    if not len(values):
        return Interval.undefined()
    lo, hi = np.percentile(values, [tail, 100 - tail])
    return Interval(float(lo), float(hi))


@validate_params({"n_resamples": Whole(1), "confidence": OPEN_FRACTION})
def bootstrap_mean_interval(values, *, n_resamples: int = 1000, seed: int = 0,
                            confidence: float = 0.95) -> Interval:
    """Percentile bootstrap interval of the mean of ``values`` (resampled with replacement).

    >>> bootstrap_mean_interval(np.ones(5))
    Interval(low=1.0, high=1.0)
    """
    values = np.asarray(values, dtype=float)
    if len(values) == 0:
        return Interval.undefined()
    rng = np.random.default_rng(seed)
    means = values[rng.integers(0, len(values), size=(n_resamples, len(values)))].mean(axis=1)
    return percentile_interval(means, confidence)


@validate_params({"confidence": OPEN_FRACTION})
def kalpha_interval(alphas, confidence: float = 0.95) -> Interval:
    """KALPHA's interval: the sorted bootstrap values at 1-based ranks ``trunc((1 − c)/2 · B)``
    and ``trunc((1 + c)/2 · B) + 1``.

    >>> kalpha_interval(np.arange(1000) / 1000)
    Interval(low=0.024, high=0.975)
    """
    ordered = np.sort(alphas)
    b = len(ordered)
    lo = max(int((1 - confidence) / 2 * b), 1)
    hi = min(int((1 + confidence) / 2 * b) + 1, b)
    return Interval(float(ordered[lo - 1]), float(ordered[hi - 1]))


@validate_params({"confidence": OPEN_FRACTION})
def fisher_interval(rho: float, n: int, confidence: float = 0.95) -> Interval:
    """Fisher-z interval for a correlation: ``tanh(atanh(ρ) ± z / √(n − 3))``; undefined for
    n ≤ 3 or an undefined ρ.

    >>> [round(x, 3) for x in fisher_interval(0.799, 500)]     # SHOE supp. §6.3
    [0.765, 0.829]
    """
    if n <= 3 or not np.isfinite(rho):
        return Interval.undefined()
    z = math.atanh(min(max(rho, -0.999999999), 0.999999999))
    half = _z(confidence) / math.sqrt(n - 3)
    return Interval(math.tanh(z - half), math.tanh(z + half))


@validate_params({"confidence": OPEN_FRACTION})
def t_interval(values, confidence: float = 0.95) -> Interval | None:
    """Student-t interval of the mean of ``values``; None for fewer than two values.

    >>> [round(x, 3) for x in t_interval(np.array([1.0, 2.0, 3.0]))]
    [-0.484, 4.484]
    """
    from scipy import stats
    values = np.asarray(values, dtype=float)
    if len(values) < 2:
        return None
    mean = float(values.mean())
    half = float(stats.t.ppf(0.5 + confidence / 2, len(values) - 1) * values.std(ddof=1) / math.sqrt(len(values)))
    return Interval(mean - half, mean + half)


@validate_params({"confidence": OPEN_FRACTION})
def wald_interval(p: float, n: int, confidence: float = 0.95) -> Interval:
    """Wald interval of a proportion, ``p ± z·√(p(1 − p)/n)``, clipped to [0, 1].

    >>> [round(x, 3) for x in wald_interval(0.5, 100)]
    [0.402, 0.598]
    """
    half = _z(confidence) * math.sqrt(p * (1 - p) / n)
    return Interval(max(0.0, p - half), min(1.0, p + half))


@validate_params({"confidence": OPEN_FRACTION})
def wilson_interval(p: float, n: int, confidence: float = 0.95) -> Interval:
    """Wilson score interval of a proportion (Wilson 1927), clipped to [0, 1].

    >>> [round(x, 3) for x in wilson_interval(0.0, 20)]
    [0.0, 0.161]
    """
    z = _z(confidence)
    z2 = z ** 2
    centre = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return Interval(max(0.0, centre - half), min(1.0, centre + half))
