"""Shared loading for the study-analysis commands (agreement, alignment, tune-w, recalibrate)."""

from __future__ import annotations

from ..agreement import read_ratings
from ..options import input_file
from ..similarity import SimilarityMatrix
from ..study_items import check_rated_items, component_similarities, join_ratings, read_items


def add_study_arguments(parser, items_required: bool = True, matrices: bool = True) -> None:
    parser.add_argument("--ratings", required=True, type=input_file, help="ratings.csv (item_id, annotator, rating, ...)")
    parser.add_argument("--items", required=items_required, type=input_file, help="items.csv (item_id, category, gt_/pred_ verb/object, ...)")
    if matrices:
        parser.add_argument("--verb-sim", type=input_file, help="verb similarity matrix (.csv/.npz) for items lacking verb_sim")
        parser.add_argument("--object-sim", type=input_file, help="object similarity matrix for items lacking object_sim")


def load_matrices(args):
    verb = SimilarityMatrix.load(args.verb_sim) if getattr(args, "verb_sim", None) else None
    obj = SimilarityMatrix.load(args.object_sim) if getattr(args, "object_sim", None) else None
    return verb, obj


def load_rated_items(args, need_similarities: bool):
    ratings = read_ratings(args.ratings)
    items = read_items(args.items)
    check_rated_items(items, ratings, args.items, args.ratings)
    if need_similarities:
        verb, obj = load_matrices(args)
        items = component_similarities(items, verb, obj)
    return ratings, join_ratings(items, ratings)
