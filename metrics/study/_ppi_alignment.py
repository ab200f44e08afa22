"""Prediction-powered estimates of how a metric matches the human ratings: its agreement (SHOE
Eq. 13), its correlation with them, and the tuned weight w, each from LLM ratings of every item
plus human ratings of a sample (the mean estimator is :mod:`metrics.study._ppi`)."""

from __future__ import annotations

import math
from dataclasses import asdict

import numpy as np

from metrics.core._choices import SCALE_MAX
from metrics.core._constraints import Options, validate_params
from metrics.core._errors import InputError
from metrics.core._intervals import Interval, _z
from metrics.core._types import Numbers
from metrics.study._options import PPI_OPTIONS
from metrics.study._ppi import PPIEstimate, _estimate, _lam, _vector, ppi_mean

W_STEP = 0.001   # grid of w for the interval of a tuned weight


def eq13_score(metric, rating) -> np.ndarray:
    """Per-item SHOE agreement (Eq. 13) ``1 − |metric − rating| / 4`` on the 0–4 scale."""
    from metrics.study._agreement import eq13_agreement
    return np.asarray(eq13_agreement(np.asarray(metric, float), np.asarray(rating, float)), float)


@validate_params(PPI_OPTIONS)
def ppi_agreement(metric: Numbers, y: Numbers, yhat: Numbers, metric_unlabeled: Numbers, yhat_unlabeled: Numbers, *, confidence: float = 0.95,
                  lam: float | None = None) -> PPIEstimate:
    """Agreement (SHOE Eq. 13, the 85.73% of SHOE §4.3) of a metric column with the mean human
    rating, prediction-powered: the mean of ``g(Y) = 1 − |metric − Y|/4``, with ``g(ŷ)`` as the
    model's prediction of it (:func:`ppi_mean` on those values). ``metric`` / ``y`` / ``yhat``:
    the human-rated items; ``metric_unlabeled`` / ``yhat_unlabeled``: the others.

    >>> round(ppi_agreement([2.0, 2.0], [2.0, 4.0], [2.0, 3.0], [1.0], [1.0], lam=0.0).estimate, 4)
    0.75
    """
    metric = _vector("metric", metric)
    metric_unlabeled = _vector("metric_unlabeled", metric_unlabeled)
    y = _vector("y", y, size=len(metric))
    yhat = _vector("yhat", yhat, size=len(metric))
    yhat_unlabeled = _vector("yhat_unlabeled", yhat_unlabeled, size=len(metric_unlabeled))
    return ppi_mean(eq13_score(metric, y), eq13_score(metric, yhat), eq13_score(metric_unlabeled, yhat_unlabeled),
                    confidence=confidence, lam=lam)


def _moments(m, y):
    """Moment vector (E[M], E[Y], E[M²], E[Y²], E[MY]) per item, shape (items, 5)."""
    return np.column_stack([m, y, m * m, y * y, m * y])


def _correlation_and_gradient(mu):
    em, ey, emm, eyy, emy = mu
    vm, vy, c = emm - em ** 2, eyy - ey ** 2, emy - em * ey
    if vm <= 0 or vy <= 0:
        return float("nan"), np.zeros(5)
    r = c / math.sqrt(vm * vy)
    # ∂r/∂μ via r = c·vm^(−½)·vy^(−½)
    dc = np.array([-ey, -em, 0.0, 0.0, 1.0])
    dvm = np.array([-2 * em, 0.0, 1.0, 0.0, 0.0])
    dvy = np.array([0.0, -2 * ey, 0.0, 1.0, 0.0])
    grad = dc / math.sqrt(vm * vy) - 0.5 * r * (dvm / vm + dvy / vy)
    return r, grad


