"""Metric–human alignment (SHOE §4.4, Table 1; supplementary Table 3 and §6.3).

For every metric column of ``items.csv`` the mean human rating of each item is compared with the
metric's score on the 0–4 scale:

- agreement: mean of Eq. 13, ``1 − |metric − human| / 4``;
- Spearman ρ with its Fisher-z 95% interval ``tanh(atanh(ρ) ± z_{0.975} / √(n − 3))``;
- a two-sided permutation-test p-value (10,000 resamples, seeded; pairings permuted).

A metric column is on [0, 1] when all its values lie in [0, 1] (it is multiplied by 4), and on
0–4 otherwise; name a column ``..._04`` to force the 0–4 reading.

Baselines are always added from the items' synsets: WordNet path, Wu–Palmer and
Leacock–Chodorow similarity (LCH divided by its maximum for the part of speech), each the mean
of the verb and the object similarity; and, when verb/object similarities are known, SHOE's
arithmetic mean (w = 0.5), geometric mean and minimum (Eq. 1).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np
import pandas as pd

from metrics.core._choices import SCALE_MAX
from metrics.core._constraints import RANDOM_SEED, RESAMPLES, Boolean, Each, OrNone, Text, validate_params
from metrics.core._errors import InputError
from metrics.core._inputs import numbers
from metrics.core._intervals import fisher_interval
from metrics.study._agreement import eq13_agreement
from metrics.study._study_items import item_synsets
from metrics.vocab import _wordnet as wordnet
from metrics.vocab._similarity import combine

NOT_METRICS = {"item_id", "category", "level", "gt_verb", "gt_object", "pred_verb", "pred_object",
               "verb_sim", "object_sim", "human_mean", "n_ratings", "gt_image", "image"}


def permutation_pvalue(x, y, n_resamples: int = 10_000, seed: int = 0) -> float:
    """Two-sided permutation p-value of Spearman ρ (``scipy.stats.permutation_test``)."""
    from scipy import stats
    rx = stats.rankdata(x)
    ry = stats.rankdata(y)

    def rho(a, b, axis=-1):
        a = a - a.mean(axis=axis, keepdims=True)
        b = b - b.mean(axis=axis, keepdims=True)
        with np.errstate(invalid="ignore", divide="ignore"):
            return (a * b).sum(axis=axis) / np.sqrt((a * a).sum(axis=axis) * (b * b).sum(axis=axis))

    res = stats.permutation_test((rx, ry), rho, permutation_type="pairings", vectorized=True,
                                 n_resamples=n_resamples, rng=np.random.default_rng(seed))
    return float(res.pvalue)


def to_0_4(name: str, values: np.ndarray) -> np.ndarray:
    values = np.asarray(values, dtype=float)
    if name.endswith("_04"):
        return values
    finite = values[np.isfinite(values)]
    if len(finite) and finite.min() >= 0 and finite.max() <= 1:
        return values * SCALE_MAX
    return values


@lru_cache(maxsize=100_000)
def synset_pair_measures(a: str, b: str, pos: str) -> tuple[float, float, float]:
    """WordNet path, WUP and LCH similarity (LCH divided by its maximum, a synset with itself)
    of two synset names; fixed for a pair, so kept for the process (a live dashboard
    recomputes the baselines of the same items on every new rating)."""
    root = "be.v.01" if pos == "v" else "entity.n.01"
    max_lch = wordnet.lch_similarity(root, root) or 1.0   # a synset with itself: never None
    return (wordnet.path_similarity(a, b) or 0.0, wordnet.wup_similarity(a, b) or 0.0,
            (wordnet.lch_similarity(a, b) or 0.0) / max_lch)


def wordnet_baselines(items: pd.DataFrame) -> pd.DataFrame:
    """WordNet path / WUP / LCH HOI similarities (mean of verb and object), in [0, 1]."""
    syn = item_synsets(items)
    verb = np.array([synset_pair_measures(p, g, "v") for p, g in zip(syn["pred_verb"], syn["gt_verb"])])
    obj = np.array([synset_pair_measures(p, g, "n") for p, g in zip(syn["pred_object"], syn["gt_object"])])
    both = (verb + obj) / 2.0
    return pd.DataFrame({"wordnet_path": both[:, 0], "wordnet_wup": both[:, 1],
                         "wordnet_lch": np.clip(both[:, 2], 0, 1)}, index=items.index)


def metric_columns(items: pd.DataFrame) -> list[str]:
    return [c for c in items.columns if c not in NOT_METRICS
            and pd.api.types.is_numeric_dtype(items[c])]


def metric_values(items: pd.DataFrame, name: str) -> np.ndarray:
    """The numbers of metric column ``name``; a blank cell is missing (NaN), text or an
    infinite value is refused naming the item.

    >>> metric_values(pd.DataFrame({"item_id": ["i1", "i2"], "m": ["0.5", "high"]}), "m")
    Traceback (most recent call last):
    metrics.core._errors.InputError: metric column 'm': item 'i2' has 'high', not a finite number
    """
    raw = items[name]
    values = numbers(raw).to_numpy(dtype=float)
    bad = np.flatnonzero((np.isnan(values) & raw.notna().to_numpy()) | np.isinf(values))
    if len(bad):
        k = int(bad[0])
        item = items["item_id"].iloc[k] if "item_id" in items.columns else k
        raise InputError(f"metric column {name!r}: item {str(item)!r} has {str(raw.iloc[k])!r}, "
                         "not a finite number")
    return values


def align(metric, human, n_resamples: int = 10_000, seed: int = 0) -> dict:
    """Agreement (Eq. 13), Spearman ρ, Fisher interval and permutation p of one metric (0–4)
    against the mean human rating (0–4)."""
    from scipy import stats
    metric = np.asarray(metric, float)
    human = np.asarray(human, float)
    ok = np.isfinite(metric) & np.isfinite(human)
    metric, human = metric[ok], human[ok]
    n = len(metric)
    if n < 2:
        return {"n": n, "agreement": float("nan"), "spearman": float("nan"),
                "spearman_ci": [float("nan")] * 2, "p_permutation": float("nan")}
    constant = np.ptp(metric) == 0 or np.ptp(human) == 0
    rho = float("nan") if constant else float(stats.spearmanr(metric, human).statistic)
    return {
        "n": n,
        "agreement": float(eq13_agreement(metric, human).mean()),
        "spearman": rho,
        "spearman_ci": list(fisher_interval(rho, n)),
        "p_permutation": float("nan") if constant else permutation_pvalue(metric, human, n_resamples, seed),
    }


def _metric_scores(items: pd.DataFrame, metrics: list[str] | None, baselines: bool) -> dict[str, np.ndarray]:
    """Each metric column on the 0–4 scale, then the SHOE and WordNet baselines the items allow."""
    scores: dict[str, np.ndarray] = {}
    for name in (metrics if metrics is not None else metric_columns(items)):
        if name not in items.columns:
            raise InputError(f"items have no metric column {name!r}")
        scores[name] = to_0_4(name, metric_values(items, name))
    if baselines:
        if {"verb_sim", "object_sim"} <= set(items.columns):
            v, o = items["verb_sim"].to_numpy(float), items["object_sim"].to_numpy(float)
            for method in ("arithmetic", "geometric", "min"):
                scores.setdefault(f"shoe_{method}", SCALE_MAX * combine(v, o, method=method))
        if {"gt_verb", "gt_object", "pred_verb", "pred_object"} <= set(items.columns):
            for name, values in wordnet_baselines(items).items():
                scores.setdefault(name, SCALE_MAX * values.to_numpy())
    if not scores:
        raise InputError("no metric column to align (give --metric, or items with synsets or similarities)")
    return scores


@validate_params({"metrics": OrNone(Each(Text(), empty=True)), "baselines": Boolean(), "n_resamples": RESAMPLES,
                  "seed": RANDOM_SEED})
def alignment_table(rated_items: pd.DataFrame, *, metrics: list[str] | None = None,
                    baselines: bool = True, n_resamples: int = 10_000, seed: int = 0) -> dict:
    """Table 1 for a study: every metric ranked by agreement, overall and per category.

    ``rated_items`` is the output of :func:`metrics.study._study_items.join_ratings` (with
    ``human_mean``). Returns ``{"metrics": {name: {...}}, "by_category": {cat: {name: {...}}},
    "ranking": [names by agreement]}``.
    """
    items = rated_items.copy()
    scores = _metric_scores(items, metrics, baselines)
    human = items["human_mean"].to_numpy(float)
    overall = {name: align(values, human, n_resamples, seed) for name, values in scores.items()}
    result: dict = {"metrics": overall,
              "ranking": sorted(overall, key=lambda k: -np.nan_to_num(overall[k]["agreement"], nan=-1))}
    if "category" in items.columns:
        result["by_category"] = {}
        for cat in sorted(items["category"].unique()):
            sel = (items["category"] == cat).to_numpy()
            result["by_category"][str(int(cat))] = {
                name: align(values[sel], human[sel], n_resamples, seed) for name, values in scores.items()}
    return result
