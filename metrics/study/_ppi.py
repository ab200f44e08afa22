"""Prediction-powered inference: human-level quantities from LLM ratings of every item plus human
ratings of a sample, with valid confidence intervals.

Setting: ``N`` items all rated by a model (the LLM ensemble; ``f_i``), ``n`` of them also by
humans (``Y_i``, e.g. the mean of five 0–4 ratings). The estimand is a human-level quantity such
as the mean human rating ``θ = E[Y]``.

- Classical (humans only): ``θ̂_C = mean(Y)``, interval ``θ̂_C ± z·sd(Y)/√n``.
- PPI (Angelopoulos, Bates, Fannjiang, Jordan, Zrnic, *Science* 382, 2023, Eq. 1):
  ``θ̂_PP = mean(f(X̃)) + mean(Y − f(X))`` — the model's mean over the ``N`` unlabeled items,
  corrected by the *rectifier* ``Y − f`` measured on the labeled ones; interval
  ``θ̂_PP ± z·√(sd(f̃)²/N + sd(Y − f)²/n)``. Valid whatever the model's quality: a biased
  model is corrected, a useless one only widens the interval.
- PPI++ power tuning (Angelopoulos, Duchi, Zrnic 2023, arXiv:2311.01453, §2 and Eq. 5):
  ``θ̂_λ = λ·mean(f̃) + mean(Y − λ·f)`` with
  ``λ̂ = Cov(Y, f) / ((1 + n/N)·Var(f))`` clipped to [0, 1]; λ = 0 is the classical estimate,
  λ = 1 plain PPI, so the tuned interval is never much wider than the classical one.
- Active inference (Zrnic & Candès, ICML 2024, §3, Eq. 3): every one of the ``N`` items is sent
  to humans with a probability ``π_i`` chosen from the model's uncertainty (:func:`active_probabilities`),
  independently (``ξ_i ~ Bernoulli(π_i)``);
  ``θ̂ = (1/N)·Σ_i [λ·f_i + (Y_i − λ·f_i)·ξ_i/π_i]`` is unbiased for the mean over the items,
  with interval ``θ̂ ± z·sd(z_i)/√N`` over the summands ``z_i``. With ``π_i = n/N`` it is plain
  PPI; with λ = 0 the Horvitz–Thompson mean of the human ratings (the classical estimate under
  the same design).

Every estimate comes as a :class:`PPIEstimate` with its classical counterpart beside it and the
*effective sample size* ``n·(classical width / PPI width)²``: the number of human-rated items
the classical estimate would need for an interval as narrow as the PPI one.

Intervals are CLT intervals (asymptotically valid; the package ``ppi-python`` computes the same
numbers for the mean, tests/reference/ppi_py_mean.py). Standard deviations divide by the sample
size (ddof 0), as ``ppi-python`` does.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.core._intervals import Interval, _z
from metrics.core._validation import check_confidence, check_fraction, check_in_range

SCALE_MAX = 4.0  # ratings 0–4
W_STEP = 0.001   # grid of w for the interval of a tuned weight


@dataclass(frozen=True)
class PPIEstimate:
    """A prediction-powered estimate beside the human-only one.

    ``estimate`` / ``interval``: PPI (with the power-tuning ``lam`` used); ``classical`` /
    ``classical_interval``: humans only; ``n``: human-rated items; ``N``: model-rated items
    without human ratings (for active inference: all items); ``effective_n``:
    ``n·(classical width / PPI width)²``; ``saved``: ``1 − n / effective_n``, the share of human
    ratings PPI saves at equal width.
    """

    estimate: float
    interval: Interval
    classical: float
    classical_interval: Interval
    lam: float
    n: int
    N: int
    effective_n: float
    saved: float

    def to_dict(self) -> dict:
        out = asdict(self)
        out["interval"], out["classical_interval"] = list(self.interval), list(self.classical_interval)
        return out


def _vector(name: str, values, *, size: int | None = None, allow_empty: bool = False) -> np.ndarray:
    array = np.asarray(values, float).reshape(-1)
    if not np.isfinite(array).all():
        raise InputError(f"{name}: every value must be a finite number")
    if size is not None and len(array) != size:
        raise InputError(f"{name}: {len(array)} values, expected {size}")
    if not allow_empty and len(array) == 0:
        raise InputError(f"{name}: no values")
    return array


def _lam(lam, y, yhat, yhat_unlabeled) -> float:
    """PPI++'s tuned λ for a mean (``ppi_py.ppi._calc_lam_glm`` with an identity Hessian)."""
    if lam is not None:
        return check_fraction("lam", lam)
    n, N = len(y), len(yhat_unlabeled)
    cov = np.mean((y - y.mean()) * (yhat - yhat.mean()))
    var = np.var(np.concatenate([yhat, yhat_unlabeled]), ddof=1) if n + N > 1 else 0.0
    if var <= 0:
        return 0.0
    return float(np.clip(cov / ((1 + n / N) * var), 0.0, 1.0))


