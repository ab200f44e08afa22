"""Plain transcription of the prediction-powered mean of ``ppi-python`` 0.2.3 (PyPI
``ppi-python``, module ``ppi_py``; github.com/aangelopoulos/ppi_py), one-dimensional, unweighted,
two-sided — the reference ``metrics.study._ppi.ppi_mean`` conforms to (tests/metrics/test_ppi.py).

Sources, file and line in the 0.2.3 wheel:

- ``ppi_py/ppi.py`` 66–132 ``ppi_mean_pointestimate``: ``(lam·Yhat_unlabeled).mean() + (Y −
  lam·Yhat).mean()``; with ``lam=None`` λ from ``_calc_lam_glm`` at the λ = 1 estimate;
- ``ppi_py/ppi.py`` 135–228 ``ppi_mean_ci``: ``imputed_std = (lam·Yhat_unlabeled).std()/√N``,
  ``rectifier_std = (Y − lam·Yhat).std()/√n`` (numpy's std, ddof 0), ``_zconfint_generic`` of
  the estimate with ``√(imputed_std² + rectifier_std²)``;
- ``ppi_py/ppi.py`` 1754–1832 ``_calc_lam_glm`` (identity Hessian, ``clip=True``,
  ``optim_mode="overall"``): ``cov_grads = (1/n)(g_cᵀ ĝ_c + ĝ_cᵀ g_c)``, ``var = np.cov([ĝ;
  ĝ_unlabeled])`` (ddof 1), ``λ = cov_grads / (2(1 + n/N)·var)`` clipped to [0, 1];
- ``ppi_py/baselines.py`` 18–39 ``classical_mean_ci``: ``Y.mean() ± z·Y.std()/√n``.

No numpy beyond sums of lists, so it checks the vectorized module independently.
"""

from __future__ import annotations

import math
from statistics import NormalDist


def _mean(xs):
    return sum(xs) / len(xs)


def _std0(xs):  # numpy's default std (ddof 0)
    m = _mean(xs)
    return math.sqrt(sum((x - m) ** 2 for x in xs) / len(xs))


def _cov1(xs):  # np.cov of one variable (ddof 1)
    m = _mean(xs)
    return sum((x - m) ** 2 for x in xs) / (len(xs) - 1)


def pointestimate(Y, Yhat, Yhat_unlabeled, lam):
    return _mean([lam * f for f in Yhat_unlabeled]) + _mean([y - lam * f for y, f in zip(Y, Yhat)])


def calc_lam(Y, Yhat, Yhat_unlabeled):
    n, N = len(Y), len(Yhat_unlabeled)
    theta = pointestimate(Y, Yhat, Yhat_unlabeled, 1.0)
    grads = [y - theta for y in Y]
    grads_hat = [f - theta for f in Yhat]
    grads_hat_unlabeled = [f - theta for f in Yhat_unlabeled]
    g_mean, gh_mean = _mean(grads), _mean(grads_hat)
    cov_grads = (1 / n) * 2 * sum((g - g_mean) * (h - gh_mean) for g, h in zip(grads, grads_hat))
    var_grads_hat = _cov1(grads_hat + grads_hat_unlabeled)
    lam = cov_grads / (2 * (1 + n / N) * var_grads_hat)
    return min(max(lam, 0.0), 1.0)


def ppi_mean_ci(Y, Yhat, Yhat_unlabeled, alpha=0.05, lam=None):
    """(estimate, lower, upper, lam)."""
    n, N = len(Y), len(Yhat_unlabeled)
    if lam is None:
        lam = calc_lam(Y, Yhat, Yhat_unlabeled)
    est = pointestimate(Y, Yhat, Yhat_unlabeled, lam)
    imputed_std = _std0([lam * f for f in Yhat_unlabeled]) / math.sqrt(N)
    rectifier_std = _std0([y - lam * f for y, f in zip(Y, Yhat)]) / math.sqrt(n)
    half = NormalDist().inv_cdf(1 - alpha / 2) * math.sqrt(imputed_std ** 2 + rectifier_std ** 2)
    return est, est - half, est + half, lam


def classical_mean_ci(Y, alpha=0.05):
    half = NormalDist().inv_cdf(1 - alpha / 2) * _std0(Y) / math.sqrt(len(Y))
    return _mean(Y) - half, _mean(Y) + half
