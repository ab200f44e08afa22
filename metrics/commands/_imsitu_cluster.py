"""``python -m metrics imsitu-cluster``: two-step verb-sense clustering of <image, verb> node
embeddings (Algorithm 1, App. G) with quality (Table 1) and ambiguity statistics (Table 2)."""

from __future__ import annotations

import json
import sys

from metrics.core._jsonio import write_text_atomic
from metrics.core._options import comma_list, input_file, integer, number, output_file, seed
from metrics.imsitu._sense_clusters import (
    ALGORITHMS,
    MAX_EXACT,
    STEP1_KS,
    STEP2_RATIOS,
    read_nodes,
    result_summary,
    summary_text,
    two_step_clustering,
)


def add_arguments(parser) -> None:
    parser.add_argument("--embeddings", required=True, type=input_file, help=".npy matrix, one row per node")
    parser.add_argument("--nodes", required=True, type=input_file, help="CSV with columns image,verb naming each row")
    parser.add_argument("--algorithm", choices=ALGORITHMS, default="kmeans",
                        help="kmeans (unit vectors) or hac (complete linkage, cosine); both steps")
    parser.add_argument("--seed", type=seed, default=0)
    parser.add_argument("--ks", type=comma_list(integer(2, 10_000)), default=",".join(map(str, STEP1_KS)), help="step-1 candidate k (default 2..16)")
    parser.add_argument("--ratios", type=comma_list(number(0, 100, low_open=True)), default=",".join(map(str, STEP2_RATIOS)),
                        help="step-2 ratios r, k = int(|V| × r) (default 0.6..1.6)")
    parser.add_argument("--max-exact", type=integer(10, 10_000_000), default=MAX_EXACT,
                        help="largest point set with an exact silhouette; beyond, a sample of this size")
    parser.add_argument("--n-jobs", type=integer(1, 256), default=1, help="processes for step 1 and the step-2 fits")
    parser.add_argument("--out", type=output_file, help="write the clusters JSON here (the --clusters input of imsitu)")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")


def run(args):
    nodes = read_nodes(args.embeddings, args.nodes)
    progress = None if args.quiet else (lambda m: print(f"imsitu-cluster: {m}", file=sys.stderr, flush=True))
    result = two_step_clustering(nodes, algorithm=args.algorithm, seed=args.seed,
                                 ks=args.ks, ratios=args.ratios,
                                 max_exact=args.max_exact, n_jobs=args.n_jobs, progress=progress)
    summary = result_summary(result)
    meta = {"algorithm": args.algorithm, "seed": args.seed, "embeddings": str(args.embeddings),
            "nodes": str(args.nodes), "k": summary["step2"]["k"], "ratio": summary["step2"]["ratio"],
            "silhouette": summary["step2"]["silhouette"]}
    text = summary_text(summary)
    if args.out:
        write_text_atomic(args.out, json.dumps(result.clusters_json(meta), indent=1) + "\n")
        text += f"\nclusters: {args.out}"
    summary["meta"] = meta
    return summary, text
