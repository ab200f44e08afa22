"""The Diag-HOI report: ΔmAP bar chart (as the paper's Fig. 5/7), tables, HTML + JSON + CSV.

``write_diagnosis_report(out_dir, results, errors)`` takes the ``diagnose`` command's result
per model (``{name: result_dict}``) and optionally each model's per-prediction error table,
and writes ``report.html`` (plots embedded), ``diagnosis.json``, one CSV per table
(``delta_map.csv``, ``error_counts.csv``, ``progressive.csv``, ``pair_localization.csv``,
``interaction_classification.csv``, ``errors_<model>.csv``) and ``delta_map.png``. Several
models are shown side by side. The error types, their titles, paper sections and groups come
from :data:`metrics.diagnosis._registry.ERROR_REGISTRY`, so a registered new type is shown like the others.
"""

from __future__ import annotations

import html
import re
from pathlib import Path

import numpy as np
import pandas as pd

from metrics.core._constraints import Text, validate_params
from metrics.core._inputs import numbers
from metrics.core._jsonio import StagedFolder, write_json
from metrics.diagnosis._registry import ERROR_REGISTRY
from metrics.diagnosis._scene import SUBSETS
from metrics.study._report import table_html, write_page
from metrics.study._report_figures import png_bytes, subplots


def delta_map_chart(results: dict):
    """Grouped bars of ΔmAP (in mAP points, as the paper) per error type, one colour per model;
    the grouped FP / FN oracles on the right of a gap."""
    fig, ax = subplots(figsize=(7.0, 2.9))
    names = list(results)
    width = 0.8 / max(len(names), 1)
    n_errors, n_grouped = len(ERROR_REGISTRY.errors), len(ERROR_REGISTRY.grouped)
    x = np.r_[np.arange(n_errors), n_errors + 0.6 + np.arange(n_grouped)]
    for k, name in enumerate(names):
        vals = [100 * (results[name]["delta_map"].get(o) or 0.0) for o in ERROR_REGISTRY.oracles]
        bars = ax.bar(x + (k - (len(names) - 1) / 2) * width, vals, width, label=name)
        for b, v in zip(bars, vals):
            ax.text(b.get_x() + b.get_width() / 2, b.get_height(), f"{v:.1f}", ha="center", va="bottom",
                    fontsize=6)
    ax.set_xticks(x, [ERROR_REGISTRY[o].title for o in ERROR_REGISTRY.oracles], rotation=30, ha="right")
    ax.set_ylabel("ΔmAP (points)")
    ax.set_title("mAP improvement by fixing each error type with its oracle (Eq. 2)")
    if len(names) > 1:
        ax.legend(frameon=False, fontsize=7)
    return fig


def _frames(results: dict) -> dict[str, pd.DataFrame]:
    rows_d, rows_c, rows_p, rows_l, rows_i = [], [], [], [], []
    for name, r in results.items():
        for sub in SUBSETS:
            s = r["splits"][sub]
            rows_d.append({"model": name, "split": sub, "map": s["map"], **s["delta_map"]})
            rows_c.append({"model": name, "split": sub, "true_positive": s["error_counts"]["true_positive"],
                           **{k: s["error_counts"][k] for k in ERROR_REGISTRY.oracles}})
        for step in r["progressive"]:
            rows_p.append({"model": name, "oracle": step["oracle"], **{f"map_{k}": v for k, v in step["map"].items()},
                           **{f"delta_{k}": v for k, v in step["delta_map"].items()}})
        loc = r.get("pair_localization")
        if loc:
            rows_l.append({"model": name, "pairs_per_image": loc["pairs_per_image"], "n_pairs": loc["n_pairs"],
                           **{f"recall_{k}": v["recall"] for k, v in loc["splits"].items()},
                           "precision": loc["precision"]})
        ic = r.get("interaction_classification")
        if ic:
            rows_i.append({"model": name, "negative_ap": ic["negative_ap"], "interaction_map": ic["interaction_map"],
                           **{f"interaction_map_{k}": v["interaction_map"] for k, v in ic["splits"].items()}})
    out = {"delta_map": pd.DataFrame(rows_d), "error_counts": pd.DataFrame(rows_c),
           "progressive": pd.DataFrame(rows_p)}
    if rows_l:
        out["pair_localization"] = pd.DataFrame(rows_l)
    if rows_i:
        out["interaction_classification"] = pd.DataFrame(rows_i)
    return out


