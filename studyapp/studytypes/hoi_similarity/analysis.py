"""Analyses of an HOI-similarity study: metric–human alignment and w tuning (SHOE §4.3, Eq. 14)."""

from __future__ import annotations

import pandas as pd

from metrics import datasets
from metrics.core import numbers
from metrics.study import alignment_table, component_similarities, items_dataset, join_ratings, tune_w_by_category
from metrics.vocab import load_default


def pair_analyses(items: pd.DataFrame, ratings: pd.DataFrame, permutations: int) -> tuple[dict, dict]:
    """Metric–human alignment (``permutations`` per p-value) and w tuning of an HOI-pair
    study's main items and ratings (similarities the items lack from the baseline matrices of
    their dataset)."""
    items = items[items["role"] == "main"].drop(columns=["role", "expected"])
    items = items.astype({"item_id": str})
    for column in ("verb_sim", "object_sim"):   # absent from items.csv when no item has it
        items[column] = numbers(items[column]) if column in items.columns else float("nan")
    dataset = items_dataset(items)
    items = component_similarities(items, load_default("v", dataset=dataset), load_default("n", dataset=dataset),
                                   vocabulary=datasets.load_vocabulary(dataset))
    rated = join_ratings(items, ratings)
    return alignment_table(rated, metrics=[], n_resamples=permutations), tune_w_by_category(rated)
