"""``python -m metrics recalibrate``: new verb/object matrices from human ratings (see
``metrics.study.recalibration`` for the method)."""

from __future__ import annotations

from pathlib import Path

from metrics.api import recalibrate
from metrics.core.options import input_file, integer, number, output_dir, seed
from metrics.study.recalibration import MAX_FOLDS, MAX_PRIOR_STRENGTH
from metrics.study.report import write_report


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
    result = recalibrate(args.ratings, args.items, args.verb_sim, args.object_sim, w=args.w,
                         prior_strength=args.prior_strength, folds=args.folds, seed=args.seed, study=args.study)
    out = Path(args.out)
    summary = {**result.to_dict(), "files": result.save(out)}
    report = write_report(out, recalibration=result.details, title="Recalibrated similarity matrices")
    lines = [f"{result.n_items} rated items, {result.n_ratings} ratings, {args.folds}-fold cross-validation",
             f"held-out agreement (Eq. 13): before {result.before['agreement']:.4f} -> after {result.after['agreement']:.4f}",
             f"held-out Spearman:           before {result.before['spearman']:.4f} -> after {result.after['spearman']:.4f}",
             f"matrices: {out}/verb_recalibrated.npz, object_recalibrated.npz (+ .csv); report: {report}"]
    return summary, "\n".join(lines)
