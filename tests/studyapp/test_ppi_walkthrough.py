"""A walk-through of SHOE's design as researchers run it: ``[llm]`` ratings of every pair,
``[active]`` draws with probabilities 0.05–0.9 (budget 120 of 300 pairs), four heavy raters,
one who leaves after two thirds of the drawn pairs, six light raters of 4–6 pairs and three
simulated raters. The dashboard's and report's table
(``studyapp.platform.reporting.ppi_estimates``) leaves the simulated raters out; its intervals'
widths match an independent crossed (pigeonhole) bootstrap's standard error times the same t
quantile within 15% (median over four studies 0.91–0.94; single studies 0.87–1.15 times it, as
both rest on about five heavy raters); "effective items" and "saved" are the docs' formulas of its own
widths. The t quantile on ν ≈ 5–9 rater-driven degrees of freedom is 2.3–2.6, so the widths are
5–49% above ±1.96 bootstrap standard errors, about the bootstrap's percentile interval: with
so few effective raters the percentile interval undercovers (``benchmarks/ppi_coverage.py
--crossed-bootstrap``, docs/method.md)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from benchmarks.crossed_bootstrap import pigeonhole_estimates
from benchmarks.rater_designs import spread_probabilities
from metrics.study import ppi_mean_rater_population
from studyapp.platform.reporting.analysis import rater_tables
from studyapp.platform.reporting.ppi_estimates import ppi_estimates

ITEMS, BUDGET = 300, 120


def shoe_study(seed: int = 51) -> dict[str, pd.DataFrame]:
    """The export tables of one such study (items.csv, ratings.csv, annotators.csv)."""
    rng = np.random.default_rng(seed)
    category = np.tile([1, 2, 3], ITEMS // 3)
    location = np.clip(rng.normal(2.0, 1.0, ITEMS), 0, 4)
    llm = np.clip(0.4 + 4 / (1 + np.exp(-1.2 * (location - 2))) + rng.normal(0, 0.4, ITEMS), 0, 4)
    proxy = np.abs(llm - location) + rng.uniform(0, 0.3, ITEMS)
    probability = spread_probabilities(proxy, BUDGET / ITEMS)
    drawn = rng.random(ITEMS) < probability
    ids = np.array([f"p{k:04d}" for k in range(ITEMS)])
    rated = np.flatnonzero(drawn)
    who = {f"heavy{r}": rated for r in range(4)}
    who["dropout"] = rng.permutation(rated)[: 2 * len(rated) // 3]
    who.update({f"light{r}": rng.choice(rated, int(rng.integers(4, 7)), replace=False) for r in range(6)})
    who.update({f"sim-{p}": rated for p in ("strict", "lenient", "mid")})
    severity = dict(zip(who, rng.normal(0, 0.5, len(who))))
    rows = [(ids[i], name, int(np.clip(np.rint(location[i] + severity[name] + rng.normal(0, 0.7)), 0, 4)))
            for name, items in who.items() for i in items]
    ratings = pd.DataFrame(rows, columns=["item_id", "annotator", "rating"]).assign(
        phase="main", rater_kind=lambda t: np.where(t["annotator"].str.startswith("sim-"), "simulated", "human"))
    items = pd.DataFrame({"item_id": ids, "role": "main", "category": category, "level": np.rint(location).astype(int),
                          "llm_rating": llm, "active_probability": probability, "active_selected": drawn})
    annotators = pd.DataFrame({"annotator": list(who),
                               "source": ["simulated" if n.startswith("sim-") else "invite" for n in who]})
    return {"items.csv": items, "ratings.csv": ratings, "annotators.csv": annotators}


def pigeonhole_sds(tables, resamples: int = 150, seed: int = 0) -> tuple[float, float]:
    """Standard deviations of the PPI and human-only estimates under Owen's (2007) pigeonhole
    bootstrap (:mod:`benchmarks.crossed_bootstrap`): items (all of them, each with its draw) and
    raters resampled independently, the estimate recomputed — no variance formula of the
    estimator used."""
    items, ratings = tables["items.csv"].reset_index(drop=True), tables["ratings.csv"]
    position = pd.Series(np.arange(len(items)), index=items["item_id"])
    coded = pd.DataFrame({"item": position[ratings["item_id"]].to_numpy(), "rater": ratings["annotator"].to_numpy(),
                          "rating": ratings["rating"].to_numpy(float)})
    estimates = pigeonhole_estimates(np.random.default_rng(seed), coded, items["llm_rating"],
                                     items["active_probability"], items["active_selected"], resamples=resamples)
    return tuple(np.std(estimates, axis=0, ddof=1))


def test_simulated_raters_are_left_out_unless_included():
    tables = shoe_study()
    kept, left_out = rater_tables(tables)
    assert left_out == ["sim-strict", "sim-lenient", "sim-mid"]
    assert ppi_estimates(kept["items.csv"], kept["ratings.csv"]).iloc[0]["raters"] == 11
    included, none = rater_tables(tables, include_simulated=True)
    assert none == [] and ppi_estimates(included["items.csv"], included["ratings.csv"]).iloc[0]["raters"] == 14


def test_effective_items_and_saved_are_the_formula_of_the_widths():
    kept, _ = rater_tables(shoe_study())
    row = ppi_estimates(kept["items.csv"], kept["ratings.csv"]).set_index("group").loc["all items"]
    n = row["human-rated items"]
    ppi_width, human_width = row["PPI high"] - row["PPI low"], row["human-only high"] - row["human-only low"]
    # "effective items" = n·(human-only width / PPI width)², "saved" = 1 − n/effective (docs/studies.md)
    effective = n * (human_width / ppi_width) ** 2
    assert row["effective items"] == pytest.approx(effective, abs=0.051)
    assert row["saved"] == pytest.approx(1 - n / effective, rel=1e-9)
    # eleven raters, but five carry nearly every rating: far fewer than 10 rater degrees of freedom
    assert row["raters"] == 11 and row["df"] < 8


@pytest.mark.slow
def test_the_widths_match_a_crossed_bootstrap_on_the_same_t_quantile():
    from scipy import stats
    ratios = []
    for seed in (1, 2, 3, 4):
        kept, _ = rater_tables(shoe_study(seed))
        row = ppi_estimates(kept["items.csv"], kept["ratings.csv"]).iloc[0]
        items = kept["items.csv"].set_index("item_id")
        e = ppi_mean_rater_population(kept["ratings.csv"], items["llm_rating"], item="item_id", rater="annotator",
                                      probability=items["active_probability"], selected=items["active_selected"])
        assert (e.interval.low, e.classical_interval.high) == pytest.approx((row["PPI low"], row["human-only high"]))
        widths = (row["PPI high"] - row["PPI low"], row["human-only high"] - row["human-only low"])
        boot = pigeonhole_sds(kept)
        # the crossed bootstrap's standard error on the interval's own t quantile, ν = e.df / e.classical_df
        boot_widths = (2 * stats.t.ppf(0.975, e.df) * boot[0], 2 * stats.t.ppf(0.975, e.classical_df) * boot[1])
        ratios.append([widths[0] / boot_widths[0], widths[1] / boot_widths[1]])
    median = np.median(np.array(ratios), axis=0)
    assert 0.85 <= median[0] <= 1.15 and 0.85 <= median[1] <= 1.15, ratios


def test_a_thin_design_says_why_its_interval_is_wide():
    # two heavy raters and the light ones: the raters' part has about one degree of freedom
    from studyapp.platform.reporting.ppi_estimates import THIN, headline
    tables = shoe_study()
    ratings = tables["ratings.csv"]
    thin = ratings[~ratings["annotator"].isin(["heavy2", "heavy3", "dropout"]) & (ratings["rater_kind"] == "human")]
    table = ppi_estimates(tables["items.csv"], thin)
    assert table.iloc[0]["df"] < 3 and headline(table).endswith(THIN)
    assert not headline(ppi_estimates(tables["items.csv"], ratings[ratings["rater_kind"] == "human"])).endswith(THIN)
