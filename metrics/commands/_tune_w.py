"""``python -m metrics tune-w``: per-category verb weight w minimizing MAE (SHOE §4.5, Eq. 14)."""

from __future__ import annotations

from metrics.api import tune_w
from metrics.commands._study import add_study_arguments
from metrics.core._options import number, output_dir
from metrics.study._options import MAX_STEP, MIN_STEP
from metrics.study._report import write_report


def add_arguments(parser) -> None:
    add_study_arguments(parser)
    parser.add_argument("--step", type=number(MIN_STEP, MAX_STEP), default=0.001, help="grid step of the MAE curve")
    parser.add_argument("--out", type=output_dir, help="write report.html, tables and the MAE-vs-w plot here")


def run(args):
    tuning = tune_w(args.ratings, args.items, verb_sim=args.verb_sim, object_sim=args.object_sim, step=args.step)
    result = tuning.to_dict()
    lines = [f"{tuning.n_items} rated items", f"{'category':>8} {'w':>7} {'MAE':>7} {'n':>6}"]
    for cat, w in result["w_by_category"].items():
        lines.append(f"{cat:>8} {w:7.3f} {result['mae_by_category'][cat]:7.4f} {result['n_by_category'][cat]:6d}")
    lines.append(f"{'overall':>8} {result['w_overall']:7.3f} {result['mae_overall']:7.4f} {tuning.n_items:6d}")
    lines.append(f"agreement (Eq. 13): category-tuned w {result['agreement_tuned']:.4f}, "
                 f"w = 0.5 {result['agreement_w05']:.4f}")
    if args.out:
        lines.append(f"report: {write_report(args.out, tuning=result, title='w tuning')}")
    return result, "\n".join(lines)
