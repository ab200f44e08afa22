"""``python -m metrics diagnose``: Diag-HOI error diagnosis, oracle ΔmAP, pair localization and
interaction classification of one or several models (see :mod:`metrics.diagnosis._core`)."""

from __future__ import annotations

import importlib.util
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from metrics import datasets
from metrics.api import diagnose
from metrics.core._errors import InputError
from metrics.core._jsonio import write_text_atomic
from metrics.core._options import input_file, number, output_dir, output_file
from metrics.core._validation import ParameterError
from metrics.detection._detections_fast import read_detections


def add_arguments(parser) -> None:
    parser.add_argument("--gt", required=True, type=input_file, help="ground truth: JSON Lines or QPIC/CDN HICO-DET JSON")
    parser.add_argument("--pred", required=True, nargs="+", type=input_file, metavar="PRED",
                        help="predictions with a score per HOI; several files compare models side by side")
    parser.add_argument("--name", nargs="+", metavar="NAME",
                        help="a name per prediction file (default: the file names)")
    parser.add_argument("--pairs", nargs="+", type=input_file, metavar="PAIRS",
                        help="first-stage pair detections per model for §4.1 (same formats; verbs ignored; "
                             "default: the distinct pairs of each prediction file)")
    parser.add_argument("--dataset", choices=datasets.names(), default=datasets.DEFAULT,
                        help=f"whose vocabulary and baseline matrices resolve the labels (default {datasets.DEFAULT}; "
                             "vcoco: no no_interaction class, §2.5)")
    parser.add_argument(datasets.ANY_LABELS, action="store_true",
                        help="score even when most ground-truth labels are outside the dataset's vocabulary "
                             "(refused otherwise, naming the dataset whose labels they are)")
    parser.add_argument("--iou", type=number(0, 1, low_open=True), default=0.5, help="IoU threshold θ for both boxes (default 0.5)")
    parser.add_argument("--keep-no-interaction", action="store_true",
                        help="keep no_interaction ground truths and predictions and the images whose ground "
                             "truth is only no_interaction (all removed by default, §2.4)")
    parser.add_argument("--map-protocol", choices=("official", "all-point"), default="official",
                        help="mAP conventions, as in score: 'official' = the HICO-DET evaluation (11-point AP, "
                             "+1-pixel IoU, VOC best-overlap assignment, mean over the HICO-DET class set; "
                             "default), 'all-point' = all-point AP, continuous IoU, best unmatched ground "
                             "truth, mean over the classes with ground truth")
    parser.add_argument("--out", metavar="DIR", type=output_dir,
                        help="write report.html, diagnosis.json, CSV tables, errors_<model>.csv and "
                             "delta_map.png into DIR")
    parser.add_argument("--errors", metavar="CSV", type=output_file,
                        help="write the first model's per-prediction categories (and missed GT) to CSV")


def _fmt(x) -> str:
    return "   n/a" if x is None else f"{100 * x:6.2f}"


def _names(args) -> list[str]:
    if args.name:
        if len(args.name) != len(args.pred):
            raise InputError(f"--name gives {len(args.name)} names for {len(args.pred)} prediction files")
        names = list(args.name)
    else:
        names = [Path(p).stem for p in args.pred]
        if len(set(names)) != len(names):
            names = [str(p) for p in args.pred]
    if len(set(names)) != len(names):
        raise InputError("model names must be distinct (use --name)")
    return names


def _read_inputs(args):
    """The ground truth, the first predictions and the error registry, read side by side.

    pyarrow parses the ground truth and the first predictions at once without the GIL while
    the diagnosis modules (pandas) are imported; the ground truth's error is reported first.
    """
    with ThreadPoolExecutor(max_workers=2) as pool:
        files = [pool.submit(read_detections, path) for path in (args.gt, args.pred[0])]
        from metrics.diagnosis._registry import ERROR_REGISTRY
        gt, first_pred = (f.result() for f in files)
    if not args.any_labels:
        datasets.check_labels(gt.verb, gt.object, args.dataset, source=str(args.gt))
    return gt, first_pred, ERROR_REGISTRY


def _diagnose_models(args, names, gt, first_pred):
    """Each model's diagnosis as a dict with its params, and the error tables to write."""
    results, errors = {}, {}
    for k, (name, path) in enumerate(zip(names, args.pred)):
        d = diagnose(gt, first_pred if k == 0 else path, iou=args.iou, keep_no_interaction=args.keep_no_interaction,
                     map_protocol=args.map_protocol, pairs=args.pairs[k] if args.pairs else None,
                     dataset=args.dataset)
        results[name] = r = d.to_dict()
        r["params"] = {"iou": args.iou, "keep_no_interaction": args.keep_no_interaction, "gt": str(args.gt),
                       "pred": str(path), "pairs": args.pairs[k] if args.pairs else None}
        if not datasets.get(args.dataset).is_default:   # the default dataset is not named
            r["params"]["dataset"] = args.dataset
        if args.out or (args.errors and k == 0):
            errors[name] = d.errors()
    return results, errors


