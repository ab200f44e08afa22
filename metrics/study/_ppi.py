"""Prediction-powered inference: human-level quantities from LLM ratings of every item plus human
ratings of a sample, with valid confidence intervals. This module holds the estimate type and the
prediction-powered mean (overall, by group, per entry); :mod:`metrics.study._ppi_alignment` applies
it to agreement, correlation and the weight w, :mod:`metrics.study._ppi_active` to items sent to
humans with chosen probabilities.

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

Every estimate comes as a :class:`PPIEstimate` with its classical counterpart beside it and the
*effective sample size* ``n·(classical width / PPI width)²``: the number of human-rated items
the classical estimate would need for an interval as narrow as the PPI one.

Intervals are CLT intervals (asymptotically valid; the package ``ppi-python`` computes the same
numbers for the mean, tests/reference/ppi_py_mean.py). Standard deviations divide by the sample
size (ddof 0), as ``ppi-python`` does.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from metrics.core._choices import SCALE_MAX
from metrics.core._constraints import Boolean, validate_params
from metrics.core._errors import InputError
from metrics.core._intervals import Interval, _z
from metrics.core._types import Numbers
from metrics.study._options import PPI_OPTIONS


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
        return float(lam)
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


@validate_params({**PPI_OPTIONS, "finite_population": Boolean()})
def ppi_mean(y: Numbers, yhat: Numbers, yhat_unlabeled: Numbers, *, confidence: float = 0.95, lam: float | None = None,
             finite_population: bool = False) -> PPIEstimate:
    """Prediction-powered mean of the human ratings ``y`` (PPI++, tuned λ unless ``lam`` is given),
    each item's human rating a fixed number: the interval covers item sampling only. For a
    study whose raters are a sample of raters use
    :func:`metrics.study.ppi_mean_rater_population` (items and raters).

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
        share = 1 - n / (n + N)
        estimate = lam * np.concatenate([yhat, yhat_unlabeled]).mean() + (y - lam * yhat).mean()
        se = math.sqrt(share * np.var(y - lam * yhat, ddof=1) / n)
        return _estimate(estimate, se, y.mean(), math.sqrt(share * np.var(y, ddof=1) / n), lam, n, N, confidence)
    lam = _lam(lam, y, yhat, yhat_unlabeled)
    estimate = lam * yhat_unlabeled.mean() + (y - lam * yhat).mean()
    se = math.sqrt(lam ** 2 * np.var(yhat_unlabeled) / N + np.var(y - lam * yhat) / n)
    return _estimate(estimate, se, y.mean(), math.sqrt(np.var(y) / n), lam, n, N, confidence)


@validate_params({**PPI_OPTIONS, "finite_population": Boolean()})
def ppi_mean_by_group(items: pd.DataFrame, *, by: str | list[str], human: str = "human_mean", model: str = "llm",
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


@validate_params(PPI_OPTIONS)
def ppi_entries(model: Numbers, human: Numbers, strata: Sequence[Hashable] | np.ndarray, *, confidence: float = 0.95, lam: float | None = None) -> pd.DataFrame:
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
