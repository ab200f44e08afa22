"""Self-contained HTML reports of a study's analysis, with CSV tables and PNG plots.

``write_report(out_dir, agreement=..., alignment=..., tuning=..., recalibration=...,
rater_model=..., reliability=...)`` writes
``report.html`` (plots embedded as base64 PNG, so the file travels alone), ``agreement.json``,
one CSV per table and each plot as a PNG file. Plots use matplotlib's Agg backend.
"""

from __future__ import annotations

import base64
import html
import io
import json
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd

from metrics.core._inputs import numbers
from metrics.core._jsonio import StagedFolder
from metrics.study._agreement import AgreementReport

CELL_IN = 0.42        # a heat map cell that holds its value ("0.50") at SMALL size, inches
TICK_IN = 0.17        # a row or column that holds one tick label at SMALL size, inches
NUMBERED_MAX = 14     # raters up to which a heat map's cells print their values


def heatmap_figure(table: pd.DataFrame, title: str, vmin=0.0, vmax=1.0):
    """A labelled heat map of a square table (annotator × annotator statistics), sized to its
    raters so no text falls under 10 px: up to ``NUMBERED_MAX`` raters each cell prints its value
    (0.42 in a cell), beyond that the cells are colour only at 0.17 in a row, the values being in
    the table beside it (the report's CSV), and the raters are sorted by their mean so the pattern
    reads."""
    order = table.mean(axis=1, skipna=True).sort_values(ascending=False).index if len(table) > NUMBERED_MAX \
        else table.index
    table = table.loc[order, order]
    n = len(table)
    numbered = n <= NUMBERED_MAX
    cell = CELL_IN if numbered else TICK_IN
    label = 0.09 * max((len(str(name)) for name in table.index), default=1)   # tick labels' room, inches
    side = max(n * cell, 1.6)
    fig, ax = subplots(figsize=(side + label + 1.0, side + label + 0.5))
    im = ax.imshow(table.to_numpy(float), vmin=vmin, vmax=vmax, cmap="viridis")
    ax.set_xticks(range(n), table.columns, rotation=90)
    ax.set_yticks(range(n), table.index)
    ax.tick_params(labelsize=SMALL)
    if numbered:
        for (i, j), v in np.ndenumerate(table.to_numpy(float)):
            if np.isfinite(v):
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=SMALL,
                        color="white" if v < (vmin + vmax) / 2 else "black")
    ax.set_title(title if numbered else f"{title}\n(sorted by mean; values in the CSV)", fontsize=SMALL + 1)
    fig.colorbar(im, ax=ax, fraction=0.046).ax.tick_params(labelsize=SMALL)
    return fig


SMALL = 8   # points: 11 px at the reports' 100 dpi, the smallest text of a plot
STYLES = [("#1f77b4", "-", "o"), ("#d95f02", "--", "s"), ("#1b9e77", "-.", "^"), ("#7570b3", ":", "D"),
          ("#e7298a", (0, (5, 1, 1, 1)), "v"), ("#66a61e", (0, (3, 1)), "P")]   # colour + dash + marker


def _legend_outside(ax_or_fig, **kwargs):
    """A legend to the right of the axes (or figure), never over the data."""
    options = dict(fontsize=SMALL, frameon=False, title_fontsize=SMALL)
    if hasattr(ax_or_fig, "transAxes"):
        return ax_or_fig.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0, **options, **kwargs)
    return ax_or_fig.legend(loc="outside right upper", **options, **kwargs)


HATCHES = ("", "//", "..", "xx", "\\\\", "oo")   # with the ten colours: raters beyond ten told apart


