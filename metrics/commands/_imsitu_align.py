"""``python -m metrics imsitu-align``: how the gold, WordNet, cluster (and any extra judge)
criteria agree with human correctness marks (Tables 5–6): accuracy differences per model,
Kendall's tau of the model rankings, Krippendorff's alpha of the labels."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.core._inputs import read_csv, refuse_first_row
from metrics.core._options import given_once, input_file, integer, seed
from metrics.imsitu._alignment import align_study, alignment_text, read_judge
from metrics.imsitu._cluster_files import read_clusters
from metrics.imsitu._readers import read_gold

FLAGS = {"n_resamples": "--resamples"}   # parameter -> option


def add_arguments(parser) -> None:
    parser.add_argument("--ratings", required=True, type=input_file, help="ratings.csv of an imsitu_correctness study "
                                                         "(item_id, annotator, rating = marks like 10100)")
    parser.add_argument("--items", required=True, type=input_file, help="items.csv (item_id, image, model, predictions[, gold])")
    parser.add_argument("--gold", type=input_file, help="JSON image -> gold verb(s); default: the items' gold column")
    parser.add_argument("--clusters", type=input_file, help="sense clusters (adds the cluster criterion): the clusters JSON, the "
                        "released results JSON or the released step-2 CSV, as imsitu --clusters")
    parser.add_argument("--judge", action="append", default=[], metavar="NAME=CSV",
                        help="extra judge labels: model,image,top1,top5 or model,image,rank,correct")
    parser.add_argument("--resamples", type=integer(1, 1_000_000), default=1000, help="bootstrap resamples for human accuracy")
    parser.add_argument("--seed", type=seed, default=0)


def read_study_items(path) -> pd.DataFrame:
    items = read_csv(path, required=("item_id", "image", "model", "predictions"))
    refuse_first_row(path, items["item_id"].duplicated(), lambda k: f"duplicate item_id {items['item_id'].iloc[k]!r}")
    if "role" in items.columns:
        items = items[items["role"].isin(["", "main"])]
    return items


def read_study_ratings(path, items: pd.DataFrame) -> pd.DataFrame:
    """The marks of a correctness study; each rated item must be in the items file."""
    ratings = read_csv(path, required=("item_id", "annotator", "rating"))
    main = ratings["phase"].isin(["", "main"]) if "phase" in ratings.columns else np.ones(len(ratings), bool)
    refuse_first_row(path, np.asarray(main) & ~ratings["item_id"].isin(set(items["item_id"])).to_numpy(),
                     lambda k: f"item_id {ratings['item_id'].iloc[k]!r} is not a main item of --items")
    return ratings[np.asarray(main)].drop(columns=["phase"], errors="ignore")


def run(args):
    items = read_study_items(args.items)
    ratings = read_study_ratings(args.ratings, items)
    specs = [spec.partition("=") for spec in args.judge]
    for spec, (name, sep, path) in zip(args.judge, specs):
        if not sep or not name.strip() or not path.strip():
            raise InputError(f"--judge {spec!r}: expected NAME=CSV")
    given_once([name for name, _, _ in specs], "--judge")
    judges = {name.strip(): read_judge(path.strip(), name.strip()) for name, _, path in specs}
    gold = read_gold(args.gold) if args.gold else None
    clusters = read_clusters(args.clusters) if args.clusters else None
    result = align_study(ratings, items, gold, clusters, judges, n_resamples=args.resamples, seed=args.seed,
                         ratings_source=str(args.ratings), items_source=str(args.items),
                         gold_source=f"{args.gold} (--gold)" if args.gold else str(args.items))
    lines = ["human accuracy (majority over annotators, 95% bootstrap intervals)"]
    for model, h in result["human_accuracy"].items():
        lines.append(f"  {model:<22} Top-1 {h['top1']:.3f} [{h['top1_ci'][0]:.3f}, {h['top1_ci'][1]:.3f}]  "
                     f"Top-5 {h['top5']:.3f} [{h['top5_ci'][0]:.3f}, {h['top5_ci'][1]:.3f}]  ({h['n_images']} images)")
    return result, "\n".join(lines) + "\n\n" + alignment_text(result)
