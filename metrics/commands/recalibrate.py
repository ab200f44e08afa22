"""``python -m metrics recalibrate``: new verb/object matrices from human ratings (see
``metrics.recalibration`` for the method)."""

from __future__ import annotations

from pathlib import Path

from ..options import input_file, integer, number, output_dir, seed
from ..recalibration import MAX_FOLDS, MAX_PRIOR_STRENGTH, recalibrate
from ..report import write_report
from ._study import load_matrices, load_rated_items


def add_arguments(parser) -> None:
    parser.add_argument("--ratings", required=True, type=input_file, help="ratings.csv")
    parser.add_argument("--items", required=True, type=input_file, help="items.csv with gt_/pred_ verb/object")
    parser.add_argument("--verb-sim", required=True, type=input_file, help="verb matrix to recalibrate (.csv/.npz)")
    parser.add_argument("--object-sim", required=True, type=input_file, help="object matrix to recalibrate")
    parser.add_argument("--out", required=True, type=output_dir, help="output folder, e.g. exports/<study>/<timestamp>")
    parser.add_argument("--w", type=number(0, 1, low_open=True, high_open=True), default=0.5,
                        help="verb weight used to read the ratings")
    parser.add_argument("--prior-strength", type=number(0, MAX_PRIOR_STRENGTH), default=5.0,
                        help="ratings needed to move a rated entry halfway to its human evidence")
    parser.add_argument("--folds", type=integer(2, MAX_FOLDS), default=5)
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--study", help="study name for the provenance (default: from ratings.csv)")


def run(args):
    ratings, rated = load_rated_items(args, need_similarities=False)
    verb, obj = load_matrices(args)
    study = args.study or (str(ratings["study"].iloc[0]) if "study" in ratings.columns and len(ratings) else None)
    result = recalibrate(rated, verb, obj, w=args.w, prior_strength=args.prior_strength,
                         folds=args.folds, seed=args.seed, study=study)
    out = Path(args.out)
    files = []
    for role in ("verb", "object"):
        for suffix in (".npz", ".csv"):
            files.append(str(result[role].save(out / f"{role}_recalibrated{suffix}")))
    report = write_report(out, recalibration=result, title="Recalibrated similarity matrices")
    summary = {k: result[k] for k in ("before", "after", "method", "parameters", "folds", "n_items", "n_ratings")}
    summary["files"] = files
    lines = [f"{result['n_items']} rated items, {result['n_ratings']} ratings, {args.folds}-fold cross-validation",
             f"held-out agreement (Eq. 13): before {result['before']['agreement']:.4f} -> after {result['after']['agreement']:.4f}",
             f"held-out Spearman:           before {result['before']['spearman']:.4f} -> after {result['after']['spearman']:.4f}",
             f"matrices: {out}/verb_recalibrated.npz, object_recalibrated.npz (+ .csv); report: {report}"]
    return summary, "\n".join(lines)
