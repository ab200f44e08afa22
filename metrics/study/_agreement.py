"""Inter-annotator agreement of a rating study (SHOE §4.3, supplementary §5.2–5.3 and §6.3).

Input is the long ``ratings.csv`` of docs/contracts.md (``item_id, annotator, rating`` at least). When
an annotator rated an item more than once (a revised answer), the latest row counts: the one
with the greatest ``created_at`` when that column exists, else the last row.

All functions take the items × annotators matrix of :func:`rating_matrix` (NaN = not rated).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from itertools import combinations
from pathlib import Path
from typing import Literal, cast

import numpy as np
import pandas as pd

from metrics.core._choices import SCALE, SCALE_MAX
from metrics.core._constraints import OPEN_FRACTION, POSITIVE, Boolean, validate_params
from metrics.core._errors import InputError
from metrics.core._inputs import check_name, line_of, numbers, read_csv, refuse_first_row, require_columns
from metrics.core._intervals import percentile_interval
from metrics.study._options import AGREEMENT_OPTIONS

_KrippendorffLevel = Literal["nominal", "ordinal", "interval", "ratio"]   # LEVELS, as krippendorff types them


SIMULATED = "simulated"   # ratings.csv ``rater_kind`` of the raters a platform's simulation added


@validate_params({"include_simulated": Boolean()})
def read_ratings(path: str | Path, *, include_simulated: bool = False) -> pd.DataFrame:
    """Read and validate a ratings CSV (needs ``item_id, annotator, rating``). Rows whose
    ``rater_kind`` is ``simulated`` (the platform's ``studyapp simulate``) are left out unless
    ``include_simulated`` or every row is simulated (a pilot: nothing is mixed)."""
    df = read_csv(path, dtype={"item_id": str, "annotator": str})
    if not include_simulated and "rater_kind" in df.columns:
        simulated = df["rater_kind"].astype(str) == SIMULATED
        if not simulated.all():
            df = df[~simulated].reset_index(drop=True)
    return validate_ratings(df, source=str(path))


def validate_ratings(df: pd.DataFrame, *, source: str = "ratings", scale=SCALE) -> pd.DataFrame:
    require_columns(df.columns, ("item_id", "annotator", "rating"), source)
    if df.empty:
        raise InputError(f"{source}: no ratings (only a header)")
    rating = numbers(df["rating"])
    refuse_first_row(source, rating.isna() | ~rating.isin(scale),
                     lambda k: f"rating '{df['rating'].iloc[k]}' is not one of {', '.join(map(str, scale))}")
    for column in ("item_id", "annotator"):
        text = df[column].astype(str)
        refuse_first_row(source, text.str.strip() == "", lambda k, column=column: f"empty {column}")
        control = text.str.contains(r"[\x00-\x1f\x7f]", regex=True)
        if control.any():
            k = int(np.flatnonzero(control.to_numpy())[0])
            check_name(text.iloc[k], f"{source}: line {line_of(source, k)}: {column}")
    out = df.copy()
    out["item_id"] = out["item_id"].astype(str)
    out["annotator"] = out["annotator"].astype(str)
    out["rating"] = rating.astype(float)
    return out


def rating_matrix(ratings: pd.DataFrame) -> pd.DataFrame:
    """Items × annotators matrix of the latest rating of each annotator per item (NaN = none).

    >>> r = pd.DataFrame({"item_id": ["a", "a", "b"], "annotator": ["x", "y", "x"], "rating": [1, 2, 3]})
    >>> rating_matrix(r).values.tolist()
    [[1.0, 2.0], [3.0, nan]]
    """
    df = ratings
    if "created_at" in df.columns:
        df = df.sort_values("created_at", kind="stable")
    latest = df.drop_duplicates(["item_id", "annotator"], keep="last")
    return latest.pivot(index="item_id", columns="annotator", values="rating").astype(float)


def _pairs(matrix: pd.DataFrame):
    return list(combinations(range(matrix.shape[1]), 2))


@validate_params({"scale_max": POSITIVE})
def eq13_agreement(a, b, *, scale_max: float = SCALE_MAX) -> np.ndarray:
    """SHOE Eq. 13: ``1 − |r_i − r_j| / 4`` elementwise.

    >>> eq13_agreement([0, 4, 2], [1, 4, 4]).tolist()
    [0.75, 1.0, 0.5]
    """
    return 1.0 - np.abs(np.asarray(a, float) - np.asarray(b, float)) / scale_max


@validate_params({"scale_max": POSITIVE})
def pairwise_agreement_matrix(matrix: pd.DataFrame, *, scale_max: float = SCALE_MAX) -> pd.DataFrame:
    """Annotator × annotator mean Eq. 13 agreement over the items both rated (1 on the diagonal)."""
    return _pairwise(matrix, lambda x, y: float(eq13_agreement(x, y, scale_max=scale_max).mean()), min_shared=1)


def pairwise_spearman(matrix: pd.DataFrame) -> pd.DataFrame:
    """Annotator × annotator Spearman ρ over shared items (NaN when undefined)."""
    from scipy import stats
    return _pairwise(matrix, lambda x, y: float(stats.spearmanr(x, y).statistic), min_shared=3)


def pairwise_qwk(matrix: pd.DataFrame, scale=SCALE) -> pd.DataFrame:
    """Annotator × annotator quadratic weighted kappa (k = len(scale) levels) over shared items."""
    from sklearn.metrics import cohen_kappa_score
    labels = list(scale)
    return _pairwise(matrix, lambda x, y: float(cohen_kappa_score(x, y, labels=labels, weights="quadratic")),
                     min_shared=2)


def _pairwise(matrix: pd.DataFrame, fn, min_shared: int) -> pd.DataFrame:
    values = matrix.to_numpy()
    names = list(matrix.columns)
    out = np.full((len(names), len(names)), np.nan)
    np.fill_diagonal(out, 1.0)
    for i, j in _pairs(matrix):
        both = ~np.isnan(values[:, i]) & ~np.isnan(values[:, j])
        if both.sum() >= min_shared:
            with np.errstate(all="ignore"), warnings.catch_warnings():
                # a constant rater on the shared items makes ρ / κ undefined: NaN, no warning
                warnings.simplefilter("ignore")
                out[i, j] = out[j, i] = fn(values[both, i], values[both, j])
    return pd.DataFrame(out, index=names, columns=names)


def mean_offdiagonal(table: pd.DataFrame) -> float:
    """Mean over annotator pairs (upper triangle), ignoring undefined pairs."""
    values = table.to_numpy()
    upper = values[np.triu_indices_from(values, k=1)]
    upper = upper[~np.isnan(upper)]
    return float(upper.mean()) if len(upper) else float("nan")


@validate_params({"level": AGREEMENT_OPTIONS["level"]})
def alpha_of_matrix(matrix: pd.DataFrame, *, level: str = "ordinal", scale=SCALE) -> float:
    """Krippendorff's alpha via the ``krippendorff`` package (items with < 2 ratings ignored).

    Note: the SHOE supplement (§5.3) writes the ordinal disagreement as ((i − j)/(k − 1))²,
    which is the (normalized) interval metric; ``level="ordinal"`` here is Krippendorff's rank
    based ordinal metric, and ``level="interval"`` reproduces the formula printed in the paper
    (alpha is invariant to the 1/(k − 1)² factor).
    """
    import krippendorff
    with np.errstate(invalid="ignore", divide="ignore"):   # NaN when no rating varies: see no_variation
        return float(krippendorff.alpha(reliability_data=matrix.to_numpy().T, value_domain=list(scale),
                                         level_of_measurement=cast(_KrippendorffLevel, level)))


def no_variation(matrix: pd.DataFrame) -> str | None:
    """Why chance-corrected statistics (α, κ, ρ, ICC) are undefined, or None: every rating of the
    items rated at least twice has one value, so expected disagreement is 0 and α = 0/0.

    >>> no_variation(pd.DataFrame({"a": [2.0, 2.0], "b": [2.0, np.nan]}))
    'every rating of the items rated twice or more is 2: with no variation, chance-corrected statistics (alpha, kappa, rho, ICC) are undefined'
    """
    shared = matrix[matrix.notna().sum(axis=1) >= 2].to_numpy(float)
    values = np.unique(shared[np.isfinite(shared)])
    if len(values) != 1:
        return None
    return (f"every rating of the items rated twice or more is {values[0]:g}: with no variation, "
            "chance-corrected statistics (alpha, kappa, rho, ICC) are undefined")


def value_counts(matrix: pd.DataFrame, scale=SCALE) -> np.ndarray:
    """Items × scale values: how many raters gave the item each value."""
    values = matrix.to_numpy()
    return np.stack([(values == v).sum(axis=1) for v in scale], axis=1).astype(float)


def delta_squared(level: str, scale, marginals: np.ndarray) -> np.ndarray:
    """Krippendorff's squared distance δ² between scale values at ``level`` (rows of
    ``marginals``: resamples × values; the ordinal metric depends on them)."""
    v = np.asarray(scale, dtype=float)
    c, k = np.meshgrid(v, v, indexing="ij")
    if level == "nominal":
        d = (c != k).astype(float)
    elif level == "interval":
        d = (c - k) ** 2
    elif level == "ratio":
        with np.errstate(invalid="ignore", divide="ignore"):
            d = np.nan_to_num(((c - k) / (c + k)) ** 2)
    else:  # ordinal: (sum_{g between c and k} n_g − (n_c + n_k)/2)²
        cum = np.cumsum(marginals, axis=-1)
        lo = np.minimum.outer(np.arange(len(v)), np.arange(len(v)))
        hi = np.maximum.outer(np.arange(len(v)), np.arange(len(v)))
        between = cum[..., hi] - np.where(lo > 0, cum[..., np.maximum(lo - 1, 0)], 0.0)
        d = (between - (marginals[..., lo] + marginals[..., hi]) / 2.0) ** 2
        return d
    return np.broadcast_to(d, marginals.shape[:-1] + d.shape)


def alpha_from_counts(value_counts: np.ndarray, weights: np.ndarray, level: str = "ordinal",
                      scale=SCALE) -> np.ndarray:
    """Krippendorff's alpha for many resamples at once.

    ``value_counts`` is items × values (how many raters gave each value); ``weights`` is
    resamples × items (how often each item is drawn). Builds each resample's coincidence
    matrix as a weighted sum of per-item coincidence matrices, so a bootstrap is one matrix
    product. Equals :func:`alpha_of_matrix` for unit weights.
    """
    m = value_counts.sum(axis=1)
    pairable = m >= 2
    vc = value_counts[pairable]
    mu = m[pairable]
    per_item = (vc[:, :, None] * vc[:, None, :] - np.einsum("ic,ck->ick", vc, np.eye(vc.shape[1])))
    per_item = per_item / (mu - 1)[:, None, None]
    w = np.atleast_2d(weights)[:, pairable]
    coincidence = np.tensordot(w, per_item, axes=(1, 0))          # resamples × V × V
    n_c = coincidence.sum(axis=2)
    n = n_c.sum(axis=1)
    d2 = delta_squared(level, scale, n_c)
    observed = (coincidence * d2).sum(axis=(1, 2))
    expected = (n_c[:, :, None] * n_c[:, None, :] * d2).sum(axis=(1, 2)) / (n - 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return 1.0 - observed / expected


def _pair_agreement_table(matrix: pd.DataFrame, scale_max: float) -> tuple[np.ndarray, np.ndarray]:
    """Per item and annotator pair: Eq. 13 agreement (0 where not shared) and shared flag."""
    values = matrix.to_numpy()
    pairs = _pairs(matrix)
    agree = np.zeros((len(values), len(pairs)))
    shared = np.zeros((len(values), len(pairs)))
    for p, (i, j) in enumerate(pairs):
        both = ~np.isnan(values[:, i]) & ~np.isnan(values[:, j])
        agree[both, p] = eq13_agreement(values[both, i], values[both, j], scale_max=scale_max)
        shared[both, p] = 1.0
    return agree, shared


@validate_params({**AGREEMENT_OPTIONS, "confidence": OPEN_FRACTION})
def bootstrap_intervals(matrix: pd.DataFrame, *, level: str = "ordinal", n_resamples: int = 1000,
                        confidence: float = 0.95, seed: int = 0, scale=SCALE) -> dict:
    """Percentile bootstrap intervals (items resampled with replacement) for alpha and the
    mean pairwise Eq. 13 agreement.

    Both statistics depend on an item only through its row of ratings, so items with the same
    row are pooled: drawing n items with replacement is then a multinomial draw over the
    distinct rows (probabilities = their shares), which is exact and makes 1,000 resamples of
    100,000 items a matter of milliseconds.
    """
    scale_max = float(max(scale) - min(scale))
    coded = np.nan_to_num(matrix.to_numpy(), nan=-1.0)
    patterns, share = np.unique(coded, axis=0, return_counts=True)
    distinct = pd.DataFrame(np.where(patterns < 0, np.nan, patterns), columns=matrix.columns)
    counts = value_counts(distinct, scale)
    agree, shared = _pair_agreement_table(distinct, scale_max)
    rng = np.random.default_rng(seed)
    n_items = int(share.sum())
    weights = rng.multinomial(n_items, share / n_items, size=n_resamples).astype(float)
    alphas = alpha_from_counts(counts, weights, level, scale)
    with np.errstate(invalid="ignore", divide="ignore"):
        per_pair = (weights @ agree) / (weights @ shared)   # NaN: the pair shares no item in the resample
    agreements = nanmean_rows(per_pair)
    out: dict = {"krippendorff_alpha": list(percentile_interval(alphas, confidence)),
           "mean_pairwise_agreement": list(percentile_interval(agreements, confidence))}
    out["n_resamples"] = n_resamples
    out["confidence"] = confidence
    return out


def nanmean_rows(values: np.ndarray) -> np.ndarray:
    """Row means over the finite entries; NaN for a row with none (``np.nanmean`` without its
    "Mean of empty slice" warning)."""
    finite = np.isfinite(values)
    n = finite.sum(axis=1)
    total = np.where(finite, values, 0.0).sum(axis=1)
    return np.where(n > 0, total / np.maximum(n, 1), np.nan)


def annotator_distributions(matrix: pd.DataFrame, scale=SCALE) -> pd.DataFrame:
    """How often each annotator used each score (annotators × scores)."""
    values = matrix.to_numpy()
    return pd.DataFrame({v: (values == v).sum(axis=0) for v in scale}, index=matrix.columns)


def majority_scores(matrix: pd.DataFrame, scale=SCALE) -> pd.Series:
    """Most frequent score per item; ties go to the score nearest the item's median rating,
    then to the lower score."""
    counts = value_counts(matrix, scale)
    median = np.nanmedian(matrix.to_numpy(), axis=1)
    values = np.asarray(scale, float)
    best = counts == counts.max(axis=1, keepdims=True)
    distance = np.where(best, np.abs(values[None, :] - median[:, None]), np.inf)
    return pd.Series(values[np.argmin(distance, axis=1)], index=matrix.index)


def votes_by_majority(matrix: pd.DataFrame, scale=SCALE) -> pd.DataFrame:
    """Supp. Fig. 3: for each majority score, how many times each annotator gave each score.

    Long table with columns ``majority, annotator, score, count``."""
    majority = majority_scores(matrix, scale).to_numpy()
    values = matrix.to_numpy()
    rows = []
    for maj in scale:
        sel = values[majority == maj]
        for a, name in enumerate(matrix.columns):
            for s in scale:
                rows.append((maj, name, s, int((sel[:, a] == s).sum())))
    return pd.DataFrame(rows, columns=["majority", "annotator", "score", "count"])


def rating_precision(matrix: pd.DataFrame, raters: int | None = None) -> dict:
    """Supp. §6.3: within-item standard deviation σ (pooled over items with ≥ 2 ratings) and
    the standard error of the mean rating SE = σ / √k for k raters."""
    values = matrix.to_numpy()
    n = (~np.isnan(values)).sum(axis=1)
    usable = n >= 2
    var = np.nanvar(values[usable], axis=1, ddof=1)
    sigma = float(np.sqrt(np.sum(var * (n[usable] - 1)) / np.sum(n[usable] - 1))) if usable.any() else float("nan")
    k = raters or (int(np.median(n[usable])) if usable.any() else 1)
    return {"within_item_sd": sigma, "raters": k, "se_mean_rating": sigma / np.sqrt(k)}


def table_dict(table: pd.DataFrame) -> dict:
    """An annotator × annotator table as JSON: ``{row: {column: value or None}}``."""
    return {str(r): {str(c): (None if pd.isna(v) else float(v)) for c, v in row.items()}
            for r, row in table.iterrows()}


@dataclass(frozen=True)
class AgreementReport:
    """Every agreement statistic of a study (:func:`agreement_report`): the numbers, the
    annotator × annotator tables and the distributions behind the report."""

    n_items: int
    n_annotators: int
    n_ratings: int
    level: str
    krippendorff_alpha: float
    mean_pairwise_agreement: float
    mean_qwk: float
    mean_spearman: float
    agreement: pd.DataFrame
    spearman: pd.DataFrame
    qwk: pd.DataFrame
    distributions: pd.DataFrame
    votes_by_majority: pd.DataFrame
    precision: dict
    intervals: dict
    mean_qwk_by_shared_items: float = float("nan")   # pairs weighted by the items they share
    qwk_pairs: int = 0                                 # rater pairs with a κ (the means' terms)

    def to_dict(self) -> dict:
        """The ``agreement`` command's result."""
        return {
            "n_items": self.n_items, "n_annotators": self.n_annotators, "n_ratings": self.n_ratings,
            "level": self.level, "krippendorff_alpha": self.krippendorff_alpha,
            "mean_pairwise_agreement": self.mean_pairwise_agreement, "mean_qwk": self.mean_qwk,
            "mean_qwk_by_shared_items": self.mean_qwk_by_shared_items, "qwk_pairs": self.qwk_pairs,
            "mean_spearman": self.mean_spearman, "intervals": self.intervals,
            "precision": self.precision, "pairwise_agreement": table_dict(self.agreement),
            "pairwise_spearman": table_dict(self.spearman), "pairwise_qwk": table_dict(self.qwk),
            "annotator_distributions": {str(a): {str(s): int(c) for s, c in row.items()}
                                        for a, row in self.distributions.iterrows()},
        }