def _estimate(estimate, se, classical, classical_se, lam, n, N, confidence) -> PPIEstimate:
    z = _z(confidence)
    if se > 0 and classical_se > 0:
        effective = n * (classical_se / se) ** 2
    else:
        effective = float(n) if se == classical_se else math.inf
    return PPIEstimate(estimate=float(estimate), interval=Interval(float(estimate - z * se), float(estimate + z * se)),
                       classical=float(classical),
                       classical_interval=Interval(float(classical - z * classical_se),
                                                   float(classical + z * classical_se)),
                       lam=float(lam), n=int(n), N=int(N), effective_n=float(effective),
                       saved=float(1 - n / effective) if effective > 0 else 0.0)


def ppi_mean(y, yhat, yhat_unlabeled, *, confidence: float = 0.95, lam: float | None = None,
             finite_population: bool = False) -> PPIEstimate:
    """Prediction-powered mean of the human ratings ``y`` (PPI++, tuned λ unless ``lam`` is given).

    ``y``, ``yhat``: human and model ratings of the ``n`` human-rated items; ``yhat_unlabeled``:
    model ratings of the ``N`` other items. Estimate ``λ·mean(ŷ_unlabeled) + mean(y − λ·ŷ)``,
    interval ``± z·√(λ²·sd(ŷ_unlabeled)²/N + sd(y − λ·ŷ)²/n)`` (module docstring): the mean of
    the population the items are drawn from, as in ``ppi-python``.

    ``finite_population=True``: the estimand is the mean human rating over exactly these
    ``M = n + N`` items (e.g. every pair of a dataset, all rated by the LLM), the human-rated ones
    a simple random sample of them. Then the model's mean is known, not estimated: estimate
    ``λ·mean(ŷ over all M) + mean(y − λ·ŷ)`` (the difference estimator of survey sampling,
    Cochran 1977 §7.2, Särndal et al. 1992 §6.3), interval ``± z·√((1 − n/M)·S²(y − λ·ŷ)/n)``
    with ``S²`` the sample variance (ddof 1), classical ``mean(y) ± z·√((1 − n/M)·S²(y)/n)``;
    λ = ``Cov(y, ŷ)/Var(ŷ)`` on the human-rated items, clipped to [0, 1].

    Hand-worked (λ = 1): y = (2, 4), ŷ = (1, 3), ŷ_unlabeled = (1, 2, 3): mean(ŷ_unlabeled) = 2,
    rectifier mean(y − ŷ) = 1, estimate 3; the classical mean is 3 too, sd 1 over n = 2.

    >>> e = ppi_mean([2.0, 4.0], [1.0, 3.0], [1.0, 2.0, 3.0], lam=1.0)
    >>> e.estimate, e.classical
    (3.0, 3.0)
    """
    confidence = check_confidence("confidence", confidence)
    y = _vector("y", y)
    yhat = _vector("yhat", yhat, size=len(y))
    yhat_unlabeled = _vector("yhat_unlabeled", yhat_unlabeled, allow_empty=finite_population)
    n, N = len(y), len(yhat_unlabeled)
    if finite_population:
        if n < 2:
            raise InputError("y: a finite-population interval needs at least two human-rated items")
        if lam is None:
            var = np.var(yhat)
            lam = float(np.clip(np.mean((y - y.mean()) * (yhat - yhat.mean())) / var, 0.0, 1.0)) if var > 0 else 0.0
        lam = check_fraction("lam", lam)
        share = 1 - n / (n + N)
        estimate = lam * np.concatenate([yhat, yhat_unlabeled]).mean() + (y - lam * yhat).mean()
        se = math.sqrt(share * np.var(y - lam * yhat, ddof=1) / n)
        return _estimate(estimate, se, y.mean(), math.sqrt(share * np.var(y, ddof=1) / n), lam, n, N, confidence)
    lam = _lam(lam, y, yhat, yhat_unlabeled)
    estimate = lam * yhat_unlabeled.mean() + (y - lam * yhat).mean()
    se = math.sqrt(lam ** 2 * np.var(yhat_unlabeled) / N + np.var(y - lam * yhat) / n)
    return _estimate(estimate, se, y.mean(), math.sqrt(np.var(y) / n), lam, n, N, confidence)


