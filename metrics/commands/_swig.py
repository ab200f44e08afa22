"""``python -m metrics swig``: SWIG-HOI's official numbers, as its released evaluator computes them
(``scwangdyd/large_vocabulary_hoi_detection``, ``calc_ap``: 11-point AP per interaction)."""

from __future__ import annotations

from metrics.core._options import input_file, integer, output_dir

SUBSETS = (("full", "Full (not novel)"), ("rare", "Rare"), ("non_rare", "Non-rare"), ("novel", "Novel"))


def add_arguments(parser) -> None:
    parser.add_argument("--gt", required=True, type=input_file,
                        help="SWIG-HOI annotation JSON (swig_test_1000.json: img_id, box_annotations, hoi_annotations)")
    parser.add_argument("--pred", required=True, type=input_file,
                        help="predictions: the pickle write_hoi_results writes (.pkl: a list indexed by image id "
                             "of [interaction_id, person x1 y1 x2 y2, object x1 y1 x2 y2, score, offset]), or "
                             "JSON with the same list, or NPZ (image_id, detections)")
    parser.add_argument("--per-class", type=integer(0, 100_000), default=0, metavar="N",
                        help="print the N evaluated interactions with the lowest AP (default 0)")
    parser.add_argument("--hois-out", type=output_dir, metavar="DIR",
                        help="also write the ground truth and the predictions as HOIs (DIR/gt.jsonl, DIR/pred.jsonl) "
                             "for 'score --dataset swig-hoi' and 'diagnose --dataset swig-hoi'")


def run(args):
    import numpy as np

    from metrics.datasets.swig_hoi._evaluation import evaluate_files
    from metrics.datasets.swig_hoi._vocabulary import swig

    result = evaluate_files(args.gt, args.pred)
    out = result.to_dict()
    lines = ["SWIG-HOI mAP (released calc_ap: 11-point, IoU >= 0.5 on both boxes, "
             "at most 19,999 detections per interaction)"]
    for key, name in SUBSETS:
        value = out[key]
        n = int(np.sum(result.evaluated & {"full": result.frequency != 0, "rare": result.frequency == 1,
                                           "non_rare": result.frequency == 2,
                                           "novel": result.frequency == 0}[key]))
        shown = "   n/a" if value != value else f"{100 * value:6.2f}"
        lines.append(f"{name:<17} {shown}  ({n} interactions)")
    if args.per_class:
        classes = swig().classes
        ids = np.flatnonzero(result.evaluated)
        lines.append("lowest AP:")
        for k in ids[np.argsort(result.ap[ids], kind="stable")][:args.per_class]:
            lines.append(f"  {k} {classes['verb'][k]} {classes['object'][k]}: AP {100 * result.ap[k]:.2f}, "
                         f"recall {result.recall[k]:.3f}")
    if args.hois_out:
        from metrics.datasets.swig_hoi._hois import write_hois
        out["hois"] = written = write_hois(args.gt, args.pred, args.hois_out)
        lines.append("HOIs: " + ", ".join(f"{w['hois']} in {w['file']}" for w in written.values()))
        if "pred" in written:
            lines.append(f"predictions left out of {written['pred']['file']}: "
                         f"{written['pred']['dropped_without_score']} without a score, "
                         f"{written['pred']['dropped_invalid_box']} with an invalid box (a NaN, or x2 < x1 or y2 < y1)")
    return out, "\n".join(lines)