def _grouped_bars(ax, counts: pd.DataFrame) -> None:
    """One group of bars per row of ``counts`` (on the x axis), one bar per column, labelled; a
    column's colour repeats only with another hatch (:func:`rater_styles`)."""
    width = 0.8 / max(len(counts.columns), 1)
    x = np.arange(len(counts.index))
    for k, (name, (colour, _)) in enumerate(rater_styles(counts.columns).items()):
        ax.bar(x + k * width - 0.4 + width / 2, counts[name].to_numpy(), width, label=str(name), color=colour,
               hatch=HATCHES[(k // 10) % len(HATCHES)], edgecolor="white" if k < 10 else "0.25", linewidth=0.3)
    ax.set_xticks(x, [f"{v:g}" if isinstance(v, float) else str(v) for v in counts.index])


def _legend_columns(raters: int) -> tuple[int, int]:
    """(columns, rows) of a legend naming ``raters`` raters: one column up to 12, then two."""
    columns = 1 if raters <= 12 else 2
    return columns, -(-raters // columns)


def _distributions(dist: pd.DataFrame):
    columns, rows = _legend_columns(len(dist.index))
    fig, ax = subplots(figsize=(5.0 + 1.2 * (columns - 1), max(2.8, 0.2 * rows + 0.9)))
    _grouped_bars(ax, dist.T)
    ax.set_xlabel("score")
    ax.set_ylabel("ratings")
    ax.set_title("Per-annotator score distribution")
    _legend_outside(ax, title="annotator", ncols=columns)
    return fig


VOTES_PER_ROW = 3   # panels per row: the figure stays ≤ 6.6 in wide, so its text is not shrunk


def _votes(votes: pd.DataFrame):
    majors = sorted(votes["majority"].unique())
    rows, cols = -(-len(majors) // VOTES_PER_ROW), min(len(majors), VOTES_PER_ROW)
    columns, legend_rows = _legend_columns(votes["annotator"].nunique())
    fig, axes = subplots(rows, cols, figsize=(2.2 * cols + 1.2 * (columns - 1),
                                              max(2.2 * rows + 0.4, 0.2 * legend_rows + 0.9)),
                         sharey=True, squeeze=False)
    panels = axes.ravel()
    for ax, maj in zip(panels, majors):
        _grouped_bars(ax, votes[votes["majority"] == maj].pivot(index="score", columns="annotator", values="count"))
        ax.set_title(f"majority {maj:g}")
        ax.set_xlabel("score")
    for ax in panels[len(majors):]:
        ax.set_axis_off()
    for ax in axes[:, 0]:
        ax.set_ylabel("votes")
    handles, labels = panels[0].get_legend_handles_labels()
    _legend_outside(fig, handles=handles, labels=labels, title="annotator", ncols=columns)
    fig.suptitle("Annotator votes by majority score")
    return fig


def _mae_curves(tuning: dict):
    fig, ax = subplots(figsize=(4.2, 2.8))
    w = np.asarray(tuning["curve"]["w"])
    for key, values in tuning["curve"].items():
        if key == "w":
            continue
        label = "overall" if key == "overall" else f"category {key}"
        colour, dash, _ = STYLES[(len(ax.lines) // 2) % len(STYLES)]
        ax.plot(w, values, label=label, color=colour, ls=dash)
        best = tuning["w_overall"] if key == "overall" else tuning["w_by_category"][key]
        ax.axvline(best, ls=":", lw=0.8, color=ax.lines[-1].get_color())
    ax.set_xlabel("w (verb weight)")
    ax.set_ylabel("MAE (similarity units)")
    ax.set_title("MAE of w·v + (1 − w)·o (Eq. 14)")
    _legend_outside(ax)
    return fig


def _calibration(recal: dict):
    fig, ax = subplots(figsize=(3.4, 3.0))
    x = np.asarray(recal["calibration_curves"]["x"])
    ax.plot([0, 1], [0, 1], color="0.7", lw=0.8, ls="--", label="identity")
    for (colour, dash, marker), role in zip(STYLES, ("verb", "object")):
        ax.plot(x, recal["calibration_curves"][role], label=f"{role} map", color=colour, ls=dash)
        ev = recal["evidence"][role]
        if len(ev.old):
            ax.scatter(ev.old, ev.implied, s=np.clip(ev.weight, 1, 20), alpha=0.25, color=colour, marker=marker)
    ax.set_xlabel("original similarity")
    ax.set_ylabel("human-implied similarity")
    ax.set_title("Calibration maps")
    _legend_outside(ax)
    return fig


def _over_time(frame: pd.DataFrame):
    fig, ax = subplots(figsize=(6.4, 2.8))
    for (colour, dash, marker), (key, label) in zip(STYLES, (("alpha", "Krippendorff's α"),
                                                             ("agreement", "mean agreement (Eq. 13)"))):
        ax.fill_between(frame["ratings"], frame[f"{key}_low"], frame[f"{key}_high"], alpha=0.15, color=colour, lw=0,
                        label=f"{label}: 95% interval")
        ax.plot(frame["ratings"], frame[key], marker=marker, ms=4, color=colour, ls=dash, lw=1.6, label=label)
    ax.set_xlabel("ratings so far")
    ax.set_title("Agreement as ratings arrived")
    _legend_outside(ax, title="intervals: percentile\nbootstrap over items")
    return fig


def _image_update(result: dict):
    fig, ax = subplots(figsize=(4.2, 2.6))
    groups = [("all", result)] + [(f"cat {c}", r) for c, r in result.get("by_category", {}).items()]
    x = np.arange(len(groups))
    shares = [100 * r["share_updated"] for _, r in groups]
    err = np.array([[100 * (r["share_updated"] - r["share_updated_ci"][0]),
                     100 * (r["share_updated_ci"][1] - r["share_updated"])] for _, r in groups]).T
    ax.bar(x, shares, yerr=err, capsize=3, color="#4c78a8")
    ax.set_xticks(x, [name for name, _ in groups])
    ax.set_ylabel("ratings updated (%)")
    ax.set_title("Ratings changed with the image (95% Wald interval)")
    return fig


def _model_scores(items: pd.DataFrame, scale):
    """Items sorted by model score, each with its 95% interval (± 1.96 SE, within the scale)."""
    ordered = items.sort_values("score")
    fig, ax = subplots(figsize=(6.0, 2.8))
    x = np.arange(len(ordered))
    half = 1.96 * ordered["se"].to_numpy()
    score = ordered["score"].to_numpy()
    bars = [np.minimum(half, score - min(scale)), np.minimum(half, max(scale) - score)]
    ax.errorbar(x, score, yerr=bars, fmt="o", ms=2, lw=0.6,
                color="#4c78a8", ecolor="#9ecae9")
    ax.set_xlabel("items, by model score")
    ax.set_ylabel("score (0–4)")
    ax.set_title("Rater-model item scores (95%: ± 1.96 model SE per item)")
    return fig


MARKERS = "osD^vP*Xph<>"   # with the ten colours: 120 raters told apart by colour and marker


def rater_styles(names) -> dict:
    """Each rater's (colour, marker), distinct for up to 120 raters: colour k mod 10 of
    matplotlib's tab10, marker (k // 10) mod 12 — two raters share a colour only with different
    markers."""
    from matplotlib.colors import TABLEAU_COLORS
    colours = list(TABLEAU_COLORS.values())   # tab10's ten colours
    return {name: (colours[k % 10], MARKERS[(k // 10) % len(MARKERS)]) for k, name in enumerate(names)}


def _rater_chart(raters: pd.DataFrame):
    """Severity against consistency, one colour-and-marker per rater named in the legend beside
    the axes (names placed on the points collide once raters cluster); flagged raters ringed."""
    names = list(raters.index)
    columns = 1 if len(names) <= 16 else 2
    rows = -(-len(names) // columns)
    fig, ax = subplots(figsize=(4.4 + 1.4 * columns, max(3.0, 0.2 * rows + 0.9)))
    for name, (colour, marker) in rater_styles(names).items():
        row = raters.loc[name]
        ax.scatter([row.severity], [row.consistency], color=colour, marker=marker, s=36, label=str(name))
    flagged = raters["flag"].notna()
    if flagged.any():
        ax.scatter(raters.loc[flagged, "severity"], raters.loc[flagged, "consistency"], s=160,
                   facecolors="none", edgecolors="#e45756", linewidths=1.5, label="flagged")
    ax.axvline(0, color="0.7", lw=0.8, ls="--")
    ax.set_xlabel("severity (scale points; > 0 = strict)")
    ax.set_ylabel("consistency (1 = typical)")
    ax.set_title("Raters")
    ax.margins(0.15)
    from matplotlib.ticker import MaxNLocator
    ax.yaxis.set_major_locator(MaxNLocator(nbins=5, prune="lower"))   # no tick label in the corner
    _legend_outside(ax, ncols=columns, handletextpad=0.3, columnspacing=0.8, labelspacing=0.3)
    return fig


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


def png_bytes(fig) -> bytes:
    """A figure as PNG bytes."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png")
    return buf.getvalue()


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
                 annotator_distributions=png_bytes(_distributions(agreement.distributions)),
                 votes_by_majority=png_bytes(_votes(agreement.votes_by_majority)))
    return ("<h2>Inter-annotator agreement</h2>" + table_html(summary.set_index("statistic"))
            + "<h3>Pairwise agreement (Eq. 13)</h3>" + table_html(agreement.agreement)
            + "{spearman_heatmap}{qwk_heatmap}{annotator_distributions}{votes_by_majority}")


def _over_time_section(over_time: pd.DataFrame, tables: dict, plots: dict) -> str:
    tables["agreement_over_time"] = over_time
    plots["agreement_over_time"] = png_bytes(_over_time(over_time))
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
    plots.update(model_scores=png_bytes(_model_scores(rater_model.items, rater_model.scale)),
                 raters_model=png_bytes(_rater_chart(rater_model.raters)))
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
    plots["mae_vs_w"] = png_bytes(_mae_curves(tuning))
    return ("<h2>Tuning w (Eq. 14)</h2>" + table_html(frame)
            + f"<p>Agreement with category-tuned w: {tuning['agreement_tuned']:.4f}; "
              f"with w = 0.5: {tuning['agreement_w05']:.4f}.</p>{{mae_vs_w}}")


def _recalibration_section(recalibration: dict, tables: dict, plots: dict) -> str:
    frame = pd.DataFrame([{"": "before", **recalibration["before"]}, {"": "after", **recalibration["after"]}]).set_index("")
    tables["recalibration"] = frame
    plots["calibration_curves"] = png_bytes(_calibration(recalibration))
    return ("<h2>Recalibrated matrices (held-out, cross-validated)</h2>" + table_html(frame)
            + f"<p>{html.escape(recalibration['method'])}; parameters "
              f"{html.escape(json.dumps(recalibration['parameters']))}.</p>{{calibration_curves}}")


def _image_update_section(image_update: dict, tables: dict, plots: dict) -> str:
    """The with-image pass (SHOE supp. §6.2), metrics.study._image_update."""
    from metrics.study._image_update import summary_frame
    frame = summary_frame(image_update)
    tables["image_update"] = frame
    plots["image_update"] = png_bytes(_image_update(image_update))
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


def subplots(*args, figsize: tuple[float, float], **kwargs):
    """A figure and its axes (``Figure.subplots`` arguments) in the reports' style, drawn with
    matplotlib's Figure API: no pyplot, whose import alone costs ~0.4 s, and nothing to close."""
    fig = _figure_class()(figsize=figsize, layout="constrained")   # titles and labels never overlap
    return fig, fig.subplots(*args, **kwargs)


@lru_cache(maxsize=1)
def _figure_class():
    """matplotlib's Figure with the reports' style, imported on first use (``--help`` and plain
    scoring should not pay for matplotlib)."""
    import matplotlib
    from matplotlib.figure import Figure

    matplotlib.rcParams.update({"font.size": 9, "axes.spines.top": False, "axes.spines.right": False,
                                "figure.dpi": 100, "savefig.bbox": "tight"})
    return Figure
