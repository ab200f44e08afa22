"""Reliability of an ordinal rating study with incomplete designs, each statistic with a
bootstrap interval, overall and per stratum of the items.

All functions take the items × raters matrix of :func:`metrics.study._agreement.rating_matrix` (NaN =
not rated); every rater may see a different subset of the items.

- Krippendorff's α at each level, with Hayes & Krippendorff's (2007) bootstrap: the KALPHA
  macro's resampling of pairable values from the coincidence matrix, including its correction
  of resamples with α = 1 (:func:`hayes_krippendorff_bootstrap`); the items-resampling
  interval of :func:`metrics.study._agreement.bootstrap_intervals` is reported beside it.
- Gwet's AC2 (Gwet 2014, Handbook of Inter-Rater Reliability §3–4) with ordinal or quadratic
  weights, as irrCAC's ``CAC.gwet`` computes it for raw ratings with missing values.
- ICC for crossed, incomplete designs ``y_ij = μ + a_i + b_j + e_ij`` (item, rater, residual
  variances σ²_a, σ²_b, σ²_e) from the mean squared difference of rating pairs that share the
  item (D_item = 2σ²_b + 2σ²_e), the rater (D_rater = 2σ²_a + 2σ²_e) or neither (D_none =
  2σ²_a + 2σ²_b + 2σ²_e). ICC(A,1) = σ²_a / (σ²_a + σ²_b + σ²_e), ICC(C,1) = σ²_a / (σ²_a + σ²_e).
  On a complete design these are exactly Shrout & Fleiss's two-way ANOVA ICC(2,1) and ICC(3,1).
- The leave-one-rater-out human ceiling for metric–human agreement: each rater's ratings
  against the mean of the other raters' ratings of the same items (Spearman ρ and Eq. 13).
- A paired bootstrap test of two metrics' agreement with the mean human rating.

Intervals are percentile bootstrap intervals over items (the units) unless said otherwise.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from metrics.core._choices import LEVELS, SCALE
from metrics.core._constraints import OPEN_FRACTION, RANDOM_SEED, RESAMPLES, Options, validate_params
from metrics.core._errors import InputError
from metrics.core._intervals import kalpha_interval, percentile_interval
from metrics.study._agreement import (
    alpha_of_matrix,
    bootstrap_intervals,
    delta_squared,
    eq13_agreement,
    require_shared_item,
    value_counts,
)

WEIGHTS = ("identity", "ordinal", "quadratic")


def _item_weights(n_items: int, n_resamples: int, seed: int) -> np.ndarray:
    """Resamples × items: how often each item is drawn in each bootstrap resample."""
    rng = np.random.default_rng(seed)
    return rng.multinomial(n_items, np.full(n_items, 1.0 / n_items), size=n_resamples).astype(float)


# ------------------------------------------------------------------ Krippendorff's alpha
def hayes_krippendorff_bootstrap(matrix: pd.DataFrame, *, level: str = "ordinal",
                                 n_resamples: int = 1000, seed: int = 0, scale=SCALE,
                                 uniforms: np.ndarray | None = None) -> np.ndarray:
    """Bootstrap distribution of α as Hayes & Krippendorff's KALPHA macro (v3.0) draws it.

    Each resample draws ``M = min(25·q, (judges − 1)·n / 2)`` pairs of values (q: non-zero cells of
    the coincidence matrix o, n: pairable values) with probabilities ``2·o_ck / n`` (c < k) and
    ``o_cc / n``, and sets ``α* = 1 − Σ δ²(pair) / (M · D_e)`` with the observed expected
    disagreement ``D_e = Σ e_ck δ²_ck / n``; α* below −1 becomes −1. Of the resamples with
    α* = 1, ``round(B · Σ_c (o_cc / n)^P)`` (P: pairs of values in the data) are set to 0
    (all of them when only one value occurs on the diagonal). ``uniforms`` (resamples × M) replaces
    the random draws (for tests).
    """
    counts = value_counts(matrix, scale)
    m = counts.sum(axis=1)
    counts, m = counts[m >= 2], m[m >= 2]
    coincidence = (counts[:, :, None] * counts[:, None, :]
                   - np.einsum("ic,ck->ick", counts, np.eye(counts.shape[1]))) / (m - 1)[:, None, None]
    o = coincidence.sum(axis=0)
    n_c = o.sum(axis=1)
    n = n_c.sum()
    delta = delta_squared(level, scale, n_c[None, :])[0]
    expected = (np.outer(n_c, n_c) - np.diag(n_c)) / (n - 1)
    d_e = float((expected * delta).sum() / n)
    q = int((o > 0).sum())
    n_judges = matrix.shape[1]
    draws = int(min(25 * q, (n_judges - 1) * n / 2))
    upper = np.triu_indices(len(n_c))
    prob = np.where(upper[0] == upper[1], 1.0, 2.0) * o[upper] / n
    cumulative = np.cumsum(prob)
    if uniforms is None:
        uniforms = np.random.default_rng(seed).random((n_resamples, draws))
    picked = np.minimum(np.searchsorted(cumulative, uniforms), len(prob) - 1)
    with np.errstate(invalid="ignore", divide="ignore"):   # d_e = 0: no variation, alpha undefined (NaN)
        alphas = 1.0 - delta[upper][picked].sum(axis=1) / (d_e * uniforms.shape[1])
    alphas = np.maximum(alphas, -1.0)
    diagonal = np.diag(o)
    n_nonzero = int((diagonal > 0).sum())
    ones = np.flatnonzero(alphas == 1.0)
    if n_nonzero == 1:
        alphas[ones] = 0.0
    else:
        pairs = float((m * (m - 1) / 2).sum())
        expected_ones = int(np.round(len(alphas) * np.sum((diagonal / n) ** pairs)))
        alphas[ones[:min(expected_ones, len(ones))]] = 0.0
    return alphas


def alpha_all_levels(matrix: pd.DataFrame, *, n_resamples: int = 1000, confidence: float = 0.95,
                     seed: int = 0, scale=SCALE) -> dict:
    """α at every level with the Hayes & Krippendorff interval (``ci``) and the interval from
    resampling items (``ci_units``)."""
    out: dict = {}
    for level in LEVELS:
        if level == "ratio" and min(scale) < 0:
            continue
        value = alpha_of_matrix(matrix, level=level, scale=scale)
        entry: dict = {"value": value}
        if n_resamples:
            entry["ci"] = list(kalpha_interval(hayes_krippendorff_bootstrap(
                matrix, level=level, n_resamples=n_resamples, seed=seed, scale=scale), confidence))
            entry["ci_units"] = bootstrap_intervals(matrix, level=level, n_resamples=n_resamples,
                                                    confidence=confidence, seed=seed,
                                                    scale=scale)["krippendorff_alpha"]
        out[level] = entry
    return out


# ------------------------------------------------------------------ Gwet's AC2
def agreement_weights(kind: str, scale=SCALE) -> np.ndarray:
    """Gwet's weights (irrCAC ``Weights``): identity, ordinal ``1 − C(|k − l| + 1, 2) / max``,
    quadratic ``1 − ((v_k − v_l) / (v_max − v_min))²``; ``kind`` one of :data:`WEIGHTS` (:func:`gwet_ac2`
    checks it).

    >>> agreement_weights("ordinal", (1, 2, 3))[0].tolist()
    [1.0, 0.6666666666666667, 0.0]
    """
    values = np.asarray(scale, float)
    k = np.arange(len(values))
    if kind == "identity":
        return np.eye(len(values))
    if kind == "ordinal":
        span = np.abs(k[:, None] - k[None, :]) + 1
        raw = span * (span - 1) / 2
        return 1 - raw / raw.max()
    return 1 - ((values[:, None] - values[None, :]) / (values.max() - values.min())) ** 2   # quadratic


@validate_params({"weights": Options(WEIGHTS)})
def gwet_ac2(matrix: pd.DataFrame, *, weights: str = "ordinal", scale=SCALE,
             item_weights: np.ndarray | None = None) -> np.ndarray | float:
    """Gwet's AC2 (AC1 with identity weights) for raw ratings with missing values:

    ``p_a = mean over items with r_i ≥ 2 of Σ_k r_ik (r*_ik − 1) / (r_i (r_i − 1))`` with
    ``r*_ik = Σ_l w_kl r_il``; ``π_k = mean over items of r_ik / r_i``;
    ``p_e = Σ_kl w_kl / (q (q − 1)) · Σ_k π_k (1 − π_k)``; ``AC2 = (p_a − p_e) / (1 − p_e)``.
    ``item_weights`` (resamples × items) gives one AC2 per bootstrap resample.

    >>> m = pd.DataFrame({"x": [0, 1, 2, 4.0], "y": [0, 1, 3, 4.0]})
    >>> round(float(gwet_ac2(m, weights="quadratic")), 4)
    0.9416
    """
    w = agreement_weights(weights, scale)
    counts = value_counts(matrix, scale)
    r = counts.sum(axis=1)
    rated = r >= 1
    counts, r = counts[rated], r[rated]
    paired = r >= 2
    pa_item = np.where(paired, (counts * (counts @ w.T - 1)).sum(axis=1)
                       / np.where(paired, r * (r - 1), 1), 0.0)
    share = counts / r[:, None]
    single = item_weights is None
    iw = np.ones((1, len(r))) if item_weights is None else np.atleast_2d(item_weights)[:, rated]
    q = len(scale)
    with np.errstate(invalid="ignore", divide="ignore"):
        pa = (iw @ pa_item) / (iw @ paired.astype(float))
        pi = (iw @ share) / iw.sum(axis=1, keepdims=True)
        pe = w.sum() / (q * (q - 1)) * (pi * (1 - pi)).sum(axis=1)
        ac2 = (pa - pe) / (1 - pe)
    return float(ac2[0]) if single else ac2


# ------------------------------------------------------------------ ICC
def variance_components(matrix: pd.DataFrame, item_weights: np.ndarray | None = None) -> dict:
    """Item, rater and residual variances of the crossed model from pair differences (see the
    module docstring); arrays over resamples when ``item_weights`` (resamples × items) is given."""
    y = matrix.to_numpy()
    rated = ~np.isnan(y)
    y0 = np.where(rated, y, 0.0)
    single = item_weights is None
    w = np.ones((1, len(y))) if item_weights is None else np.atleast_2d(item_weights)
    m, s1, s2 = rated.sum(axis=1), y0.sum(axis=1), (y0 ** 2).sum(axis=1)

    def pair_sums(count, first, second):  # Σ over unordered pairs of (y − y')², number of pairs
        return count * second - first ** 2, count * (count - 1) / 2

    item_ss, item_pairs = (w @ (m * s2 - s1 ** 2)), w @ (m * (m - 1) / 2)
    n_j, s1_j, s2_j = w @ rated, w @ y0, w @ y0 ** 2
    rater_ss, rater_pairs = (pair_sums(n_j, s1_j, s2_j)[0].sum(axis=1),
                             pair_sums(n_j, s1_j, s2_j)[1].sum(axis=1))
    all_ss, all_pairs = pair_sums(w @ m, w @ s1, w @ s2)
    none_ss, none_pairs = all_ss - item_ss - rater_ss, all_pairs - item_pairs - rater_pairs
    with np.errstate(invalid="ignore", divide="ignore"):
        d_item, d_rater, d_none = item_ss / item_pairs, rater_ss / rater_pairs, none_ss / none_pairs
    out = {"item": (d_none - d_item) / 2, "rater": (d_none - d_rater) / 2,
           "residual": (d_item + d_rater - d_none) / 2}
    return {k: float(v[0]) for k, v in out.items()} if single else out


def icc(matrix: pd.DataFrame, item_weights: np.ndarray | None = None) -> dict:
    """``{"agreement": ICC(A,1), "consistency": ICC(C,1)}`` for one rater (see module docstring).

    >>> m = pd.DataFrame({"x": [1, 2, 3, 4.0], "y": [2, 3, 4, 4.0], "z": [1, 3, 3, np.nan]})
    >>> {k: round(v, 3) for k, v in icc(m).items()}
    {'agreement': 0.798, 'consistency': 0.91}
    """
    vc = {k: np.asarray(v, float) for k, v in variance_components(matrix, item_weights).items()}
    with np.errstate(invalid="ignore", divide="ignore"):   # no variance at all: NaN, not an error
        out = {"agreement": vc["item"] / (vc["item"] + vc["rater"] + vc["residual"]),
               "consistency": vc["item"] / (vc["item"] + vc["residual"])}
    # a correlation: moment estimates of the components can be negative on few items and push the
    # ratio outside [-1, 1] (a bootstrap bound of -1.08 was seen); it is kept to the ICC's range
    out = {k: np.clip(v, -1.0, 1.0) for k, v in out.items()}
    return {k: float(v) if v.ndim == 0 else v for k, v in out.items()}


# ------------------------------------------------------------------ human ceiling, paired test
RANK_TABLE_LIMIT = 20_000_000  # resamples × distinct values up to which ranks come from counts


def resampled_ranks(x: np.ndarray, idx: np.ndarray) -> np.ndarray:
    """Ranks, ties averaged, of each bootstrap resample ``x[idx]`` (one row of ``idx`` each):
    ``scipy.stats.rankdata(x[idx], axis=-1)``, from counts.

    Ratings and their means take few distinct values: with ``c[r, v]`` the count of the v-th
    smallest value in resample r, that value ranks ``Σ_{u<v} c[r, u] + (c[r, v] + 1) / 2``
    (fast path; beyond ``RANK_TABLE_LIMIT`` counts, ``rankdata`` itself).

    >>> resampled_ranks(np.array([2., 0., 1.]), np.array([[0, 1, 0, 2]]))
    array([[3.5, 1. , 3.5, 2. ]])
    """
    values, codes = np.unique(np.asarray(x, float), return_inverse=True)
    codes = codes[idx]
    n_rows, k = codes.shape[0], len(values)
    if n_rows * k > RANK_TABLE_LIMIT:   # many distinct values: the count table would be too big
        return stats.rankdata(np.asarray(x, float)[idx], axis=-1)
    counts = np.bincount((codes + k * np.arange(n_rows)[:, None]).ravel(),
                         minlength=n_rows * k).reshape(n_rows, k)
    below = np.cumsum(counts, axis=1) - counts
    return np.take_along_axis(below + (counts + 1) / 2.0, codes, axis=1)


def _spearman_rows(x: np.ndarray, y: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
    """Spearman ρ of x and y (ties averaged), or of each resample ``x[idx], y[idx]``."""
    if idx is None:
        rx, ry = stats.rankdata(x, axis=-1), stats.rankdata(y, axis=-1)
    else:
        rx, ry = resampled_ranks(x, idx), resampled_ranks(y, idx)
    rx = rx - rx.mean(axis=-1, keepdims=True)
    ry = ry - ry.mean(axis=-1, keepdims=True)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (rx * ry).sum(axis=-1) / np.sqrt((rx ** 2).sum(axis=-1) * (ry ** 2).sum(axis=-1))


def _mean_agreement(x: np.ndarray, y: np.ndarray, idx: np.ndarray | None = None) -> np.ndarray:
    """Mean Eq. 13 agreement of x and y, or of each resample ``x[idx], y[idx]``."""
    return eq13_agreement(x, y).mean() if idx is None else eq13_agreement(x[idx], y[idx]).mean(axis=-1)


def _mean_defined(values, axis=0):
    """Mean over ``axis`` of the finite values (NaN where none is: a constant rater's ρ)."""
    values = np.asarray(values, float)
    finite = np.isfinite(values)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(finite, values, 0).sum(axis=axis) / finite.sum(axis=axis)


def _resampled(n: int, n_resamples: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))


