"""The crossed (pigeonhole) bootstrap of a rating study's estimate, and its percentile interval's
coverage in :mod:`benchmarks.ppi_coverage`'s studies.

Owen's (2007, *Ann. Appl. Stat.* 1(1)) pigeonhole bootstrap: the study's items (all of them,
each with its LLM rating and its draw) and its raters are resampled with replacement,
independently; a rating is kept as often as its item's copy times its rater's copy, each copy
relabelled, and the estimate is recomputed by
:func:`metrics.study.ppi_mean_rater_population` — no variance formula of the estimator is used.
The percentile interval is the resampled estimates' 2.5% and 97.5% quantiles.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from metrics.study import ppi_mean_rater_population


def _copies(source: np.ndarray, copies_of: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """For each entry of ``source`` (an original unit), every copy of that unit in a resample
    whose copy ``j`` is of unit ``copies_of[j]``: (position in ``source``, copy number)."""
    order = np.argsort(copies_of, kind="stable")
    count = np.bincount(copies_of, minlength=int(max(source.max(), copies_of.max())) + 1)
    first = np.concatenate(([0], np.cumsum(count)[:-1]))
    per_entry = count[source]
    position = np.repeat(np.arange(len(source)), per_entry)
    offset = np.arange(len(position)) - np.repeat(np.cumsum(per_entry) - per_entry, per_entry)
    return position, order[first[source[position]] + offset]


def pigeonhole_estimates(rng, ratings: pd.DataFrame, llm: pd.Series, probability: pd.Series | None,
                         selected: pd.Series | None, *, resamples: int) -> np.ndarray:
    """``(resamples', 2)`` PPI and human-only estimates over pigeonhole resamples of one study
    (``ratings`` with integer ``item`` (positions in ``llm``) and ``rater`` columns); a resample
    in which a drawn item's raters were all left out has no estimate and is skipped."""
    item = ratings["item"].to_numpy()
    rater_codes, _ = pd.factorize(ratings["rater"])
    value = ratings["rating"].to_numpy(float)
    items, raters = len(llm), int(rater_codes.max()) + 1
    f = llm.to_numpy(float)
    pi = None if probability is None else probability.to_numpy(float)
    drawn = None if selected is None else selected.to_numpy(bool)
    estimates = []
    for _ in range(resamples):
        item_of = rng.integers(0, items, items)            # copy j is of item item_of[j]
        rater_of = rng.integers(0, raters, raters)
        row, item_copy = _copies(item, item_of)
        row_r, rater_copy = _copies(rater_codes[row], rater_of)
        sample = pd.DataFrame({"item": item_copy[row_r], "rater": rater_copy, "rating": value[row[row_r]]})
        if drawn is not None and not np.isin(np.flatnonzero(drawn[item_of]), sample["item"].to_numpy()).all():
            continue
        e = ppi_mean_rater_population(
            sample, pd.Series(f[item_of]),
            probability=None if pi is None else pd.Series(pi[item_of]),
            selected=None if drawn is None else pd.Series(drawn[item_of]))
        estimates.append((e.estimate, e.classical))
    return np.array(estimates)


def bootstrap_coverage(rng, studies: int, *, simulate, resamples: int, confidence: float = 0.95) -> dict:
    """Coverage of θ by the crossed bootstrap's percentile interval, by ``θ̂ ± t_ν·sd_boot`` (the
    bootstrap's standard error on the formula's t quantile) and by the formula's own interval,
    over ``studies`` studies from ``simulate(rng)`` → (ratings, llm, probability, selected, θ);
    with median widths."""
    tail = (1 - confidence) / 2
    hits = {key: np.zeros(2) for key in ("percentile", "t on bootstrap se", "formula")}
    widths = {key: [] for key in hits}
    for _ in range(studies):
        ratings, llm, probability, selected, theta = simulate(rng)
        e = ppi_mean_rater_population(ratings, llm, probability=probability, selected=selected)
        boot = pigeonhole_estimates(rng, ratings, llm, probability, selected, resamples=resamples)
        low, high = np.quantile(boot, [tail, 1 - tail], axis=0)
        quantile = stats.t.ppf(1 - tail, [e.df, e.classical_df])
        centre = np.array([e.estimate, e.classical])
        half = quantile * boot.std(axis=0, ddof=1)
        formula = np.array([[e.interval.low, e.classical_interval.low], [e.interval.high, e.classical_interval.high]])
        for key, (lo, hi) in (("percentile", (low, high)), ("t on bootstrap se", (centre - half, centre + half)),
                              ("formula", formula)):
            hits[key] += (lo <= theta) & (theta <= hi)
            widths[key].append(hi - lo)
    return {key: {"coverage": hits[key] / studies, "median width": np.median(widths[key], axis=0)} for key in hits}
