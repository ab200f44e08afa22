"""``python -m metrics score``: standard mAP, SHOE mAP, SHOE mF1 and miss rates of HOI detections."""

from __future__ import annotations

import importlib
from concurrent.futures import ThreadPoolExecutor

from metrics import datasets
from metrics.core._choices import COMBINATIONS, FN_MODES, INTERPOLATIONS, MAP_PROTOCOLS, SPLITS
from metrics.core._options import input_file, integer, number

FLAGS = {"interpolation": "--ap-interpolation", "fn_mode": "--mf1-fn"}   # parameter -> option


def add_arguments(parser) -> None:
    parser.add_argument("--gt", required=True, type=input_file, help="ground truth: JSON Lines (one image per line) "
                        "or QPIC/CDN HICO-DET JSON (annotations + hoi_annotation)")
    parser.add_argument("--pred", required=True, type=input_file, help="predictions, same formats (score per HOI "
                        "needed for mAP and SHOE mAP)")
    parser.add_argument("--dataset", choices=datasets.names(), default=datasets.DEFAULT,
                        help=f"whose vocabulary resolves the labels and whose WordNet baseline is the default "
                             f"matrices (default {datasets.DEFAULT})")
    parser.add_argument(datasets.ANY_LABELS, action="store_true",
                        help="score even when most ground-truth labels are outside the dataset's vocabulary "
                             "(refused otherwise, naming the dataset whose labels they are)")
    parser.add_argument("--verb-sim", type=input_file, help="verb similarity matrix (.csv/.npz; default: WordNet baseline)")
    parser.add_argument("--object-sim", type=input_file, help="object similarity matrix (default: WordNet baseline)")
    parser.add_argument("--combine", choices=COMBINATIONS, default="arithmetic",
                        help="HOI similarity f(verb, object) (SHOE Eq. 1; default arithmetic)")
    parser.add_argument("--w", type=number(0, 1), default=0.5, help="verb weight of the arithmetic mean (default 0.5)")
    parser.add_argument("--iou", type=number(0, 1, low_open=True), default=0.5, help="IoU threshold θ for both boxes (default 0.5)")
    parser.add_argument("--delta", type=number(0, 1), default=0.0,
                        help="δ: an unmatched prediction is a false positive only when its similarity "
                             "to the image's most similar ground truth is ≥ δ (default 0)")
    parser.add_argument("--tau", type=number(0, 1), default=0.5,
                        help="τ: SHOE mF1 and miss rates use predictions with score ≥ τ "
                             "(all predictions when none has a score; default 0.5)")
    parser.add_argument("--split", choices=SPLITS,
                        help="also report the zero-shot seen / unseen class subsets of this split")
    parser.add_argument("--map-protocol", choices=MAP_PROTOCOLS, default="official",
                        help="standard mAP: 'official' = the HICO-DET evaluation (ywchao/ho-rcnn: 11-point "
                             "AP, +1-pixel IoU, VOC best-overlap assignment, 600 classes; default), "
                             "'all-point' = all-point AP, continuous IoU, best unmatched ground truth")
    parser.add_argument("--ap-interpolation", choices=INTERPOLATIONS, default="none",
                        help="SHOE AP: 'none' = Eq. 11 as in Algorithm 1 (default), 'all-point' = "
                             "interpolated precision envelope")
    parser.add_argument("--mf1-fn", choices=FN_MODES, default="algorithm2",
                        help="SHOE mF1 false negatives: 'algorithm2' (FN += 1 per unmatched GT, "
                             "default) or 'eq5' (FN += 1 − t for every GT, main text Eq. 5)")
    parser.add_argument("--per-class", type=integer(0, 100_000), default=0, metavar="N",
                        help="print the N classes with the most ground truth (default 0)")


def _fmt(x) -> str:
    return "   n/a" if x is None else f"{100 * x:6.2f}"


SUBSET_TITLES = {"full": ("Full", 8), "rare": ("Rare", 7), "non_rare": ("Non-rare", 9), "novel": ("Novel", 7)}


