"""Shared options and loading of the study-analysis commands (agreement, alignment, tune-w,
recalibrate)."""

from __future__ import annotations

import math

from metrics.core._options import input_file


def figure(value: float, width: int = 8) -> str:
    """A statistic for the commands' text output: 4 decimals, or "undefined" for NaN."""
    return f"{'undefined' if math.isnan(value) else format(value, '.4f'):>{width}}"


def add_study_arguments(parser, items_required: bool = True, matrices: bool = True) -> None:
    parser.add_argument("--ratings", required=True, type=input_file, help="ratings.csv (item_id, annotator, rating, ...)")
    parser.add_argument("--items", required=items_required, type=input_file, help="items.csv (item_id, category, gt_/pred_ verb/object, ...)")
    if matrices:
        parser.add_argument("--verb-sim", type=input_file, help="verb similarity matrix (.csv/.npz) for items lacking verb_sim")
        parser.add_argument("--object-sim", type=input_file, help="object similarity matrix for items lacking object_sim")


def load_rated_items(args, need_similarities: bool):
    """``(ratings, rated items)`` of the command's ``--ratings`` and ``--items`` (see
    :func:`metrics.api.rated_items`)."""
    from metrics.api import rated_items
    return rated_items(args.ratings, args.items, verb_sim=getattr(args, "verb_sim", None),
                       object_sim=getattr(args, "object_sim", None), need_similarities=need_similarities)
