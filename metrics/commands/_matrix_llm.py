"""``python -m metrics matrix build-llm``: build SHOE similarity matrices with LLM raters.

SHOE §4.1: candidate pairs (dataset synsets against their WordNet neighbourhood) are rated 0–4
by several LLMs from the synsets' lemma names and glosses; the first model rates every pair and
the others only those it scored above zero (plus a control sample of zero-rated pairs, §4.2);
the matrix is the per-pair mean. See :mod:`metrics.llm` for the pieces and docs/matrices.md
"Building similarity matrices with LLM raters" for configuration and costs.
"""

from __future__ import annotations

import json
import re
import sys
from datetime import date
from pathlib import Path

from metrics import datasets
from metrics.core._errors import InputError
from metrics.core._jsonio import StagedFolder
from metrics.core._options import given_once, input_file, integer, number, output_dir, output_file, seed

DEFAULT_OUT = "exports/llm_matrices"


def add_parser(sub) -> None:
    p = sub.add_parser(
        "build-llm", help="build verb/object matrices by asking LLMs (OpenAI-compatible endpoints)",
        description="Rate candidate synset pairs 0-4 with LLMs (SHOE §4.1), resumably, and write the "
                    "mean and per-model matrices, inter-model agreement and an HTML report.")
    g = p.add_argument_group("raters")
    g.add_argument("--config", type=input_file, help="TOML or JSON file with [[endpoints]], [[models]] and [plan]")
    g.add_argument("--base-url", help="OpenAI-compatible base URL without a config file "
                                      "(default: $HOI_LLM_BASE_URL); key from $OPENAI_API_KEY")
    g.add_argument("--model", action="append", metavar="NAME",
                   help="model name (repeatable, first = filter model); with --config: choose and order models")
    g = p.add_argument_group("pairs")
    g.add_argument("--pos", choices=["verb", "object", "both"], default="both")
    g.add_argument("--dataset", choices=datasets.names(), default=datasets.DEFAULT,
                   help=f"whose verb and object synsets seed the candidates (default {datasets.DEFAULT})")
    g.add_argument("--verbs", type=input_file, help="dataset verbs CSV (label,synset) instead of the --dataset's")
    g.add_argument("--objects", type=input_file, help="dataset objects CSV (label,synset) instead of the --dataset's")
    g.add_argument("--pairs", type=input_file, help="CSV a,b of synset pairs to rate instead of the candidates (needs --pos verb|object)")
    g.add_argument("--limit", type=integer(1, 10_000_000), help="rate only the first N pairs of each part of speech (a pilot)")
    g = p.add_argument_group("plan (overrides the config's [plan])")
    g.add_argument("--no-filter", dest="filter", action="store_false", default=None,
                   help="every model rates every pair")
    g.add_argument("--filter-threshold", type=number(0, 4), help="others rate pairs the first model scored above this (0)")
    g.add_argument("--control-size", type=integer(0, 1_000_000), help="zero-rated pairs re-rated as a control (1000)")
    g.add_argument("--control-seed", type=seed)
    g = p.add_argument_group("requests (override every endpoint)")
    g.add_argument("--concurrency", type=integer(1, 256))
    g.add_argument("--batch-size", type=integer(1, 1000), help="pairs per request")
    g.add_argument("--timeout", type=number(0, 3600, low_open=True))
    g.add_argument("--retries", type=integer(0, 100))
    g.add_argument("--backoff", type=number(0, 600))
    g = p.add_argument_group("run")
    g.add_argument("--out", type=output_dir, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})")
    g.add_argument("--cache", type=output_file, help="SQLite answer cache (default OUT/llm_cache.sqlite)")
    g.add_argument("--format", choices=["npz", "csv"], default="npz")
    g.add_argument("--dry-run", action="store_true", help="print requests, tokens, time and cost per model; send nothing")
    g.add_argument("--retry-missing", action="store_true", help="ask again for pairs recorded as missing")
    g.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    g = p.add_argument_group("human study (ablation, supplementary Table 1)")
    g.add_argument("--ratings", type=input_file, help="ratings.csv of an HOI-similarity study")
    g.add_argument("--items", type=input_file, help="items.csv of that study")
    g.add_argument("--verb-sim", type=input_file, help="verb matrix for the ablation when verbs are not built here")
    g.add_argument("--object-sim", type=input_file, help="object matrix for the ablation when objects are not built here")
    g.add_argument("--w", type=number(0, 1), default=0.5, help="verb weight of the HOI similarity (0.5)")
    p.add_argument("--json", metavar="PATH", type=output_file, help="also write the result as JSON to PATH")


