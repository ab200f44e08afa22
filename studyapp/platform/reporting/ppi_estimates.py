"""Prediction-powered estimates of a study's mean rating, for the console's dashboard and the HTML
report (one computation for both): a study whose spec gives an LLM ensemble's ratings of its items
(``[llm]``) shows, for all items, each category and each design cell (category × level), the PPI
estimate beside the human-only one, each with its 95% interval, and the human ratings PPI saves
at equal width.

The estimand, stated once (:data:`ESTIMAND`): the mean over the study's items of the rating a
rater drawn from the rater population would give. :func:`metrics.study.ppi_mean_rater_population`
computes it: the interval is over items *and* raters (a rater's severity moves all of their
ratings), crossed random-effects variance with a Satterthwaite t quantile.

- With ``[active]`` the human-rated items are the ones drawn at creation with the recorded
  probabilities (items.csv ``active_probability``, ``active_selected``), weighted by 1/π; a row
  waits until each drawn item has a rating.
- Without it, the items rated so far are taken as a random sample of the items (the default
  ``order = "random"`` hands them out in each annotator's own random order). Once every item is
  rated, PPI equals the human-only estimate and its interval still holds the raters' sampling.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics import InputError
from metrics.study import ppi_mean_rater_population

from ...studytypes import Section
from ..specs.spec_model import StudySpec

COVERAGE_STUDIES = "2,000"
COVERAGE_RANGE = "93.1–97.7%"   # benchmarks/ppi_coverage.py, 42 designs (docs/method.md)
ESTIMAND = "the mean over the study's items of the rating a rater drawn from the rater population would give"
INTERVAL_OVER = "items and raters"
MEANING = (f"How to read this: the target is {ESTIMAND}. A 95% interval is over {INTERVAL_OVER} — which "
           "items were rated and which raters rated them (a strict rater moves all of their ratings) — "
           "computed from a crossed random-effects variance with a t quantile (Satterthwaite degrees of "
           "freedom, the raters' counted by how evenly they share the ratings: a few heavy raters give few "
           "degrees of freedom and a wide interval, however many raters rated a handful of items). In "
           f"{COVERAGE_STUDIES} simulated studies per design — 3–12 raters, balanced or a few heavy raters with "
           "3–10 light ones and dropouts, 20–100% of the items rated, random or [active] draws with "
           f"probabilities 0.05–0.9 — it held the target in {COVERAGE_RANGE} of studies (docs/method.md). "
           "The prediction-powered (PPI) estimate corrects the "
           "LLM's ratings of all items by how far they were off on the human-rated ones; it never trusts "
           "the LLM on an item no human rated. “Effective items” is n·(human-only width / PPI width)², the "
           "human-rated items the human-only estimate would need for PPI's width were its width to shrink as "
           "1/√n; “saved” is 1 − n / effective items, negative when PPI's interval is the wider (few raters); "
           "once every item is rated nothing is saved. Simulated raters (studyapp simulate) are left out "
           "unless included.")
COLUMNS = ["group", "items", "human-rated items", "human ratings", "raters", "PPI estimate", "PPI low", "PPI high",
           "human-only estimate", "human-only low", "human-only high", "df", "effective items", "saved", "note"]
# the columns rounded to one decimal, printed so in the report (``metrics.study._report.table_html``)
ONE_DECIMAL = {"df": 1, "effective items": 1}


def ppi_estimates(items: pd.DataFrame, ratings: pd.DataFrame, *, confidence: float = 0.95) -> pd.DataFrame | None:
    """One row per group (``all items``, ``category c``, ``category c, level l``) of a study's
    export tables (``items.csv`` with ``llm_rating``, ``ratings.csv``): PPI and human-only means
    of the main ratings with their intervals, effective items and the share saved; ``note`` says
    why a row has no estimate yet. None when the study has no LLM ratings."""
    if "llm_rating" not in items.columns:
        return None
    main = items[items["role"] == "main"].set_index("item_id")
    given = ratings[(ratings["phase"] == "main") & ratings["item_id"].isin(main.index)]
    given = given.assign(rating=pd.to_numeric(given["rating"], errors="coerce")).dropna(subset=["rating"])
    given = given.rename(columns={"item_id": "item", "annotator": "rater"})[["item", "rater", "rating"]]
    frame = pd.DataFrame({"llm": main["llm_rating"].astype(float)})
    if "active_probability" in main.columns:
        frame["probability"] = main["active_probability"].astype(float)
        frame["selected"] = main["active_selected"].astype(bool)
    frame.attrs["ratings"] = given
    rows = [_row("all items", frame, confidence)]
    if "category" in main.columns:
        for category, part in frame.groupby(main["category"], sort=True):
            rows.append(_row(f"category {category}", part, confidence))
        if "level" in main.columns and main["level"].notna().all():
            for (category, level), part in frame.groupby([main["category"], main["level"]], sort=True):
                rows.append(_row(f"category {category}, level {_label(level)}", part, confidence))
    table = pd.DataFrame(rows, columns=COLUMNS)
    table.attrs["decimals"] = ONE_DECIMAL
    return table


def _row(group: str, part: pd.DataFrame, confidence: float) -> dict:
    """The estimates of one group, or its ``note`` when there are none yet."""
    given = part.attrs["ratings"]
    given = given[given["item"].isin(part.index)]
    rated = part.index.isin(given["item"])
    row = {"group": group, "items": len(part), "human-rated items": int(rated.sum()), "human ratings": len(given),
           "raters": int(given["rater"].nunique())}
    active = {}
    if "selected" in part.columns:
        waiting = int((part["selected"] & ~rated).sum())
        if waiting:
            return {**row, "note": f"{waiting} of the items drawn for humans not rated yet"}
        active = {"probability": part["probability"], "selected": part["selected"]}
    try:
        estimate = ppi_mean_rater_population(given, part["llm"], confidence=confidence, **active)
    except InputError as exc:
        return {**row, "note": str(exc).split(": ", 1)[-1]}
    return {**row, "PPI estimate": estimate.estimate, "PPI low": estimate.interval[0],
            "PPI high": estimate.interval[1], "human-only estimate": estimate.classical,
            "human-only low": estimate.classical_interval[0], "human-only high": estimate.classical_interval[1],
            "df": round(estimate.df, 1),
            "effective items": round(estimate.effective_n, 1) if np.isfinite(estimate.effective_n) else None,
            "saved": estimate.saved, "note": ""}


def _label(value) -> str:
    """A level as the study's files write it: ``1``, not ``1.0``."""
    number = float(value)
    return str(int(number)) if number.is_integer() else str(value)


