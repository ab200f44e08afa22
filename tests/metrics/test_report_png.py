"""The reports' PNGs (``png_bytes``): each figure laid out and drawn once, cropped as
``savefig(bbox_inches="tight")`` crops it. The reference is matplotlib's own tight ``savefig``
of an identically built figure."""

from __future__ import annotations

import io

import numpy as np
import pandas as pd
import pytest
from PIL import Image

from metrics.study import _report_figures as report_figures


def pixels(png: bytes) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(png)).convert("RGBA")).astype(int)


def tight_savefig(fig) -> bytes:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", bbox_inches="tight", pad_inches=report_figures.PAD_IN)
    return buf.getvalue()


def ink_box(image: np.ndarray) -> tuple[int, int, int, int]:
    """First and last row and column holding a pixel that is not white."""
    ink = (image[:, :, :3] < 250).any(axis=2)
    rows, cols = np.flatnonzero(ink.any(axis=1)), np.flatnonzero(ink.any(axis=0))
    return rows[0], rows[-1], cols[0], cols[-1]


def bars():
    """A figure whose content lies on its canvas: a bar chart with a legend beside it."""
    fig, ax = report_figures.subplots(figsize=(4.0, 2.6))
    ax.bar([0, 1, 2], [3, 1, 2], label="ratings")
    ax.set_xlabel("score")
    ax.set_title("Ratings per score")
    ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0))
    return fig


def wide_title():
    """A figure whose title is wider than the figure: the layout leaves it past the canvas."""
    fig, ax = report_figures.subplots(figsize=(2.0, 2.0))
    ax.plot([0, 1], [0, 1])
    ax.set_title("a title far wider than the two-inch figure it heads")
    return fig


def count_calls(monkeypatch, owner, name: str) -> list:
    calls = []
    original = getattr(owner, name)

    def counted(self, *args, **kwargs):
        calls.append(name)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(owner, name, counted)
    return calls


def test_a_figure_on_its_canvas_is_cropped_as_savefig_crops_it():
    ours, reference = pixels(report_figures.png_bytes(bars())), pixels(tight_savefig(bars()))
    assert ours.shape == reference.shape
    # the same drawing, shifted by under a pixel: its ink starts and ends within a pixel
    assert np.abs(np.subtract(ink_box(ours), ink_box(reference))).max() <= 1
    assert np.abs(ours - reference).mean() < 3


def test_content_past_the_canvas_is_kept_as_savefig_keeps_it():
    fig = wide_title()
    ours = report_figures.png_bytes(fig)
    assert ours == tight_savefig(wide_title())
    assert pixels(ours).shape[1] > fig.get_figwidth() * fig.dpi   # wider than the canvas: the title whole


@pytest.mark.parametrize("make", [bars, wide_title], ids=["on-canvas", "past-canvas"])
def test_each_figure_is_laid_out_and_drawn_once(monkeypatch, make):
    from matplotlib.figure import Figure
    from matplotlib.layout_engine import ConstrainedLayoutEngine
    draws = count_calls(monkeypatch, Figure, "draw")
    layouts = count_calls(monkeypatch, ConstrainedLayoutEngine, "execute")
    fig = make()
    report_figures.png_bytes(fig)
    assert (len(draws), len(layouts)) == (1, 1)
    assert isinstance(fig.get_layout_engine(), ConstrainedLayoutEngine)   # the figure's own again


@pytest.mark.parametrize("raters", [1, 2, 3, report_figures.NUMBERED_MAX])
def test_heatmap_values_lie_inside_their_axes(raters):
    """The cells' values are left out of the layout, which is right only while each lies
    inside the heat map's axes."""
    names = [f"annotator_{k}" for k in range(raters)]
    values = np.resize([-1.0, 0.0, 1.0, -0.55], (raters, raters))
    fig = report_figures.heatmap_figure(pd.DataFrame(values, index=names, columns=names), "Pairwise κ",
                                        vmin=-1.0, vmax=1.0)
    report_figures.png_bytes(fig)
    renderer = fig.canvas.get_renderer()
    heatmap = fig.axes[0]
    cells = [t for t in heatmap.texts if not t.get_in_layout()]
    assert len(cells) == raters * raters
    frame = heatmap.get_window_extent(renderer)
    for text in cells:
        box = text.get_window_extent(renderer)
        assert frame.x0 <= box.x0 and box.x1 <= frame.x1 and frame.y0 <= box.y0 and box.y1 <= frame.y1, text.get_text()