def human_ceiling(matrix: pd.DataFrame, *, n_resamples: int = 1000, confidence: float = 0.95,
                  seed: int = 0) -> dict:
    """How well one human agrees with the others: for each rater, Spearman ρ and Eq. 13
    agreement between their ratings and the mean rating of the other raters on the same items;
    the ceiling is the mean over raters (items resampled for the interval, per rater)."""
    y = matrix.to_numpy()
    rated = ~np.isnan(y)
    totals, counts = np.nansum(y, axis=1), rated.sum(axis=1)
    per_rater, rho_boot, agree_boot = {}, [], []
    for j, name in enumerate(matrix.columns):
        shared = rated[:, j] & (counts > 1)
        if shared.sum() < 3:
            continue
        own = y[shared, j]
        others = (totals[shared] - own) / (counts[shared] - 1)
        per_rater[str(name)] = {"n": int(shared.sum()),
                                "spearman": float(_spearman_rows(own, others)),
                                "agreement": float(eq13_agreement(own, others).mean())}
        if n_resamples:
            idx = _resampled(len(own), n_resamples, seed + j)
            rho_boot.append(_spearman_rows(own, others, idx))
            agree_boot.append(eq13_agreement(own[idx], others[idx]).mean(axis=1))
    if not per_rater:
        raise InputError("the human ceiling needs raters who share at least 3 items with others")
    out = {"spearman": float(_mean_defined([r["spearman"] for r in per_rater.values()])),
           "agreement": float(np.mean([r["agreement"] for r in per_rater.values()])),
           "per_rater": per_rater}
    if n_resamples:
        out["spearman_ci"] = list(percentile_interval(_mean_defined(np.array(rho_boot)), confidence))
        out["agreement_ci"] = list(percentile_interval(np.mean(agree_boot, axis=0), confidence))
    return out


