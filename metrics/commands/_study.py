"""Shared loading for the study-analysis commands (agreement, alignment, tune-w, recalibrate)."""

from __future__ import annotations

from ..agreement import read_ratings
from ..similarity import SimilarityMatrix
from ..study_items import component_similarities, join_ratings, read_items


def add_study_arguments(parser, items_required: bool = True, matrices: bool = True) -> None:
    parser.add_argument("--ratings", required=True, help="ratings.csv (item_id, annotator, rating, ...)")
    parser.add_argument("--items", required=items_required, help="items.csv (item_id, category, gt_/pred_ verb/object, ...)")
    if matrices:
        parser.add_argument("--verb-sim", help="verb similarity matrix (.csv/.npz) for items lacking verb_sim")
        parser.add_argument("--object-sim", help="object similarity matrix for items lacking object_sim")


def load_matrices(args):
    verb = SimilarityMatrix.load(args.verb_sim) if getattr(args, "verb_sim", None) else None
    obj = SimilarityMatrix.load(args.object_sim) if getattr(args, "object_sim", None) else None
    return verb, obj


def load_rated_items(args, need_similarities: bool):
    ratings = read_ratings(args.ratings)
    items = read_items(args.items)
    if need_similarities:
        verb, obj = load_matrices(args)
        items = component_similarities(items, verb, obj)
    return ratings, join_ratings(items, ratings)