def shared_items(matrix: pd.DataFrame) -> pd.DataFrame:
    """Annotator × annotator count of the items both rated (diagonal: each one's items)."""
    rated = (~matrix.isna()).to_numpy(float)
    return pd.DataFrame(rated.T @ rated, index=matrix.columns, columns=matrix.columns)


def mean_by_shared_items(table: pd.DataFrame, shared: pd.DataFrame) -> float:
    """Mean of the defined off-diagonal pairs of ``table``, each weighted by the items the pair
    shares: ``Σ_pairs s_ab·κ_ab / Σ_pairs s_ab`` — a pair that shares 4 items counts 4, not as much
    as a pair that shares 100 (:func:`mean_offdiagonal` counts every pair once).

    >>> t = pd.DataFrame([[1.0, 0.0, 1.0], [0.0, 1.0, np.nan], [1.0, np.nan, 1.0]])
    >>> mean_by_shared_items(t, pd.DataFrame([[9, 4, 12], [4, 9, 0], [12, 0, 9]]))
    0.75
    """
    values, weights = table.to_numpy(float), shared.to_numpy(float)
    upper = np.triu(np.ones(values.shape, bool), 1) & np.isfinite(values) & (weights > 0)
    return float(np.sum(values[upper] * weights[upper]) / np.sum(weights[upper])) if upper.any() else float("nan")


