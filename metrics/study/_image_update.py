"""The with-image rating pass (SHOE supplementary §6.2): how much do ratings move with an image?

Each annotator re-rates pairs they rated without images, now with an image of the ground-truth
HOI class and their earlier rating preselected. For the n (item, annotator) pairs with both a
rating ``before`` (no image) and ``after`` (with image):

- share updated ``p = #(after ≠ before) / n`` with the 95% normal (Wald) interval
  ``p ± 1.96·sqrt(p(1 − p)/n)`` (the paper reports 7.65%, 95% CI 6.29–9.00%) and Wilson's;
- mean absolute change among the updated ratings ``m = mean |after − before|`` with the 95%
  t interval ``m ± t(0.975, k − 1)·s/√k`` over the k updated ratings (paper: ≈ 1.14, CI 1.11–1.17);
  also over all ratings;
- direction: how many updates went up (after > before) and down, and the mean signed change;
- the same per category (1 same verb, 2 same object, 3 both different) and per annotator.

>>> import pandas as pd
>>> t = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "annotator": ["x"] * 4,
...                   "before": [1, 2, 3, 4], "after": [1, 3, 3, 2]})
>>> r = image_update(t)
>>> r["share_updated"], r["mean_abs_change"], r["direction"]["up"], r["direction"]["down"]
(0.5, 1.5, 1, 1)
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics.core._choices import SCALE
from metrics.core._errors import InputError
from metrics.core._inputs import numbers
from metrics.core._intervals import t_interval, wald_interval, wilson_interval


def _mean(values: np.ndarray) -> float | None:
    return float(values.mean()) if len(values) else None


def _listed(interval) -> list[float] | None:
    return None if interval is None else list(interval)


def _summary(before: np.ndarray, after: np.ndarray) -> dict:
    n = len(before)
    change = after - before
    updated = change != 0
    k = int(updated.sum())
    p = k / n
    size, size_all = np.abs(change[updated]).astype(float), np.abs(change).astype(float)
    return {"n": n, "n_updated": k, "share_updated": p, "share_updated_ci": list(wald_interval(p, n)),
            "share_updated_ci_wilson": list(wilson_interval(p, n)),
            "mean_abs_change": _mean(size), "mean_abs_change_ci": _listed(t_interval(size)),
            "mean_abs_change_all": _mean(size_all), "mean_abs_change_all_ci": _listed(t_interval(size_all)),
            "direction": {"up": int((change > 0).sum()), "down": int((change < 0).sum()),
                          "mean_signed_change": float(change[updated].mean()) if k else None,
                          "by_size": {str(int(s)): int((change == s).sum())
                                      for s in sorted(set(change[updated].tolist()))}}}


def image_update(table: pd.DataFrame) -> dict:
    """Update statistics of a table with ``item_id, annotator, before, after`` (numbers on the
    rating scale) and optionally ``category``. Formulas: module docstring."""
    for column in ("item_id", "annotator", "before", "after"):
        if column not in table.columns:
            raise InputError(f"image-update table lacks the column '{column}'")
    if table.empty:
        raise InputError("image-update: no (item, annotator) pair has both ratings")
    frame = table.copy()
    for column in ("before", "after"):
        values = numbers(frame[column])
        if values.isna().any():
            bad = frame.loc[values.isna(), column].iloc[0]
            raise InputError(f"image-update: {column} rating {bad!r} is not a number")
        frame[column] = values
    if frame.duplicated(["item_id", "annotator"]).any():
        item, annotator = frame.loc[frame.duplicated(["item_id", "annotator"]), ["item_id", "annotator"]].iloc[0]
        raise InputError(f"image-update: item {item!r} has two ratings by {annotator!r}")
    result = _summary(frame["before"].to_numpy(), frame["after"].to_numpy())
    if "category" in frame.columns:
        result["by_category"] = {
            str(cat): _summary(g["before"].to_numpy(), g["after"].to_numpy())
            for cat, g in frame.groupby(frame["category"].astype(str), sort=True)}
    result["by_annotator"] = {
        str(a): _summary(g["before"].to_numpy(), g["after"].to_numpy())
        for a, g in frame.groupby(frame["annotator"].astype(str), sort=True)}
    return result


def check_earlier_ratings(ratings: pd.DataFrame, source: str, scale=SCALE) -> None:
    """An ``earlier_rating`` column holds, per row, nothing or a rating on the scale (a value
    off the scale is refused, naming its line)."""
    from metrics.core._inputs import refuse_first_row

    if "earlier_rating" not in ratings.columns:
        return
    text = ratings["earlier_rating"].astype(str).str.strip()
    values = numbers(text)
    refuse_first_row(source, (text != "") & (text != "nan") & ~values.isin(scale),
                     lambda k: f"earlier_rating '{text.iloc[k]}' is not one of {', '.join(map(str, scale))}")


def _latest_ratings(frame: pd.DataFrame) -> pd.DataFrame:
    """Main-phase ratings with string ids, the latest by ``created_at`` per item and annotator."""
    frame = frame.copy()
    frame["item_id"] = frame["item_id"].astype(str)
    frame["annotator"] = frame["annotator"].astype(str)
    if "phase" in frame.columns:
        frame = frame[frame["phase"].fillna("main") == "main"]
    if "created_at" in frame.columns:
        frame = frame.sort_values("created_at", kind="stable")
    return frame.drop_duplicates(["item_id", "annotator"], keep="last")


def _require_rating_columns(frame: pd.DataFrame, which: str) -> None:
    for column in ("item_id", "annotator", "rating"):
        if column not in frame.columns:
            raise InputError(f"{which} ratings lack the column '{column}'")


def _joined_with_before(out: pd.DataFrame, before: pd.DataFrame | None) -> pd.DataFrame:
    """The with-image ratings (as ``after``) joined on item and annotator with the earlier study's."""
    if before is None:
        raise InputError("the with-image ratings have no 'earlier_rating' column; give the "
                         "earlier study's ratings (--before)")
    _require_rating_columns(before, "earlier")
    old = _latest_ratings(before)[["item_id", "annotator", "rating"]].rename(columns={"rating": "before"})
    out = out.drop(columns=[c for c in ("earlier_rating",) if c in out.columns])
    return out.rename(columns={"rating": "after"}).merge(old, on=["item_id", "annotator"])


