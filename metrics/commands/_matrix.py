"""``python -m metrics matrix``: inspect similarity matrices and build the WordNet baseline."""

from __future__ import annotations

import json
import time
from pathlib import Path

from metrics import datasets
from metrics.core._errors import InputError
from metrics.core._options import input_file, output_dir, output_file
from metrics.vocab._baseline import build
from metrics.vocab._similarity import SimilarityMatrix


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    info = sub.add_parser("info", help="size, coverage and provenance of a matrix file")
    info.add_argument("file", type=input_file, help=".csv or .npz matrix")
    info.add_argument("--pairs", type=input_file, help="CSV with columns a,b: report how many of these pairs are missing")
    base = sub.add_parser("baseline", help="build the WordNet baseline verb and object matrices")
    base.add_argument("--dataset", choices=datasets.names(), default=datasets.DEFAULT,
                      help=f"whose vocabulary (default {datasets.DEFAULT})")
    base.add_argument("--out-dir", type=output_dir, help="output folder (default: the dataset's shipped baseline "
                                                          "files, e.g. metrics/datasets/hico_det/data)")
    base.add_argument("--pos", choices=["verb", "object", "both"], default="both")
    base.add_argument("--format", choices=["npz", "csv"], default="npz")
    pool = sub.add_parser("import-shoe-pool", help="verb and object matrices from the similarity levels of "
                                                   "SHOE's candidate pool (partial: those pairs only)")
    pool.add_argument("pool", type=input_file, help="CSV in SHOE's layout (image_id, gt_verb, ..., category, similarity_level)")
    pool.add_argument("--out", required=True, metavar="DIR", type=output_dir, help="output folder (shoe_verb.npz, shoe_object.npz)")
    pool.add_argument("--format", choices=["npz", "csv"], default="npz")
    compare = sub.add_parser("compare", help="agreement of two matrices on their shared pairs "
                                             "(Eq. 13, Spearman, confusion of levels)")
    compare.add_argument("a", type=input_file, help="first matrix (.csv/.npz)")
    compare.add_argument("b", type=input_file, help="second matrix (.csv/.npz)")
    for p in (info, base, pool, compare):
        p.add_argument("--json", metavar="PATH", type=output_file, help="also write the result as JSON to PATH")
    from metrics.commands import _matrix_llm as matrix_llm  # build-llm: SHOE matrices rated by LLMs
    matrix_llm.add_parser(sub)


def run(args):
    if args.action == "build-llm":
        from metrics.commands import _matrix_llm as matrix_llm
        return matrix_llm.run(args)
    return {"info": _info, "baseline": _baseline, "import-shoe-pool": _import_pool,
            "compare": _compare}[args.action](args)


def _import_pool(args):
    from metrics.study._shoe_pool import pool_matrices, read_shoe_csv
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise InputError(f"--out {out}: exists and is not a folder")
    pool = read_shoe_csv(args.pool)
    matrices = pool_matrices(pool, source=f"SHOE candidate pool {Path(args.pool).name}")
    result, lines = {}, [f"{args.pool}: {len(pool)} candidate pairs"]
    for name, matrix in matrices.items():
        path = matrix.save(out / f"shoe_{name}.{args.format}")
        n_rated = len(matrix.meta["rated_pairs"])
        result[name] = {"file": str(path), "n_rated_pairs": n_rated, "n_labels": matrix.n_labels}
        lines.append(f"{name:6}: {n_rated} rated pairs over {matrix.n_labels} synsets -> {path}")
    return result, "\n".join(lines)


def _compare(args):
    from metrics.study._shoe_pool import compare_lines
    return compare_lines(SimilarityMatrix.load(args.a), SimilarityMatrix.load(args.b))


def _info(args):
    matrix = SimilarityMatrix.load(args.file)
    result = {"file": args.file, "n_labels": matrix.n_labels, "n_pairs": matrix.n_pairs,
              "storage": "dense" if matrix.is_dense else "sparse", "sparsity": matrix.sparsity,
              "meta": matrix.meta}
    lines = [f"{args.file}: {matrix.n_labels} labels, {matrix.n_pairs} non-zero pairs "
             f"({result['storage']}, sparsity {matrix.sparsity:.4%})"]
    if args.pairs:
        from metrics.core._inputs import read_csv
        path = Path(args.pairs)
        pairs = read_csv(path, required=("a", "b"))
        cov = matrix.coverage(pairs["a"], pairs["b"])
        result["coverage"] = {"n_pairs": cov.n_pairs, "n_found": cov.n_found,
                              "n_identical": cov.n_identical, "n_missing": cov.n_missing,
                              "missing_rate": cov.missing_rate, "unknown_labels": list(cov.unknown_labels)}
        lines.append(f"coverage of {path}: {cov.n_found} found, {cov.n_identical} identical, "
                     f"{cov.n_missing} missing ({cov.missing_rate:.2%}), "
                     f"{len(cov.unknown_labels)} unknown labels")
    lines.append("provenance: " + json.dumps(matrix.meta, indent=None, sort_keys=True))
    return result, "\n".join(lines)


def _baseline(args):
    dataset = datasets.get(args.dataset)
    result, lines = {}, []
    for pos, name in (("v", "verb"), ("n", "object")):
        if args.pos not in (name, "both"):
            continue
        start = time.perf_counter()
        matrix = build(pos, dataset.vocabulary())
        default = dataset.baseline_path(pos)
        out_dir = Path(args.out_dir) if args.out_dir else default.parent
        path = matrix.save(out_dir / (f"{default.stem}.{args.format}" if not args.out_dir
                                      else f"baseline_{name}.{args.format}"))
        seconds = time.perf_counter() - start
        result[name] = {"file": str(path), "seconds": seconds, "n_labels": matrix.n_labels,
                        "n_pairs": matrix.n_pairs, "sparsity": matrix.sparsity,
                        "bytes": path.stat().st_size}
        lines.append(f"{name:6}: {matrix.n_labels} labels, {matrix.n_pairs} pairs, "
                     f"sparsity {matrix.sparsity:.4%}, {path.stat().st_size / 1e6:.2f} MB, "
                     f"built in {seconds:.1f} s -> {path}")
    return result, "\n".join(lines)
