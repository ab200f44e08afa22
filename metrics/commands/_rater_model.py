"""``python -m metrics rater-model``: item scores corrected for rater severity, with errors."""

from __future__ import annotations

from metrics.core._errors import InputError
from metrics.core._options import input_file, output_dir
from metrics.study._agreement import read_ratings
from metrics.study._rater_model import fit_rater_model

SHOWN_ITEMS = 20


def add_arguments(parser) -> None:
    parser.add_argument("--ratings", required=True, type=input_file, help="ratings.csv (item_id, annotator, rating, ...)")
    parser.add_argument("--include-simulated", action="store_true",
                        help="keep the ratings whose rater_kind is simulated (left out by default)")
    parser.add_argument("--out", type=output_dir, help="write report.html (scores with error bars, rater chart) and CSV tables here")


def run(args):
    ratings = read_ratings(args.ratings, include_simulated=args.include_simulated)
    raters = ratings["annotator"].unique()
    if len(raters) < 2:  # the fit would run, with a consistency judged against nobody
        raise InputError(f"{args.ratings}: the rater model needs ratings from at least two raters "
                         f"(severity and consistency are relative to the others); only {str(raters[0])!r} rated")
    model = fit_rater_model(ratings)
    items, raters = model.items, model.raters
    lines = [f"{len(items)} items, {len(raters)} raters, {int(items['n'].sum())} ratings in the fit; "
             f"mean SE {items['se'].mean():.3f}",
             f"{'rater':<24} {'severity':>9} {'consistency':>12}  flag"]
    for name, row in raters.iterrows():
        lines.append(f"{str(name):<24} {row.severity:9.3f} {row.consistency:12.3f}  {row.flag or ''}")
    lines.append(f"{'item':<24} {'score':>9} {'se':>12} {'n':>4}")
    for name, row in items.head(SHOWN_ITEMS).iterrows():
        lines.append(f"{str(name):<24} {row.score:9.3f} {row.se:12.3f} {int(row.n):4d}")
    if len(items) > SHOWN_ITEMS:
        lines.append(f"... {len(items) - SHOWN_ITEMS} more items (--json PATH writes them all)")
    if args.out:
        from metrics.study._report import write_report
        lines.append(f"report: {write_report(args.out, rater_model=model, title='Rater model')}")
    return model.to_dict(), "\n".join(lines)
