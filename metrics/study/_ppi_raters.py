"""The prediction-powered mean over a *population of raters*: the estimand of a rating study.

A study's humans are a sample of raters, not fixed truth. The estimand here is

    θ = (1/M)·Σ_i μ_i,   μ_i = E_r[Y_ir],

the mean over the study's ``M`` items of the rating a rater drawn from the rater population would
give. Ratings follow the two-way crossed random-effects model ``Y_ir = μ_i + b_r + e_ir``
(Searle, Casella & McCulloch 1992, §5.3): ``b_r`` a rater's severity, shared by all of that
rater's ratings (variance ``σ_B²``), ``e_ir`` the rater × item residual (``σ_E²``). Item means
``ȳ_i`` over the ``k_i`` ratings of each rated item enter the PPI difference estimator of
:func:`metrics.study.ppi_mean` (``finite_population``) or, with items drawn with recorded
probabilities, the active estimator of :func:`metrics.study.active_ppi_mean`.

Variance: ``V = T_items + T_raters``.

- ``T_items``: the sampling variance of the rectifier over the rated items —
  ``(1 − n/M)·S²(ȳ − λ·f)/n`` for a simple random sample, ``(1/M²)·Σ r_i²(1 − π_i)/π_i²`` for
  Poisson (active) sampling. It is zero when every item is rated.
- ``T_raters = C·σ̃_B² + (n/M)·Q·(MS_B − n₀σ̃_B²)``, at least 0. ``C = Σ_r c_r² − Δ``, ``c_r``
  the total weight of rater r's ratings in the estimate (``(1/n)·Σ_{i rated by r} 1/k_i``): a
  severe rater moves all of their items together, so the raters' weights, not the items', count. ``Δ``
  removes the rater noise ``T_items`` already holds (``(1 − n/M)·(Σ(1/k_i)/n − Σc_r²)/(n − 1)``
  for a simple random sample, ``Σ(1 − π_i)/(π_i²·k_i)/M²`` under Poisson sampling).
  ``MS_B`` is the between-rater mean square of ``Y − λ·f`` (``E = n₀σ_B² +`` the noise of a
  rater's mean times its ratings) and ``σ̃_B²`` the unbiased moment estimate of ``σ_B²``
  (:func:`_rater_variance`, Henderson's method 1 on the between-rater, within-rater and
  within-item mean squares; Searle, Casella & McCulloch 1992, §5.3), not truncated at 0: ``V``
  is then unbiased, linear in the mean squares. The truncated ``σ̂_B² = max(σ̃_B², 0)`` (the
  variance component reported) has a positive bias wherever ``σ̃_B²`` is often negative: 12
  raters rating 20% of 200 items once, severity sd 0.2, had ``σ̃_B² < 0`` in 41% of studies, a
  mean ``σ̂_B²`` twice ``σ_B²``'s, a mean ``V`` 1.14 times the estimate's variance and PPI
  coverage 96.8–97.4%; with ``σ̃_B²`` the ratio is 1.10 (``T_raters`` at its floor 0 in 27%)
  and PPI covers 95.3–96.9% (2,000–4,000 studies).
- The second term is the share ``n/M`` of the raters' means' noise: the second-stage term of
  two-stage sampling (Cochran 1977, §10.4, Eq. 10.8), which no finite-population correction
  removes; the rest of the noise is already in ``T_items``. Rater r's mean over ``m_r`` ratings
  carries ``(MS_B − n₀σ̂_B²)/m_r`` of noise at weight ``c_r``, so ``Q = Σ_r c_r²/m_r``; with equal
  ``m_r`` this is ``C/n₀`` and ``T_raters = C·MS_B/n₀`` when every item is rated, never 0. A
  common ``C/n₀`` in its place counts the noise of the light raters' means against the heavy
  raters' weights: three heavy and ten light raters, severity sd 0.2, 60% of items rated,
  gave a mean ``V`` 1.36 times the estimate's variance (400 simulated studies) and PPI
  coverage 97.2% (2,000 studies); with ``Q`` the ratio is 1.04 (600 studies).

With one rater per item and no rater effects this is Cochran's two-stage variance; with every
item rated it is the variance of a crossed design's grand mean over the raters' sample (Searle
et al. 1992, §5.3). The interval is ``θ̂ ± t_ν·√V`` with Satterthwaite's (1946) degrees of
freedom over ``n`` rated items and the raters, the raters' part taken at its upper bound:

    ν = (V + U)² / ((T_items − D)²/(n − 1) + (κ·(C·w·MS_B + D))²/ν_B),
    U = (κ − 1)·(C·w·MS_B + D),   κ = ν_B/χ²_{ν_B}(0.25)

(``C·w·MS_B`` the part of ``T_raters`` that ``MS_B`` carries, ``w = (1 − (n/M)·Q·n₀/C)·∂σ̃_B²/∂MS_B
+ (n/M)·Q/C`` in absolute value, also where ``T_raters`` is at its floor 0: taking it as 0 there
gives more degrees of freedom exactly when ``V̂`` is too small, and took three-rater cells with one
rating per item to 92.4–92.8%; ``D = Δ·σ̂_B²`` the part of ``T_items`` the raters' severities
drive, which varies with the raters, not the items).

``ν_B`` is the degrees of freedom of the between-rater mean square ``MS_B`` that the raters'
part rests on (:func:`_between_df`): ``MS_B = ȳ_R'A·ȳ_R`` is a quadratic form in the rater means,
whose variances are ``σ_B² + (σ_E² + g·σ_A²)/m_r``, and Box's (1954, *Ann. Math. Statist.*
25(2), Theorem 3.1) scaled-χ² approximation gives ``ν_B = tr(AΣ)²/tr((AΣ)²)``: ``R − 1`` when the
raters rate equally many items, about the number of heavy raters less one when a few raters
carry most of the ratings, whatever the number of light raters (pilots, dropouts, one-off
participants), whose means barely move ``MS_B``. Counting every rater as one degree of freedom
undercovers such designs: 4 raters on every drawn item, one on two thirds and six on 4–6 items
each, ``[active]`` draw probabilities 0.05–0.9, covered 89–92% with ``R − 1``
(``benchmarks/ppi_coverage.py``, docs/method.md).

``T_raters + D + U`` is the raters' part's one-sided 75% upper confidence bound: ``MS_B`` at the
χ² bound ``κ·MS_B`` of its expectation, the bound Graybill & Wang's (1980, *JASA* 75(372))
intervals on sums of variance components are built from, carried through the raters' part's
``MS_B`` terms (``C·w·MS_B + D``; the well-estimated within mean squares held), whose
Satterthwaite variance is then that of ``κ·MS_B``. Scaling the raters' part itself by ``κ``
under-raises it where ``σ̃_B²`` is a difference of mean squares and the raters' part is well below
its ``MS_B`` terms, and gives too few degrees of freedom exactly where ``MS_B`` is mostly the raters'
means' noise: three heavy and ten light raters, severity sd 0.2, 60% of items rated, had
median ν 3.7 (PPI) and 4.6 (human-only) against ``V``'s own 3.4 and 4.7 (``2·E[V]²/Var V``), a
PPI interval wider than the human-only one (0.573 against 0.539) and coverage 98.8–98.9% and
96.6–96.7%; carried through ``MS_B``, 95.5–95.8% and 95.8–96.0% (3,000–4,000 studies) and the PPI
interval the narrower (0.510 against 0.525). Satterthwaite's ν on the estimated parts alone is random
with ``V̂``: a rater part small by chance gives more degrees of freedom and a narrower t exactly
when ``√V̂`` is already too small, so with few degrees of freedom on one side the interval covers
less than nominal (the liberal Welch test, Wang 1971, *JASA* 66(335)). Simulated with normal
parts on 2 rater and 39 item degrees of freedom, the raters' share of ``V`` from 0.1 to 1, the
plug-in ν covered 92.4–95.1% and the bound 94.9–96.5% (11 rater degrees of freedom: 94.9–95.1%
and 95.0–95.2%); the quartile is the one that kept the benchmark's three-rater cells within
93–97% with the raters' part itself scaled by ``κ``. Carried through ``MS_B`` the bound keeps
them there but one: three raters rating 20% of the items once, severity sd 0.2, cover 97.4%
(PPI) and 97.7% (human-only), where ``ν ≈ ν_B = 2`` whenever ``σ̃_B²`` is not small and the t
quantile 4.3 then covers nearly every study. ``V`` itself is unchanged by the bound. With every
item rated and equal ``m_r``, ν is ``ν_B`` (with unequal ``m_r`` a little less, ``T_raters`` then
resting on ``σ̃_B²`` too): with three raters a rater-dominated variance gets ``ν ≈ 2`` and a wide t
quantile, as it must. (The
unbiased moment estimates of ``σ_B²`` and ``σ_E²`` over the whole design are the reliability table's,
:func:`metrics.study._reliability.variance_components`.) Coverage in simulated crossed studies,
balanced and unbalanced, is measured by ``benchmarks/ppi_coverage.py`` (docs/method.md).

The human-only estimate beside it is the same computation with λ = 0; ``effective_n`` is
``n·(human-only width / PPI width)²`` (:func:`effective_items`) and ``saved`` ``1 − n/effective_n``,
negative when PPI's interval is the wider (few raters: PPI's smaller item term leaves it fewer
degrees of freedom). The formula lets the human-only width shrink as ``1/√n``; its rater term
does not shrink with more items, so where that term dominates the formula is optimistic about
what more human ratings would buy, and ``benchmarks/ppi_coverage.py`` measures the savings at
equal width by simulation beside it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import pandas as pd

from metrics.core._constraints import validate_params
from metrics.core._errors import InputError
from metrics.core._intervals import Interval
from metrics.study._options import PPI_OPTIONS
from metrics.study._ppi import PPIEstimate

METHOD = ("PPI over items and raters: item-sampling plus crossed rater variance (rater mean squares), "
          "t quantile on Satterthwaite degrees of freedom with the raters' part at its upper bound")


@dataclass(frozen=True)
class RaterPopulationEstimate(PPIEstimate):
    """A :class:`PPIEstimate` of the rater-population mean, with what its interval is over.

    Beyond the PPI fields: ``df`` / ``classical_df`` the Satterthwaite degrees of freedom of the
    two intervals, ``raters`` and ``ratings`` the human raters and ratings used,
    ``rater_variance`` (σ̂_B², the raters' variance component, at least 0; the interval's
    ``V`` uses the untruncated estimate, module docstring),
    ``over`` what the interval accounts for and ``method`` how it is computed.
    """

    df: float
    classical_df: float
    raters: int
    ratings: int
    rater_variance: float
    over: str = "items and raters"
    method: str = METHOD


@validate_params(PPI_OPTIONS)
def ppi_mean_rater_population(ratings: pd.DataFrame, model: pd.Series, *, item: str = "item",
                              rater: str = "rater", rating: str = "rating", probability: pd.Series | None = None,
                              selected: pd.Series | None = None, confidence: float = 0.95,
                              lam: float | None = None) -> RaterPopulationEstimate:
    """Prediction-powered mean rating of the study's items by a rater drawn from the rater
    population (module docstring): the interval accounts for which items were rated *and* which
    raters rated them. Compare :func:`metrics.study.ppi_mean`, whose human rating of an item is a
    fixed number (item sampling only).

    ``ratings``: one row per human rating (columns ``item``, ``rater``, ``rating``; a rater's
    repeated ratings of one item are averaged). ``model``: the LLM's rating of every item of the
    study, indexed by item. Without ``probability`` the rated items are taken as a simple random
    sample of the items; with ``probability`` and ``selected`` (indexed by item; active
    inference) each drawn item is weighted by 1/π. Needs two rated items and two raters.

    Hand-worked (λ = 1): two items, both rated by raters u and v (u one point above v), and a
    third item only the LLM rates. Item means 1.5 and 2.5 against LLM ratings 1 and 2: rectifier
    0.5 on both, estimate mean(1, 2, 1.5) + 0.5 = 2.0.

    >>> r = pd.DataFrame({"item": [0, 0, 1, 1], "rater": ["u", "v", "u", "v"], "rating": [2.0, 1, 3, 2]})
    >>> e = ppi_mean_rater_population(r, pd.Series([1.0, 2.0, 1.5]), lam=1.0)
    >>> e.estimate, e.raters, e.over
    (2.0, 2, 'items and raters')
    """
    from metrics.core._inputs import require_columns
    require_columns(ratings.columns, (item, rater, rating), "ratings")
    model = pd.Series(model, dtype=float)
    if model.isna().any() or not model.index.is_unique:
        raise InputError("model: one finite LLM rating per item is needed")
    given = ratings[[item, rater, rating]].dropna()
    position = model.index.get_indexer(given[item])
    if (position < 0).any():
        raise InputError(f"ratings: item {given[item].to_numpy()[position < 0][0]!r} has no model rating")
    rater_codes, rater_names = pd.factorize(given[rater])
    raters = len(rater_names)
    if raters < 2:
        raise InputError("ratings: a rater population needs ratings from at least two raters")
    # one value per (item, rater): a rater's repeated ratings of an item averaged
    pairs, inverse = np.unique(position * raters + rater_codes, return_inverse=True)
    y = np.bincount(inverse, given[rating].to_numpy(float)) / np.bincount(inverse)
    item_at, rater_at = pairs // raters, pairs % raters
    f = model.to_numpy()
    total_items = len(f)
    k = np.bincount(item_at, minlength=total_items)
    rated = k > 0
    if rated.sum() < 2:
        raise InputError("ratings: at least two items need human ratings")
    item_mean = np.divide(np.bincount(item_at, y, minlength=total_items), k, out=np.full(total_items, np.nan),
                          where=rated)
    if probability is not None:
        fits = _active_fits(item_mean, f, probability, selected, model.index, rated, lam)
    else:
        fits = _srs_fits(item_mean, f, rated, lam)
    lam_used = fits["ppi"]["lam"]
    n, total = int(rated.sum()), len(y)
    share = n / total_items
    between, var_b, n0, rater_df, unbiased = _rater_variance(item_at, rater_at, y - lam_used * f[item_at], k)
    noise = between - n0 * unbiased               # n₀·(MS_B/n₀ − σ̃_B²): a rater mean's noise times m_r
    on_var_b = _between_weight(n0, item_at, k, raters)     # ∂σ̃_B²/∂MS_B
    per_rater_count = np.bincount(rater_at, minlength=raters)
    out = {}
    for name, fit in fits.items():
        weight = fit["weight"]                                  # each rated item's weight in θ̂
        c = np.bincount(rater_at, weight[item_at] / k[item_at], minlength=raters)
        c_sq = float(np.sum(c ** 2))
        coefficient = max(fit["rater_coefficient"](c_sq, k), 0.0)
        second_stage = share * float(np.sum(c ** 2 / per_rater_count))     # (n/M)·Q
        t_raters = max(coefficient * unbiased + second_stage * noise, 0.0)   # σ̃_B²: V unbiased
        variance = fit["t_items"] + t_raters
        # T_items' own rater noise (Δ·σ̂_B²) varies with the raters too: R − 1 degrees of freedom
        items_raters = min(max(c_sq - coefficient, 0.0) * var_b, fit["t_items"])
        on_between = abs((coefficient - second_stage * n0) * on_var_b + second_stage)
        pieces = _Pieces(fit["t_items"], t_raters, items_raters, on_between * between, n, rater_df)
        out[name] = (fit["estimate"], variance, pieces.df(), pieces)
    return _result(out, n=n, N=total_items, lam=lam_used, raters=raters, ratings=total, var_b=var_b,
                   confidence=confidence)


RATER_BOUND_QUANTILE = 0.25   # χ² quantile of the raters' part's upper bound in the degrees of freedom
MIN_DENOMINATOR = 0.5   # n₀ − 1 + g below this: σ̂_B² falls back to MS_B/n₀ (conservative)


def _sharing(item_at, k, raters) -> float:
    """``g = (R − Σk_i²/N)/(R − 1)``: the share of the items' own spread that differences between
    rater means carry (1 when no two raters share an item, 0 when every rater rates every item)."""
    total = len(item_at)
    return float(np.clip((raters - float(np.sum(k.astype(float) ** 2)) / total) / (raters - 1), 0.0, 1.0))


def _between_weight(n0, item_at, k, raters) -> float:
    """The weight of ``MS_B`` in the unbiased ``σ_B²`` (:func:`_rater_variance`; ``1/n₀`` where
    the design leaves too little to subtract, as there)."""
    denominator = n0 - 1 + _sharing(item_at, k, raters)
    return 1.0 / denominator if denominator >= MIN_DENOMINATOR else 1.0 / n0



def _rater_variance(item, rater, y, k) -> tuple[float, float, float, float, float]:
    """``(MS_B, σ̂_B², n₀, ν_B, σ̃_B²)`` of the crossed design by the method of moments on three mean squares
    (Henderson's method 1 as in Searle, Casella & McCulloch 1992, §5.3): the between-rater
    ``MS_B`` (``E = n₀σ_B² + σ_E² + g·σ_A²``, ``g`` from :func:`_sharing`), the within-rater
    ``MS_W`` (``σ_A² + σ_E²``) and the within-item ``S`` (``σ_B² + σ_E²``), so
    ``σ̃_B² = (MS_B − (1 − g)·S − g·MS_W)/(n₀ − 1 + g)``, the unbiased estimate (negative when
    ``MS_B`` falls short of its noise by chance), and ``σ̂_B² = max(σ̃_B², 0)``, the variance component
    reported; ``n₀ = (N − Σm_r²/N)/(R − 1)``. ``ν_B`` is the degrees of freedom of ``MS_B``
    (:func:`_between_df`): ``R − 1`` when the raters rate equally many items, fewer when a few
    raters carry most of the ratings.

    >>> item = np.repeat(np.arange(4), 2); rater = np.tile([0, 1], 4)   # both rate every item
    >>> [round(v, 6) for v in _rater_variance(item, rater, rater + 0.0, np.full(4, 2))]
    [2.0, 0.5, 4.0, 1.0, 0.5]
    """
    m = np.bincount(rater)
    raters, total = len(m), len(y)
    means = np.bincount(rater, y) / m
    between = float(np.sum(m * (means - y.mean()) ** 2)) / (raters - 1)
    within = float(np.sum((y - means[rater]) ** 2)) / (total - raters) if total > raters else 0.0
    n0 = (total - float(np.sum(m ** 2)) / total) / (raters - 1)
    g = _sharing(item, k, raters)
    item_means = np.bincount(item, y, minlength=len(k)) / np.maximum(k, 1)
    pairs = float(np.sum(np.maximum(k - 1, 0)))
    within_items = float(np.sum((y - item_means[item]) ** 2)) / pairs if pairs else within
    if n0 - 1 + g < MIN_DENOMINATOR:
        unbiased = between / n0
    else:
        unbiased = (between - (1 - g) * within_items - g * within) / (n0 - 1 + g)
    var_b = max(unbiased, 0.0)
    noise = (1 - g) * max(within_items - var_b, 0.0) + g * within      # σ_E² + g·σ_A²
    return between, var_b, n0, _between_df(m, var_b, noise), unbiased


def _between_df(m, var_b, noise) -> float:
    """Degrees of freedom of the between-rater mean square ``Σ m_r(ȳ_r − ȳ)²/(R − 1)`` as a
    scaled χ² (Box 1954, *Ann. Math. Statist.* 25(2), Theorem 3.1; Satterthwaite 1946): a
    quadratic form ``ȳ'Aȳ`` in rater means of variances ``v_r = σ_B² + noise/m_r`` has
    ``ν = tr(AΣ)²/tr((AΣ)²)``, ``A = diag(m) − mm'/N``, ``Σ = diag(v)``. With equal ``m_r`` it
    is ``R − 1``; when two raters hold most of the ratings it is near 1, whatever the number of
    light raters, because their means barely move ``MS_B``.

    >>> round(_between_df(np.array([50, 50, 50]), 0.3, 0.6), 6), round(_between_df(np.array([100, 100, 5, 5]), 0.3, 0.6), 2)
    (2.0, 1.37)
    """
    m = m.astype(float)
    v = var_b + noise / m
    if not np.all(v > 0):
        return float(len(m) - 1)
    root = np.sqrt(v)
    a = (np.diag(m) - np.outer(m, m) / m.sum()) * root[:, None] * root[None, :]
    square = float(np.sum(a ** 2))
    return max(float(np.trace(a)) ** 2 / square, 1.0) if square > 0 else float(len(m) - 1)


def _srs_fits(item_mean, f, rated, lam) -> dict:
    """Estimate and variance pieces of the PPI (tuned λ) and human-only (λ = 0) difference
    estimators when the rated items are a simple random sample of all items."""
    n, total = int(rated.sum()), len(f)
    y, fr = item_mean[rated], f[rated]
    share = n / total
    if lam is None:
        var = np.var(fr)
        lam = float(np.clip(np.mean((y - y.mean()) * (fr - fr.mean())) / var, 0.0, 1.0)) if var > 0 else 0.0
    weight = np.where(rated, 1.0 / n, 0.0)

    def fit(lam_value):
        residual = y - lam_value * fr
        return {"lam": lam_value, "estimate": lam_value * f.mean() + residual.mean(), "weight": weight,
                "t_items": (1 - share) * np.var(residual, ddof=1) / n if n > 1 else 0.0,
                "rater_coefficient": lambda c_sq, k: c_sq * (1 + (1 - share) / max(n - 1, 1))
                - (1 - share) * float(np.sum(1 / k[rated])) / (n * max(n - 1, 1))}
    return {"ppi": fit(lam), "classical": fit(0.0)}


def _active_fits(item_mean, f, probability, selected, items: pd.Index, rated, lam) -> dict:
    """The active (1/π-weighted, cross-fitted) PPI and human-only estimators' pieces."""
    from metrics.study._ppi_active import _active_summands
    if selected is None:
        raise InputError("selected: needed with probability (which items were drawn for humans)")
    pi = pd.Series(probability, dtype=float).reindex(items).to_numpy()
    xi = pd.Series(selected).reindex(items).astype("boolean").fillna(False).to_numpy(bool)
    if np.isnan(pi).any():
        raise InputError("probability: every item of the model needs a probability")
    if (rated & ~xi).any():
        raise InputError("ratings: an item not drawn for humans has human ratings")
    if (xi & ~rated).any():
        raise InputError("ratings: every item drawn for humans needs a rating")
    summands = _active_summands(np.where(xi, item_mean, np.nan), f, pi, xi, lam=lam, intercept=True)
    total = len(f)
    weight = np.where(xi, 1.0 / (pi * total), 0.0)
    fits = {}
    for name, z, r, lam_value in (("ppi", summands.z_ppi, summands.r_ppi, summands.lam),
                                  ("classical", summands.z_classical, summands.r_classical, 0.0)):
        fits[name] = {"lam": lam_value, "estimate": float(z.mean()), "weight": weight,
                      "t_items": float(np.sum(xi * r ** 2 * (1 - pi) / pi ** 2)) / total ** 2,
                      "rater_coefficient": lambda c_sq, k: c_sq - float(
                          np.sum((1 - pi[xi]) / (pi[xi] ** 2 * k[xi]))) / total ** 2}
    return fits


class _Pieces(NamedTuple):
    """An estimator's variance terms (module docstring) and what they rest on."""

    t_items: float
    t_raters: float
    items_raters: float       # D: the part of T_items the raters' severities drive
    between_term: float       # C·w·MS_B: the rater term's mean square part
    n: int
    rater_df: float           # the between-rater mean square's degrees of freedom (Box 1954)

    def df(self, n: float | np.ndarray | None = None,
           t_items: float | np.ndarray | None = None) -> float | np.ndarray:
        """Satterthwaite's degrees of freedom with the raters' part at its upper confidence
        bound (module docstring), of the design with ``n`` rated items and the item term
        ``t_items``, by default the observed; arrays of designs give an array."""
        from scipy import stats
        n = self.n if n is None else np.asarray(n, dtype=float)
        t_items = self.t_items if t_items is None else np.asarray(t_items, dtype=float)
        items_raters = np.minimum(self.items_raters, t_items)
        rater_df = self.rater_df
        bound_factor = rater_df / stats.chi2.ppf(RATER_BOUND_QUANTILE, rater_df)
        # the raters' part at its bound, less it: MS_B at ν_B·MS_B/χ²_{ν_B}(0.25) in its mean square part
        raised = (bound_factor - 1) * (self.between_term + items_raters)
        denominator = ((t_items - items_raters) ** 2 / np.maximum(n - 1, 1)
                       + (self.between_term + items_raters + raised) ** 2 / rater_df)
        with np.errstate(divide="ignore", invalid="ignore"):
            df = np.where(denominator > 0, (t_items + self.t_raters + raised) ** 2 / denominator, math.inf)
        return float(df) if df.ndim == 0 else df


def effective_items(n: int, ppi: Interval, classical: Interval) -> float:
    """``n·(human-only width / PPI width)²``: the human-rated items the human-only estimate would
    need for an interval as narrow as PPI's, were its width to shrink as ``1/√n`` (the one
    definition of "effective items" the dashboard, the report and docs/studies.md use; "saved" is
    ``1 − n/effective``). ``n`` when both widths are 0, ∞ when only PPI's is.

    >>> effective_items(100, Interval(1.0, 2.0), Interval(0.5, 2.5))
    400.0
    """
    ppi_width, classical_width = ppi.high - ppi.low, classical.high - classical.low
    if ppi_width > 0:
        ratio = classical_width / ppi_width
        return float(n) if math.isclose(ratio, 1.0, rel_tol=1e-9) else n * ratio ** 2
    return float(n) if classical_width == 0 else math.inf


def _result(out, *, n, N, lam, raters, ratings, var_b, confidence) -> RaterPopulationEstimate:
    from scipy import stats

    def interval(estimate, variance, df):
        half = float(stats.t.ppf(0.5 + confidence / 2, df)) * math.sqrt(variance) if variance > 0 else 0.0
        return Interval(float(estimate - half), float(estimate + half))

    estimate, variance, df, _ = out["ppi"]
    classical, classical_variance, classical_df, _ = out["classical"]
    effective = effective_items(n, interval(estimate, variance, df), interval(classical, classical_variance,
                                                                               classical_df))
    return RaterPopulationEstimate(
        estimate=float(estimate), interval=interval(estimate, variance, df), classical=float(classical),
        classical_interval=interval(classical, classical_variance, classical_df), lam=float(lam), n=n, N=N,
        effective_n=float(effective), saved=float(1 - n / effective) if effective > 0 else 0.0, df=float(df),
        classical_df=float(classical_df), raters=raters, ratings=ratings, rater_variance=var_b)
