"""HTML report of an LLM-built matrix: per-model summary, score distributions, inter-model
Pearson r (SHOE Fig. 3: verbs in the upper triangle, objects in the lower), control-set
disagreement (§4.2) and the subset ablation against humans (supplementary Table 1).
Plots are matplotlib PNGs embedded as base64, like :mod:`metrics.study._report`."""

from __future__ import annotations

import html
from pathlib import Path

import numpy as np
import pandas as pd

from metrics.llm import _aggregate as aggregate
from metrics.llm._plan import Ratings
from metrics.study._report import table_html, write_page
from metrics.study._report_figures import heatmap_figure, png_bytes, subplots


def _fig3(ratings: dict[str, Ratings]) -> tuple[pd.DataFrame, object]:
    models = list(dict.fromkeys(m for r in ratings.values() for m in r.models))
    frame = pd.DataFrame(np.nan, index=models, columns=models)
    for pos, r in ratings.items():
        pearson = aggregate.pairwise_frame(r, "pearson")
        for i, x in enumerate(models):
            for j, y in enumerate(models):
                if x in pearson.index and y in pearson.index and i != j:
                    upper = i < j
                    if (pos == "verb") == upper or len(ratings) == 1:
                        frame.loc[x, y] = pearson.loc[x, y]
    for m in models:
        frame.loc[m, m] = 1.0
    title = "Pearson r (upper: verbs, lower: objects)" if len(ratings) > 1 else f"Pearson r ({next(iter(ratings))}s)"
    return frame, heatmap_figure(frame, title, vmin=0.0, vmax=1.0)


def _distribution_plot(ratings: dict[str, Ratings]):
    fig, axes = subplots(1, len(ratings), figsize=(4.2 * len(ratings), 2.8), squeeze=False)
    for ax, (pos, r) in zip(axes[0], ratings.items()):
        dist = aggregate.distributions(r)
        width = 0.8 / max(len(dist.index), 1)
        for k, (name, row) in enumerate(dist.iterrows()):
            total = max(row.sum(), 1)
            ax.bar(np.arange(5) + k * width - 0.4 + width / 2, row.to_numpy() / total, width, label=str(name))
        ax.set_xticks(range(5), [str(s) for s in range(5)])
        ax.set_xlabel("score")
        ax.set_ylabel("share of answers")
        ax.set_title(f"{pos}: score distribution per model")
        ax.legend(fontsize=7, frameon=False)
    return fig


def _ablation_plot(abl: dict):
    fig, ax = subplots(figsize=(4.2, 2.8))
    sizes = [row["size"] for row in abl["subsets"]]
    values = [100 * row["agreement"] for row in abl["subsets"]]
    ax.scatter(sizes, values, s=14, alpha=0.7)
    for size, stat in abl["by_size"].items():
        ax.errorbar(int(size) + 0.15, 100 * stat["mean"], yerr=100 * stat["sd"], fmt="o", color="black", ms=3)
    ax.set_xlabel("models in the ensemble")
    ax.set_ylabel("agreement with humans (%)")
    ax.set_title("Leave-models-out ablation")
    ax.set_xticks(sorted(set(sizes)))
    return fig


def write(out_dir, ratings: dict[str, Ratings], result: dict, title: str = "LLM similarity matrices") -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    plots: dict[str, bytes] = {}
    parts = [f"<p>Prompt <code>{html.escape(result['prompt']['version'])}</code> "
             f"(sha {html.escape(result['prompt']['sha'])}); models in plan order (the first filters): "
             f"{html.escape(', '.join(result['models']))}.</p>"]
    for pos, r in ratings.items():
        info = result[pos]
        rows = []
        for m in r.models:
            rows.append({"model": m, "asked": info["asked"][m], "missing": info["missing"][m],
                         "requests sent this run": info["requests_sent"].get(m, 0),
                         "mean score": float(np.nanmean(r.table[m])) if r.table[m].notna().any() else np.nan})
        frame = pd.DataFrame(rows).set_index("model")
        parts.append(f"<h2>{pos.capitalize()}s</h2><p>{info['n_pairs']} pairs, {info['n_kept']} asked of "
                     f"every model, {info['n_filtered']} filtered by the first model "
                     f"({info['n_control']} re-rated as control), {info['n_nonzero']} non-zero in the mean "
                     f"matrix, {info['n_missing']} without any answer.</p>" + table_html(frame, 2))
        agree = aggregate.pairwise_frame(r, "agreement")
        parts.append("<h3>Pairwise Eq. 13 agreement between models</h3>" + table_html(agree))
        if info.get("control"):
            ctrl = pd.DataFrame(info["control"]).T
            parts.append("<h3>Control set (§4.2): disagreement with the filter's zero</h3>" + table_html(ctrl, 4))
    fig3, fig = _fig3(ratings)
    plots["pearson"] = png_bytes(fig)
    plots["distributions"] = png_bytes(_distribution_plot(ratings))
    parts.append("<h2>Inter-model Pearson r (Fig. 3)</h2>" + table_html(fig3) + "{pearson}{distributions}")
    abl = result.get("ablation")
    if abl:
        table = pd.DataFrame([{"models": " + ".join(row["models"]), "size": row["size"],
                               "agreement": row["agreement"], "spearman": row["spearman"]}
                              for row in abl["subsets"]]).set_index("models")
        plots["ablation"] = png_bytes(_ablation_plot(abl))
        parts.append(f"<h2>Ablation against the human study (supplementary Table 1)</h2>"
                     f"<p>{abl['n_items']} rated items, HOI similarity 4·(w·v + (1 − w)·o) with w = {abl['w']}; "
                     f"agreement = mean of Eq. 13.</p>" + table_html(table, 4) + "{ablation}")
    for name, png in plots.items():
        (out / f"llm_{name}.png").write_bytes(png)
    return write_page(out / "llm_report.html", title, "\n".join(parts), plots)