def ppi_mean_by_group(items: pd.DataFrame, *, by, human: str = "human_mean", model: str = "llm",
                      confidence: float = 0.95, lam: float | None = None,
                      finite_population: bool = False) -> pd.DataFrame:
    """:func:`ppi_mean` per group of ``items`` (e.g. ``by="category"`` or ``by=["category",
    "level"]`` for SHOE's design cells): ``model`` holds every item's model rating, ``human`` the
    mean human rating where humans rated the item (NaN elsewhere). A group with fewer than two
    human-rated items, or (without ``finite_population``) no item without one, gets no estimate
    (NaN row). ``finite_population``: each group's estimand is the mean over its own items.

    >>> items = pd.DataFrame({"cell": ["a"] * 5, "llm": [1.0, 3.0, 1.0, 2.0, 3.0],
    ...                       "human_mean": [2.0, 4.0, None, None, None]})
    >>> ppi_mean_by_group(items, by="cell", lam=1.0)["estimate"].tolist()
    [3.0]
    """
    columns = [by] if isinstance(by, str) else list(by)
    from metrics.core._inputs import require_columns
    require_columns(items.columns, (*columns, human, model), "items")
    rows = []
    for key, group in items.groupby(columns, sort=True):
        rated = group[human].notna().to_numpy()
        record = dict(zip(columns, key if isinstance(key, tuple) else (key,)))
        if rated.sum() >= 2 and ((~rated).sum() >= 1 or finite_population):
            e = ppi_mean(group.loc[rated, human], group.loc[rated, model], group.loc[~rated, model],
                         confidence=confidence, lam=lam, finite_population=finite_population)
            record.update(_flat(e))
        else:
            record.update({"n": int(rated.sum()), "N": int((~rated).sum())})
        rows.append(record)
    return pd.DataFrame(rows)


def _flat(e: PPIEstimate) -> dict:
    d = e.to_dict()
    d["lower"], d["upper"] = d.pop("interval")
    d["classical_lower"], d["classical_upper"] = d.pop("classical_interval")
    return d


