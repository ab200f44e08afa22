"""Self-contained HTML reports of a study's analysis, with CSV tables and PNG plots.

``write_report(out_dir, agreement=..., alignment=..., tuning=..., recalibration=...,
rater_model=..., reliability=...)`` writes
``report.html`` (plots embedded as base64 PNG, so the file travels alone), ``agreement.json``,
one CSV per table and each plot as a PNG file. The plots are drawn by
:mod:`metrics.study._report_figures`.
"""

from __future__ import annotations

import base64
import html
import json
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from metrics.core._inputs import numbers
from metrics.core._jsonio import StagedFolder
from metrics.study._agreement import AgreementReport
from metrics.study._report_figures import (
    calibration_figure,
    distributions_figure,
    heatmap_figure,
    image_update_figure,
    mae_curves_figure,
    model_scores_figure,
    over_time_figure,
    png_bytes,
    raters_figure,
    votes_figure,
)

ITEMS_BOOTSTRAP = "percentile bootstrap over items"
KALPHA_BOOTSTRAP = "Hayes & Krippendorff bootstrap of pairable values (KALPHA)"


def reliability_frame(result: dict) -> pd.DataFrame:
    """One row per statistic of :func:`metrics.study._reliability.reliability`: value, interval
    and how the interval is computed (α: Hayes & Krippendorff's KALPHA bootstrap; the others a
    percentile bootstrap over items)."""
    rows = []

    def add(name, entry, method=ITEMS_BOOTSTRAP):
        ci = entry.get("ci", [np.nan, np.nan])
        rows.append({"statistic": name, "value": entry["value"], "ci_low": ci[0], "ci_high": ci[1],
                     "interval": method if "ci" in entry else ""})

    for level, entry in result["krippendorff_alpha"].items():
        add(f"Krippendorff's alpha ({level})", entry, KALPHA_BOOTSTRAP)
    for kind, entry in result["gwet_ac2"].items():
        add(f"Gwet's AC2 ({kind} weights)", entry)
    for kind in ("agreement", "consistency"):
        add(f"ICC ({kind}, one rater)", result["icc"][kind])
    ceiling = result["human_ceiling"]
    if "spearman" in ceiling:
        add("human ceiling (Spearman, leave one rater out)",
            {"value": ceiling["spearman"], **({"ci": ceiling["spearman_ci"]} if "spearman_ci" in ceiling else {})})
    return pd.DataFrame(rows)


def table_html(df: pd.DataFrame, digits: int = 3) -> str:
    """A table as the reports' HTML: floats with ``digits`` decimals (a column named in
    ``df.attrs["decimals"]`` with as many as it says there), whole numbers as integers (also
    counts that a missing value made float: columns named like ``n``, ``n_ratings``, ``count``),
    missing values as a dash. Every cell is formatted here: pandas prints a ``None`` in a column
    of Python objects as "None" without calling a formatter."""
    counts = {k for k, c in enumerate(df.columns) if is_count_name(c) and _whole(df.iloc[:, k])}
    decimals = df.attrs.get("decimals", {})

    def cell(v, places: int, as_int: bool) -> str:
        if v is None or v is pd.NA or (isinstance(v, (float, np.floating)) and np.isnan(v)):
            return "–"
        if isinstance(v, (bool, np.bool_)) or not isinstance(v, (int, float, np.integer, np.floating)):
            return str(v)
        return f"{int(v)}" if as_int or isinstance(v, (int, np.integer)) else f"{v:.{places}f}"

    shown = df.astype(object)
    for k, column in enumerate(df.columns):
        places = decimals.get(column, digits)
        shown.iloc[:, k] = [cell(v, places, k in counts) for v in df.iloc[:, k]]
    return shown.to_html(border=0, classes="t")


COUNT_NAMES = {"n", "count", "items", "ratings", "votes", "annotators", "raters", "support"}


def is_count_name(name) -> bool:
    """Whether a column name reads as a count (``n``, ``n_items``, ``ratings``, ``votes`` …)."""
    name = str(name).lower()
    return name in COUNT_NAMES or name.startswith("n_")


def _whole(column: pd.Series) -> bool:
    values = numbers(column).dropna()
    return len(values) > 0 and bool((values == values.round()).all())


def alignment_frame(alignment: dict) -> pd.DataFrame:
    """One row per metric of ``alignment["metrics"]``, best agreement first."""
    metrics = alignment["metrics"]
    rows = []
    for name in sorted(metrics, key=lambda k: -np.nan_to_num(metrics[k]["agreement"], nan=-1)):
        m = alignment["metrics"][name]
        rows.append({"metric": name, "agreement": m["agreement"], "spearman": m["spearman"],
                     "ci_low": m["spearman_ci"][0], "ci_high": m["spearman_ci"][1],
                     "p_permutation": m["p_permutation"], "n": m["n"]})
    return pd.DataFrame(rows)