def require_shared_item(matrix: pd.DataFrame, what: str) -> None:
    """Refuse, in one line, a study in which no item has been rated by two annotators yet (the
    normal start of a study): agreement is not defined before then.

    >>> require_shared_item(pd.DataFrame({"a": [1.0, np.nan], "b": [np.nan, 2.0]}), "agreement")
    Traceback (most recent call last):
    metrics.core._errors.InputError: agreement needs an item rated by at least two annotators; no item has been yet (2 annotators, 2 items)
    """
    if matrix.shape[1] < 2:
        raise InputError(f"{what} needs ratings from at least two annotators")
    if not ((~matrix.isna()).sum(axis=1) >= 2).any():
        raise InputError(f"{what} needs an item rated by at least two annotators; no item has been yet "
                         f"({matrix.shape[1]} annotators, {matrix.shape[0]} items)")


@validate_params(AGREEMENT_OPTIONS)
def agreement_report(ratings: pd.DataFrame, *, level: str = "ordinal", n_resamples: int = 1000,
                     seed: int = 0, scale=SCALE) -> AgreementReport:
    """Every agreement statistic of the study in one object."""
    matrix = rating_matrix(ratings)
    require_shared_item(matrix, "agreement")
    agreement = pairwise_agreement_matrix(matrix, scale_max=float(max(scale) - min(scale)))
    spearman = pairwise_spearman(matrix)
    qwk = pairwise_qwk(matrix, scale)
    return AgreementReport(
        n_items=int(matrix.shape[0]), n_annotators=int(matrix.shape[1]),
        n_ratings=int((~matrix.isna()).to_numpy().sum()), level=level,
        krippendorff_alpha=alpha_of_matrix(matrix, level=level, scale=scale),
        mean_pairwise_agreement=mean_offdiagonal(agreement), mean_qwk=mean_offdiagonal(qwk),
        mean_spearman=mean_offdiagonal(spearman), agreement=agreement, spearman=spearman, qwk=qwk,
        distributions=annotator_distributions(matrix, scale),
        votes_by_majority=votes_by_majority(matrix, scale), precision=rating_precision(matrix),
        intervals=bootstrap_intervals(matrix, level=level, n_resamples=n_resamples, seed=seed, scale=scale)
        if n_resamples else {},
        mean_qwk_by_shared_items=mean_by_shared_items(qwk, shared_items(matrix)),
        qwk_pairs=int(np.isfinite(np.triu(qwk.to_numpy(float), 1)[np.triu_indices(len(qwk), 1)]).sum()),
    )