def _safe(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", name).strip("-") or "model"


def _seeds(path: str | None, pos: str, dataset: str | None = None) -> tuple[list[str], str]:
    """The synsets seeding the candidate pairs: a CSV's, else ``dataset``'s (HICO-DET by
    default), and the name recorded as the matrix's dataset."""
    if path is None:
        vocab = datasets.load_vocabulary(dataset)
        table = vocab.verbs if pos == "v" else vocab.objects
        return [s for s in table["synset"] if s], vocab.name
    from metrics.core._inputs import line_of, read_csv
    from metrics.vocab import _wordnet as wordnet

    p = Path(path)
    table = read_csv(p, required=("synset",))
    seeds = [s.strip() for s in table["synset"] if s.strip()]
    for k, s in enumerate(table["synset"].str.strip()):
        if s and not wordnet.is_synset_name(s):
            raise InputError(f"{p}: line {line_of(p, k)}: {s!r} is not a WordNet synset name")
    if not seeds:
        raise InputError(f"{p}: no synsets")
    return seeds, p.stem


def _pair_sets(args):
    from metrics.llm._pairs import candidate_pairs, pairs_from_file
    poses = ["v", "n"] if args.pos == "both" else ["v" if args.pos == "verb" else "n"]
    if args.pairs and len(poses) > 1:
        raise InputError("--pairs needs --pos verb or --pos object")
    sets = {}
    for pos in poses:
        if args.pairs:
            ps, dataset = pairs_from_file(args.pairs, pos), Path(args.pairs).stem
        else:
            seeds, dataset = _seeds(args.verbs if pos == "v" else args.objects, pos,
                                    getattr(args, "dataset", None))
            ps = candidate_pairs(seeds, pos, source="wordnet neighbourhood (metrics.vocab.baseline candidates)")
        if args.limit is not None:
            if args.limit < 1:
                raise InputError("--limit must be >= 1")
            ps.pairs = ps.pairs[:args.limit]
        sets["verb" if pos == "v" else "object"] = (ps, dataset)
    return sets


def run(args):
    from metrics.llm import _config as llm_config
    from metrics.llm._cache import AnswerCache

    if (args.ratings is None) != (args.items is None):
        raise InputError("give both --ratings and --items for the ablation, or neither")
    given_once(args.model, "--model")
    config = llm_config.load(args.config, base_url=args.base_url, models=args.model, overrides={
        "filter": args.filter, "filter_threshold": args.filter_threshold, "control_size": args.control_size,
        "control_seed": args.control_seed, "concurrency": args.concurrency, "batch_size": args.batch_size,
        "timeout": args.timeout, "retries": args.retries, "backoff": args.backoff})
    out = Path(args.out)
    sets = _pair_sets(args)
    study = _study_inputs(args) if args.ratings else None  # read before any request is sent
    cache_path = Path(args.cache) if args.cache else out / "llm_cache.sqlite"
    if cache_path.is_dir():
        raise InputError(f"--cache {cache_path}: is a folder; give the path of a file")
    if args.dry_run:  # sends and writes nothing: a cache not made yet stays unmade
        cache = AnswerCache(cache_path if cache_path.exists() else ":memory:")
    else:
        cache = AnswerCache(cache_path)
    try:
        if args.dry_run:
            return _dry_run(config, cache, sets, args)
        return _build(config, cache, sets, args, out, study)
    finally:
        cache.close()


def _dry_run(config, cache, sets, args):
    from metrics.llm._plan import estimate
    from metrics.llm._runner import duration_text
    result = {"dry_run": True, "models": [m.name for m in config.models], "plan": config.plan.__dict__.copy()}
    lines = [f"dry run: nothing is sent. Models in plan order (first filters): {', '.join(result['models'])}"]
    total = {"requests": 0, "prompt_tokens": 0, "completion_tokens": 0, "seconds": 0.0, "cost_usd": 0.0}
    for pos, (ps, _) in sets.items():
        est = estimate(config, cache, ps, args.retry_missing)
        result[pos] = est
        lines.append(f"\n{pos}s: {est['n_pairs']} candidate pairs ({est['first_model_rated']} already rated by "
                     f"{config.models[0].name})")
        lines.append(f"{'model':24} {'pairs':>9} {'requests':>9} {'in tokens':>11} {'out tokens':>10} "
                     f"{'time':>9} {'USD':>8}")
        for name, e in est["models"].items():
            flag = "" if e["exact"] else "  (estimated: filter not yet run)"
            lines.append(f"{name:24} {e['pairs']:9d} {e['requests']:9d} {e['prompt_tokens']:11d} "
                         f"{e['completion_tokens']:10d} {duration_text(e['seconds']):>9} {e['cost_usd']:8.2f}{flag}")
        for k in total:
            total[k] += est[k]
    result["total"] = total
    lines.append(f"\ntotal: {total['requests']} requests, {total['prompt_tokens']} prompt + "
                 f"{total['completion_tokens']} completion tokens, ≈{duration_text(total['seconds'])} wall time, "
                 f"≈{total['cost_usd']:.2f} USD (prices from the config)")
    return result, "\n".join(lines)


def _rate_sets(config, cache, runner, sets, result) -> dict:
    """Rate each part of speech's pairs; its summary goes into ``result[pos]``. Returns the ratings."""
    from metrics.llm import _aggregate as aggregate
    from metrics.llm._plan import rate_pairs

    ratings = {}
    for pos, (ps, dataset) in sets.items():
        before = dict(runner.sent)
        r = rate_pairs(config, cache, runner, ps)
        ratings[pos] = r
        info = aggregate.summary(r)
        info["requests_sent"] = {m: runner.sent.get(m, 0) - before.get(m, 0) for m in r.models}
        info["pairwise"] = aggregate.pairwise(r)
        info["control"] = aggregate.control_disagreement(r) if r.filtered else {}
        info["pair_source"] = ps.source
        info["dataset"] = dataset
        result[pos] = info
    return ratings


def _matrix_meta(config, args, result, pos, ps, dataset) -> dict:
    """The provenance saved with a part of speech's mean matrix."""
    from metrics.llm import _prompt as prompt

    info = result[pos]
    meta = {"source": "llm", "kind": "LLM-rated similarity matrix (SHOE §4.1)", "dataset": dataset,
            "pos": "verb" if pos == "verb" else "noun", "method": "per-pair mean of the models' 0-4 "
            "ratings; pairs filtered by the first model keep its score",
            "models": config.public()["models"], "plan": config.plan.__dict__.copy(),
            "prompt_version": result["prompt"]["versions"], "prompt_sha": prompt.PROMPT_SHA,
            "endpoints": config.public()["endpoints"], "pair_source": ps.source,
            "n_pairs_rated": info["n_pairs"], "n_missing": info["n_missing"], "asked": info["asked"],
            "missing": info["missing"], "pearson": info["pairwise"]["pearson"],
            "agreement": info["pairwise"]["agreement"], "control_disagreement": info["control"],
            "wordnet": "3.0", "date": date.today().isoformat(), "study": args.ratings}
    if "ablation" in result:
        meta["ablation"] = result["ablation"]
    return meta


def _save_pos(folder, out, pos, r, meta, fmt) -> tuple[Path, dict]:
    """Save the mean matrix, one matrix per model and the ratings table; returns the mean's path
    and the files written (paths under ``out``)."""
    from metrics.llm import _aggregate as aggregate

    matrix = aggregate.to_matrix(r, aggregate.mean_scores(r), meta)
    path = out / f"llm_{pos}.{fmt}"
    matrix.save(folder / path.name)
    files = {"mean": str(path)}
    for m in r.models:
        per = aggregate.to_matrix(r, aggregate.filled(r)[m],
                                  dict(meta, method=f"ratings of {m} alone", models=[m], rater=m))
        name = f"llm_{pos}_{_safe(m)}.{fmt}"
        per.save(folder / name)
        files[m] = str(out / name)
    table = r.table.copy()
    table["mean"] = aggregate.mean_scores(r)
    table.reset_index().to_csv(folder / f"llm_{pos}_ratings.csv", index=False, float_format="%.6g")
    files["ratings"] = str(out / f"llm_{pos}_ratings.csv")
    return path, files


def _pos_lines(pos, info, r, path) -> list[str]:
    """The printed summary of one part of speech: counts, then one row per model and Pearson's r."""
    lines = [f"{pos}s: {info['n_pairs']} pairs, {info['n_kept']} asked of every model, "
             f"{info['n_filtered']} filtered ({info['n_control']} control), "
             f"{info['n_nonzero']} non-zero, {info['n_missing']} missing -> {path}"]
    lines.append(f"  {'model':24} {'asked':>8} {'missing':>8} {'sent now':>9} {'control disagree':>17}")
    for m in r.models:
        ctrl = info["control"].get(m)
        ctext = f"{ctrl['rate']:.2%} of {ctrl['n_answered']}" if ctrl else "-"
        lines.append(f"  {m:24} {info['asked'][m]:8d} {info['missing'][m]:8d} "
                     f"{info['requests_sent'][m]:9d} {ctext:>17}")
    for name, rho in info["pairwise"]["pearson"].items():
        lines.append(f"  pearson {name.replace('|', ' ~ ')}: {rho:.3f} (n = {info['pairwise']['n'][name]})")
    return lines


def _ablation_lines(abl: dict) -> list[str]:
    """The printed ablation: mean agreement by number of models, and the best subset."""
    lines = [f"ablation against {abl['n_items']} rated items (agreement, Eq. 13):"]
    for size, stat in abl["by_size"].items():
        lines.append(f"  {size} model(s): mean {stat['mean']:.4f} ± {stat['sd']:.4f} over {stat['n_subsets']} subsets")
    if abl["best"]:
        lines.append(f"  best: {' + '.join(abl['best']['models'])} ({abl['best']['agreement']:.4f})")
    return lines


def _build(config, cache, sets, args, out, study):
    from metrics.llm import _prompt as prompt
    from metrics.llm import _report as llm_report
    from metrics.llm._runner import Runner

    runner = Runner(config, cache, retry_missing=args.retry_missing,
                    progress_stream=False if args.quiet else sys.stderr)
    result = {"models": [m.name for m in config.models],
              "prompt": {"version": prompt.prompt_version(1), "sha": prompt.PROMPT_SHA,
                         "versions": {m.name: runner.version(m) for m in config.models}},
              "config": config.public(), "cache": str(cache.path), "files": {}}
    ratings = _rate_sets(config, cache, runner, sets, result)
    if study is not None:
        result["ablation"] = _ablation(ratings, study)
    lines = []
    with StagedFolder(out) as folder:  # every output lands together (the cache stays beside them)
        for pos, r in ratings.items():
            ps, dataset = sets[pos]
            meta = _matrix_meta(config, args, result, pos, ps, dataset)
            path, result["files"][pos] = _save_pos(folder, out, pos, r, meta, args.format)
            lines += _pos_lines(pos, result[pos], r, path)
        if "ablation" in result:
            lines += _ablation_lines(result["ablation"])
        report = out / llm_report.write(folder, ratings, result).name
        result["files"]["report"] = str(report)
        (folder / "llm_summary.json").write_text(json.dumps(result, indent=2, default=str) + "\n")
    lines.append(f"report: {report}")
    return result, "\n".join(lines)


def _study_inputs(args):
    """The human study of the ablation, read and checked before anything is asked."""
    from metrics.study._agreement import read_ratings
    from metrics.study._study_items import check_rated_items, item_synsets, join_ratings, read_items
    from metrics.vocab._similarity import SimilarityMatrix

    items = read_items(args.items)
    study = read_ratings(args.ratings)
    check_rated_items(items, study, args.items, args.ratings)
    rated = join_ratings(items, study)
    matrices = {pos: SimilarityMatrix.load(given) for pos, given in
                (("verb", args.verb_sim), ("object", args.object_sim)) if given}
    return rated, item_synsets(rated), matrices, args.w


def _ablation(ratings, study):
    from metrics.llm._aggregate import ablation

    rated, synsets, matrices, w = study
    rated = rated.copy()
    for pos, matrix in matrices.items():
        if pos not in ratings:
            rated[f"{pos}_sim"] = matrix.sims(synsets[f"pred_{pos}"].to_numpy(), synsets[f"gt_{pos}"].to_numpy())
    return ablation(ratings, rated, synsets, w=w)