def write_report(out_dir, **sections) -> Path:
    """Write report.html, JSON, CSV tables and PNG plots into ``out_dir`` (built in a temporary
    folder and moved into place: all of them or none); returns the HTML path. ``sections``:
    ``agreement``, ``over_time`` (agreement at successive rating counts, with intervals),
    ``alignment``, ``tuning``, ``recalibration``, ``image_update``, ``rater_model``,
    ``reliability``, ``prediction_powered`` (``title``, ``table`` or None, ``text``: a list of sentences),
    ``title``."""
    staged = StagedFolder(out_dir)
    with staged as folder:
        _write_report(folder, **sections)
    return staged.path / "report.html"


def _agreement_summary(agreement: AgreementReport) -> pd.DataFrame:
    """The agreement statistics, then their bootstrap intervals, as (statistic, value) rows."""
    summary = pd.DataFrame([
        ("items", agreement.n_items), ("annotators", agreement.n_annotators),
        ("ratings", agreement.n_ratings),
        (f"Krippendorff's alpha ({agreement.level})", agreement.krippendorff_alpha),
        ("mean pairwise agreement (Eq. 13)", agreement.mean_pairwise_agreement),
        (f"mean quadratic weighted kappa, unweighted over {agreement.qwk_pairs} rater pairs "
         "(no interval: one κ per pair and resample)", agreement.mean_qwk),
        ("mean quadratic weighted kappa, pairs weighted by shared items", agreement.mean_qwk_by_shared_items),
        ("mean Spearman rho", agreement.mean_spearman),
        ("within-item SD", agreement.precision["within_item_sd"]),
        (f"one item's SE of its mean rating (k = {agreement.precision['raters']} ratings; "
         "not the study mean's SE)", agreement.precision["se_mean_rating"]),
    ], columns=["statistic", "value"], dtype=object)
    for name, (lo, hi) in ((k, v) for k, v in agreement.intervals.items() if isinstance(v, list)):
        summary.loc[len(summary)] = (f"{name} {agreement.intervals['confidence']:.0%} interval ({ITEMS_BOOTSTRAP}, "
                                     f"{agreement.intervals['n_resamples']:,} resamples)",
                                     f"[{lo:.3f}, {hi:.3f}]")
    return summary


def _agreement_section(agreement: AgreementReport, tables: dict, plots: dict) -> str:
    summary = _agreement_summary(agreement)
    tables.update(summary=summary, pairwise_agreement=agreement.agreement,
                  pairwise_spearman=agreement.spearman, pairwise_qwk=agreement.qwk,
                  annotator_distributions=agreement.distributions,
                  votes_by_majority=agreement.votes_by_majority)
    plots.update(spearman_heatmap=png_bytes(heatmap_figure(agreement.spearman, "Pairwise Spearman ρ")),
                 qwk_heatmap=png_bytes(heatmap_figure(agreement.qwk, "Pairwise quadratic weighted κ")),
                 annotator_distributions=png_bytes(distributions_figure(agreement.distributions)),
                 votes_by_majority=png_bytes(votes_figure(agreement.votes_by_majority)))
    return ("<h2>Inter-annotator agreement</h2>" + table_html(summary.set_index("statistic"))
            + "<h3>Pairwise agreement (Eq. 13)</h3>" + table_html(agreement.agreement)
            + "{spearman_heatmap}{qwk_heatmap}{annotator_distributions}{votes_by_majority}")


def _over_time_section(over_time: pd.DataFrame, tables: dict, plots: dict) -> str:
    tables["agreement_over_time"] = over_time
    plots["agreement_over_time"] = png_bytes(over_time_figure(over_time))
    return "<h2>Agreement as ratings arrived</h2>{agreement_over_time}"


def _reliability_section(reliability: dict, tables: dict, plots: dict) -> str:
    """``reliability``: metrics.study._reliability.reliability."""
    frame = reliability_frame(reliability)
    tables["reliability"] = frame
    return ("<h2>Reliability</h2><p>Each interval's method is in its row: α's is Hayes &amp; "
            "Krippendorff's KALPHA bootstrap, which differs from the summary's percentile bootstrap "
            "over items.</p>" + table_html(frame.set_index("statistic")))


def _rater_model_section(rater_model, tables: dict, plots: dict) -> str:
    """``rater_model``: metrics.study._rater_model.RaterModel."""
    tables.update(items_model=rater_model.items.rename_axis("item_id"),
                  raters_model=rater_model.raters.rename_axis("annotator"))
    plots.update(model_scores=png_bytes(model_scores_figure(rater_model.items, rater_model.scale)),
                 raters_model=png_bytes(raters_figure(rater_model.raters)))
    return ("<h2>Rater model: item scores corrected for who rated them</h2>"
            + table_html(rater_model.raters) + "{model_scores}{raters_model}")


def _alignment_section(alignment: dict, tables: dict, plots: dict) -> str:
    frame = alignment_frame(alignment)
    tables["alignment"] = frame
    block = "<h2>Metric–human alignment</h2>" + table_html(frame.set_index("metric"))
    for cat, per in alignment.get("by_category", {}).items():
        sub = alignment_frame({"metrics": per})
        tables[f"alignment_category_{cat}"] = sub
        block += f"<h3>Category {cat}</h3>" + table_html(sub.set_index("metric"))
    return block


