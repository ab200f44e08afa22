"""The HTML report as a reader sees it: counts print as integers, missing values as a
dash, the votes plot keeps its text at print size, and the bootstrap of a study where some pair
of annotators shares no item warns about nothing."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd

from metrics.study._agreement import agreement_report, bootstrap_intervals, nanmean_rows
from metrics.study._report import table_html, write_report
from metrics.study._report_figures import votes_figure


def cells(html: str) -> list[str]:
    return re.findall(r"<td>(.*?)</td>", html)


def test_counts_are_integers_statistics_keep_their_decimals_and_missing_is_a_dash():
    frame = pd.DataFrame({"w": [0.5, 0.25], "mae": [0.0577, 1.0], "n": [40.0, np.nan],
                          "flag": [None, "random"]}, index=["2", "overall"])
    # n is a count made float by the missing value: 40, then a dash; mae 1.0 is a statistic: 1.000
    assert cells(table_html(frame)) == ["0.500", "0.058", "40", "–", "0.250", "1.000", "–", "random"]


def test_an_unflagged_rater_is_a_dash_and_a_table_may_name_a_columns_decimals():
    """The rater model's flag column holds Python objects, None for a rater without a flag: pandas
    prints such a None as "None" unless the cell is formatted before. ``attrs["decimals"]`` gives
    a column its own number of decimals."""
    raters = pd.DataFrame({"severity": [0.1, 0.7], "df": [2.14, 3.0]}, index=["a", "b"])
    raters["flag"] = pd.Series([None, "random"], index=raters.index, dtype=object)
    raters.attrs["decimals"] = {"df": 1}
    assert cells(table_html(raters)) == ["0.100", "2.1", "–", "0.700", "3.0", "random"]


def test_the_report_summary_prints_items_annotators_and_ratings_as_integers(tmp_path):
    ratings = pd.DataFrame({"item_id": [f"i{k}" for k in range(5) for _ in range(3)],
                            "annotator": ["a", "b", "c"] * 5,
                            "rating": [0, 1, 0, 2, 2, 3, 4, 4, 4, 1, 2, 1, 3, 3, 2]})
    page = write_report(tmp_path, agreement=agreement_report(ratings, n_resamples=50)).read_text()
    summary = page[page.index("Inter-annotator agreement"):page.index("Pairwise agreement")]
    assert cells(summary)[:3] == ["5", "3", "15"]        # 5 items, 3 annotators, 15 ratings
    assert ".000</td>" not in summary.split("Krippendorff")[0]


def test_the_votes_plot_wraps_so_its_text_is_not_shrunk():
    votes = pd.DataFrame([{"majority": m, "score": s, "annotator": a, "count": 1}
                          for m in range(5) for s in range(5) for a in "abcdef"])
    fig = votes_figure(votes)
    width, height = fig.get_size_inches()
    # five majorities: two rows of at most three panels, each 2.2 in, so 6.6 in wide (was 10 in)
    assert width <= 6.6 + 1e-9 and height > 4
    assert sum(ax.get_visible() and ax.axison for ax in fig.axes) == 5


def test_bootstrap_with_an_unshared_pair_warns_nothing():
    nan = np.nan
    # only i1 is rated twice: a resample that misses it (0.8^5 ≈ 1 in 3) has no pair defined
    matrix = pd.DataFrame({"a": [0, 1, 2, 3, 4], "b": [0, nan, nan, nan, nan]},
                          index=["i1", "i2", "i3", "i4", "i5"])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = bootstrap_intervals(matrix, n_resamples=200)
    low, high = out["mean_pairwise_agreement"]
    assert low == high == 1.0          # whenever defined, a and b agree exactly on i1


def test_nanmean_rows_is_the_mean_of_the_finite_entries():
    rows = np.array([[1.0, np.nan, 3.0], [np.nan, np.nan, np.nan], [0.5, 0.5, 2.0]])
    out = nanmean_rows(rows)
    assert out[0] == 2.0 and np.isnan(out[1]) and out[2] == 1.0