def pair_ratings(after: pd.DataFrame, before: pd.DataFrame | None = None,
                 items: pd.DataFrame | None = None) -> pd.DataFrame:
    """``item_id, annotator, before, after[, category]`` from a with-image ratings table.

    ``after`` is the with-image study's ratings (``item_id, annotator, rating`` and, as the
    platform exports it, ``earlier_rating``); without that column, ``before`` (the earlier
    study's ratings) is joined on item and annotator. When an annotator revised an answer, the
    latest row by ``created_at`` counts. ``category`` comes from ``after`` or from ``items``."""
    _require_rating_columns(after, "with-image")
    out = _latest_ratings(after)
    if "earlier_rating" in out.columns and before is None:
        out = out.rename(columns={"rating": "after", "earlier_rating": "before"})
        out = out[out["before"].notna() & (out["before"].astype(str) != "")]
    else:
        out = _joined_with_before(out, before)
    if "category" not in out.columns and items is not None and "category" in items.columns:
        cats = items[["item_id", "category"]].astype({"item_id": str}).drop_duplicates("item_id")
        out = out.merge(cats, on="item_id", how="left")
    keep = [c for c in ("item_id", "annotator", "before", "after", "category") if c in out.columns]
    return out[keep].reset_index(drop=True)


def summary_frame(result: dict) -> pd.DataFrame:
    """One row per group (overall, category c, annotator a) for reports."""
    def row(name: str, s: dict) -> dict:
        lo, hi = s["share_updated_ci"]
        mci = s["mean_abs_change_ci"] or [None, None]
        return {"group": name, "n": s["n"], "updated": s["n_updated"], "share_updated": s["share_updated"],
                "share_ci_low": lo, "share_ci_high": hi, "mean_abs_change": s["mean_abs_change"],
                "change_ci_low": mci[0], "change_ci_high": mci[1], "up": s["direction"]["up"],
                "down": s["direction"]["down"]}

    rows = [row("overall", result)]
    rows += [row(f"category {c}", s) for c, s in result.get("by_category", {}).items()]
    rows += [row(f"annotator {a}", s) for a, s in result.get("by_annotator", {}).items()]
    return pd.DataFrame(rows)
