"""Altair charts for the console (Streamlit's native charts)."""

from __future__ import annotations

import altair as alt
import pandas as pd


def heatmap(table: pd.DataFrame, title: str) -> alt.LayerChart:
    """Annotator × annotator matrix as a labelled heatmap."""
    long = table.rename_axis("a").reset_index().melt("a", var_name="b", value_name="value")
    base = alt.Chart(long, title=title).encode(x=alt.X("b:N", title=None), y=alt.Y("a:N", title=None))
    cells = base.mark_rect().encode(color=alt.Color("value:Q", scale=alt.Scale(domain=[0, 1]), title=None))
    text = base.mark_text(fontSize=11).encode(text=alt.Text("value:Q", format=".2f"))
    return (cells + text).properties(width=260, height=220)


def score_distributions(dist: pd.DataFrame) -> alt.Chart:
    """Grouped bars: how often each annotator used each score."""
    long = dist.rename_axis("annotator").reset_index().melt("annotator", var_name="score", value_name="ratings")
    return alt.Chart(long, title="Per-annotator score distribution").mark_bar().encode(
        x=alt.X("score:O"), xOffset="annotator:N", y="ratings:Q", color="annotator:N")


def accuracy_intervals(table: pd.DataFrame) -> alt.LayerChart:
    """Human Top-1 / Top-5 accuracy per model (points) with their bootstrap intervals (rules)."""
    rows = [{"model": r["model"], "metric": t.replace("top", "Top-"), "accuracy": r[t],
             "low": r[f"{t}_low"], "high": r[f"{t}_high"]} for r in table.to_dict("records") for t in ("top1", "top5")]
    base = alt.Chart(pd.DataFrame(rows), title="Human accuracy per model (95% bootstrap intervals)").encode(
        y=alt.Y("model:N", title=None), color="metric:N", yOffset="metric:N")
    return (base.mark_rule().encode(x=alt.X("low:Q", scale=alt.Scale(domain=[0, 1]), title="accuracy"), x2="high:Q")
            + base.mark_point(filled=True).encode(x="accuracy:Q"))
