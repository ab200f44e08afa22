"""``python -m metrics reliability``: α at every level, Gwet's AC2, ICC and the human ceiling,
with bootstrap intervals, overall and per stratum; optionally a paired test of two metrics."""

from __future__ import annotations

import math

from metrics.commands._study import figure
from metrics.core._errors import InputError, naming
from metrics.core._inputs import numbers
from metrics.core._options import given_once, input_file, integer, output_dir, seed
from metrics.core._validation import MAX_RESAMPLES
from metrics.study._agreement import no_variation, rating_matrix, read_ratings
from metrics.study._reliability import paired_metric_test, reliability, reliability_by_stratum

FLAGS = {"n_resamples": "--bootstrap"}   # parameter -> option


def add_arguments(parser) -> None:
    parser.add_argument("--ratings", required=True, type=input_file, help="ratings.csv (item_id, annotator, rating, ...)")
    parser.add_argument("--include-simulated", action="store_true",
                        help="keep the ratings whose rater_kind is simulated (left out by default)")
    parser.add_argument("--items", type=input_file, help="items.csv: strata columns and metric columns")
    parser.add_argument("--strata", default="category,level",
                        help="item columns to split by, comma-separated (default category,level; "
                             "those the items lack are skipped)")
    parser.add_argument("--compare", nargs=2, metavar=("A", "B"),
                        help="paired bootstrap test of metric columns A and B against the mean rating")
    parser.add_argument("--bootstrap", type=integer(0, MAX_RESAMPLES), default=1000, help="bootstrap resamples (0 = none)")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--out", type=output_dir, help="write report.html and the table as CSV here")


def run(args):
    ratings = read_ratings(args.ratings, include_simulated=args.include_simulated)
    matrix = rating_matrix(ratings)
    options = {"n_resamples": args.bootstrap, "seed": args.seed}
    with naming(args.ratings):
        result = reliability(matrix, **options)
    if args.compare and not args.items:
        raise InputError("--compare needs --items (the metric columns)")
    given_once(args.compare, "--compare")
    if args.items:
        from metrics.study._alignment import to_0_4
        from metrics.study._study_items import check_rated_items, join_ratings, read_items

        items = read_items(args.items)
        check_rated_items(items, ratings, args.items, args.ratings)
        items = items.set_index("item_id", drop=False)
        result["by_stratum"] = {
            column: reliability_by_stratum(matrix, items[column], **options)
            for column in (c.strip() for c in args.strata.split(",") if c.strip()) if column in items.columns}
        if args.compare:
            rated = join_ratings(items.reset_index(drop=True), ratings)
            for column in args.compare:
                if column not in rated.columns:
                    raise InputError(f"{args.items}: no metric column {column!r}")
            a, b = (to_0_4(c, numbers(rated[c]).to_numpy()) for c in args.compare)
            result["paired_test"] = {"a": args.compare[0], "b": args.compare[1], **paired_metric_test(
                a, b, rated["human_mean"].to_numpy(float), n_resamples=max(args.bootstrap, 1), seed=args.seed)}
    text = _text(result)
    if (reason := no_variation(matrix)) is not None:
        text += f"\nundefined: {reason}"
    if args.out:
        from metrics.study._report import write_report
        text += f"\nreport: {write_report(args.out, reliability=result, title='Reliability')}"
    return result, text


def _ci(entry, method: str = "percentile bootstrap over items") -> str:
    ci = entry.get("ci")
    return f"  [{ci[0]:.4f}, {ci[1]:.4f}] ({method})" if ci and not any(map(math.isnan, ci)) else ""


def _text(result) -> str:
    lines = [f"{result['n_items']} items, {result['n_raters']} raters, {result['n_ratings']} ratings"]
    for level, entry in result["krippendorff_alpha"].items():
        lines.append(f"Krippendorff's alpha ({level:<8}) {figure(entry['value'])}"
                     f"{_ci(entry, 'Hayes & Krippendorff KALPHA bootstrap')}")
    for kind, entry in result["gwet_ac2"].items():
        lines.append(f"Gwet's AC2 ({kind:<9})      {figure(entry['value'])}{_ci(entry)}")
    for kind in ("agreement", "consistency"):
        lines.append(f"ICC ({kind:<11}, 1 rater)  {figure(result['icc'][kind]['value'])}{_ci(result['icc'][kind])}")
    ceiling = result["human_ceiling"]
    if "spearman" in ceiling:
        ci = _ci({"ci": ceiling["spearman_ci"]}) if "spearman_ci" in ceiling else ""
        lines.append(f"human ceiling: Spearman {figure(ceiling['spearman'], 0)}{ci}, "
                     f"Eq. 13 {figure(ceiling['agreement'], 0)}")
    for column, strata in result.get("by_stratum", {}).items():
        for value, entry in strata.items():
            if "unavailable" in entry:
                lines.append(f"{column} {value}: {entry['unavailable']}")
            else:
                lines.append(f"{column} {value}: {entry['n_items']} items, ordinal alpha "
                             f"{figure(entry['krippendorff_alpha']['ordinal']['value'], 0)}, AC2 (ordinal) "
                             f"{figure(entry['gwet_ac2']['ordinal']['value'], 0)}")
    if "paired_test" in result:
        test = result["paired_test"]
        for stat in ("spearman", "agreement"):
            t = test[stat]
            lines.append(f"{test['a']} − {test['b']} ({stat}): {t['difference']:+.4f}  "
                         f"[{t['ci'][0]:+.4f}, {t['ci'][1]:+.4f}], p = {t['p_value']:.4f}")
    return "\n".join(lines)