def _combined_result(results: dict, names: list) -> dict:
    """The first model's result with its headline keys first, plus every model when there are several."""
    first = results[names[0]]
    result = {key: first[key] for key in ("map", "delta_map", "error_counts")}
    result.update({key: v for key, v in first.items() if key not in result})
    result["model"] = names[0]
    if len(names) > 1:
        result["models"] = results
    return result


def _write_outputs(args, names, results, errors) -> None:
    """The first model's error table (--errors) and the HTML report (--out)."""
    if args.errors:
        write_text_atomic(args.errors, errors[names[0]].to_csv(index=False))
    if args.out:
        from metrics.diagnosis._report import write_diagnosis_report
        write_diagnosis_report(args.out, results, errors)


def _summary_lines(args, names, results, oracles) -> list[str]:
    """The printed summary: one column per model."""
    first = results[names[0]]
    lines = []
    head = f"{'':22}" + "".join(f"{n[:14]:>15}" for n in names)
    c0 = first["counts"]
    lines.append(f"{c0['images']} images, {c0['gt']} ground-truth HOIs in {c0['classes']} classes"
                 + ("" if args.keep_no_interaction or args.dataset != datasets.DEFAULT
                    else " (no_interaction removed, §2.4)"))
    rare_split = "rare" in datasets.get(args.dataset).subsets
    lines += ["", "mAP and ΔmAP (Full; rare / non-rare in the JSON)" if rare_split else "mAP and ΔmAP", head]
    lines.append(f"{'mAP':22}" + "".join(f"{_fmt(results[n]['map']):>15}" for n in names))
    for o in oracles:
        lines.append(f"{'Δ ' + o:22}" + "".join(f"{_fmt(results[n]['delta_map'][o]):>15}" for n in names))
    lines += ["", "error counts (Full)", head]
    lines.append(f"{'true_positive':22}" + "".join(f"{results[n]['counts']['true_positive']:>15d}" for n in names))
    for o in oracles:
        lines.append(f"{o:22}" + "".join(f"{results[n]['error_counts'][o]:>15d}" for n in names))
    lines += ["", "progressive fixes (§3.4): mAP after fixing this and all above", head]
    for i, o in enumerate(r["oracle"] for r in first["progressive"]):
        lines.append(f"{'+ ' + o:22}" + "".join(f"{_fmt(results[n]['progressive'][i]['map']['full']):>15}"
                                                for n in names))
    lines.append(f"{'sum of single ΔmAPs':22}" + "".join(f"{_fmt(results[n]['sum_delta_map']):>15}" for n in names))
    lines.append(f"{'100 − mAP':22}" + "".join(f"{_fmt(1 - results[n]['map']):>15}" for n in names))
    lines += ["", "pair localization (§4.1) and interaction classification (§4.2)", head]
    rows = [("pairs / image", lambda r: f"{r['pair_localization']['pairs_per_image']:>15.1f}"),
            ("pair recall", lambda r: f"{_fmt(r['pair_localization']['recall']):>15}"),
            *([("pair recall rare", lambda r: f"{_fmt(r['pair_localization']['splits']['rare']['recall']):>15}"),
               ("pair recall non-rare",
                lambda r: f"{_fmt(r['pair_localization']['splits']['non_rare']['recall']):>15}")] if rare_split else []),
            ("pair precision", lambda r: f"{_fmt(r['pair_localization']['precision']):>15}"),
            ("negative AP", lambda r: f"{_fmt(r['interaction_classification']['negative_ap']):>15}"),
            ("interaction mAP", lambda r: f"{_fmt(r['interaction_classification']['interaction_map']):>15}")]
    for label, f in rows:
        lines.append(f"{label:22}" + "".join(f(results[n]) for n in names))
    lines.append("(scores in %; the JSON result holds fractions in [0, 1])")
    if args.out:
        lines.append(f"report: {Path(args.out) / 'report.html'}")
    return lines


def run(args):
    if args.out and importlib.util.find_spec("matplotlib") is None:   # before any work
        from metrics.core._errors import missing_extra
        raise ParameterError("out", missing_extra("matplotlib"))
    if args.pairs and len(args.pairs) != len(args.pred):
        raise InputError(f"--pairs gives {len(args.pairs)} files for {len(args.pred)} prediction files")
    names = _names(args)
    gt, first_pred, error_registry = _read_inputs(args)
    results, errors = _diagnose_models(args, names, gt, first_pred)
    result = _combined_result(results, names)
    _write_outputs(args, names, results, errors)
    return result, "\n".join(_summary_lines(args, names, results, error_registry.oracles))
