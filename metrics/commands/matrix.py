"""``python -m metrics matrix``: inspect similarity matrices and build the WordNet baseline."""

from __future__ import annotations

import json
import time
from pathlib import Path

from ..baseline import DATA, build
from ..errors import InputError
from ..similarity import SimilarityMatrix


def add_arguments(parser) -> None:
    sub = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    info = sub.add_parser("info", help="size, coverage and provenance of a matrix file")
    info.add_argument("file", help=".csv or .npz matrix")
    info.add_argument("--pairs", help="CSV with columns a,b: report how many of these pairs are missing")
    base = sub.add_parser("baseline", help="build the WordNet baseline verb and object matrices")
    base.add_argument("--out-dir", default=str(DATA), help="output folder (default: metrics/data)")
    base.add_argument("--pos", choices=["verb", "object", "both"], default="both")
    base.add_argument("--format", choices=["npz", "csv"], default="npz")
    for p in (info, base):
        p.add_argument("--json", metavar="PATH", help="also write the result as JSON to PATH")
    from . import matrix_llm  # build-llm: SHOE matrices rated by LLMs (issue 10)
    matrix_llm.add_parser(sub)


def run(args):
    if args.action == "build-llm":
        from . import matrix_llm
        return matrix_llm.run(args)
    return _info(args) if args.action == "info" else _baseline(args)


def _info(args):
    matrix = SimilarityMatrix.load(args.file)
    result = {"file": args.file, "n_labels": matrix.n_labels, "n_pairs": matrix.n_pairs,
              "storage": "dense" if matrix.is_dense else "sparse", "sparsity": matrix.sparsity,
              "meta": matrix.meta}
    lines = [f"{args.file}: {matrix.n_labels} labels, {matrix.n_pairs} non-zero pairs "
             f"({result['storage']}, sparsity {matrix.sparsity:.4%})"]
    if args.pairs:
        import pandas as pd
        path = Path(args.pairs)
        if not path.exists():
            raise InputError(f"{path}: no such file")
        try:
            pairs = pd.read_csv(path, dtype=str, keep_default_na=False)
        except UnicodeDecodeError as exc:
            raise InputError(f"{path}: not UTF-8 text (byte {exc.start}: {exc.reason})") from None
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            raise InputError(f"{path}: not a readable CSV ({str(exc).splitlines()[0]})") from None
        if not {"a", "b"} <= set(pairs.columns):
            raise InputError(f"{path}: needs columns a,b")
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
    out_dir = Path(args.out_dir)
    result, lines = {}, []
    for pos, name in (("v", "verb"), ("n", "object")):
        if args.pos not in (name, "both"):
            continue
        start = time.perf_counter()
        matrix = build(pos)
        path = matrix.save(out_dir / f"baseline_{name}.{args.format}")
        seconds = time.perf_counter() - start
        result[name] = {"file": str(path), "seconds": seconds, "n_labels": matrix.n_labels,
                        "n_pairs": matrix.n_pairs, "sparsity": matrix.sparsity,
                        "bytes": path.stat().st_size}
        lines.append(f"{name:6}: {matrix.n_labels} labels, {matrix.n_pairs} pairs, "
                     f"sparsity {matrix.sparsity:.4%}, {path.stat().st_size / 1e6:.2f} MB, "
                     f"built in {seconds:.1f} s -> {path}")
    return result, "\n".join(lines)