@validate_params({**PPI_OPTIONS, "method": Options(("pearson", "rank"))})
def ppi_correlation(metric: Numbers, y: Numbers, yhat: Numbers, metric_unlabeled: Numbers, yhat_unlabeled: Numbers, *, method: str = "pearson",
                    confidence: float = 0.95, lam: float | None = None) -> PPIEstimate:
    """Correlation of a metric column with the mean human rating, prediction-powered.

    ``method="pearson"``: ``r(M, Y)`` from the moment vector ``(M, Y, M², Y², M·Y)`` estimated by
    PPI (``Y`` replaced by ``ŷ`` in the imputed part) and the delta method (linearization
    ``ψ = ∇r·φ`` at the λ = 1 estimate; λ tuned on ψ as for a mean), interval on Fisher's z scale
    ``tanh(atanh(r) ± z·se/(1 − r²))``; λ = 0 is the classical estimate, Pearson's r of the
    human-rated items with its delta-method interval. PPI gains only where the model predicts the
    human rating *beyond the metric*: when the model is the metric (SHOE's LLM ensemble and SHOE's
    score), the residual ``Y − M`` that drives the correlation's uncertainty is not predicted and
    λ̂ stays near 0. ``method="rank"``: the same with the
    metric replaced by its normalized mid-rank over all items and the human (and model) ratings
    by theirs under the model-rated items' distribution — a rank correlation of metric and human
    rating (Spearman's ρ where the model ranks items as humans do; a transparently different
    estimand otherwise).

    >>> rng = np.random.default_rng(0); m = rng.normal(size=400); y = m + rng.normal(size=400)
    >>> e = ppi_correlation(m[:100], y[:100], y[:100], m[100:], y[100:], lam=1.0)  # a perfect model
    >>> round(e.estimate, 9) == round(float(np.corrcoef(m[100:], y[100:])[0, 1]), 9)
    True
    """
    metric = _vector("metric", metric)
    metric_unlabeled = _vector("metric_unlabeled", metric_unlabeled)
    y = _vector("y", y, size=len(metric))
    yhat = _vector("yhat", yhat, size=len(metric))
    yhat_unlabeled = _vector("yhat_unlabeled", yhat_unlabeled, size=len(metric_unlabeled))
    n, N = len(y), len(yhat_unlabeled)
    if n < 3:
        raise InputError("y: a correlation needs at least 3 human-rated items")
    if method == "rank":
        from scipy.stats import rankdata
        every_metric = np.concatenate([metric, metric_unlabeled])
        ranks = (rankdata(every_metric) - 0.5) / len(every_metric)
        metric, metric_unlabeled = ranks[:n], ranks[n:]
        reference = np.sort(np.concatenate([yhat, yhat_unlabeled]))

        def grade(v):  # mid-distribution function of the model ratings
            below, at_most = np.searchsorted(reference, v, "left"), np.searchsorted(reference, v, "right")
            return (below + at_most) / (2 * len(reference))
        y, yhat, yhat_unlabeled = grade(y), grade(yhat), grade(yhat_unlabeled)
    phi, phi_hat, phi_unl = _moments(metric, y), _moments(metric, yhat), _moments(metric_unlabeled, yhat_unlabeled)

    def fit(lam_value):
        return _correlation_and_gradient(lam_value * phi_unl.mean(0) + (phi - lam_value * phi_hat).mean(0))

    _, grad = fit(1.0)
    lam = _lam(lam, phi @ grad, phi_hat @ grad, phi_unl @ grad)
    r, grad = fit(lam)
    psi, psi_hat, psi_unl = phi @ grad, phi_hat @ grad, phi_unl @ grad
    se = math.sqrt(lam ** 2 * np.var(psi_unl) / N + np.var(psi - lam * psi_hat) / n)
    rc, grad_c = _correlation_and_gradient(phi.mean(0))
    se_c = math.sqrt(np.var(phi @ grad_c) / n)
    e = _estimate(r, se, rc, se_c, lam, n, N, confidence)
    return PPIEstimate(**{**asdict(e), "interval": _fisher(r, se, confidence),
                          "classical_interval": _fisher(rc, se_c, confidence)})


def _fisher(r: float, se: float, confidence: float) -> Interval:
    if not math.isfinite(r) or abs(r) >= 1:
        return Interval.undefined()
    z, half = math.atanh(r), _z(confidence) * se / (1 - r * r)
    return Interval(math.tanh(z - half), math.tanh(z + half))


def _w_gradient(w_grid, v, o, target) -> np.ndarray:
    """Subgradient of ``|w·v + (1 − w)·o − target|`` in w: ``a·sign(a·w + b)``, items × grid."""
    a, b = v - o, o - target
    return a[:, None] * np.sign(a[:, None] * w_grid[None, :] + b[:, None])


