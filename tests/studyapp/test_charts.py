"""The console's charts as Vega-Lite specifications: the heatmaps keep a fixed cell
size and every label whatever the number of annotators, and say "–" where two annotators share
no item; the rater chart names only flagged raters, so names do not pile up."""

from __future__ import annotations

import numpy as np
import pandas as pd

from studyapp.core import charts


def layer_data(chart) -> pd.DataFrame:
    spec = chart.to_dict()
    return pd.DataFrame(next(iter(spec["datasets"].values()))), spec


def test_heatmap_of_six_annotators_shows_every_label_and_a_dash_for_unshared_pairs():
    names = [f"annotator-{k}" for k in range(6)]
    table = pd.DataFrame(np.eye(6), index=names, columns=names)
    table.iloc[0, 5] = table.iloc[5, 0] = np.nan      # 0 and 5 never rated the same item
    data, spec = layer_data(charts.heatmap(table, "Pairwise Spearman ρ"))
    assert spec["width"] == {"step": charts.HEATMAP_CELL[0]} and spec["height"] == {"step": charts.HEATMAP_CELL[1]}
    for layer in spec["layer"]:
        for channel in ("x", "y"):
            axis = layer["encoding"][channel]["axis"]
            assert axis["labelOverlap"] is False and axis["labelLimit"] >= 120
    assert len(data) == 36
    labels = dict(zip(zip(data["a"], data["b"]), data["label"]))
    assert labels[("annotator-0", "annotator-5")] == "–" and labels[("annotator-0", "annotator-0")] == "1.00"
    assert "null" not in set(data["label"]) and "nan" not in set(data["label"])


def test_rater_chart_names_flagged_raters_only_and_every_rater_in_the_tooltip():
    raters = pd.DataFrame({"severity": [0.1, 0.12, -0.5], "consistency": [1.0, 1.01, 0.2],
                           "flag": [None, None, "random"]}, index=pd.Index(["ann1", "ann2", "ann3"]))
    spec = charts.rater_chart(raters).to_dict()
    points, names = spec["layer"]
    assert [t["field"] for t in points["encoding"]["tooltip"]][0] == "annotator"
    assert names["mark"]["type"] == "text" and names["transform"] == [{"filter": "datum.flag != 'none'"}]
    # padded axes: a rater at the top or edge of the range is not clipped
    for axis in ("x", "y"):
        assert points["encoding"][axis]["scale"] == {"nice": True, "padding": 24, "zero": False}
