"""Aggregation of LLM ratings: mean matrix, per-model matrices, inter-model agreement, the
control-set disagreement and the leave-models-out ablation against a human study.

- **Per-pair mean** (SHOE §4.1): the mean of the models' 0–4 scores. With the filter on, a pair
  the first model filtered out keeps the first model's score (0 with the default threshold) —
  also when it was re-rated in the control set, whose answers serve only the disagreement rate
  — so every filtered pair is treated alike. Missing answers are left out of the mean; a pair
  with no answer at all is missing (0 in the matrix, counted in the meta).
- **Inter-model agreement** (§4.1, Fig. 3): Pearson r between two models over the pairs both
  actually rated (filtered pairs, never asked of the second model, are not counted), with the
  mean Eq. 13 agreement ``1 − |a − b| / 4`` over the same pairs.
- **Control disagreement** (§4.2): for each model after the first, the share of its answered
  control pairs it scored above the filter threshold (SHOE: 0.245 %–1.318 % on 100k pairs).
- **Ablation** (supplementary §1, Table 1): for every non-empty subset of models, the matrices
  are rebuilt from that subset's mean (filtered pairs keep the filter's verdict, as above) and the study's items are scored
  with HOI similarity ``4 · (w·v + (1 − w)·o)``; its agreement with the mean human rating is
  the mean of Eq. 13, reported with Spearman ρ.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np
import pandas as pd
from scipy import stats

from metrics.core._choices import SCALE, SCALE_MAX
from metrics.core._errors import InputError
from metrics.llm._plan import Ratings
from metrics.study._agreement import eq13_agreement
from metrics.vocab._similarity import SimilarityMatrix, combine

MAX_ABLATION_MODELS = 12


def filled(r: Ratings) -> pd.DataFrame:
    """Scores that enter the mean: actual answers, except that the control answers of the models
    after the first are dropped (NaN) — a filtered pair keeps the filter's verdict."""
    table = r.table[r.models].copy()
    if r.filtered:
        dropped = r.table["role"].isin(["filtered", "control"]).to_numpy()
        table.loc[dropped, r.models[1:]] = np.nan
    return table


def mean_scores(r: Ratings, models: list[str] | None = None) -> pd.Series:
    """Per-pair mean over ``models`` (default all) of the :func:`filled` scores; NaN = no answer.

    A pair filtered out by the first model takes the first model's score (0 with the default
    threshold) whatever the subset: the filter's verdict stands for every subset of raters.
    """
    table = filled(r)
    means = table[models or r.models].mean(axis=1, skipna=True)
    if r.filtered:
        dropped = r.table["role"].isin(["filtered", "control"])
        means = means.where(~(dropped & means.isna()), table[r.models[0]])
    return means


def to_matrix(r: Ratings, scores: pd.Series, meta: dict) -> SimilarityMatrix:
    ok = scores.notna() & (scores > 0)
    a = [p[0] for p in scores.index[ok]]
    b = [p[1] for p in scores.index[ok]]
    return SimilarityMatrix.from_long(a, b, np.round(scores[ok].to_numpy(float), 6),
                                      labels=r.pairs.labels, meta=meta)


def pairwise(r: Ratings) -> dict:
    """Pearson r, Eq. 13 agreement and n for every pair of models (actual answers only)."""
    out: dict[str, dict] = {"pearson": {}, "agreement": {}, "n": {}}
    for x, y in combinations(r.models, 2):
        both = r.table[[x, y]].dropna()
        n = len(both)
        xs, ys = both[x].to_numpy(), both[y].to_numpy()
        rho = float(stats.pearsonr(xs, ys).statistic) if n > 2 and np.ptp(xs) > 0 and np.ptp(ys) > 0 else float("nan")
        name = f"{x}|{y}"
        out["pearson"][name] = rho
        out["agreement"][name] = float(eq13_agreement(xs, ys).mean()) if n else float("nan")
        out["n"][name] = n
    return out


def pairwise_frame(r: Ratings, what: str = "pearson") -> pd.DataFrame:
    stats_ = pairwise(r)[what]
    frame = pd.DataFrame(np.eye(len(r.models)), index=r.models, columns=r.models)
    for name, value in stats_.items():
        x, y = name.split("|")
        frame.loc[x, y] = frame.loc[y, x] = value
    return frame


def control_disagreement(r: Ratings) -> dict:
    """Per model after the first: control pairs answered, how many scored above the threshold,
    and the rate (the §4.2 disagreement with the first model's zero)."""
    control = r.table[r.table["role"] == "control"]
    out = {}
    for m in r.models[1:]:
        answered = control[m].dropna()
        above = int((answered > r.threshold).sum())
        out[m] = {"n_control": int(len(control)), "n_answered": int(len(answered)),
                  "n_disagree": above, "rate": above / len(answered) if len(answered) else float("nan")}
    return out


