"""``python -m metrics mcq``: CrossHOI-Bench multiple-choice scores (released scorer's semantics)."""

from __future__ import annotations

from metrics.api import crosshoi_scores
from metrics.core._choices import SETTINGS
from metrics.core._options import input_file, integer, number


def add_arguments(parser) -> None:
    parser.add_argument("--bench", required=True, type=input_file, help="CrossHOI-Bench JSON file (question key -> "
                        "gt_choices, wrong_choices, boxes)")
    parser.add_argument("--pred", required=True, type=input_file, help="JSON object key -> chosen option strings, "
                        "or detections (JSON Lines HOI format, or the released ao_names records)")
    parser.add_argument("--setting", choices=SETTINGS,
                        help="recorded in the output: full_detection, human_box or image_level "
                             "(matching always follows the boxes each question has)")
    parser.add_argument("--score-threshold", type=number(0, 1), default=0.5,
                        help="detections: keep those with score >= this (default 0.5)")
    parser.add_argument("--iou", type=number(0, 1, low_open=True), default=0.5,
                        help="detections: IoU needed with the question's boxes (default 0.5)")
    parser.add_argument("--per-class", type=integer(0, 100_000), default=0, metavar="N",
                        help="print the N classes with the lowest F1")


def run(args):
    result = crosshoi_scores(args.bench, args.pred, score_threshold=args.score_threshold, iou=args.iou,
                             setting=args.setting).to_dict()
    c = result["counts"]
    lines = [f"{result['n_questions']} questions ({args.setting or 'setting not given'}), "
             f"{c['answered_questions']} answered; {c['tp']} TP, {c['fp']} FP of "
             f"{c['correct_options']} correct options; {c['out_of_options']} out-of-options and "
             f"{c['duplicates']} duplicate answers ignored"
             + (f"; {c['unknown_questions']} answered keys are not questions" if c['unknown_questions'] else ""),
             f"{'Macro-F1':<12} {100 * result['macro_f1']:6.2f}  ({result['macro']['n_classes']} classes)",
             f"{'Instance-F1':<12} {100 * result['instance_f1']:6.2f}",
             f"{'Micro-F1':<12} {100 * result['micro_f1']:6.2f}",
             f"{'EM':<12} {100 * result['exact_match']:6.2f}",
             f"{'Avg. Prec':<12} {100 * result['avg_precision']:6.2f}",
             f"{'Avg. Rec':<12} {100 * result['avg_recall']:6.2f}"]
    if args.per_class:
        lines.append("lowest per-class F1:")
        for row in sorted(result["per_class"], key=lambda r: (r["f1"], r["verb"], r["object"]))[:args.per_class]:
            lines.append(f"  {row['verb']} {row['object']}: F1 {row['f1']:.3f} "
                         f"(TP {row['tp']}, FP {row['fp']}, GT {row['gt']})")
    return result, "\n".join(lines)