def paired_metric_test(metric_a, metric_b, human, *, n_resamples: int = 10_000,
                       confidence: float = 0.95, seed: int = 0) -> dict:
    """Paired bootstrap (items resampled) of the difference between two metrics' agreement with
    the mean human rating (all on 0–4): Spearman ρ and Eq. 13 agreement, A − B, each with its
    interval and a two-sided p-value ``2 · min(P*(Δ ≤ 0), P*(Δ ≥ 0))``."""
    a, b, h = (np.asarray(v, float) for v in (metric_a, metric_b, human))
    ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(h)
    a, b, h = a[ok], b[ok], h[ok]
    if len(a) < 3:
        raise InputError("the paired test needs at least 3 items with both metrics and ratings")
    idx = _resampled(len(a), n_resamples, seed)
    out: dict = {"n": int(len(a))}
    for name, fn in (("spearman", _spearman_rows), ("agreement", _mean_agreement)):
        delta = float(fn(a, h) - fn(b, h))
        boot = fn(a, h, idx) - fn(b, h, idx)
        boot = boot[np.isfinite(boot)]
        p = float(min(1.0, 2 * min(np.mean(boot <= 0), np.mean(boot >= 0)))) if len(boot) else float("nan")
        out[name] = {"a": float(fn(a, h)), "b": float(fn(b, h)), "difference": delta,
                     "ci": list(percentile_interval(boot, confidence)), "p_value": p}
    return out


