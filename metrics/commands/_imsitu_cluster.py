"""``python -m metrics imsitu-cluster``: two-step verb-sense clustering of <image, verb> node
embeddings (Algorithm 1, App. G, as the authors' released code runs it) with quality (Table 1)
and ambiguity statistics (Table 2)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from metrics.core._jsonio import write_text_atomic
from metrics.core._options import comma_list, input_file, integer, number, output_dir, output_file, seed
from metrics.imsitu._cluster_quality import MAX_EXACT
from metrics.imsitu._cluster_report import result_summary, summary_text
from metrics.imsitu._cluster_steps import ALGORITHMS
from metrics.imsitu._nodes import read_nodes
from metrics.imsitu._sense_clusters import (
    N_INIT,
    RATIO_RULES,
    SEED,
    SMALL_VERBS,
    STEP1_KS,
    STEP2_POINTS,
    STEP2_RATIOS,
    two_step_clustering,
)

RELEASED_METHOD = {"kmeans": "kmeans", "hac": "agglomerative"}   # code/experiments.py l.56–57


def n_init(text: str):
    """K-Means ``n_init``: a whole number ≥ 1 or ``auto``."""
    return "auto" if text.strip() == "auto" else integer(1, 1000)(text)


n_init.__name__ = "n_init"


def add_arguments(parser) -> None:
    parser.add_argument("--embeddings", required=True, type=input_file, help=".npy matrix, one row per node")
    parser.add_argument("--nodes", required=True, type=input_file, help="CSV with columns image,verb naming each row")
    parser.add_argument("--algorithm", choices=ALGORITHMS, default="kmeans",
                        help="kmeans (unit rows) or hac (complete linkage, cosine); both steps")
    parser.add_argument("--seed", type=seed, default=SEED, help="K-Means random_state (released: 42)")
    parser.add_argument("--n-init", type=n_init, default=N_INIT, help="K-Means n_init, a number or auto (released: 10)")
    parser.add_argument("--ks", type=comma_list(integer(2, 10_000)), default=",".join(map(str, STEP1_KS)),
                        help="step-1 candidate k (default 2..16)")
    parser.add_argument("--ratios", type=comma_list(number(0, 100, low_open=True)), default=None,
                        help="step-2 ratios s, k = int(|V| × s) (default: np.arange(0.6, 1.7, 0.1), as released)")
    parser.add_argument("--ratio-rule", choices=RATIO_RULES, default="float",
                        help="float: int(|V| × s) in floating point (released); decimal: s as the exact decimal")
    parser.add_argument("--step2-points", choices=STEP2_POINTS, default="mean",
                        help="a step-1 cluster in step 2: mean of its embeddings (released) or of their unit vectors")
    parser.add_argument("--small-verbs", choices=SMALL_VERBS, default="one-cluster",
                        help="a verb with fewer than max(--ks) + 1 nodes, which the released code cannot "
                             "cluster: one step-1 cluster, or split with k up to n - 1")
    parser.add_argument("--max-exact", type=integer(10, 10_000_000), default=MAX_EXACT,
                        help="largest point set with an exact silhouette; beyond, a sample of this size")
    parser.add_argument("--n-jobs", type=integer(1, 256), default=1, help="processes for step 1 and the step-2 fits")
    parser.add_argument("--out", type=output_file, help="write the clusters JSON here (the --clusters input of imsitu)")
    parser.add_argument("--released-out", type=output_dir, metavar="DIR",
                        help="also write the released code's files here: NAME_step1_METHOD_cosine.csv, "
                             "NAME_step2_METHOD_cosine.csv, results_NAME_METHOD.json")
    parser.add_argument("--released-name", default=None,
                        help="NAME in the released file names (default: the --nodes file's stem)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def released_paths(folder, name: str, algorithm: str) -> dict[str, Path]:
    """The released code's file names (``code/clustering.py`` l.21, 104; the notebook's results)."""
    method = RELEASED_METHOD[algorithm]
    folder = Path(folder)
    return {"step1": folder / f"{name}_step1_{method}_cosine.csv",
            "step2": folder / f"{name}_step2_{method}_cosine.csv",
            "results": folder / f"results_{name}_{method}.json"}


def run(args):
    from metrics.core._errors import InputError

    name = args.released_name if args.released_name is not None else Path(args.nodes).stem
    if args.released_out and (not name.strip() or any(c in name for c in "/\\\0")):
        raise InputError(f"--released-name {name!r}: must be a non-empty file name part without slashes")
    nodes = read_nodes(args.embeddings, args.nodes)
    progress = None if args.quiet else (lambda m: print(f"imsitu-cluster: {m}", file=sys.stderr, flush=True))
    result = two_step_clustering(nodes, algorithm=args.algorithm, seed=args.seed, n_init=args.n_init,
                                 ks=args.ks, ratios=args.ratios or STEP2_RATIOS, ratio_rule=args.ratio_rule,
                                 step2_points=args.step2_points, small_verbs=args.small_verbs,
                                 max_exact=args.max_exact, n_jobs=args.n_jobs, progress=progress)
    summary = result_summary(result)
    meta = {**result.settings, "embeddings": str(args.embeddings), "nodes": str(args.nodes),
            "k": summary["step2"]["k"], "ratio": summary["step2"]["ratio"],
            "silhouette": summary["step2"]["silhouette"]}
    text = summary_text(summary)
    if args.out:
        write_text_atomic(args.out, json.dumps(result.clusters_json(meta), indent=1) + "\n")
        text += f"\nclusters: {args.out}"
    if args.released_out:
        paths = released_paths(args.released_out, name, args.algorithm)
        for key, content in result.released_files(nodes).items():
            write_text_atomic(paths[key], content)
        summary["released_files"] = {key: str(path) for key, path in paths.items()}
        text += "\nreleased files: " + ", ".join(str(p) for p in paths.values())
    summary["meta"] = meta
    return summary, text