def ppi_entries(model, human, strata, *, confidence: float = 0.95, lam: float | None = None) -> pd.DataFrame:
    """Each entry's expected human rating from the model's rating of every entry and human
    evidence on some (a recalibrated matrix entry: ``model`` its LLM similarity, ``human`` the
    similarity the human ratings imply, NaN where none), within strata of entries (e.g. the LLM
    level rounded to 0–4).

    In stratum s with ``M`` entries, ``n`` of them human-rated (a simple random sample of the
    stratum), entry e gets ``λ·ŷ_e + mean_rated(Y − λ·ŷ)`` and the interval
    ``± z·√((1 − n/M)·S²(Y − λ·ŷ)/n)`` (:func:`ppi_mean` with ``finite_population``, shifted to
    the entry's own model rating): it covers the stratum's mean human rating moved by λ times
    the distance of this entry's model rating from the stratum's, not one entry's own ratings.
    The classical value beside it is the stratum's mean human rating with its interval (the same
    for every entry of the stratum). A stratum with fewer than two rated entries uses the fit of
    all strata together (``fit = "pooled"``). Estimates and bounds are clipped to [0, 4].

    Hand-worked (λ = 1): model (1, 3, 2, 2), human (2, 4, NaN, NaN), one stratum: rectifier
    (1, 1) → entries 2, 4, 3, 3.

    >>> ppi_entries([1.0, 3.0, 2.0, 2.0], [2.0, 4.0, None, None], [0] * 4, lam=1.0)["estimate"].tolist()
    [2.0, 4.0, 3.0, 3.0]
    """
    confidence = check_confidence("confidence", confidence)
    model = _vector("model", model)
    human = np.asarray(human, float).reshape(-1)
    strata = np.asarray(strata)
    if len(human) != len(model) or len(strata) != len(model):
        raise InputError(f"human, strata: need {len(model)} values each, as model has")
    rated = np.isfinite(human)
    if rated.sum() < 2:
        raise InputError("human: at least two entries need human evidence")
    z = _z(confidence)
    out = pd.DataFrame({"stratum": strata, "model": model, "human": human})

    def fit(sel):
        fitted = ppi_mean(human[sel & rated], model[sel & rated], model[sel & ~rated], lam=lam,
                          finite_population=True, confidence=confidence)
        rectifier = human[sel & rated] - fitted.lam * model[sel & rated]
        return fitted, rectifier.mean(), (fitted.interval.high - fitted.interval.low) / (2 * z)

    pooled = fit(np.ones(len(model), bool))
    columns = {k: np.empty(len(model)) for k in ("estimate", "lower", "upper", "classical", "classical_lower",
                                                 "classical_upper", "lam", "n", "N", "effective_n")}
    fits = np.empty(len(model), dtype=object)
    for stratum in pd.unique(strata):
        sel = strata == stratum
        own = (sel & rated).sum() >= 2
        fitted, shift, se = fit(sel) if own else pooled
        estimate = fitted.lam * model[sel] + shift
        for key, value in (("estimate", estimate), ("lower", estimate - z * se), ("upper", estimate + z * se),
                           ("classical", fitted.classical), ("classical_lower", fitted.classical_interval.low),
                           ("classical_upper", fitted.classical_interval.high), ("lam", fitted.lam),
                           ("n", fitted.n), ("N", fitted.n + fitted.N), ("effective_n", fitted.effective_n)):
            columns[key][sel] = value
        fits[sel] = str(stratum) if own else "pooled"
    for key in ("estimate", "lower", "upper", "classical", "classical_lower", "classical_upper"):
        columns[key] = np.clip(columns[key], 0.0, SCALE_MAX)
    out = out.assign(**columns, fit=fits)
    return out.astype({"n": int, "N": int})


def eq13_score(metric, rating) -> np.ndarray:
    """Per-item SHOE agreement (Eq. 13) ``1 − |metric − rating| / 4`` on the 0–4 scale."""
    from metrics.study._agreement import eq13_agreement
    return np.asarray(eq13_agreement(np.asarray(metric, float), np.asarray(rating, float)), float)


