"""Per-category tuning of the verb weight w of the HOI similarity (SHOE §4.5, Eq. 14).

``MAE_c(w) = 1/N_c Σ_{i: c(i) = c} |w·v_i + (1 − w)·o_i − y_i|`` with v, o the verb and object
similarities in [0, 1] and y the mean human rating divided by 4.

The MAE is convex and piecewise linear in w: writing ``a_i = v_i − o_i`` and
``b_i = o_i − y_i``, each term is ``|a_i|·|w − t_i|`` with ``t_i = −b_i / a_i`` (constant when
``a_i = 0``), so the exact minimizer is a weighted median of the breakpoints ``t_i`` (weights
``|a_i|``), clipped to [0, 1]. A grid of step 0.001 gives the curve; the exact optimum is then
found among the breakpoints. When the minimum is a flat segment, the w closest to 0.5 on it is
reported.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics.core._choices import SCALE_MAX
from metrics.core._constraints import validate_params
from metrics.core._errors import InputError
from metrics.core._inputs import require_columns
from metrics.study._agreement import eq13_agreement
from metrics.study._options import TUNING_OPTIONS


def mae_curve(v, o, y, grid) -> np.ndarray:
    """MAE of ``w·v + (1 − w)·o`` against y for every w in ``grid`` (chunked, vectorized)."""
    v, o, y = (np.asarray(x, float) for x in (v, o, y))
    grid = np.asarray(grid, float)
    out = np.empty(len(grid))
    step = max(1, int(2e7 // max(len(v), 1)))
    for start in range(0, len(grid), step):
        w = grid[start:start + step, None]
        out[start:start + step] = np.abs(w * v + (1 - w) * o - y).mean(axis=1)
    return out


def optimal_w(v, o, y) -> float:
    """Exact minimizer of Eq. 14 over w in [0, 1] (closest to 0.5 on a flat minimum).

    >>> v = np.array([1.0, 0.0, 0.5]); o = np.array([0.0, 1.0, 0.5])
    >>> round(optimal_w(v, o, 0.3 * v + 0.7 * o), 6)
    0.3
    """
    v, o, y = (np.asarray(x, float) for x in (v, o, y))
    if len(v) == 0:
        raise InputError("cannot tune w without items")
    a = v - o
    b = o - y
    slope = a != 0
    candidates = np.concatenate([[0.0, 0.5, 1.0], np.clip(-b[slope] / a[slope], 0.0, 1.0)])
    candidates = np.unique(candidates)
    values = mae_curve(v, o, y, candidates) if len(v) * len(candidates) <= 5e7 else _mae_sorted(a, b, candidates)
    best = values.min()
    on_min = candidates[values <= best + 1e-12]
    if len(on_min) > 1:  # flat segment between its end breakpoints: nearest point to 0.5
        return float(np.clip(0.5, on_min.min(), on_min.max()))
    return float(on_min[0])


def _mae_sorted(a: np.ndarray, b: np.ndarray, ws: np.ndarray) -> np.ndarray:
    """Σ|a_i w + b_i| / n at many w in O((n + m) log n) for large inputs."""
    flat = a == 0
    const = np.abs(b[flat]).sum()
    a, b = a[~flat], b[~flat]
    t = -b / a
    weight = np.abs(a)
    order = np.argsort(t)
    t, weight = t[order], weight[order]
    wt = weight * t
    cw = np.concatenate([[0.0], np.cumsum(weight)])
    cwt = np.concatenate([[0.0], np.cumsum(wt)])
    k = np.searchsorted(t, ws, side="right")
    left = ws * cw[k] - cwt[k]
    right = (cwt[-1] - cwt[k]) - ws * (cw[-1] - cw[k])
    return (left + right + const) / len(flat)


@validate_params(TUNING_OPTIONS)
def tune_w_by_category(rated_items: pd.DataFrame, *, step: float = 0.001) -> dict:
    """Per-category and overall w, MAE at the optimum, the MAE curves, and the agreement
    (Eq. 13, 0–4 scale) with category-tuned w versus w = 0.5.

    ``rated_items`` needs ``verb_sim``, ``object_sim`` (in [0, 1]) and ``human_mean`` (0–4);
    ``category`` is optional (without it only the overall w is tuned).
    """
    require_columns(rated_items.columns, ("verb_sim", "object_sim", "human_mean"), "rated items")
    v = rated_items["verb_sim"].to_numpy(float)
    o = rated_items["object_sim"].to_numpy(float)
    y = rated_items["human_mean"].to_numpy(float) / SCALE_MAX
    grid = np.round(np.arange(0.0, 1.0 + step / 2, step), 10)
    categories = (rated_items["category"].astype(int).to_numpy() if "category" in rated_items.columns
                  else np.zeros(len(v), dtype=int))
    w_overall = optimal_w(v, o, y)
    result: dict = {"w_overall": w_overall, "mae_overall": float(mae_curve(v, o, y, [w_overall])[0]),
              "w_by_category": {}, "mae_by_category": {}, "n_by_category": {},
              "curve": {"w": grid.tolist(), "overall": mae_curve(v, o, y, grid).tolist()}}
    tuned = np.full(len(v), w_overall)
    for cat in sorted(set(categories.tolist())):
        if "category" not in rated_items.columns:
            break
        sel = categories == cat
        w = optimal_w(v[sel], o[sel], y[sel])
        tuned[sel] = w
        key = str(cat)
        result["w_by_category"][key] = w
        result["mae_by_category"][key] = float(mae_curve(v[sel], o[sel], y[sel], [w])[0])
        result["n_by_category"][key] = int(sel.sum())
        result["curve"][key] = mae_curve(v[sel], o[sel], y[sel], grid).tolist()
    human = y * SCALE_MAX
    result["agreement_tuned"] = float(eq13_agreement(SCALE_MAX * (tuned * v + (1 - tuned) * o), human).mean())
    result["agreement_w05"] = float(eq13_agreement(SCALE_MAX * (0.5 * v + 0.5 * o), human).mean())
    return result
