"""The report's plots are readable at the report's width: every text at least 10 px, no two texts
overlapping, legends outside the axes, lines told apart by colour and dash. Text extents come from
matplotlib's renderer (``get_window_extent``) on the figures the report embeds (100 dpi, shown at
their own size: the page is 1000 px wide and every figure narrower). Each PNG is saved under
test-artifacts/report-plots/ to look at."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT

from metrics.study import _report_figures as report_figures
from metrics.study import agreement_report, fit_rater_model, simulate_ratings

ARTIFACTS = ROOT / "test-artifacts" / "report-plots"
MIN_PX = 10
PAGE_PX = 1000


@pytest.fixture(scope="module", params=[3, 6, 11, 30], ids=lambda k: f"{k}-raters")
def study(request):
    rng = np.random.default_rng(0)
    items = [f"i{k:03d}" for k in range(60)]
    k = request.param
    ratings = simulate_ratings(items, rng.uniform(0, 4, 60), k=k, raters_per_item=min(k, 4), seed=1)
    return agreement_report(ratings[["item_id", "annotator", "rating"]], n_resamples=50), ratings


@pytest.fixture(scope="module")
def figures(study):
    """The report's figures of ``study``, drawn once for the tests of that study."""
    agreement, ratings = study
    over_time = pd.DataFrame({"ratings": [40, 80, 120, 160, 200, 240], "annotators": [3, 4, 5, 6, 6, 6],
                              "alpha": [0.3, 0.35, 0.4, 0.42, 0.41, 0.43], "agreement": [0.7, 0.72, 0.74, 0.75, 0.75, 0.76]})
    for key in ("alpha", "agreement"):
        over_time[f"{key}_low"], over_time[f"{key}_high"] = over_time[key] - 0.08, over_time[key] + 0.08
    model = fit_rater_model(ratings[["item_id", "annotator", "rating"]])
    raters = model.raters.copy()
    raters.loc[raters.index[0], "flag"] = "constant"
    return {"annotator_distributions": report_figures.distributions_figure(agreement.distributions),
            "votes_by_majority": report_figures.votes_figure(agreement.votes_by_majority),
            "spearman_heatmap": report_figures.heatmap_figure(agreement.spearman, "Pairwise Spearman ρ"),
            "agreement_over_time": report_figures.over_time_figure(over_time),
            "rater_chart": report_figures.raters_figure(raters),
            "model_scores": report_figures.model_scores_figure(model.items, model.scale)}


def texts(fig):
    """Every visible, non-empty text of the figure with its extent in pixels."""
    renderer = fig.canvas.get_renderer()
    found = []
    for artist in fig.findobj(lambda a: hasattr(a, "get_text") and hasattr(a, "get_fontsize")):
        if artist.get_visible() and artist.get_text().strip() and artist.get_figure() is not None:
            box = artist.get_window_extent(renderer)
            if box.width > 0 and box.height > 0:
                found.append((artist, box))
    return found


@pytest.mark.parametrize("name", ["annotator_distributions", "votes_by_majority", "spearman_heatmap",
                                  "agreement_over_time", "rater_chart", "model_scores"])
def test_plot_is_readable_at_the_reports_width(study, figures, name):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    fig = figures[name]
    FigureCanvasAgg(fig)
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    fig.savefig(ARTIFACTS / f"{name}-{study[0].n_annotators}.png")
    fig.canvas.draw()
    assert fig.get_figwidth() * fig.dpi <= PAGE_PX          # shown at its own size: no shrinking
    found = texts(fig)
    assert found
    for artist, _ in found:
        assert artist.get_fontsize() * fig.dpi / 72 >= MIN_PX, (name, artist.get_text(), artist.get_fontsize())
    for (a, box_a), (b, box_b) in itertools.combinations(found, 2):
        overlap = box_a.overlaps(box_b) and min(box_a.x1, box_b.x1) - max(box_a.x0, box_b.x0) > 1 \
            and min(box_a.y1, box_b.y1) - max(box_a.y0, box_b.y0) > 1
        assert not overlap, (name, a.get_text(), b.get_text())
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    width, height = fig.get_figwidth() * fig.dpi, fig.get_figheight() * fig.dpi
    for legend in legends:
        box = legend.get_window_extent(renderer)
        # every rater's entry inside the figure: none cut off at its edge
        assert box.x0 >= -1 and box.y0 >= -1 and box.x1 <= width + 1 and box.y1 <= height + 1, (name, "legend cut off")
        for ax in fig.axes:
            if ax.get_visible() and ax.axison and ax.get_label() != "<colorbar>":
                data = ax.patch.get_window_extent(renderer)
                assert not (box.overlaps(data) and min(box.x1, data.x1) - max(box.x0, data.x0) > 1
                            and min(box.y1, data.y1) - max(box.y0, data.y0) > 1), (name, "legend over data")


def test_every_rater_has_its_own_colour_and_marker(study):
    agreement, ratings = study
    model = fit_rater_model(ratings[["item_id", "annotator", "rating"]])
    fig = report_figures.raters_figure(model.raters.assign(flag=None))
    points = [c for c in fig.axes[0].collections if not c.get_label().startswith("_")]
    styles = {(tuple(np.round(c.get_facecolor()[0], 3)), c.get_paths()[0].vertices.tobytes()) for c in points}
    assert len(points) == len(styles) == agreement.n_annotators
    legend = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
    assert sorted(legend) == sorted(map(str, model.raters.index))


def test_agreement_over_time_lines_differ_in_colour_and_dash(figures):
    fig = figures["agreement_over_time"]
    lines = [line for line in fig.axes[0].get_lines() if not line.get_label().startswith("_")]
    assert len(lines) == 2
    (a, b) = lines
    assert a.get_color() != b.get_color() and a.get_linestyle() != b.get_linestyle()
    assert a.get_marker() != b.get_marker()
