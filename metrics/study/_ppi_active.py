"""Active inference (Zrnic & Candès, ICML 2024, §3, Eq. 3): every one of the ``N`` items is sent
to humans with a probability ``π_i`` chosen from the model's uncertainty (:func:`active_probabilities`),
independently (``ξ_i ~ Bernoulli(π_i)``);
``θ̂ = (1/N)·Σ_i [λ·f_i + (Y_i − λ·f_i)·ξ_i/π_i]`` is unbiased for the mean over the items,
with interval ``θ̂ ± z·sd(z_i)/√N`` over the summands ``z_i``. With ``π_i = n/N`` it is plain
PPI; with λ = 0 the Horvitz–Thompson mean of the human ratings (the classical estimate under
the same design). The estimate type and the plain PPI mean are in :mod:`metrics.study._ppi`.
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Sequence
from typing import NamedTuple

import numpy as np
import pandas as pd

from metrics.core._constraints import RANDOM_SEED, Boolean, Interval, validate_params
from metrics.core._errors import InputError
from metrics.core._types import Numbers
from metrics.core._validation import ParameterError
from metrics.study._options import ACTIVE_OPTIONS, PPI_OPTIONS
from metrics.study._ppi import PPIEstimate, _estimate, _vector


def ensemble_uncertainty(member_ratings: Sequence[Sequence[float]] | np.ndarray | pd.DataFrame) -> np.ndarray:
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


@validate_params(ACTIVE_OPTIONS)
def active_probabilities(uncertainty: Numbers, *, budget: float, cells: Sequence[Hashable] | np.ndarray | None = None, floor: float = 0.2,
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
    u = _vector("uncertainty", uncertainty)
    if (u < 0).any():
        raise InputError("uncertainty: values must be ≥ 0")
    cells = np.zeros(len(u), int) if cells is None else np.asarray(cells)
    if len(cells) != len(u):
        raise InputError(f"cells: {len(cells)} values, expected {len(u)}")
    groups = pd.unique(cells)
    if (problem := Interval(0, len(u), low_open=True).problem(budget)) is not None:   # at most every item
        raise ParameterError("budget", problem)
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


@validate_params({**ACTIVE_OPTIONS, "seed": RANDOM_SEED})
def active_selection(uncertainty: Numbers, *, budget: float, cells: Sequence[Hashable] | np.ndarray | None = None, floor: float = 0.2, allocation: str = "equal",
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


@validate_params({**PPI_OPTIONS, "intercept": Boolean(), "finite_population": Boolean()})
def active_ppi_mean(y: Numbers, yhat: Numbers, probability: Numbers, selected: Sequence[bool] | np.ndarray, *, confidence: float = 0.95, lam: float | None = None,
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
    s = _active_summands(y, yhat, pi, xi, lam=lam, intercept=intercept)
    N, z_ppi, z_classical, lam = len(yhat), s.z_ppi, s.z_classical, s.lam
    r_ppi, r_classical = s.r_ppi, s.r_classical
    if finite_population:
        def poisson_se(r):
            return math.sqrt(np.sum(xi * r ** 2 * (1 - pi) / pi ** 2)) / N
        return _estimate(z_ppi.mean(), poisson_se(r_ppi), z_classical.mean(), poisson_se(r_classical),
                         lam, int(xi.sum()), N, confidence)
    return _estimate(z_ppi.mean(), math.sqrt(np.var(z_ppi) / N), z_classical.mean(), math.sqrt(np.var(z_classical) / N),
                     lam, int(xi.sum()), N, confidence)


class _Summands(NamedTuple):
    z_ppi: np.ndarray
    z_classical: np.ndarray
    r_ppi: np.ndarray        # y − λ·ŷ − c: what the draw has to measure
    r_classical: np.ndarray
    lam: float


def _active_summands(y, yhat, pi, xi, *, lam: float | None, intercept: bool) -> _Summands:
    """The cross-fitted summands of :func:`active_ppi_mean` (PPI and λ = 0) and their residuals."""
    y = np.where(xi, y, 0.0)
    w = xi / pi
    N = len(yhat)

    a, b, d = y * w, yhat * (1 - w), 1 - w
    fold = np.arange(N) % 2
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
    return _Summands(z_ppi, z_classical, r_ppi, r_classical, float(np.mean(lams)))
