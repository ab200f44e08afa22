"""Altair charts for the console (Streamlit's native charts)."""

from __future__ import annotations

import altair as alt
import pandas as pd


def heatmap(table: pd.DataFrame, title: str) -> alt.LayerChart:
    """Annotator × annotator matrix as a labelled heatmap: a fixed cell size whatever the number of
    annotators (so every label shows and the numbers fit), "–" for pairs without shared items."""
    long = table.rename_axis("a").reset_index().melt("a", var_name="b", value_name="value")
    long["label"] = [f"{v:.2f}" if pd.notna(v) else "–" for v in long["value"]]
    axis = alt.Axis(labelLimit=160, labelOverlap=False)
    base = alt.Chart(long, title=title).encode(
        x=alt.X("b:N", title=None, axis=alt.Axis(labelLimit=160, labelOverlap=False, labelAngle=-40)),
        y=alt.Y("a:N", title=None, axis=axis))
    cells = base.mark_rect().encode(color=alt.Color("value:Q", scale=alt.Scale(domain=[0, 1]), title=None))
    text = base.mark_text(fontSize=11).encode(
        text="label:N", color=alt.condition("datum.value > 0.6", alt.value("white"), alt.value("black")))
    return (cells + text).properties(width=alt.Step(HEATMAP_CELL[0]), height=alt.Step(HEATMAP_CELL[1]))


HEATMAP_CELL = (46, 26)   # pixels per annotator: room for "-0.12" at 11 px


def score_distributions(dist: pd.DataFrame) -> alt.Chart:
    """Grouped bars: how often each annotator used each score. Twenty distinct colours (Tableau's
    20), then each bar's annotator in its tooltip: hover a bar for its rater."""
    long = dist.rename_axis("annotator").reset_index().melt("annotator", var_name="score", value_name="ratings")
    return alt.Chart(long, title="Per-annotator score distribution (hover a bar for its rater)").mark_bar().encode(
        x=alt.X("score:O"), xOffset="annotator:N", y="ratings:Q",
        color=alt.Color("annotator:N", scale=alt.Scale(scheme="tableau20")),
        tooltip=["annotator:N", "score:O", "ratings:Q"])


def accuracy_intervals(table: pd.DataFrame) -> alt.LayerChart:
    """Human Top-1 / Top-5 accuracy per model (points) with their bootstrap intervals (rules)."""
    rows = [{"model": r["model"], "metric": t.replace("top", "Top-"), "accuracy": r[t],
             "low": r[f"{t}_low"], "high": r[f"{t}_high"]} for r in table.to_dict("records") for t in ("top1", "top5")]
    base = alt.Chart(pd.DataFrame(rows), title="Human accuracy per model (95% bootstrap intervals)").encode(
        y=alt.Y("model:N", title=None), color="metric:N", yOffset="metric:N")
    return (base.mark_rule().encode(x=alt.X("low:Q", scale=alt.Scale(domain=[0, 1]), title="accuracy"), x2="high:Q")
            + base.mark_point(filled=True).encode(x="accuracy:Q"))


def agreement_over_time(frame: pd.DataFrame) -> alt.LayerChart:
    """Krippendorff's α and the mean Eq. 13 agreement against the number of ratings so far,
    each with its 95% bootstrap interval as a band."""
    names = {"alpha": "Krippendorff's α", "agreement": "mean agreement (Eq. 13)"}
    long = pd.concat([pd.DataFrame({"ratings": frame["ratings"], "annotators": frame["annotators"],
                                    "statistic": label, "value": frame[key],
                                    "low": frame[f"{key}_low"], "high": frame[f"{key}_high"]})
                      for key, label in names.items()], ignore_index=True)
    base = alt.Chart(long, title="Agreement as ratings arrived (95% percentile bootstrap intervals over items)").encode(
        x=alt.X("ratings:Q", title="ratings so far"),
        color=alt.Color("statistic:N", title=None, scale=alt.Scale(range=["#1f77b4", "#d95f02"]),
                        legend=alt.Legend(orient="bottom")))
    return (base.mark_area(opacity=0.2).encode(y=alt.Y("low:Q", title=None), y2="high:Q")
            + base.mark_line(point=True).encode(
                y="value:Q", strokeDash=alt.StrokeDash("statistic:N", legend=None),
                shape=alt.Shape("statistic:N", legend=None),
                tooltip=["ratings", "annotators", "statistic", "value", "low", "high"]))


def model_scores(items: pd.DataFrame, scale: tuple) -> alt.LayerChart:
    """Rater-model item scores, sorted, each with its 95% interval (± 1.96 SE within the scale)."""
    ordered = items.sort_values("score").reset_index(names="item_id")
    ordered["rank"] = range(len(ordered))
    ordered["low"] = (ordered["score"] - 1.96 * ordered["se"]).clip(lower=min(scale))
    ordered["high"] = (ordered["score"] + 1.96 * ordered["se"]).clip(upper=max(scale))
    base = alt.Chart(ordered, title="Item scores corrected for the raters (95% intervals: ± 1.96 SE of the rater model, per item)").encode(
        x=alt.X("rank:Q", title="items, by model score"))
    return (base.mark_rule(opacity=0.4).encode(y=alt.Y("low:Q", title="score"), y2="high:Q")
            + base.mark_point(filled=True, size=12).encode(y="score:Q", tooltip=["item_id", "score", "se", "n"]))


def rater_chart(raters: pd.DataFrame) -> alt.LayerChart:
    """Each rater's severity against consistency. Flagged raters are named on the chart (the ones a
    researcher looks for; naming every rater overlaps as soon as two sit close), every rater in
    the tooltip (hover a point for its name). The axes are padded so no point or name is clipped
    at the chart's edge."""
    frame = raters.rename_axis("annotator").reset_index()
    frame["flag"] = frame["flag"].fillna("none")
    padded = alt.Scale(zero=False, nice=True, padding=24)
    base = alt.Chart(frame, title="Raters: severity and consistency (hover a point for its rater)").encode(
        x=alt.X("severity:Q", title="severity (scale points; > 0 = strict)", scale=padded),
        y=alt.Y("consistency:Q", title="consistency (1 = typical)", scale=padded))
    points = base.mark_point(filled=True, size=60).encode(
        color=alt.Color("flag:N", title="flag"), tooltip=["annotator:N", "severity:Q", "consistency:Q", "flag:N"])
    names = base.transform_filter("datum.flag != 'none'").mark_text(dx=8, align="left", fontSize=11).encode(
        text="annotator:N")
    return points + names