@validate_params(PPI_OPTIONS)
def ppi_weight(v: Numbers, o: Numbers, y: Numbers, yhat: Numbers, v_unlabeled: Numbers, o_unlabeled: Numbers,
               yhat_unlabeled: Numbers, *, confidence: float = 0.95,
               lam: float | None = None) -> PPIEstimate:
    """The tuned verb weight w (SHOE §4.5, Eq. 14: the w in [0, 1] minimising the mean of
    ``|w·v + (1 − w)·o − Y/4|``), prediction-powered: ``v``, ``o`` are the items' verb and
    object similarities in [0, 1], ``y`` their mean human rating (0–4), ``yhat`` the model's.

    Point estimate: the minimiser of the PPI loss
    ``λ·mean_unlabeled ℓ_w(ŷ) + mean_labeled (ℓ_w(Y) − λ·ℓ_w(ŷ))`` (piecewise linear in w,
    minimised exactly over its breakpoints). Interval: PPI for convex M-estimation (Angelopoulos
    et al. 2023, Algorithm 3): every w on a 0.001 grid whose PPI-estimated mean subgradient
    ``g_w`` is not significantly non-zero, ``|ĝ_w| ≤ z·se(ĝ_w)`` (at the ends 0 and 1 one-sided,
    as w is confined to [0, 1]); reported as the smallest interval holding them. λ is tuned on
    the subgradients at the human-only optimum (PPI++). λ = 0 gives the classical w
    (:func:`metrics.study._tuning.optimal_w`) and its interval.

    >>> v = np.array([1.0, 0.0, 1.0, 0.0]); o = 1 - v; y = 4 * (0.25 * v + 0.75 * o)
    >>> ppi_weight(v, o, y, y, v, o, y, lam=1.0).estimate
    0.25
    """
    from metrics.study._tuning import optimal_w
    v = _vector("v", v)
    o, y, yhat = (_vector(name, x, size=len(v)) for name, x in (("o", o), ("y", y), ("yhat", yhat)))
    v_unlabeled = _vector("v_unlabeled", v_unlabeled)
    o_unlabeled = _vector("o_unlabeled", o_unlabeled, size=len(v_unlabeled))
    yhat_unlabeled = _vector("yhat_unlabeled", yhat_unlabeled, size=len(v_unlabeled))
    for name, x in (("v", v), ("o", o), ("v_unlabeled", v_unlabeled), ("o_unlabeled", o_unlabeled)):
        if ((x < 0) | (x > 1)).any():
            raise InputError(f"{name}: similarities must lie in [0, 1]")
    h, hhat, hhat_unl = y / SCALE_MAX, yhat / SCALE_MAX, yhat_unlabeled / SCALE_MAX
    n, N = len(v), len(v_unlabeled)
    classical = optimal_w(v, o, h)
    at = np.array([classical])
    if lam is None:
        lam = _lam(None, _w_gradient(at, v, o, h)[:, 0], _w_gradient(at, v, o, hhat)[:, 0],
                   _w_gradient(at, v_unlabeled, o_unlabeled, hhat_unl)[:, 0])
    estimate = _ppi_w_minimiser(v, o, h, hhat, v_unlabeled, o_unlabeled, hhat_unl, lam)
    grid = np.round(np.arange(0.0, 1.0 + W_STEP / 2, W_STEP), 10)
    z = _z(confidence)
    interval = _w_interval(grid, v, o, h, hhat, v_unlabeled, o_unlabeled, hhat_unl, lam, z)
    classical_interval = _w_interval(grid, v, o, h, hhat, v_unlabeled, o_unlabeled, hhat_unl, 0.0, z)
    width, classical_width = interval.high - interval.low, classical_interval.high - classical_interval.low
    effective = n * (classical_width / width) ** 2 if width > 0 else math.inf
    return PPIEstimate(estimate=float(estimate), interval=interval, classical=float(classical),
                       classical_interval=classical_interval, lam=float(lam), n=n, N=N, effective_n=float(effective),
                       saved=float(1 - n / effective) if effective > 0 else 0.0)


def _ppi_w_minimiser(v, o, h, hhat, v_unl, o_unl, hhat_unl, lam) -> float:
    from metrics.study._tuning import mae_curve
    candidates = [np.array([0.0, 0.5, 1.0])]
    for vv, oo, t in ((v, o, h), (v, o, hhat), (v_unl, o_unl, hhat_unl)):
        a = vv - oo
        candidates.append(np.clip(-(oo - t)[a != 0] / a[a != 0], 0.0, 1.0))
    w = np.unique(np.concatenate(candidates))
    loss = (lam * mae_curve(v_unl, o_unl, hhat_unl, w) + mae_curve(v, o, h, w) - lam * mae_curve(v, o, hhat, w))
    best = loss <= loss.min() + 1e-12
    on_min = w[best]
    return float(np.clip(0.5, on_min.min(), on_min.max())) if len(on_min) > 1 else float(on_min[0])


def _w_interval(grid, v, o, h, hhat, v_unl, o_unl, hhat_unl, lam, z) -> Interval:
    g, g_hat, g_unl = (_w_gradient(grid, *args) for args in ((v, o, h), (v, o, hhat), (v_unl, o_unl, hhat_unl)))
    mean = lam * g_unl.mean(0) + (g - lam * g_hat).mean(0)
    se = np.sqrt(lam ** 2 * g_unl.var(0) / len(v_unl) + (g - lam * g_hat).var(0) / len(v))
    kept = np.abs(mean) <= z * se
    kept[0] |= mean[0] >= -z * se[0]      # w = 0 is optimal when the loss rises from it
    kept[-1] |= mean[-1] <= z * se[-1]    # w = 1 when it falls up to it
    if not kept.any():
        return Interval.undefined()
    return Interval(float(grid[kept].min()), float(grid[kept].max()))
