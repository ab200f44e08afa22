"""``python -m metrics image-update``: how ratings changed in the with-image pass (SHOE supp. §6.2)."""

from __future__ import annotations

from metrics.core._errors import InputError, naming
from metrics.core._options import input_file, output_dir
from metrics.study._agreement import read_ratings
from metrics.study._image_update import check_earlier_ratings, image_update, pair_ratings, summary_frame
from metrics.study._report import write_report
from metrics.study._study_items import check_rated_items, read_items


def add_arguments(parser) -> None:
    parser.add_argument("--ratings", required=True, type=input_file,
                        help="ratings.csv of the with-image study (item_id, annotator, rating and "
                             "earlier_rating as the platform exports it)")
    parser.add_argument("--before", type=input_file, help="ratings.csv of the earlier no-image study (needed when "
                                         "--ratings has no earlier_rating column)")
    parser.add_argument("--items", type=input_file, help="items.csv with a category column (per-category figures)")
    parser.add_argument("--out", type=output_dir, help="write report.html, image_update.csv and the plot here")


def run(args):
    after = read_ratings(args.ratings)
    check_earlier_ratings(after, args.ratings)
    before = read_ratings(args.before) if args.before else None
    items = read_items(args.items) if args.items else None
    if items is not None:
        check_rated_items(items, after, args.items, args.ratings)
    # the pairs come from --before when it is given: a refusal of them names that file
    with naming(f"{args.before} (--before)" if before is not None else args.ratings):
        pairs = pair_ratings(after, before, items)
        if before is not None and pairs.empty:
            raise InputError(f"no (item, annotator) pair of it is rated in {args.ratings} too")
    with naming(args.ratings):
        result = image_update(pairs)
    frame = summary_frame(result)
    lines = [f"{result['n']} ratings with an earlier answer; {result['n_updated']} updated "
             f"({100 * result['share_updated']:.2f}%, 95% CI {100 * result['share_updated_ci'][0]:.2f}–"
             f"{100 * result['share_updated_ci'][1]:.2f}%)"]
    if result["mean_abs_change"] is not None:
        ci = result["mean_abs_change_ci"]
        lines.append(f"mean absolute change of updated ratings {result['mean_abs_change']:.3f}"
                     + (f" (95% CI {ci[0]:.3f}–{ci[1]:.3f})" if ci else "")
                     + f"; {result['direction']['up']} up, {result['direction']['down']} down")
    lines.append(frame.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    if args.out:
        lines.append(f"report: {write_report(args.out, image_update=result, title='With-image rating pass')}")
    return result, "\n".join(lines)