# ------------------------------------------------------------------ everything, per stratum
@validate_params({"n_resamples": RESAMPLES, "confidence": OPEN_FRACTION, "seed": RANDOM_SEED})
def reliability(matrix: pd.DataFrame, *, n_resamples: int = 1000, confidence: float = 0.95,
                seed: int = 0, scale=SCALE) -> dict:
    """α at every level, AC2 (ordinal, quadratic), ICC and the human ceiling, with intervals."""
    require_shared_item(matrix, "reliability")
    weights = _item_weights(len(matrix), n_resamples, seed) if n_resamples else None
    out: dict = {"n_items": int(len(matrix)), "n_raters": int(matrix.shape[1]),
           "n_ratings": int((~matrix.isna()).to_numpy().sum()),
           "krippendorff_alpha": alpha_all_levels(matrix, n_resamples=n_resamples,
                                                  confidence=confidence, seed=seed, scale=scale)}
    out["gwet_ac2"] = {}
    for kind in ("ordinal", "quadratic"):
        entry: dict = {"value": gwet_ac2(matrix, weights=kind, scale=scale)}
        if weights is not None:
            entry["ci"] = list(percentile_interval(gwet_ac2(matrix, weights=kind, scale=scale,
                                                            item_weights=weights), confidence))
        out["gwet_ac2"][kind] = entry
    point = icc(matrix)
    boot = icc(matrix, weights) if weights is not None else None
    out["icc"] = {kind: {"value": float(point[kind]),
                         **({"ci": list(percentile_interval(boot[kind], confidence))} if boot else {})}
                  for kind in ("agreement", "consistency")}
    out["icc"]["variance_components"] = variance_components(matrix)
    try:
        out["human_ceiling"] = human_ceiling(matrix, n_resamples=n_resamples, confidence=confidence,
                                             seed=seed)
    except InputError as exc:
        out["human_ceiling"] = {"unavailable": str(exc)}
    return out


def reliability_by_stratum(matrix: pd.DataFrame, strata: pd.Series, **options) -> dict:
    """:func:`reliability` for the items of each stratum value (``strata``: item_id → value);
    strata with fewer than 2 items rated twice are listed with the reason."""
    out = {}
    for value in sorted(strata.dropna().unique(), key=str):
        keys = strata.index[strata == value]
        sub = matrix.loc[matrix.index.intersection(keys)]
        pairable = int(((~sub.isna()).sum(axis=1) >= 2).sum())
        key = str(int(value)) if isinstance(value, (int, float, np.integer, np.floating)) \
            and float(value).is_integer() else str(value)
        if pairable < 2:
            out[key] = {"n_items": int(len(sub)), "unavailable": "fewer than 2 items rated twice"}
            continue
        out[key] = reliability(sub.dropna(axis=1, how="all"), **options)
    return out
