"""Prediction-powered estimates of a study's mean human rating, for the console's dashboard and the
HTML report (one computation for both): a study whose spec gives an LLM ensemble's ratings of its
items (``[llm]``) shows, for all items, each category and each design cell (category × level),
the PPI estimate beside the human-only one, each with its 95% interval, and the human ratings
PPI saves at equal width (``metrics.study._ppi``).

- With ``[active]`` the human-rated items are the ones drawn at creation with the recorded
  probabilities (items.csv ``active_probability``, ``active_selected``), so
  :func:`metrics.study.active_ppi_mean` weights each by 1/π and the estimate stays unbiased
  for the mean over every item of the row; a row waits until each drawn item has a rating.
- Without it, the items rated so far are the human sample and :func:`metrics.study.ppi_mean`
  combines them with the LLM's ratings of the rest. That is valid when the rated items are a
  random sample of the items (the default ``order = "random"`` hands them out in each
  annotator's own random order; a study rated to the end has no unrated item, and PPI then
  equals the human-only estimate).

Both read the estimand as the mean over exactly the study's items (``finite_population``).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics import InputError
from metrics.study import active_ppi_mean, ppi_mean

from .study_spec import StudySpec
from .studytypes import Section

MEANING = ("How to read this: a 95% interval is built so that in 95 of 100 studies run this way it "
           "contains the mean rating humans would give every item of the row — not the LLM's mean. "
           "The prediction-powered (PPI) estimate corrects the LLM's ratings of all items by how far "
           "they were off on the human-rated ones; it never trusts the LLM on an item no human rated. "
           "“Saved” is the share of human-rated items that PPI saves: the human-only estimate would "
           "need “effective items” human-rated items for an interval as narrow.")
COLUMNS = ["group", "items", "human-rated items", "human ratings", "PPI estimate", "PPI low", "PPI high",
           "human-only estimate", "human-only low", "human-only high", "effective items", "saved", "note"]


def ppi_estimates(items: pd.DataFrame, ratings: pd.DataFrame, *, confidence: float = 0.95) -> pd.DataFrame | None:
    """One row per group (``all items``, ``category c``, ``category c, level l``) of a study's
    export tables (``items.csv`` with ``llm_rating``, ``ratings.csv``): PPI and human-only means
    of the main ratings with their intervals, effective items and the share saved; ``note`` says
    why a row has no estimate yet. None when the study has no LLM ratings."""
    if "llm_rating" not in items.columns:
        return None
    main = items[items["role"] == "main"].set_index("item_id")
    given = ratings[ratings["phase"] == "main"]
    given = given[pd.to_numeric(given["rating"], errors="coerce").notna()]
    human = given.assign(rating=given["rating"].astype(float)).groupby("item_id")["rating"]
    frame = pd.DataFrame({"llm": main["llm_rating"].astype(float),
                          "human": human.mean().reindex(main.index),
                          "ratings": human.size().reindex(main.index).fillna(0).astype(int)})
    if "active_probability" in main.columns:
        frame["probability"] = main["active_probability"].astype(float)
        frame["selected"] = main["active_selected"].astype(bool)
    rows = [_row("all items", frame, confidence)]
    if "category" in main.columns:
        for category, part in frame.groupby(main["category"], sort=True):
            rows.append(_row(f"category {category}", part, confidence))
        if "level" in main.columns and main["level"].notna().all():
            for (category, level), part in frame.groupby([main["category"], main["level"]], sort=True):
                rows.append(_row(f"category {category}, level {level}", part, confidence))
    return pd.DataFrame(rows, columns=COLUMNS)


def _row(group: str, part: pd.DataFrame, confidence: float) -> dict:
    """The estimates of one group, or its ``note`` when there are none yet."""
    rated = part["ratings"] > 0
    row = {"group": group, "items": len(part), "human-rated items": int(rated.sum()),
           "human ratings": int(part["ratings"].sum())}
    try:
        if "selected" in part.columns:
            waiting = int((part["selected"] & ~rated).sum())
            if waiting:
                return {**row, "note": f"{waiting} of the items drawn for humans not rated yet"}
            estimate = active_ppi_mean(part["human"].to_numpy(), part["llm"].to_numpy(),
                                       part["probability"].to_numpy(), part["selected"].to_numpy(),
                                       confidence=confidence, finite_population=True)
        else:
            estimate = ppi_mean(part.loc[rated, "human"].to_numpy(), part.loc[rated, "llm"].to_numpy(),
                                part.loc[~rated, "llm"].to_numpy(), confidence=confidence,
                                finite_population=True)
    except InputError as exc:
        return {**row, "note": str(exc).split(": ", 1)[-1]}
    return {**row, "PPI estimate": estimate.estimate, "PPI low": estimate.interval[0],
            "PPI high": estimate.interval[1], "human-only estimate": estimate.classical,
            "human-only low": estimate.classical_interval[0], "human-only high": estimate.classical_interval[1],
            "effective items": estimate.effective_n if np.isfinite(estimate.effective_n) else None,
            "saved": estimate.saved, "note": ""}


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


def ppi_section(tables: dict[str, pd.DataFrame], spec: StudySpec) -> Section | None:
    """The dashboard's and the report's section: the estimates table, what the interval means
    and what rater routing did (None when the spec has neither ``[llm]`` nor ``[routing]``)."""
    if not (spec.llm or spec.routing):
        return None
    section = Section(TITLE if spec.llm else "Rater routing")
    if spec.llm:
        section.tables["Mean human rating, PPI beside human-only (95% intervals)"] = ppi_estimates(
            tables["items.csv"], tables["ratings.csv"])
        section.text = MEANING
    if (routing := routing_sentence(tables["annotators.csv"], spec.routing)) is not None:
        section.text = f"{section.text} {routing}".strip()
    return section