def ppi_agreement(metric, y, yhat, metric_unlabeled, yhat_unlabeled, *, confidence: float = 0.95,
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


def ppi_correlation(metric, y, yhat, metric_unlabeled, yhat_unlabeled, *, method: str = "pearson",
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
    from metrics.core._validation import check_choice
    check_choice("method", method, ("pearson", "rank"))
    confidence = check_confidence("confidence", confidence)
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


def ppi_weight(v, o, y, yhat, v_unlabeled, o_unlabeled, yhat_unlabeled, *, confidence: float = 0.95,
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
    confidence = check_confidence("confidence", confidence)
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
    lam = check_fraction("lam", lam)
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


# ------------------------------------------------------------------------------ active inference
def ensemble_uncertainty(member_ratings) -> np.ndarray:
    """Disagreement of an LLM ensemble per item: the standard deviation of its members' ratings
    (items × members; NaN for a member that gave no rating is skipped).

    >>> ensemble_uncertainty([[1, 1, 1], [0, 2, 4]]).tolist()
    [0.0, 1.632993161855452]
    """
    ratings = np.asarray(member_ratings, float)
    if ratings.ndim != 2 or ratings.shape[1] < 2:
        raise InputError("member_ratings: need one row per item and at least two members")
    if np.isnan(ratings).all(axis=1).any():
        raise InputError("member_ratings: an item has no member rating")
    return np.nanstd(ratings, axis=1)


def active_probabilities(uncertainty, *, budget: float, cells=None, floor: float = 0.2,
                         allocation: str = "equal") -> np.ndarray:
    """Probability that each item is sent to humans, for active inference (Zrnic & Candès 2024,
    §3: ``π(x) ∝ u(x)``, mixed with uniform sampling so no item's probability is zero).

    Within each cell of ``cells`` (e.g. SHOE's category × level cells; default one cell) the
    cell's share ``s`` of ``budget`` (the expected number of human-rated items) is spread as
    ``π_i = s·[(1 − floor)·u_i/Σu + floor/N_c]`` — at least ``floor`` of the uniform
    probability — and capped at 1 (the excess goes to the others). ``floor`` = 1 is uniform
    sampling. The cells' shares: ``allocation="equal"`` gives each cell the same (SHOE's
    balanced design; a cell smaller than its share is rated whole and the rest shared by the
    others), ``"proportional"`` shares in proportion to the cells' sizes (the better choice for a
    pool-wide mean when the cells differ in size). The variance is smallest with ``π_i``
    proportional to the root-mean-square error of the model on item i (Zrnic & Candès §4), so
    ``uncertainty`` should be on that scale: the ensemble members' SD
    (:func:`ensemble_uncertainty`) or a calibrated predicted |error|, not a variance.

    Hand-worked: weights 0.8·(0, ¼, ¾, 0) + 0.2/4 = (0.05, 0.25, 0.65, 0.05); times 2 the third
    exceeds 1, is capped, and the remaining 1 is spread as (0.05, 0.25, 0.05)/0.35:

    >>> active_probabilities([0.0, 1.0, 3.0, 0.0], budget=2, floor=0.2).round(3).tolist()
    [0.143, 0.714, 1.0, 0.143]
    """
    from metrics.core._validation import check_choice
    check_choice("allocation", allocation, ("equal", "proportional"))
    u = _vector("uncertainty", uncertainty)
    if (u < 0).any():
        raise InputError("uncertainty: values must be ≥ 0")
    floor = check_fraction("floor", floor)
    cells = np.zeros(len(u), int) if cells is None else np.asarray(cells)
    if len(cells) != len(u):
        raise InputError(f"cells: {len(cells)} values, expected {len(u)}")
    groups = pd.unique(cells)
    budget = check_in_range("budget", budget, 0.0, float(len(u)), low_open=True)
    sizes = np.array([(cells == cell).sum() for cell in groups], float)
    quota = (_capped(np.zeros(len(groups)), budget, 1.0, sizes) if allocation == "equal"  # none above its size
             else budget * sizes / sizes.sum())
    pi = np.empty(len(u))
    for cell, share in zip(groups, quota):
        sel = cells == cell
        pi[sel] = _capped(u[sel], share, floor)
    return pi


def _capped(u: np.ndarray, total: float, floor: float, cap=1.0) -> np.ndarray:
    """Shares ∝ the floor-mixed weights, summing to ``total``, none above ``cap`` (water-filling:
    a share that would exceed its cap is set to it and the rest spread over the others)."""
    cap = np.broadcast_to(np.asarray(cap, float), u.shape)
    weights = (1 - floor) * (u / u.sum() if u.sum() > 0 else np.full(len(u), 1 / len(u))) + floor / len(u)
    pi = np.zeros(len(u))
    free = np.ones(len(u), bool)
    while free.any():
        pi[free] = (total - pi[~free].sum()) * weights[free] / weights[free].sum()
        over = free & (pi >= cap)
        if not over.any():
            break
        pi[over] = cap[over]
        free &= ~over
    return np.minimum(pi, cap)


def active_selection(uncertainty, *, budget: float, cells=None, floor: float = 0.2, allocation: str = "equal",
                     seed: int = 0) -> pd.DataFrame:
    """Which items humans rate, drawn once, with the probabilities recorded: the item-priority
    hook for an assignment rule. Columns ``probability`` (:func:`active_probabilities`),
    ``selected`` (``ξ_i ~ Bernoulli(π_i)``, independent) and ``priority`` (1 = ask first:
    selected items, most uncertain first; unselected items get 0 and must not be asked, or the
    estimate loses its unbiasedness). Store ``probability`` and ``selected`` with the study:
    :func:`active_ppi_mean` needs them.

    >>> s = active_selection([0.0, 1.0, 3.0, 0.0], budget=2, seed=1)
    >>> bool(s.loc[2, "selected"]), int(s.loc[2, "priority"])
    (True, 1)
    """
    from metrics.core._validation import MAX_SEED, check_whole
    check_whole("seed", seed, 0, MAX_SEED)
    pi = active_probabilities(uncertainty, budget=budget, cells=cells, floor=floor, allocation=allocation)
    u = np.asarray(uncertainty, float)
    selected = np.random.default_rng(seed).random(len(pi)) < pi
    order = np.lexsort((np.arange(len(u)), -u))
    priority = np.zeros(len(u), int)
    chosen = [i for i in order if selected[i]]
    priority[chosen] = np.arange(1, len(chosen) + 1)
    return pd.DataFrame({"probability": pi, "selected": selected, "priority": priority})


def _shift(rest, d, intercept: bool) -> float:
    """The coefficient ``c`` of ``D`` minimising ``Var(rest + c·D)`` (0 without ``intercept``)."""
    var_d = np.var(d)
    return float(-np.mean((d - d.mean()) * (rest - rest.mean())) / var_d) if intercept and var_d > 0 else 0.0


def _active_lam(a, b, d, intercept: bool) -> float:
    """λ of the least-squares fit of ``−A`` on ``B`` (and ``D``), clipped to [0, 1]."""
    design = np.column_stack([b, d]) if intercept else b[:, None]
    centred = design - design.mean(0)
    coefficients = -np.linalg.lstsq(centred.T @ centred, centred.T @ (a - a.mean()), rcond=None)[0]
    return float(np.clip(coefficients[0], 0.0, 1.0))


def active_ppi_mean(y, yhat, probability, selected, *, confidence: float = 0.95, lam: float | None = None,
                    intercept: bool = True, finite_population: bool = False) -> PPIEstimate:
    """Active (inverse-probability-weighted) PPI mean over all ``N`` items (Zrnic & Candès 2024,
    Eq. 3 with PPI++ power tuning): ``θ̂ = mean_i[λ·ŷ_i + (y_i − λ·ŷ_i)·ξ_i/π_i]``, interval
    ``θ̂ ± z·sd(z_i)/√N`` over the summands ``z_i``. ``yhat`` and ``probability`` cover every
    item; ``selected`` (ξ) marks the human-rated ones, whose ``y`` is read (the others' ``y`` may
    be NaN).

    Writing ``z_i = A_i + λ·B_i`` with ``A = y·ξ/π``, ``B = ŷ·(1 − ξ/π)``, the variance is
    quadratic in λ. With ``intercept`` (default) the model's ratings are also shifted by a
    constant ``c`` (any fixed predictor ``ŷ + c`` keeps the estimate unbiased; ``c`` adds
    ``c·D_i``, ``D = 1 − ξ/π``, whose mean is zero in expectation): ``(λ, c)`` minimise the
    estimated variance by least squares of ``A`` on ``(B, D)``, λ clipped to [0, 1] — the
    inverse-probability weights otherwise pay for the rectifier's mean as well as its spread.
    ``lam`` given: that λ, and ``c`` = 0 unless ``intercept``. Tuned coefficients are cross-fitted:
    items are split in two folds (even and odd positions), each fold's summands use coefficients
    fitted on the other, so the estimate stays exactly unbiased under the draw (``lam`` reports
    the two folds' mean λ). ``finite_population=True``: the estimand is the mean over exactly these
    ``N`` items (their ``y`` fixed, only the draw random) and the variance is the Horvitz–Thompson
    one of independent (Poisson) sampling, estimated by ``(1/N²)·Σ_ξ r_i²·(1 − π_i)/π_i²`` with
    ``r = y − λ·ŷ − c`` (Särndal et al. 1992 §3.6); by default the items' spread counts too, as
    when they are a sample of a larger population. The classical estimate beside it
    uses the human ratings of the same draw only (λ = 0; with ``intercept``, the constant-only
    regression estimator, close to Hájek's ratio mean; without, Horvitz–Thompson).

    Hand-worked (λ = 1, no intercept): ŷ = (1, 2), π = (1, 0.5), both selected, y = (2, 2):
    z = (1 + 1/1, 2 + 0/0.5) = (2, 2), estimate 2; Horvitz–Thompson (2/1 + 2/0.5)/2 = 3.

    >>> e = active_ppi_mean([2.0, 2.0], [1.0, 2.0], [1.0, 0.5], [True, True], lam=1.0, intercept=False)
    >>> e.estimate, e.classical
    (2.0, 3.0)
    """
    confidence = check_confidence("confidence", confidence)
    yhat = _vector("yhat", yhat)
    pi = _vector("probability", probability, size=len(yhat))
    if ((pi <= 0) | (pi > 1)).any():
        raise InputError("probability: every item needs a probability in (0, 1]")
    xi = np.asarray(selected, bool).reshape(-1)
    if len(xi) != len(yhat):
        raise InputError(f"selected: {len(xi)} values, expected {len(yhat)}")
    y = np.asarray(y, float).reshape(-1)
    if len(y) != len(yhat):
        raise InputError(f"y: {len(y)} values, expected {len(yhat)}")
    if not np.isfinite(y[xi]).all():
        raise InputError("y: every selected item needs a finite human rating")
    if xi.sum() < 2:
        raise InputError("selected: at least two items must be human-rated")
    y = np.where(xi, y, 0.0)
    w = xi / pi
    N = len(yhat)

    a, b, d = y * w, yhat * (1 - w), 1 - w
    fold = np.arange(N) % 2
    if lam is not None:
        lam = check_fraction("lam", lam)
    # coefficients fitted on the other fold (cross-fitting), so each fold's summands keep mean θ
    z_ppi, z_classical, lams = np.empty(N), np.empty(N), []
    r_ppi, r_classical = np.empty(N), np.empty(N)  # y − λ·ŷ − c: what the draw has to measure
    for k in (0, 1):
        fit, apply = fold != k, fold == k
        lam_k = _active_lam(a[fit], b[fit], d[fit], intercept) if lam is None else lam
        lams.append(lam_k)
        c_ppi, c_classical = _shift(a[fit] + lam_k * b[fit], d[fit], intercept), _shift(a[fit], d[fit], intercept)
        z_ppi[apply] = a[apply] + lam_k * b[apply] + c_ppi * d[apply]
        z_classical[apply] = a[apply] + c_classical * d[apply]
        r_ppi[apply] = y[apply] - lam_k * yhat[apply] - c_ppi
        r_classical[apply] = y[apply] - c_classical
    lam = float(np.mean(lams))
    if finite_population:
        def poisson_se(r):
            return math.sqrt(np.sum(xi * r ** 2 * (1 - pi) / pi ** 2)) / N
        return _estimate(z_ppi.mean(), poisson_se(r_ppi), z_classical.mean(), poisson_se(r_classical),
                         lam, int(xi.sum()), N, confidence)
    return _estimate(z_ppi.mean(), math.sqrt(np.var(z_ppi) / N), z_classical.mean(), math.sqrt(np.var(z_classical) / N),
                     lam, int(xi.sum()), N, confidence)
