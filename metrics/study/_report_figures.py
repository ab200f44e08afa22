"""The study report's figures: matplotlib figures (Agg, no pyplot) sized so no text falls under
10 px at the reports' 100 dpi, and ``png_bytes`` to embed them. Each ``*_figure`` function takes
one part of a study's analysis and returns its figure; :mod:`metrics.study._report` places them
in the HTML page."""

from __future__ import annotations

import io
from functools import lru_cache

import numpy as np
import pandas as pd

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
                        color="white" if v < (vmin + vmax) / 2 else "black",
                        in_layout=False)   # inside its cell: the layout need not measure it
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


def distributions_figure(dist: pd.DataFrame):
    columns, rows = _legend_columns(len(dist.index))
    fig, ax = subplots(figsize=(5.0 + 1.2 * (columns - 1), max(2.8, 0.2 * rows + 0.9)))
    _grouped_bars(ax, dist.T)
    ax.set_xlabel("score")
    ax.set_ylabel("ratings")
    ax.set_title("Per-annotator score distribution")
    _legend_outside(ax, title="annotator", ncols=columns)
    return fig


VOTES_PER_ROW = 3   # panels per row: the figure stays ≤ 6.6 in wide, so its text is not shrunk


def votes_figure(votes: pd.DataFrame):
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


def mae_curves_figure(tuning: dict):
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


def calibration_figure(recal: dict):
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


def over_time_figure(frame: pd.DataFrame):
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


def image_update_figure(result: dict):
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


def model_scores_figure(items: pd.DataFrame, scale):
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


def raters_figure(raters: pd.DataFrame):
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


PAD_IN = 0.1   # white margin around a figure's content in its PNG, inches (savefig's pad_inches)


def png_bytes(fig) -> bytes:
    """A figure as PNG bytes, cropped to its content with a ``PAD_IN`` margin, as
    ``savefig(bbox_inches="tight")`` crops it, with half the text layout: the figure is laid
    out once and drawn once (``savefig`` draws it twice and measures every text again on a
    second canvas). Content within the figure's canvas is drawn on that canvas, whose text
    measurements the layout made, and cropped (placed to within a pixel of ``savefig``'s);
    content past the canvas's edge (a title wider than its axes, tick labels the layout left
    outside) is drawn by ``savefig`` on a canvas of the cropped size (the same pixels)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.image import imsave

    canvas = FigureCanvasAgg(fig)
    layout = fig.get_layout_engine()
    if layout is not None:
        layout.execute(fig)
    content = fig.get_tightbbox(canvas.get_renderer())   # inches from the canvas's lower left
    buf = io.BytesIO()
    fig.set_layout_engine(None)   # laid out above: drawing keeps the positions, and savefig draws once
    try:
        if _within(content, fig):
            canvas.draw()
            imsave(buf, _crop(np.asarray(canvas.buffer_rgba()), content.padded(PAD_IN), fig.dpi),
                   format="png", dpi=fig.dpi)
        else:
            fig.savefig(buf, format="png", bbox_inches=content.padded(PAD_IN))
    finally:
        fig.set_layout_engine(layout)
    return buf.getvalue()


def _within(box, fig) -> bool:
    """Whether ``box`` (inches) lies on the figure's canvas, to within a pixel."""
    pixel = 1 / fig.dpi
    return bool((box.min >= -pixel).all() and (box.max <= fig.bbox_inches.max + pixel).all())


def _crop(rgba: np.ndarray, box, dpi: float) -> np.ndarray:
    """The pixels of ``box`` (inches from the lower left) of a canvas's RGBA rows (top row
    first), sized as ``savefig`` sizes it and white past the canvas's edge."""
    width, height = int(box.width * dpi), int(box.height * dpi)
    left, top = round(box.x0 * dpi), round(rgba.shape[0] - box.y0 * dpi) - height
    out = np.full((height, width, 4), 255, np.uint8)
    rows = slice(max(top, 0), min(top + height, rgba.shape[0]))
    cols = slice(max(left, 0), min(left + width, rgba.shape[1]))
    out[rows.start - top:rows.stop - top, cols.start - left:cols.stop - left] = rgba[rows, cols]
    return out


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