def _standard_map_table(result, subsets) -> list[str]:
    """The standard mAP table: a row per setting (Default, and Known-Object where the dataset has
    it), a column per subset of the dataset and the mean recall."""
    columns = [s for s in SUBSET_TITLES if s in subsets]
    head = "".join(f" {SUBSET_TITLES[s][0]:>{SUBSET_TITLES[s][1]}}" for s in columns)
    lines = ["", f"standard mAP ({result['protocol']['name']}){head} {'mRec':>7}"]
    for setting, title in (("default", "Default"), ("known_object", "Known-Object")):
        h, r = result["hico"][setting], result["mrec_by_subset"][setting]
        if h is None:
            continue
        row = "".join(f" {_fmt(h.get(s)):>{SUBSET_TITLES[s][1]}}" for s in columns)
        lines.append(f"{title:27}{row} {_fmt(r['full']):>7}")
    return lines


def run(args):
    from metrics.api import score_detections
    from metrics.detection._detections_fast import read_detections

    # pyarrow parses both files at once without the GIL while the scorer's modules (pandas) are
    # imported; the ground truth's error, if any, is reported first
    with ThreadPoolExecutor(max_workers=2) as pool:
        files = [pool.submit(read_detections, path) for path in (args.gt, args.pred)]
        importlib.import_module("metrics.detection._scoring")
        gt, pred = (f.result() for f in files)
    if not args.any_labels:
        datasets.check_labels(gt.verb, gt.object, args.dataset, source=str(args.gt))
    result = score_detections(gt, pred, verb_sim=args.verb_sim, object_sim=args.object_sim, combine=args.combine,
                              w=args.w, iou=args.iou, delta=args.delta, tau=args.tau, split=args.split,
                              interpolation=args.ap_interpolation, fn_mode=args.mf1_fn,
                              map_protocol=args.map_protocol, dataset=args.dataset).to_dict()
    c = result["counts"]
    dataset = datasets.get(args.dataset)
    outside = (f" ({c['classes_outside_hico']} outside {dataset.title})" if len(dataset.vocabulary().classes)
               else "")
    lines = [f"{c['images']} images, {c['gt']} ground-truth HOIs in {c['classes']} classes{outside}, "
             f"{c['predictions']} predictions "
             f"({c['predictions_scored_f1']} used for mF1)",
             "",
             f"{'split':16} {'classes':>7} {'mAP':>6} {'SHOE mAP':>9} {'SHOE mF1':>9}"]
    for name, s in result["splits"].items():
        lines.append(f"{name:16} {s['n_classes']:7d} {_fmt(s['map'])} {_fmt(s['shoe_map']):>9} "
                     f"{_fmt(s['shoe_mf1']):>9}")
    if result["hico"]:
        lines += _standard_map_table(result, dataset.subsets)
        lines += ["protocol: " + "; ".join(f"{k} = {v}" for k, v in result["protocol"].items() if k != "name")]
        if c.get("recall_undefined_classes"):
            lines.append(f"mRec n/a: {c['recall_undefined_classes']} predicted classes have no ground truth in "
                         f"{args.gt}, so their recall is 0/0 and the official mean recall is undefined "
                         "(--map-protocol all-point counts it as 0)")
    lines += ["", f"GT miss rate {_fmt(result['gt_miss_rate']).strip()} %   "
                  f"prediction miss rate {_fmt(result['pred_miss_rate']).strip()} %"]
    if not result["params"]["confidence_scores"]:
        lines.append("predictions carry no scores: confidence-free mode (mAP and SHOE mAP not defined)")
    for role in ("verb", "object"):
        r = result["resolution"][role]["pred"]
        k = r["by_kind"]
        line = (f"predicted {role}s: {r['n_labels']} distinct — {k['label']['labels']} dataset labels, "
                f"{k['synset']['labels']} synsets, {k['free_text']['labels']} free text, "
                f"{k['unknown']['labels']} unknown")
        if r["unknown"]:
            shown = ", ".join(r["unknown"][:10]) + (" …" if len(r["unknown"]) > 10 else "")
            line += f" ({shown}; similarity 0)"
        lines.append(line)
    if args.per_class:
        rows = sorted(result["per_class"], key=lambda r: -r["n_gt"])[:args.per_class]
        lines += ["", f"{'class':32} {'n_gt':>5} {'AP':>6} {'SHOE AP':>8} {'SHOE F1':>8}"]
        for r in rows:
            lines.append(f"{(r['verb'] + ' ' + r['object'])[:32]:32} {r['n_gt']:5d} {_fmt(r['ap'])} "
                         f"{_fmt(r['shoe_ap']):>8} {_fmt(r['shoe_f1']):>8}")
    lines.append("(scores in %; the JSON result holds fractions in [0, 1])")
    return result, "\n".join(lines)
