"""``python -m metrics agreement``: inter-annotator agreement, optionally a full HTML report."""

from __future__ import annotations

import math

from metrics.api import annotator_agreement
from metrics.commands._study import figure
from metrics.core._choices import LEVELS
from metrics.core._errors import naming
from metrics.core._options import input_file, integer, output_dir, seed
from metrics.core._validation import MAX_RESAMPLES
from metrics.study._agreement import no_variation, rating_matrix, read_ratings
from metrics.study._report import write_report

FLAGS = {"n_resamples": "--bootstrap"}   # parameter -> option


def add_arguments(parser) -> None:
    parser.add_argument("--ratings", required=True, type=input_file, help="ratings.csv (item_id, annotator, rating, ...)")
    parser.add_argument("--include-simulated", action="store_true",
                        help="keep the ratings whose rater_kind is simulated (left out by default)")
    parser.add_argument("--items", type=input_file, help="items.csv: adds metric–human alignment to the report")
    parser.add_argument("--level", choices=LEVELS, default="ordinal", help="Krippendorff's alpha level (default ordinal)")
    parser.add_argument("--bootstrap", type=integer(0, MAX_RESAMPLES), default=1000, help="bootstrap resamples for intervals (0 = none)")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--out", type=output_dir, help="write report.html, agreement.json, CSV tables and PNG plots here")


def run(args):
    ratings = read_ratings(args.ratings, include_simulated=args.include_simulated)
    with naming(args.ratings):
        report = annotator_agreement(ratings, level=args.level, n_resamples=args.bootstrap, seed=args.seed)
    result = report.to_dict()
    alignment = items = None
    if args.items:
        from metrics.study._alignment import alignment_table
        from metrics.study._study_items import check_rated_items, join_ratings, read_items

        items = read_items(args.items)
        check_rated_items(items, ratings, args.items, args.ratings)
        alignment = alignment_table(join_ratings(items, ratings), seed=args.seed)
        result["alignment"] = alignment
    image_update = None
    if "earlier_rating" in ratings.columns:  # a with-image pass: how ratings moved (supp. §6.2)
        from metrics.study._image_update import check_earlier_ratings, pair_ratings
        from metrics.study._image_update import image_update as update_stats

        check_earlier_ratings(ratings, args.ratings)
        image_update = update_stats(pair_ratings(ratings, None, items))
        result["image_update"] = image_update
    lines = [f"{report.n_items} items, {report.n_annotators} annotators, {report.n_ratings} ratings",
             f"Krippendorff's alpha ({report.level}) {figure(report.krippendorff_alpha)}" + _ci(report, "krippendorff_alpha"),
             f"mean pairwise agreement (Eq. 13) {figure(report.mean_pairwise_agreement)}" + _ci(report, "mean_pairwise_agreement"),
             f"mean quadratic weighted kappa    {figure(report.mean_qwk)} (unweighted over {report.qwk_pairs} "
             f"rater pairs; {figure(report.mean_qwk_by_shared_items)} with pairs weighted by shared items)",
             f"mean Spearman rho                {figure(report.mean_spearman)}",
             f"within-item SD {report.precision['within_item_sd']:.3f}; one item's SE of its mean of "
             f"{report.precision['raters']} ratings {report.precision['se_mean_rating']:.3f}"]
    if (reason := no_variation(rating_matrix(ratings))) is not None:
        lines.append(f"undefined: {reason}")
    if image_update is not None:
        lines.append(f"with-image pass: {100 * image_update['share_updated']:.2f}% of "
                     f"{image_update['n']} ratings updated")
    if args.out:
        path = write_report(args.out, agreement=report, alignment=alignment, image_update=image_update)
        lines.append(f"report: {path}")
    return result, "\n".join(lines)


def _ci(report, key) -> str:
    ci = report.intervals.get(key)
    return (f"  [{ci[0]:.4f}, {ci[1]:.4f}] (95%, percentile bootstrap over items)"
            if ci and not any(map(math.isnan, ci)) else "")
