"""``python -m metrics alignment``: agreement of metric columns with the mean human rating (Table 1)."""

from __future__ import annotations

from metrics.commands._study import add_study_arguments, load_rated_items
from metrics.core._errors import naming
from metrics.core._options import given_once, integer, seed
from metrics.study._alignment import alignment_table

FLAGS = {"n_resamples": "--permutations"}   # parameter -> option


def add_arguments(parser) -> None:
    add_study_arguments(parser)
    parser.add_argument("--metric", action="append", metavar="COLUMN",
                        help="metric column of items.csv (repeatable; default: every numeric column)")
    parser.add_argument("--no-baselines", action="store_true", help="skip the SHOE / WordNet baselines")
    parser.add_argument("--permutations", type=integer(1, 1_000_000), default=10_000)
    parser.add_argument("--seed", type=seed, default=0)


def run(args):
    given_once(args.metric, "--metric")
    _, rated = load_rated_items(args, need_similarities=bool(args.verb_sim and args.object_sim))
    with naming(args.items):
        result = alignment_table(rated, metrics=args.metric, baselines=not args.no_baselines,
                                 n_resamples=args.permutations, seed=args.seed)
    lines = [f"{len(rated)} rated items", f"{'metric':24} {'agreement':>9} {'spearman':>9} {'95% CI':>17} {'p':>8}"]
    for name in result["ranking"]:
        m = result["metrics"][name]
        lo, hi = m["spearman_ci"]
        lines.append(f"{name:24} {m['agreement']:9.4f} {m['spearman']:9.4f} [{lo:6.3f}, {hi:6.3f}] {m['p_permutation']:8.4f}")
    for cat, per in result.get("by_category", {}).items():
        best = max(per, key=lambda k: per[k]["agreement"] if per[k]["agreement"] == per[k]["agreement"] else -1)
        lines.append(f"category {cat}: best {best} (agreement {per[best]['agreement']:.4f}, n = {per[best]['n']})")
    return result, "\n".join(lines)
