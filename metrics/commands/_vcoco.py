"""``python -m metrics vcoco``: V-COCO's official agent and role AP (``vsrl_eval.py``), fast."""

from __future__ import annotations

from metrics.core._options import input_file, number, output_dir


def add_arguments(parser) -> None:
    parser.add_argument("--vcoco", required=True, type=input_file,
                        help="V-COCO annotations of the split (vcoco_test.json: actions, roles, labelled people)")
    parser.add_argument("--coco", required=True, type=input_file,
                        help="COCO instances holding the split's images and boxes (instances_trainval2014.json, or "
                             "the instances_vcoco_all_2014.json subset V-COCO's script makes)")
    parser.add_argument("--ids", required=True, type=input_file,
                        help="the split's image ids, one per line (vcoco_test.ids)")
    parser.add_argument("--pred", type=input_file,
                        help="detections: the pickle vsrl_eval.py reads (a list of dicts: image_id, person_box, "
                             "<action>_agent, <action>_<role>; read with a restricted unpickler), or the same "
                             "list as JSON, or NPZ with one array per key (optional with --hois-out: then only "
                             "the ground truth is written)")
    parser.add_argument("--iou", type=number(0, 1, low_open=True), default=0.5,
                        help="overlap threshold for the person and the role object (+1-pixel IoU; default 0.5)")
    parser.add_argument("--hois-out", type=output_dir, metavar="DIR",
                        help="also write the ground truth as HOIs (DIR/gt.jsonl: one per labelled person, action and "
                             "role with an object) and the detections (DIR/pred.jsonl: one per detection and "
                             "action-role with a role box, its object the COCO category of the best-overlapping COCO "
                             "box, IoU >= 0.5) for 'score --dataset vcoco' and 'diagnose --dataset vcoco'")


def _pct(x) -> str:
    return "   n/a" if x is None else f"{100 * x:6.2f}"


def run(args):
    from metrics.core._validation import ParameterError
    from metrics.datasets.vcoco._evaluation import GroundTruth, evaluate, ground_truth, read_files

    if args.pred is None and not args.hois_out:
        raise ParameterError("pred", "is required without --hois-out (the detections to evaluate)")
    actions, image_ids, instances, dets, files = read_files(args.vcoco, args.coco, args.ids, args.pred)
    gt: GroundTruth | None
    if dets is None:
        result, lines, gt = {}, [], ground_truth(actions, instances, image_ids, files)
    else:
        res = evaluate(actions, instances, image_ids, dets, iou=args.iou, files=files)
        result, gt = res.to_dict(), res.ground_truth
        lines = _ap_lines(res, result)
    if args.hois_out:
        from metrics.datasets.vcoco._hois import write_hois
        result["hois"] = written = write_hois(args.hois_out, actions, instances, image_ids, ground_truth=gt,
                                              dets=dets, iou=args.iou, sources=files)
        lines.append(f"HOIs: {written['gt']['hois']} in {written['gt']['file']}")
        if "pred" in written:
            p = written["pred"]
            left = p["left_out"]
            lines.append(f"HOIs: {p['hois']} in {p['file']}; role values left out: {left['no_coco_box']} overlapping "
                         f"no COCO box (IoU >= {args.iou:g}), {left['invalid']} invalid boxes, {left['missing']} "
                         f"missing; detections left out: {left['detections_outside_split']} outside the split, "
                         f"{left['detections_invalid_person_box']} with an invalid person box (not finite, or "
                         "x2 < x1 or y2 < y1)")
    return result, "\n".join(lines)


def _ap_lines(res, result) -> list[str]:
    from metrics.datasets.vcoco._evaluation import LEFT_OUT_OF_24

    c = result["counts"]
    lines = [f"{c['images']} images; {c['people_labelled']} people labelled by V-COCO, {c['people_ignored']} "
             f"without V-COCO labels (ignored); {c['annotations_dropped']} COCO annotations dropped by "
             "vsrl_eval.py's box sanitizing",
             f"{c['detections']} detections: {c['detections_outside_split']} of images outside the split, "
             f"{c['detections_in_images_without_people']} in images without a person (false positives), "
             f"{c['missing_values']} missing values (no prediction)",
             "",
             f"{'action':<18} {'#pos':>5} {'agent AP':>9} {'role':<6} {'scen. 1':>8} {'scen. 2':>8}"]
    for name, roles in zip(res.actions, res.roles):
        first = f"{name:<18} {res.n_pos[name]:5d} {_pct(res.agent_ap[name]):>9}"
        if len(roles) == 1:
            lines.append(first)
        for k, role in enumerate(roles[1:]):
            key = f"{name}-{role}"
            head = first if k == 0 else " " * len(first)
            mark = " *" if key in LEFT_OUT_OF_24 else ""
            lines.append(f"{head} {role:<6} {_pct(result['role_ap']['scenario_1'][key]):>8} "
                         f"{_pct(result['role_ap']['scenario_2'][key]):>8}{mark}")
    n_roles = len(result["role_ap"]["scenario_1"])
    left = [k for k in LEFT_OUT_OF_24 if k in result["role_ap"]["scenario_1"]]
    lines += ["",
              f"agent mAP (Σ AP / {len(res.actions)}, as vsrl_eval.py prints it) {_pct(result['agent_map'])}",
              f"role mAP over {n_roles} action-roles (vsrl_eval.py's Average Role AP)   scenario 1 "
              f"{_pct(result['role_map']['scenario_1'])}   scenario 2 {_pct(result['role_map']['scenario_2'])}",
              f"role mAP over {n_roles - len(left)} action-roles without {', '.join(left) or 'point-instr'} "
              f"(as papers report; role_map_24)   scenario 1 {_pct(result['role_map_24']['scenario_1'])}   "
              f"scenario 2 {_pct(result['role_map_24']['scenario_2'])}"]
    if left:
        lines.append("(* left out of the 24-role mean)")
    lines.append("(AP in %; the JSON result holds fractions in [0, 1]; an AP n/a: no positive, vsrl_eval.py stops)")
    return lines
