"""Recalibrating verb and object similarity matrices from human ratings of HOI pairs.

The platform's own contribution. A rated item pairs a ground-truth HOI (v_g, o_g) with a
prediction (v_p, o_p); its mean human rating y (0–4, used as h = y / 4) is evidence about the
component similarities through the HOI similarity ``h ≈ w·v + (1 − w)·o`` (SHOE Eq. 1):

- category 1 (same verb): evidence on the object pair, implied ``o* = (h − w·v) / (1 − w)``;
- category 2 (same object): evidence on the verb pair, implied ``v* = (h − (1 − w)·o) / w``;
- category 3 (both differ): the rating does not say which component is off, so the residual
  ``Δ = h − (w·v + (1 − w)·o)`` is added to both, ``v* = v + Δ`` and ``o* = o + Δ`` (this keeps
  ``w·v* + (1 − w)·o* = h``), each with half weight.

Implied values are clipped to [0, 1]. Evidence on the same unordered pair is pooled: weight
``n`` = number of ratings behind it (halved for category 3), value = weighted mean.

Step (a), calibration: an isotonic regression (increasing, into [0, 1]) is fitted from old
similarity to implied similarity over all evidence of a matrix, weighted by ``n``, and applied
to every stored entry, including pairs no one rated. Pairs the matrix does not hold (score 0)
stay 0 unless rated: the sampled evidence is about related pairs, so f(0) learned from it says
nothing about the vast majority of unrelated missing pairs. Self-similarity stays 4.

Step (b), shrinkage: a rated pair moves from its calibrated value toward its human evidence,
``new = (κ·f(old) + n·implied) / (κ + n)``, so the pull grows with the number of ratings
(κ = ``prior_strength``, default 5 ratings).

Evaluation: k-fold cross-validation over items (each item in exactly one held-out fold): the
maps and shrinkage are fitted on the other folds and the held-out items' HOI similarity is
predicted from the recalibrated entries; agreement (Eq. 13) and Spearman against the mean
human rating, pooled over folds, before (original matrices) and after.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metrics.core._choices import SCALE_MAX
from metrics.core._constraints import validate_params
from metrics.core._inputs import require_columns
from metrics.core._validation import ParameterError
from metrics.study._agreement import eq13_agreement
from metrics.study._options import PPI_RECALIBRATION_OPTIONS, RECALIBRATION_OPTIONS
from metrics.study._study_items import item_synsets
from metrics.vocab._similarity import SimilarityMatrix, combine

if TYPE_CHECKING:
    from sklearn.isotonic import IsotonicRegression

METHOD = "isotonic calibration of every entry + shrinkage of rated entries toward human evidence"


def _categories(syn: pd.DataFrame, items: pd.DataFrame) -> np.ndarray:
    if "category" in items.columns:
        return items["category"].astype(int).to_numpy()
    same_verb = (syn["gt_verb"] == syn["pred_verb"]).to_numpy()
    same_obj = (syn["gt_object"] == syn["pred_object"]).to_numpy()
    return np.where(same_verb, 1, np.where(same_obj, 2, 3))


@dataclass
class Evidence:
    """Pooled human evidence per unordered label pair of one matrix."""

    a: np.ndarray
    b: np.ndarray
    old: np.ndarray       # original similarity in [0, 1]
    implied: np.ndarray   # weighted mean implied similarity in [0, 1]
    weight: np.ndarray    # number of ratings behind it (category-3 ratings count ½)


def _pool(a, b, old, implied, weight) -> Evidence:
    a = np.asarray(a, dtype=object)
    b = np.asarray(b, dtype=object)
    lo = np.where(a <= b, a, b)
    hi = np.where(a <= b, b, a)
    df = pd.DataFrame({"a": lo, "b": hi, "old": old, "wi": implied * weight, "w": weight})
    df = df[(df["a"] != df["b"]) & (df["w"] > 0)]
    g = df.groupby(["a", "b"], sort=True).agg(old=("old", "first"), wi=("wi", "sum"), w=("w", "sum"))
    return Evidence(a=g.index.get_level_values(0).to_numpy(object), b=g.index.get_level_values(1).to_numpy(object),
                    old=g["old"].to_numpy(float), implied=(g["wi"] / g["w"]).to_numpy(float),
                    weight=g["w"].to_numpy(float))


def evidence(items: pd.DataFrame, verb_matrix: SimilarityMatrix, object_matrix: SimilarityMatrix,
             w: float = 0.5) -> tuple[Evidence, Evidence]:
    """Verb and object evidence implied by rated items (needs ``human_mean``, ``n_ratings``)."""
    syn = item_synsets(items)
    v = verb_matrix.sims(syn["pred_verb"].to_numpy(object), syn["gt_verb"].to_numpy(object))
    o = object_matrix.sims(syn["pred_object"].to_numpy(object), syn["gt_object"].to_numpy(object))
    h = items["human_mean"].to_numpy(float) / SCALE_MAX
    n = items["n_ratings"].to_numpy(float)
    cat = _categories(syn, items)
    delta = h - (w * v + (1 - w) * o)
    verb_implied = np.where(cat == 2, (h - (1 - w) * o) / w, v + delta)
    obj_implied = np.where(cat == 1, (h - w * v) / (1 - w), o + delta)
    verb_weight = np.where(cat == 2, n, np.where(cat == 3, n / 2, 0.0))
    obj_weight = np.where(cat == 1, n, np.where(cat == 3, n / 2, 0.0))
    return (_pool(syn["pred_verb"], syn["gt_verb"], v, np.clip(verb_implied, 0, 1), verb_weight),
            _pool(syn["pred_object"], syn["gt_object"], o, np.clip(obj_implied, 0, 1), obj_weight))


@dataclass
class Calibration:
    """A fitted monotone map plus the shrunk values of rated pairs for one matrix."""

    iso: IsotonicRegression | None
    pairs: pd.Series      # (a, b) sorted -> recalibrated similarity in [0, 1]
    prior_strength: float

    def map(self, old: np.ndarray) -> np.ndarray:
        old = np.asarray(old, float)
        if self.iso is None:
            return old
        return np.where(old > 0, self.iso.predict(old), 0.0)

    def predict(self, a, b, old) -> np.ndarray:
        """Recalibrated similarity of label pairs whose original similarity is ``old``."""
        a = np.asarray(a, dtype=object)
        b = np.asarray(b, dtype=object)
        out = self.map(old)
        out = np.where(a == b, 1.0, out)
        if len(self.pairs):
            lo = np.where(a <= b, a, b)
            hi = np.where(a <= b, b, a)
            idx = self.pairs.index.get_indexer(pd.MultiIndex.from_arrays([lo, hi]))
            hit = idx >= 0
            out[hit] = self.pairs.to_numpy()[idx[hit]]
        return out


def fit_calibration(ev: Evidence, prior_strength: float = 5.0) -> Calibration:
    """Isotonic map old → implied (weighted) and shrunk values for the rated pairs."""
    from sklearn.isotonic import IsotonicRegression
    if len(ev.old) < 2 or np.ptp(ev.old) == 0:
        iso = None
    else:
        iso = IsotonicRegression(y_min=0.0, y_max=1.0, increasing=True, out_of_bounds="clip")
        iso.fit(ev.old, ev.implied, sample_weight=ev.weight)
    cal = Calibration(iso=iso, pairs=pd.Series(dtype=float), prior_strength=prior_strength)
    prior = cal.map(ev.old)
    shrunk = (prior_strength * prior + ev.weight * ev.implied) / (prior_strength + ev.weight)
    cal.pairs = pd.Series(shrunk, index=pd.MultiIndex.from_arrays([ev.a, ev.b]))
    return cal


def apply_calibration(matrix: SimilarityMatrix, cal: Calibration, meta: dict) -> SimilarityMatrix:
    """A new matrix: every stored entry through the map, rated pairs replaced by their shrunk value."""
    i, j, score = matrix.entries()
    mapped = cal.map(score / SCALE_MAX) * SCALE_MAX
    labels = list(matrix.labels)
    rated_a = cal.pairs.index.get_level_values(0).to_numpy(object)
    rated_b = cal.pairs.index.get_level_values(1).to_numpy(object)
    new_labels = [x for x in pd.unique(np.concatenate([rated_a, rated_b])) if x not in matrix]
    labels += new_labels
    index = pd.Index(labels)
    ri, rj = index.get_indexer(rated_a), index.get_indexer(rated_b)
    n = len(labels)
    key_old = np.minimum(i, j) * n + np.maximum(i, j)
    key_rated = np.minimum(ri, rj) * n + np.maximum(ri, rj)
    keep = ~np.isin(key_old, key_rated)
    row = np.concatenate([i[keep], ri])
    col = np.concatenate([j[keep], rj])
    val = np.clip(np.concatenate([mapped[keep], cal.pairs.to_numpy() * SCALE_MAX]), 0.0, SCALE_MAX)
    return SimilarityMatrix(labels, row=row, col=col, val=val, meta=meta)


def _scores(items_syn, v_old, o_old, cal_v: Calibration, cal_o: Calibration, w: float) -> np.ndarray:
    v = cal_v.predict(items_syn["pred_verb"].to_numpy(object), items_syn["gt_verb"].to_numpy(object), v_old)
    o = cal_o.predict(items_syn["pred_object"].to_numpy(object), items_syn["gt_object"].to_numpy(object), o_old)
    return SCALE_MAX * combine(v, o, method="arithmetic", w=w)


def _summary(pred: np.ndarray, human: np.ndarray) -> dict:
    from scipy import stats
    rho = stats.spearmanr(pred, human).statistic if np.ptp(pred) > 0 and np.ptp(human) > 0 else float("nan")
    return {"agreement": float(eq13_agreement(pred, human).mean()), "spearman": float(rho)}


@validate_params(RECALIBRATION_OPTIONS)
def recalibrate_matrices(rated_items: pd.DataFrame, verb_matrix: SimilarityMatrix, object_matrix: SimilarityMatrix,
                *, w: float = 0.5, prior_strength: float = 5.0, folds: int = 5, seed: int = 0,
                study: str | None = None) -> dict:
    """Cross-validate, then fit on every rated item; returns the new matrices and the figures.

    Result keys: ``verb``, ``object`` (new :class:`SimilarityMatrix`), ``before``, ``after``
    (held-out agreement / Spearman pooled over folds), ``by_category`` (the same per pair
    category 1-3, with ``n_items``), ``folds`` (per-fold figures),
    ``method``, ``parameters``, ``n_items``, ``n_ratings``, ``calibration_curves``.
    """
    from sklearn.model_selection import KFold
    require_columns(rated_items.columns, ("human_mean", "n_ratings"), "rated items")
    items = rated_items.reset_index(drop=True)
    if len(items) < folds:
        raise ParameterError("folds", f"must be at most the number of rated items ({len(items)}), got {folds}")
    syn = item_synsets(items)
    v_old = verb_matrix.sims(syn["pred_verb"].to_numpy(object), syn["gt_verb"].to_numpy(object))
    o_old = object_matrix.sims(syn["pred_object"].to_numpy(object), syn["gt_object"].to_numpy(object))
    human = items["human_mean"].to_numpy(float)
    before_pred = SCALE_MAX * combine(v_old, o_old, method="arithmetic", w=w)
    after_pred = np.empty(len(items))
    per_fold = []
    splitter = KFold(n_splits=folds, shuffle=True, random_state=seed)
    for fold, (train, test) in enumerate(splitter.split(items)):
        ev_v, ev_o = evidence(items.iloc[train], verb_matrix, object_matrix, w)
        cal_v, cal_o = fit_calibration(ev_v, prior_strength), fit_calibration(ev_o, prior_strength)
        after_pred[test] = _scores(syn.iloc[test], v_old[test], o_old[test], cal_v, cal_o, w)
        per_fold.append({"fold": fold, "n_test": int(len(test)),
                         "before": _summary(before_pred[test], human[test]),
                         "after": _summary(after_pred[test], human[test])})
    ev_v, ev_o = evidence(items, verb_matrix, object_matrix, w)
    cal_v, cal_o = fit_calibration(ev_v, prior_strength), fit_calibration(ev_o, prior_strength)
    before, after = _summary(before_pred, human), _summary(after_pred, human)
    category = _categories(syn, items)
    by_category = {int(c): {"n_items": int((category == c).sum()),
                            "before": _summary(before_pred[category == c], human[category == c]),
                            "after": _summary(after_pred[category == c], human[category == c])}
                   for c in np.unique(category)}
    parameters = {"w": w, "prior_strength": prior_strength, "folds": folds, "seed": seed}
    n_ratings = int(items["n_ratings"].sum())
    grid = np.linspace(0, 1, 101)

    def meta_for(matrix: SimilarityMatrix, ev: Evidence) -> dict:
        return {"source": "recalibrated", "based_on": matrix.meta, "study": study,
                "n_items": int(len(items)), "n_ratings": n_ratings, "n_rated_pairs": int(len(ev.a)),
                "method": METHOD, "parameters": parameters, "date": date.today().isoformat(),
                "cross_validation": {"before": before, "after": after}}

    return {
        "verb": apply_calibration(verb_matrix, cal_v, meta_for(verb_matrix, ev_v)),
        "object": apply_calibration(object_matrix, cal_o, meta_for(object_matrix, ev_o)),
        "before": before, "after": after, "by_category": by_category, "folds": per_fold, "method": METHOD,
        "parameters": parameters, "n_items": int(len(items)), "n_ratings": n_ratings,
        "calibration_curves": {"x": grid.tolist(), "verb": cal_v.map(grid).tolist(),
                               "object": cal_o.map(grid).tolist()},
        "evidence": {"verb": ev_v, "object": ev_o},
    }


PPI_METHOD = ("prediction-powered: every entry's LLM similarity plus the mean human-implied correction of "
              "its LLM level (metrics.study.ppi.ppi_entries)")


def _entry_table(matrix: SimilarityMatrix, ev: Evidence) -> pd.DataFrame:
    """Every stored pair of distinct labels plus every rated pair: ``a, b`` (sorted), ``llm``
    (0–4), ``human`` (implied similarity × 4, NaN unrated), ``n_ratings``."""
    i, j, score = matrix.entries()
    a, b = matrix.labels[i].astype(object), matrix.labels[j].astype(object)
    stored = pd.DataFrame({"a": np.where(a <= b, a, b), "b": np.where(a <= b, b, a), "llm": score})
    rated = pd.DataFrame({"a": ev.a, "b": ev.b, "human": ev.implied * SCALE_MAX, "n_ratings": ev.weight})
    table = stored.merge(rated, on=["a", "b"], how="outer")
    table["llm"] = table["llm"].fillna(0.0)  # a rated pair the matrix does not hold scores 0
    table["n_ratings"] = table["n_ratings"].fillna(0.0)
    return table.sort_values(["a", "b"], kind="stable").reset_index(drop=True)


@validate_params(PPI_RECALIBRATION_OPTIONS)
def recalibrate_matrices_ppi(rated_items: pd.DataFrame, verb_matrix: SimilarityMatrix, object_matrix: SimilarityMatrix,
                    *, w: float = 0.5, confidence: float = 0.95, study: str | None = None) -> dict:
    """New verb and object matrices from prediction-powered estimates: the given matrices are the
    LLM ratings of every pair, the rated items the human evidence (implied similarities as in
    :func:`evidence`). Entries are stratified by their LLM level (score rounded to 0–4); each gets
    :func:`metrics.study._ppi.ppi_entries`' estimate, with its interval and the human-only one.

    Returns ``verb``, ``object`` (new matrices), ``intervals`` (role → per-entry table),
    ``by_level`` (role → per-stratum summary), ``method``, ``parameters``, ``n_items``, ``n_ratings``.
    """
    from metrics.study._ppi import ppi_entries
    require_columns(rated_items.columns, ("human_mean", "n_ratings"), "rated items")
    items = rated_items.reset_index(drop=True)
    ev_v, ev_o = evidence(items, verb_matrix, object_matrix, w)
    parameters = {"w": w, "confidence": confidence, "strata": "LLM level (score rounded to 0-4)"}
    n_ratings = int(items["n_ratings"].sum())
    out: dict = {"method": PPI_METHOD, "parameters": parameters, "n_items": int(len(items)), "n_ratings": n_ratings,
           "intervals": {}, "by_level": {}}
    for role, matrix, ev in (("verb", verb_matrix, ev_v), ("object", object_matrix, ev_o)):
        table = _entry_table(matrix, ev)
        if np.isfinite(table["human"]).sum() < 2:
            raise ParameterError("ratings", f"the {role} matrix needs human evidence on at least two pairs "
                                            f"(category-{'2' if role == 'verb' else '1'} or -3 items)")
        estimates = ppi_entries(table["llm"], table["human"], np.rint(table["llm"]).astype(int), confidence=confidence)
        table = pd.concat([table[["a", "b", "n_ratings"]], estimates.rename(columns={"model": "llm"})], axis=1)
        out["intervals"][role] = table
        out["by_level"][role] = [
            {"level": int(level), "fit": str(g["fit"].iloc[0]), "entries": int(len(g)), "rated": int(g["human"].notna().sum()),
             "lam": float(g["lam"].iloc[0]), "mean_estimate": float(g["estimate"].mean()),
             "human_only": float(g["classical"].iloc[0]),
             "human_only_interval": [float(g["classical_lower"].iloc[0]), float(g["classical_upper"].iloc[0])],
             "effective_n": float(g["effective_n"].iloc[0])}
            for level, g in table.groupby("stratum", sort=True)]
        labels = list(matrix.labels) + [x for x in pd.unique(table[["a", "b"]].to_numpy().ravel()) if x not in matrix]
        meta = {"source": "recalibrated", "based_on": matrix.meta, "study": study, "n_items": int(len(items)),
                "n_ratings": n_ratings, "n_rated_pairs": int(table["human"].notna().sum()), "method": PPI_METHOD,
                "parameters": parameters, "date": date.today().isoformat()}
        out[role] = SimilarityMatrix.from_long(table["a"], table["b"], table["estimate"], labels=labels, meta=meta)
    return out