def error_types_frame() -> pd.DataFrame:
    """The registered error types: name, title, paper section and group (the grouped oracle that
    covers it)."""
    return pd.DataFrame([{"error_type": e.name, "title": e.title, "section": e.section,
                          "group": "" if e in ERROR_REGISTRY.grouped else e.group}
                         for e in ERROR_REGISTRY.errors + ERROR_REGISTRY.grouped])


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name) or "model"


@validate_params({"title": Text()})
def write_diagnosis_report(out_dir, results: dict, errors: dict | None = None, *,
                           title: str = "Diag-HOI diagnosis") -> Path:
    """Write the report into ``out_dir`` (built in a temporary folder and moved into place:
    all of its files or none); returns the HTML path."""
    staged = StagedFolder(out_dir)
    with staged as folder:
        _write_diagnosis_report(folder, results, errors, title)
    return staged.path / "report.html"


def _write_diagnosis_report(out_dir, results: dict, errors: dict | None, title: str) -> Path:
    import base64

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    write_json(results, out / "diagnosis.json")
    frames = _frames(results)
    for name, df in frames.items():
        df.to_csv(out / f"{name}.csv", index=False)
    for name, df in (errors or {}).items():
        df.to_csv(out / f"errors_{_slug(name)}.csv", index=False)
    png = png_bytes(delta_map_chart(results))
    (out / "delta_map.png").write_bytes(png)
    img = f'<img alt="delta_map" src="data:image/png;base64,{base64.b64encode(png).decode()}">'

    def pct(df):
        df = df.copy()
        for c in df.columns:
            if c not in ("model", "split", "oracle", "n_pairs") and not c.startswith("pairs_per"):
                if df[c].dtype.kind == "f" or df[c].dtype == object:
                    df[c] = numbers(df[c]) * 100
        return df

    parts = [f"<p>Scores in percent (mAP points). Models: {html.escape(', '.join(results))}.</p>", img,
             "<h2>mAP and ΔmAP per oracle (Eq. 2)</h2>",
             table_html(pct(frames["delta_map"]).set_index(["model", "split"]), 2),
             "<h2>Error counts (Fig. 2 categories)</h2>",
             table_html(frames["error_counts"].set_index(["model", "split"]), 0),
             "<h2>Progressive fixes (§3.4)</h2>",
             "<p>Fixing the error types cumulatively, in this order, reaches mAP 100 (Eq. 4). The "
             "single-oracle ΔmAPs above do not add up to 100 − mAP: fixing several errors together gains "
             "more than fixing each alone (Eqs. 3–10).</p>",
             table_html(pct(frames["progressive"]).set_index(["model", "oracle"]), 2)]
    if "pair_localization" in frames:
        parts += ["<h2>Human-object pair localization (§4.1)</h2>",
                  table_html(pct(frames["pair_localization"]).set_index("model"), 2)]
    if "interaction_classification" in frames:
        parts += ["<h2>Interaction classification (§4.2)</h2>",
                  table_html(pct(frames["interaction_classification"]).set_index("model"), 2)]
    parts += ["<h2>Error types (Fig. 2, §3.3)</h2>", table_html(error_types_frame().set_index("error_type"))]
    if errors:
        parts.append("<p>Per-prediction categories: " + ", ".join(
            f'<a href="errors_{_slug(n)}.csv">errors_{html.escape(_slug(n))}.csv</a>' for n in errors) + "</p>")
    return write_page(out / "report.html", title, "".join(parts), {})