def distributions(r: Ratings) -> pd.DataFrame:
    """Count of each 0–4 score per model (actual answers)."""
    return pd.DataFrame({m: r.table[m].value_counts().reindex([float(level) for level in SCALE], fill_value=0)
                         .to_numpy() for m in r.models}, index=[0, 1, 2, 3, 4]).T


def summary(r: Ratings) -> dict:
    means = mean_scores(r)
    return {
        "n_pairs": int(len(r.table)),
        "n_kept": int((r.table["role"] == "kept").sum()),
        "n_filtered": int((r.table["role"] != "kept").sum()),
        "n_control": int((r.table["role"] == "control").sum()),
        "n_nonzero": int((means > 0).sum()),
        "n_missing": int(means.isna().sum()),
        "asked": r.asked, "missing": r.missing,
    }


# ---------------------------------------------------------------------- ablation
def _lookup(scores: pd.Series) -> dict[tuple[str, str], float]:
    out = {}
    for (a, b), v in scores.items():
        if np.isfinite(v):
            out[(a, b)] = out[(b, a)] = float(v)
    return out


def _component(lookup: dict, x: pd.Series, y: pd.Series) -> np.ndarray:
    return np.array([SCALE_MAX if p == g else lookup.get((p, g), 0.0) for p, g in zip(x, y)]) / SCALE_MAX


def _fixed_components(ratings: dict, rated_items: pd.DataFrame) -> dict:
    """The items' own verb / object similarity for each part of speech not rated here."""
    fixed = {}
    for pos, column in (("verb", "verb_sim"), ("object", "object_sim")):
        if pos not in ratings:
            if column not in rated_items.columns or rated_items[column].isna().any():
                raise InputError(f"ablation: no {pos} ratings built here and the items lack {column} "
                                 f"(give --{pos}-sim or build --pos both)")
            fixed[pos] = rated_items[column].to_numpy(float)
    return fixed


def _subset_components(ratings: dict, subset, synsets: pd.DataFrame) -> dict | None:
    """Each rated part of speech's item similarity from the models of ``subset``; None when a part
    of speech has none of them."""
    comp = {}
    for pos, r in ratings.items():
        chosen = [m for m in subset if m in r.models]
        if not chosen:
            return None
        lookup = _lookup(mean_scores(r, chosen))
        x, y = ("pred_verb", "gt_verb") if pos == "verb" else ("pred_object", "gt_object")
        comp[pos] = _component(lookup, synsets[x], synsets[y])
    return comp


def _subset_row(subset, size: int, comp: dict, fixed: dict, human: np.ndarray, w: float) -> dict:
    """Agreement (Eq. 13) and Spearman of one subset's metric with the human means."""
    v = comp.get("verb", fixed.get("verb"))
    o = comp.get("object", fixed.get("object"))
    metric = SCALE_MAX * combine(v, o, method="arithmetic", w=w)
    constant = np.ptp(metric) == 0 or np.ptp(human) == 0
    return {"models": list(subset), "size": size,
            "agreement": float(eq13_agreement(metric, human).mean()),
            "spearman": float("nan") if constant else float(stats.spearmanr(metric, human).statistic)}


def _agreement_by_size(rows: list[dict]) -> dict:
    """Mean and SD of the agreement over the subsets of each size."""
    by_size = {}
    for size in sorted({row["size"] for row in rows}):
        values = [row["agreement"] for row in rows if row["size"] == size]
        by_size[str(size)] = {"mean": float(np.mean(values)), "sd": float(np.std(values, ddof=1)) if len(values) > 1 else 0.0,
                              "n_subsets": len(values)}
    return by_size


def ablation(ratings: dict[str, Ratings], rated_items: pd.DataFrame, synsets: pd.DataFrame,
             w: float = 0.5) -> dict:
    """Agreement with humans for every subset of models (supplementary Table 1).

    ``ratings`` maps ``"verb"`` / ``"object"`` to the answers; a part of speech not built here
    takes its component similarity from the items' ``verb_sim`` / ``object_sim`` columns.
    ``synsets`` holds the items' ``gt_/pred_ verb/object`` synsets (:func:`item_synsets`).
    """
    models = list(dict.fromkeys(m for r in ratings.values() for m in r.models))
    if len(models) > MAX_ABLATION_MODELS:
        raise InputError(f"ablation over {len(models)} models would need {2 ** len(models) - 1} subsets; "
                         f"at most {MAX_ABLATION_MODELS} models")
    human = rated_items["human_mean"].to_numpy(float)
    fixed = _fixed_components(ratings, rated_items)
    rows = []
    for size in range(1, len(models) + 1):
        for subset in combinations(models, size):
            comp = _subset_components(ratings, subset, synsets)
            if comp is not None:
                rows.append(_subset_row(subset, size, comp, fixed, human, w))
    by_size = _agreement_by_size(rows)
    best = max(rows, key=lambda row: row["agreement"]) if rows else None
    return {"models": models, "n_items": int(len(rated_items)), "w": w, "subsets": rows,
            "by_size": by_size, "best": best}
