"""Analyses of an HOI-similarity study: metric–human alignment and w tuning (SHOE §4.3, Eq. 14)."""

from __future__ import annotations

import pandas as pd

from metrics.study._alignment import alignment_table
from metrics import datasets
from metrics.vocab._baseline import load_default
from metrics.study._study_items import component_similarities, items_dataset, join_ratings
from metrics.study._tuning import tune_w_by_category
from metrics.core._inputs import numbers


def pair_analyses(items: pd.DataFrame, ratings: pd.DataFrame, permutations: int) -> tuple[dict, dict]:
    """Metric–human alignment (``permutations`` per p-value) and w tuning of an HOI-pair
    study's main items and ratings (similarities the items lack from the baseline matrices of
    their dataset)."""
    items = items[items["role"] == "main"].drop(columns=["role", "expected"])
    items = items.astype({"item_id": str})
    for column in ("verb_sim", "object_sim"):
        items[column] = numbers(items[column])
    dataset = items_dataset(items)
    items = component_similarities(items, load_default("v", dataset=dataset), load_default("n", dataset=dataset),
                                   datasets.load_vocabulary(dataset))
    rated = join_ratings(items, ratings)
    return alignment_table(rated, metrics=[], n_resamples=permutations), tune_w_by_category(rated)