def _tuning_section(tuning: dict, tables: dict, plots: dict) -> str:
    frame = pd.DataFrame({"w": tuning["w_by_category"], "mae": tuning["mae_by_category"],
                          "n": tuning["n_by_category"]})
    frame.loc["overall"] = (tuning["w_overall"], tuning["mae_overall"], np.nan)
    tables["w_tuning"] = frame
    plots["mae_vs_w"] = png_bytes(mae_curves_figure(tuning))
    return ("<h2>Tuning w (Eq. 14)</h2>" + table_html(frame)
            + f"<p>Agreement with category-tuned w: {tuning['agreement_tuned']:.4f}; "
              f"with w = 0.5: {tuning['agreement_w05']:.4f}.</p>{{mae_vs_w}}")


def _recalibration_section(recalibration: dict, tables: dict, plots: dict) -> str:
    frame = pd.DataFrame([{"": "before", **recalibration["before"]}, {"": "after", **recalibration["after"]}]).set_index("")
    tables["recalibration"] = frame
    plots["calibration_curves"] = png_bytes(calibration_figure(recalibration))
    return ("<h2>Recalibrated matrices (held-out, cross-validated)</h2>" + table_html(frame)
            + f"<p>{html.escape(recalibration['method'])}; parameters "
              f"{html.escape(json.dumps(recalibration['parameters']))}.</p>{{calibration_curves}}")


def _image_update_section(image_update: dict, tables: dict, plots: dict) -> str:
    """The with-image pass (SHOE supp. §6.2), metrics.study._image_update."""
    from metrics.study._image_update import summary_frame
    frame = summary_frame(image_update)
    tables["image_update"] = frame
    plots["image_update"] = png_bytes(image_update_figure(image_update))
    return ("<h2>With-image pass: updated ratings (SHOE supp. §6.2)</h2>"
            + table_html(frame.set_index("group"))
            + "<p>Share updated with its 95% Wald interval; mean absolute change of the "
              "updated ratings with its 95% t interval; up / down = direction.</p>{image_update}")


def _prediction_powered_section(prediction_powered: dict, tables: dict, plots: dict) -> str:
    """LLM + human ratings: a title, a table (or None), sentences."""
    frame = prediction_powered.get("table")
    if frame is not None:
        tables["prediction_powered"] = frame
    return (f"<h2>{html.escape(prediction_powered['title'])}</h2>"
            + (table_html(frame.set_index(frame.columns[0])) if frame is not None else "")
            + "".join(f"<p>{html.escape(text)}</p>" for text in prediction_powered["text"]))


def _write_report(out_dir, agreement: AgreementReport | None = None, alignment: dict | None = None,
                  tuning: dict | None = None, recalibration: dict | None = None,
                  title: str = "Study report", image_update: dict | None = None,
                  rater_model=None, reliability: dict | None = None,
                  over_time: pd.DataFrame | None = None, prediction_powered: dict | None = None) -> Path:
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    sections: list[str] = []
    plots: dict[str, bytes] = {}
    tables: dict[str, pd.DataFrame] = {}
    if agreement is not None:
        (out / "agreement.json").write_text(json.dumps(agreement.to_dict(), indent=2) + "\n")
    if over_time is not None and not len(over_time):
        over_time = None
    parts: tuple[tuple[object, Callable[..., str]], ...] = (
        (agreement, _agreement_section), (over_time, _over_time_section),
        (reliability, _reliability_section), (rater_model, _rater_model_section),
        (alignment, _alignment_section), (tuning, _tuning_section),
        (recalibration, _recalibration_section), (image_update, _image_update_section),
        (prediction_powered, _prediction_powered_section))
    for value, section in parts:
        if value is not None:
            sections.append(section(value, tables, plots))
    for name, df in tables.items():
        df.to_csv(out / f"{name}.csv", index=not isinstance(df.index, pd.RangeIndex))
    for name, png in plots.items():
        (out / f"{name}.png").write_bytes(png)
    return write_page(out / "report.html", title, "\n".join(sections), plots)


def write_page(path: Path, title: str, body: str, plots: dict[str, bytes]) -> Path:
    """A self-contained HTML page: each ``{name}`` in ``body`` becomes its PNG, embedded."""
    for name, png in plots.items():
        img = f'<img alt="{name}" src="data:image/png;base64,{base64.b64encode(png).decode()}">'
        body = body.replace("{" + name + "}", img)
    page = f"""<!doctype html><html><head><meta charset="utf-8"><title>{html.escape(title)}</title>
<style>body{{font-family:system-ui,sans-serif;max-width:1000px;margin:2em auto;color:#222}}
table.t{{border-collapse:collapse;margin:.5em 0}}table.t td,table.t th{{padding:2px 8px;border-bottom:1px solid #ddd;text-align:right}}
img{{max-width:100%;margin:4px;vertical-align:top}}</style></head>
<body><h1>{html.escape(title)}</h1>{body}</body></html>"""
    path.write_text(page)
    return path
