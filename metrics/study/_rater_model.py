"""An ordinal many-facet rater model: item scores corrected for who rated them, with errors.

Cumulative-logit (graded response) model with a severity and a consistency per rater and
thresholds shared by all raters (Samejima's graded model with Linacre's rater facet). Item
``i`` has a latent similarity ``θ_i ~ N(0, 1)``; rater ``j`` a severity ``b_j`` (Σ b_j = 0) and
a discrimination ``a_j > 0``; the K − 1 ordered thresholds ``τ_0 < … < τ_{K−2}`` cut the scale:

    P(y_ij ≤ k) = σ(a_j · (τ_k − θ_i + b_j)),        σ(u) = 1 / (1 + e^{−u})

so a severe rater (b_j > 0) gives lower ratings and an inconsistent one (small a_j) answers
almost regardless of the item. The parameters are fitted by marginal maximum likelihood (θ
integrated out on a fixed grid, Bock & Aitkin 1981) with weak normal priors on log a_j, b_j
and the log threshold gaps, which keep raters with few ratings and unused scale points finite.

Outputs, on the rating scale:

- item ``score``: the posterior mean of ``m(θ_i) = Σ_k v_k P(y = v_k | θ_i)`` for a reference
  rater of severity 0 and the median discrimination; ``se``: its posterior standard deviation;
  ``n``: the item's ratings.
- rater ``severity``: how many scale points lower than the reference rater this rater's
  severity puts an item, averaged over the study's items (positive = strict); ``consistency``:
  ``a_j`` over the median discrimination (1 = typical, smaller = noisier); ``flag``:
  ``"constant"`` or ``"random"`` for raters whose answers look constant or unrelated to the
  items (:func:`careless_raters`), else None. Flagged raters are left out of the fit: their
  consistency is 0 and their severity the mean of (item score − their rating).
- item ``n``: the ratings the score rests on (flagged raters' ratings not counted).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import optimize, sparse
from scipy.special import expit, logsumexp

from metrics.core._choices import SCALE
from metrics.core._constraints import POSITIVE, Whole, validate_params
from metrics.core._errors import InputError
from metrics.study._agreement import rating_matrix

GRID = np.linspace(-6.0, 6.0, 121)
LOG_PRIOR = -0.5 * GRID ** 2 - logsumexp(-0.5 * GRID ** 2)
PRIOR_SD = {"log_discrimination": 2.0, "severity": 1.0, "log_gap": 2.0}
CONSTANT_SD_RATIO, MIN_ITEMS_CONSTANT = 0.25, 5
MIN_SPREAD = 0.125  # of the scale's range: others' means must vary this much to judge a rater
RANDOM_CORRELATION, MIN_ITEMS_RANDOM, TYPICAL_CORRELATION = 0.2, 10, 0.5
OPEN_END = 1e6


@dataclass
class RaterModel:
    """A fitted model: ``items`` (index item_id; ``score, se, n``), ``raters`` (index annotator;
    ``severity, consistency, flag``) and the latent-scale parameters."""

    items: pd.DataFrame
    raters: pd.DataFrame
    thresholds: np.ndarray
    discrimination: pd.Series
    severity_logit: pd.Series
    scale: tuple
    log_likelihood: float
    excluded: tuple = ()  # flagged raters, left out of the fit

    def to_dict(self) -> dict:
        return {
            "items": {str(i): {"score": float(r.score), "se": float(r.se), "n": int(r.n)}
                      for i, r in self.items.iterrows()},
            "raters": {str(a): {"severity": float(r.severity), "consistency": float(r.consistency),
                                "flag": r.flag} for a, r in self.raters.iterrows()},
        }

    def parameters(self) -> dict:
        """The fitted rater parameters (JSON-able), enough for :meth:`item_posterior`."""
        return {"thresholds": [float(t) for t in self.thresholds], "scale": list(self.scale),
                "discrimination": {str(k): float(v) for k, v in self.discrimination.items()},
                "severity_logit": {str(k): float(v) for k, v in self.severity_logit.items()},
                "excluded": list(self.excluded)}

    @classmethod
    def from_parameters(cls, params: dict) -> RaterModel:
        """A model that scores items with stored rater parameters (no items or rater table)."""
        return cls(items=pd.DataFrame(columns=["score", "se", "n"]),
                   raters=pd.DataFrame(columns=["severity", "consistency", "flag"]),
                   thresholds=np.asarray(params["thresholds"], float),
                   discrimination=pd.Series(params["discrimination"], dtype=float),
                   severity_logit=pd.Series(params["severity_logit"], dtype=float),
                   scale=tuple(params["scale"]), log_likelihood=float("nan"),
                   excluded=tuple(params.get("excluded", ())))

    def item_posterior(self, ratings: pd.DataFrame) -> pd.DataFrame:
        """Scores of items from their ratings with the fitted rater parameters held fixed (an
        unseen rater counts as a reference rater, a flagged one not at all): cheap enough to run
        after every rating."""
        matrix = rating_matrix(ratings)
        matrix = matrix.loc[:, ~matrix.columns.isin(self.excluded)]
        a = self.discrimination.reindex(matrix.columns).fillna(self._reference_a).to_numpy()
        b = self.severity_logit.reindex(matrix.columns).fillna(0.0).to_numpy()
        data = _long(matrix, self.scale)
        log_post = _log_posterior(data, self.thresholds, np.log(a), b)
        score, se = _score(log_post, self.thresholds, self._reference_a, self.scale)
        return pd.DataFrame({"score": score, "se": se, "n": data.n_per_item}, index=matrix.index)

    @property
    def _reference_a(self) -> float:
        return float(np.median(self.discrimination))


@dataclass
class _Data:
    """Ratings as counts per item of each (rater, category) pair: every rating with the same
    pair has the same likelihood over the grid, so the model works on raters × categories ×
    grid tables and two sparse products."""

    counts: sparse.csr_matrix  # items × (rater · n_categories + category)
    n_raters: int
    n_categories: int
    n_per_item: np.ndarray
    category_totals: np.ndarray


def _long(matrix: pd.DataFrame, scale) -> _Data:
    values = matrix.to_numpy()
    item, rater = np.nonzero(~np.isnan(values))
    category = np.searchsorted(np.asarray(scale, float), values[item, rater])
    k = len(scale)
    counts = sparse.csr_matrix((np.ones(len(item)), (item, rater * k + category)),
                               shape=(values.shape[0], values.shape[1] * k))
    return _Data(counts, values.shape[1], k, np.bincount(item, minlength=values.shape[0]),
                 np.bincount(category, minlength=k))


def _tables(thresholds, log_a, b):
    """``u = a_j (τ_t + b_j − θ_q)`` at every padded threshold (raters × thresholds + 2 × grid;
    the scale's ends are ±``OPEN_END``, where σ is 0 or 1 and its slope 0), σ(u), and the
    log-probability of each category (raters × categories × grid)."""
    tau = np.concatenate([[-OPEN_END], thresholds, [OPEN_END]])
    a = np.exp(log_a)
    u = a[:, None, None] * (tau[None, :, None] + b[:, None, None] - GRID[None, None, :])
    cdf = expit(u)
    prob = np.maximum(cdf[:, 1:] - cdf[:, :-1], 1e-300)
    return u, cdf, prob


def _log_posterior(data: _Data, thresholds, log_a, b):
    """Unnormalised log posterior of each item's θ on the grid (items × grid)."""
    _, _, prob = _tables(thresholds, log_a, b)
    return data.counts @ np.log(prob).reshape(-1, len(GRID)) + LOG_PRIOR[None, :]


def _thresholds(params, k):
    return params[0] + np.concatenate([[0.0], np.cumsum(np.exp(params[1:k]))])


def _objective(params, data: _Data, n_raters: int, n_thresholds: int):
    """Negative penalised marginal log-likelihood and its gradient."""
    t_params = params[:n_thresholds]
    log_a = params[n_thresholds:n_thresholds + n_raters]
    raw_b = params[n_thresholds + n_raters:]
    b = raw_b - raw_b.mean()
    tau = _thresholds(t_params, n_thresholds)
    u, cdf, prob = _tables(tau, log_a, b)
    log_joint = data.counts @ np.log(prob).reshape(-1, len(GRID)) + LOG_PRIOR[None, :]
    log_marginal = logsumexp(log_joint, axis=1)
    posterior = np.exp(log_joint - log_marginal[:, None])
    weight = (data.counts.T @ posterior).reshape(prob.shape) / prob  # Σ posterior / p per pair
    slope = cdf * (1 - cdf)
    d_up, d_lo = slope[:, 1:] * weight, slope[:, :-1] * weight
    # u = a (τ + b − θ): ∂u/∂log a = u, ∂u/∂b = a, ∂u/∂τ = a
    a = np.exp(log_a)
    g_log_a = (d_up * u[:, 1:] - d_lo * u[:, :-1]).sum(axis=(1, 2))
    g_b = a * (d_up - d_lo).sum(axis=(1, 2))
    per_threshold = (a[:, None] * (d_up.sum(axis=2)[:, :-1] - d_lo.sum(axis=2)[:, 1:])).sum(axis=0)
    gaps = np.exp(t_params[1:])
    g_t = np.concatenate([[per_threshold.sum()], gaps * np.cumsum(per_threshold[::-1])[::-1][1:]])
    sd = PRIOR_SD
    penalty = (0.5 * np.sum(log_a ** 2) / sd["log_discrimination"] ** 2
               + 0.5 * np.sum(b ** 2) / sd["severity"] ** 2
               + 0.5 * np.sum(t_params[1:] ** 2) / sd["log_gap"] ** 2)
    g_log_a = g_log_a - log_a / sd["log_discrimination"] ** 2
    g_b = g_b - b / sd["severity"] ** 2
    g_t[1:] -= t_params[1:] / sd["log_gap"] ** 2
    g_raw_b = g_b - g_b.mean()
    value = -(log_marginal.sum() - penalty)
    return value, -np.concatenate([g_t, g_log_a, g_raw_b])


def _expected_rating(thresholds, a, scale, theta=None):
    """``m(θ)``: the expected rating of a rater with discrimination ``a`` and severity 0."""
    theta = GRID if theta is None else theta
    cum = expit(a * (np.asarray(thresholds)[None, :] - np.asarray(theta)[:, None]))
    probs = np.diff(np.concatenate([np.zeros((len(cum), 1)), cum, np.ones((len(cum), 1))], axis=1), axis=1)
    return probs @ np.asarray(scale, float)


def _score(log_post, thresholds, a_ref, scale):
    post = np.exp(log_post - logsumexp(log_post, axis=1)[:, None])
    m = _expected_rating(thresholds, a_ref, scale)
    score = post @ m
    se = np.sqrt(np.maximum(post @ m ** 2 - score ** 2, 0.0))
    return score, se


def careless_raters(matrix: pd.DataFrame, scale=SCALE) -> pd.Series:
    """Flag per rater (None, ``"constant"`` or ``"random"``), judged against the mean rating the
    other raters gave the same items (``o``), over the rater's items that others rated too:
    constant when SD(ratings) < ``CONSTANT_SD_RATIO`` · SD(o) (at least ``MIN_ITEMS_CONSTANT``
    items), random when Pearson r(ratings, o) < ``RANDOM_CORRELATION`` while the median rater's
    r is at least ``TYPICAL_CORRELATION`` (at least ``MIN_ITEMS_RANDOM`` items). Nobody is judged
    where SD(o) is below ``MIN_SPREAD`` of the scale's range, and nobody is called random when
    the raters hardly agree with each other at all (items that barely differ say nothing about
    a rater).

    >>> m = pd.DataFrame({"x": [0, 1, 2, 3, 4.0], "y": [0, 1, 3, 3, 4.0], "z": [2.0] * 5})
    >>> careless_raters(m).tolist()
    [None, None, 'constant']
    """
    values = matrix.to_numpy()
    rated = ~np.isnan(values)
    totals, counts = np.nansum(values, axis=1), rated.sum(axis=1)
    min_spread = MIN_SPREAD * (max(scale) - min(scale))
    flags: list[str | None] = []
    correlations: list[float] = []
    for j in range(values.shape[1]):
        others = counts - rated[:, j]
        shared = rated[:, j] & (others > 0)
        own = values[shared, j]
        mean_others = (totals[shared] - own) / others[shared]
        judged = len(own) >= MIN_ITEMS_CONSTANT and np.std(mean_others) >= min_spread
        constant = judged and np.std(own) < CONSTANT_SD_RATIO * np.std(mean_others)
        flags.append("constant" if constant else None)
        correlations.append(np.corrcoef(own, mean_others)[0, 1]
                            if judged and not constant and len(own) >= MIN_ITEMS_RANDOM
                            and np.std(own) > 0 else np.nan)
    correlation = np.array(correlations)
    if np.isfinite(correlation).any() and np.nanmedian(correlation) >= TYPICAL_CORRELATION:
        flags = ["random" if r < RANDOM_CORRELATION else f for f, r in zip(flags, correlation)]
    return pd.Series(flags, index=matrix.columns, dtype=object)


def fit_rater_model(ratings: pd.DataFrame, *, scale=SCALE) -> RaterModel:
    """Fit the ordinal rater model to long ratings (``item_id, annotator, rating``; the latest
    rating of an annotator per item counts, as in :func:`metrics.study._agreement.rating_matrix`).
    Raters flagged by :func:`careless_raters` are left out of the fit (unless every rater is).

    >>> r = pd.DataFrame({"item_id": list("aabbcc"), "annotator": list("xyxyxy"),
    ...                   "rating": [0, 1, 2, 3, 4, 4]})
    >>> model = fit_rater_model(r)
    >>> model.items["score"].is_monotonic_increasing, bool(model.raters.loc["x", "severity"] > 0)
    (True, True)
    """
    matrix = rating_matrix(ratings)
    values = np.asarray(scale, float)
    if len(values) < 2:
        raise InputError("the rater model needs a scale of at least two values")
    if not np.isin(matrix.to_numpy()[~np.isnan(matrix.to_numpy())], values).all():
        raise InputError(f"ratings outside the scale {', '.join(map(str, scale))}")
    flags = careless_raters(matrix, scale)
    kept = matrix.loc[:, flags.isna().to_numpy()] if flags.isna().any() else matrix
    data = _long(kept, scale)
    n_raters, n_thresholds = kept.shape[1], len(values) - 1
    share = data.category_totals[:-1].cumsum() / data.category_totals.sum()
    start_tau = np.log(np.clip(share, 0.02, 0.98) / (1 - np.clip(share, 0.02, 0.98))) * 1.7
    start_tau = np.maximum.accumulate(start_tau + np.arange(n_thresholds) * 1e-2)
    start = np.concatenate([[start_tau[0]], np.log(np.maximum(np.diff(start_tau), 0.1)),
                            np.full(n_raters, np.log(1.5)), np.zeros(n_raters)])
    fit = optimize.minimize(_objective, start, args=(data, n_raters, n_thresholds), jac=True,
                            method="L-BFGS-B", options={"maxiter": 2000})
    params = fit.x
    tau = _thresholds(params[:n_thresholds], n_thresholds)
    log_a = params[n_thresholds:n_thresholds + n_raters]
    raw_b = params[n_thresholds + n_raters:]
    b = raw_b - raw_b.mean()
    a = np.exp(log_a)
    a_ref = float(np.median(a))
    log_post = _log_posterior(data, tau, log_a, b)
    score, se = _score(log_post, tau, a_ref, scale)
    items = pd.DataFrame({"score": score, "se": se, "n": data.n_per_item}, index=matrix.index)
    post = np.exp(log_post - logsumexp(log_post, axis=1)[:, None])
    theta = post @ GRID  # posterior mean of each item's θ
    reference = _expected_rating(tau, a_ref, scale, theta)
    severity = pd.Series([np.mean(reference - _expected_rating(tau, a_ref, scale, theta - bj)) for bj in b],
                         index=kept.columns)
    consistency = pd.Series(a / a_ref, index=kept.columns)
    for name in matrix.columns.difference(kept.columns):  # flagged: no weight in the scores
        own = matrix[name].dropna()
        severity[name] = float(np.mean(items["score"].reindex(own.index) - own))
        consistency[name] = 0.0
    raters = pd.DataFrame({"severity": severity.reindex(matrix.columns),
                           "consistency": consistency.reindex(matrix.columns), "flag": flags})
    return RaterModel(items=items, raters=raters, thresholds=tau,
                      discrimination=pd.Series(a, index=kept.columns),
                      severity_logit=pd.Series(b, index=kept.columns), scale=tuple(scale),
                      log_likelihood=float(-fit.fun),
                      excluded=tuple(str(c) for c in matrix.columns.difference(kept.columns)))


@validate_params({"target_se": POSITIVE, "min_raters": Whole(1), "max_raters": Whole(1)})
def collection_priority(items: pd.DataFrame, *, target_se: float, min_raters: int,
                        max_raters: int) -> pd.Series:
    """Which items adaptive collection rates next: items (``se``, ``n``) below ``min_raters``
    first, then by how far their ``se`` lies above ``target_se``; an item at ``max_raters``, or
    with ``min_raters`` and ``se`` ≤ target (retired), is left out. Returns the items still
    open, most needed first, with their need (``se − target``; +inf below ``min_raters``).

    >>> items = pd.DataFrame({"se": [0.5, 0.2, 0.4, 0.9], "n": [3, 3, 1, 6]}, index=list("abcd"))
    >>> collection_priority(items, target_se=0.3, min_raters=2, max_raters=6).index.tolist()
    ['c', 'a']
    """
    need = pd.Series(items["se"].to_numpy(float) - target_se, index=items.index)
    need[items["n"].to_numpy() < min_raters] = np.inf
    open_ = (items["n"].to_numpy() < max_raters) & (need.to_numpy() > 0)
    return need[open_].sort_values(ascending=False, kind="stable")