def headline(table: pd.DataFrame | None) -> str | None:
    """The all-items answer in one line: estimate, interval (what it is over, how computed), saved."""
    if table is None or not len(table):
        return None
    row = table.set_index("group").loc["all items"]
    if pd.isna(row.get("PPI estimate")):
        return f"Mean rating (PPI): not yet — {row['note']}."
    return (f"Mean rating over all {row['items']} items: {row['PPI estimate']:.2f}, 95% interval "
            f"{row['PPI low']:.2f}–{row['PPI high']:.2f} over {INTERVAL_OVER} (crossed random effects, t on "
            f"{row['df']:g} df; {row['raters']} raters, {row['human ratings']} human ratings); "
            f"{_saved(row)} (human-only {row['human-only low']:.2f}–{row['human-only high']:.2f})."
            + (THIN if row["df"] < THIN_DF else ""))


THIN_DF = 3   # degrees of freedom below which the headline says why the interval is wide
THIN = (" The interval is wide on purpose: so few raters carry the ratings (or they differ so much) that "
        "the raters' part rests on under three degrees of freedom; more raters, not more items, narrow it.")


def _saved(row) -> str:
    """“Saved” in words: ``1 − n / effective items``, effective items = n·(human-only / PPI width)²."""
    n, effective = row["human-rated items"], row["effective items"]
    if row["saved"] >= 0:
        return (f"PPI saves {row['saved']:.0%} of human ratings ({n} rated items count as {effective:g} "
                "effective items)")
    return f"PPI saves nothing here: its interval is the wider ({n} rated items count as {effective:g})"


def routing_sentence(annotators: pd.DataFrame, routing: dict | None) -> str | None:
    """What the spec's ``[routing]`` did, in words (None without it)."""
    if not routing:
        return None
    routed = annotators[annotators["routed_at"].notna() & (annotators["routed_at"] != "")]
    names = ", ".join(routed["annotator"].astype(str))
    return (f"Rater routing is on: a rater whose fitted consistency is below {routing['min_consistency']:g} "
            f"after {routing['min_ratings']} main ratings gets no further items (paid as agreed). "
            f"Routed out so far: {len(routed)}" + (f" ({names})." if names else "."))


TITLE = "Prediction-powered estimates: LLM ratings plus human ratings"
TABLE = f"Mean rating, PPI beside human-only (95% intervals over {INTERVAL_OVER})"


def ppi_section(tables: dict[str, pd.DataFrame], spec: StudySpec) -> Section | None:
    """The dashboard's and the report's section: the estimates table, what the interval means
    and what rater routing did (None when the spec has neither ``[llm]`` nor ``[routing]``)."""
    if not (spec.llm or spec.routing):
        return None
    section = Section(TITLE if spec.llm else "Rater routing")
    if spec.llm:
        table = ppi_estimates(tables["items.csv"], tables["ratings.csv"])
        section.tables[TABLE] = table
        section.text = MEANING
        section.headline = headline(table) or ""
    if (routing := routing_sentence(tables["annotators.csv"], spec.routing)) is not None:
        section.text = f"{section.text} {routing}".strip()
    return section
