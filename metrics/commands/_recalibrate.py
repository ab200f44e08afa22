"""``python -m metrics recalibrate``: new verb/object matrices from human ratings (see
``metrics.study._recalibration`` for the method). ``--estimator ppi`` reads the given matrices as
the LLM ratings of every pair and builds the new ones from prediction-powered estimates, with
each entry's interval in ``{verb,object}_recalibrated_intervals.csv`` beside the matrix."""

from __future__ import annotations

from pathlib import Path

from metrics.api import recalibrate, recalibrate_ppi
from metrics.core._options import input_file, integer, number, output_dir, seed
from metrics.study._options import MAX_FOLDS, MAX_PRIOR_STRENGTH
from metrics.study._report import write_report


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
    parser.add_argument("--estimator", choices=("isotonic", "ppi"), default="isotonic",
                        help="isotonic: calibration map + shrinkage (default); ppi: prediction-powered "
                             "estimates from the matrices as LLM ratings of every pair, with intervals")
    parser.add_argument("--confidence", type=number(0, 1, low_open=True, high_open=True), default=0.95,
                        help="confidence level of the intervals (--estimator ppi)")


INTERVAL_MEANING = ("each interval holds, with the stated confidence, the mean human-implied similarity of the "
                    "pairs at that LLM level, moved to the pair's own LLM rating; it is not a range for one "
                    "pair's own ratings")


def run_ppi(args):
    result = recalibrate_ppi(args.ratings, args.items, args.verb_sim, args.object_sim, w=args.w,
                             confidence=args.confidence, study=args.study)
    out = Path(args.out)
    summary = {**result.to_dict(), "files": result.save(out)}
    pct = f"{100 * args.confidence:g}%"
    lines = [f"{result.n_items} rated items, {result.n_ratings} ratings; prediction-powered matrices ({pct} intervals)"]
    for role, levels in result.by_level.items():
        for row in levels:
            low, high = row["human_only_interval"]
            saved = 1 - row["rated"] / row["effective_n"] if row["effective_n"] > 0 else 0.0
            lines.append(f"{role:<6} level {row['level']}: {row['entries']} pairs, {row['rated']} rated: PPI mean "
                         f"{row['mean_estimate']:.3f} | humans only {row['human_only']:.3f} [{low:.3f}, {high:.3f}]; "
                         f"effective n {row['effective_n']:.1f} ({100 * saved:.0f}% of ratings saved)"
                         + (" (pooled fit: under 2 rated)" if row["fit"] == "pooled" else ""))
    lines += [INTERVAL_MEANING,
              f"matrices: {out}/verb_recalibrated.npz, object_recalibrated.npz (+ .csv); intervals: "
              f"{out}/verb_recalibrated_intervals.csv, object_recalibrated_intervals.csv"]
    return summary, "\n".join(lines)


def run(args):
    if args.estimator == "ppi":
        return run_ppi(args)
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
