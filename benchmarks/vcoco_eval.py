"""V-COCO's official evaluation at the test split's size: ``python -m metrics vcoco`` next to the
released evaluator (``vsrl_eval.py``, transcribed in ``tests/reference/vsrl_eval.py``), same run.

Synthetic workload in the official formats (:func:`workload`): 4,946 images (V-COCO's test
split), per image ~1.6 people V-COCO labelled (as in ``vcoco_val.json``: 4,499 rows, 2,867
images), ~2.5 people it did not label (some crowd) and ~3.5 other COCO objects (COCO has ~7
annotations per image), V-COCO's 26 actions with their roles, ~2.5 actions per labelled person,
~80 % of roles with an object; ~10 detections per image (a person box near a person or random;
an agent score per action and a box + score per action-role; scores rounded to 1e-3 so ties
occur), as a pickle. With ``edge_cases`` (the tests' workloads) it also has invalid COCO boxes,
``ignore`` flags, NaN scores and boxes, roles predicted where the person has none, duplicate
detections, detections lacking keys and detections of images outside the split.

Timed, as processes, each run from the files:
  (a) ``python -m metrics vcoco --vcoco --coco --ids --pred --json`` end to end (start-up,
      reading, restricted unpickling, evaluation, output);
  (b) the transcription run as the released evaluator runs: ``json.load`` of both files, COCO's
      index, then ``_do_eval`` unpickling the detections in each of its three evaluations and
      scanning every detection for every image.
  (c) the parse floor: the four files read and parsed alone, as plain Python reads them
      (``json.load``, ``np.loadtxt``, one plain ``pickle.load``), and (a) over it;
  (d) with ``--interleave N``: N rounds of (a) then (b), one after the other, so that the
      machine's load weighs on both alike; each round's ratio and their median.
Checks that (a) and (b) agree to 1e-6, that (a) imports no pandas (``sys.modules`` at its end),
and prints medians with the load average.

    .venv/bin/python -m benchmarks.vcoco_eval                    # 4,946 images; 5 runs of (a), 1 of (b)
    .venv/bin/python -m benchmarks.vcoco_eval --images 800 --reference-runs 3
    .venv/bin/python -m benchmarks.vcoco_eval --quick            # 500 images
    .venv/bin/python -m benchmarks.vcoco_eval --reference-runs 0 # (a) only
    .venv/bin/python -m benchmarks.vcoco_eval --interleave 3     # (d) as well
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# V-COCO's actions and roles, in vcoco_*.json's order
ACTIONS = (("hold", ("agent", "obj")), ("stand", ("agent",)), ("sit", ("agent", "instr")),
           ("ride", ("agent", "instr")), ("walk", ("agent",)), ("look", ("agent", "obj")),
           ("hit", ("agent", "instr", "obj")), ("eat", ("agent", "obj", "instr")), ("jump", ("agent", "instr")),
           ("lay", ("agent", "instr")), ("talk_on_phone", ("agent", "instr")), ("carry", ("agent", "obj")),
           ("throw", ("agent", "obj")), ("catch", ("agent", "obj")), ("cut", ("agent", "instr", "obj")),
           ("run", ("agent",)), ("work_on_computer", ("agent", "instr")), ("ski", ("agent", "instr")),
           ("surf", ("agent", "instr")), ("skateboard", ("agent", "instr")), ("smile", ("agent",)),
           ("drink", ("agent", "instr")), ("kick", ("agent", "obj")), ("point", ("agent", "instr")),
           ("read", ("agent", "obj")), ("snowboard", ("agent", "instr")))
CATEGORIES = ((1, "person"), (2, "bicycle"), (3, "car"), (37, "sports ball"), (41, "skateboard"),
              (44, "bottle"), (47, "cup"), (62, "chair"), (63, "couch"), (73, "laptop"), (77, "cell phone"))


def _xywh(rng, width, height):
    w = rng.uniform(15, 0.6 * width)
    h = rng.uniform(15, 0.6 * height)
    x = rng.uniform(0, width - w)
    y = rng.uniform(0, height - h)
    return [round(float(x), 2), round(float(y), 2), round(float(w), 2), round(float(h), 2)]


def _invalid(rng, ann, width, height, kind):
    """Make a COCO annotation one that vsrl_eval.py's sanitizing drops (kinds 0-4 in turn)."""
    if kind == 0:
        ann["bbox"][2] = round(float(rng.uniform(0, 1)), 2)          # w <= 1: x2 == x1
    elif kind == 1:
        ann["bbox"][0] = float(width + rng.uniform(0, 20))           # beyond the image: clipped flat
    elif kind == 2:
        ann["area"] = 0.0
    elif kind == 3:
        ann["ignore"] = 1
    else:
        ann["bbox"][3] = 0.5                                           # h < 1


def _xyxy(xywh):
    x, y, w, h = xywh
    return [x, y, x + max(0.0, w - 1.0), y + max(0.0, h - 1.0)]


def _jitter(rng, box, scale=0.1):
    w, h = box[2] - box[0], box[3] - box[1]
    d = rng.normal(0, scale, 4) * np.array([w, h, w, h])
    return [float(np.float32(v)) for v in np.array(box) + d]


def workload(seed: int, n_images: int, *, labelled: float = 1.6, unlabelled: float = 2.5, objects: float = 3.5,
             detections: float = 10.0, edge_cases: bool = True, ties: int = 3, positive_rate: float = 0.1):
    """A V-COCO workload in the official formats: ``{"vcoco": list, "coco": dict, "ids": list,
    "dets": list of dicts (some lacking keys when ``edge_cases``), "dets_nan": the same with a
    NaN for every missing key (what vsrl_eval.py reads without a KeyError)}``. Scores are
    rounded to ``ties`` decimals (ties occur)."""
    rng = np.random.default_rng(seed)
    image_ids = np.sort(rng.choice(np.arange(1, 10 * n_images + 100), size=n_images + 2, replace=False))
    outside = int(image_ids[-1])                   # a COCO image that is not in the split
    split = [int(i) for i in image_ids[:-2]]
    absent = int(image_ids[-2])                    # an image id that COCO does not have
    images, anns, people, things = _coco_annotations(rng, split + [outside], labelled, unlabelled, objects,
                                                     edge_cases)
    vcoco = _vcoco_rows(rng, split, people, things, positive_rate)
    order = rng.permutation(len(anns))                                 # file order is not creation order
    coco = {"images": [images[k] for k in rng.permutation(len(images))],
            "annotations": [anns[k] for k in order],
            "categories": [{"id": c, "name": nm, "supercategory": "x"} for c, nm in CATEGORIES]}
    dets, dets_nan = _detections(rng, vcoco, split + [outside, absent], split, people, things, detections,
                                 edge_cases, ties)
    return {"vcoco": vcoco, "coco": coco, "ids": split, "dets": dets, "dets_nan": dets_nan}


def _coco_annotations(rng, image_ids, labelled, unlabelled, objects, edge_cases):
    """COCO images and annotations (labelled and unlabelled people, objects; invalid and crowd
    boxes among them), the people of each image ``(ann, box xyxy, labelled, valid)`` and its valid
    objects of any class ``(ann, box xyxy)``."""
    images, anns = [], []
    next_ann = int(rng.integers(10_000, 20_000))
    people, things = {}, {}
    n_invalid = 0
    for img in image_ids:
        width, height = int(rng.integers(200, 640)), int(rng.integers(200, 640))
        images.append({"id": img, "width": width, "height": height, "file_name": f"{img}.jpg"})
        n_lab = 1 + rng.poisson(max(labelled - 1, 0))
        n_unl = rng.poisson(unlabelled)
        n_obj = rng.poisson(objects)
        people[img], things[img] = [], []
        for k in range(n_lab + n_unl + n_obj):
            is_person = k < n_lab + n_unl
            ann = {"id": next_ann, "image_id": img, "category_id": 1 if is_person else
                   int(CATEGORIES[rng.integers(1, len(CATEGORIES))][0]),
                   "bbox": _xywh(rng, width, height), "iscrowd": 0,
                   "segmentation": [[0, 0, 1, 1, 2, 2]]}
            ann["area"] = round(ann["bbox"][2] * ann["bbox"][3] * 0.7, 2)
            next_ann += int(rng.integers(1, 4))
            valid = True
            if edge_cases and k > 0 and rng.random() < 0.1:           # the first person stays valid
                _invalid(rng, ann, width, height, n_invalid % 5)
                n_invalid += 1
                valid = False
            if edge_cases and is_person and k >= n_lab and rng.random() < 0.15:
                ann["iscrowd"] = 1
            anns.append(ann)
            box = _xyxy(ann["bbox"])
            if is_person:
                people[img].append((ann["id"], box, k < n_lab, valid))
            if valid:
                things[img].append((ann["id"], box))
    return images, anns, people, things


def _vcoco_rows(rng, split, people, things, positive_rate):
    """V-COCO rows of the labelled people: each action's positives and role objects."""
    rows = [(img, ann, valid) for img in split for ann, _, lab, valid in people[img] if lab]
    n = len(rows)
    vcoco = []
    valid_rows = [r for r in range(n) if rows[r][2]]
    for a, (name, roles) in enumerate(ACTIONS):
        label = (rng.random(n) < positive_rate).astype(int)
        label[valid_rows[a % len(valid_rows)]] = 1                     # every action has a positive
        role_ids = np.zeros((len(roles), n), dtype=np.int64)
        role_ids[0] = [r[1] for r in rows]
        for r in np.flatnonzero(label):
            img, ann, _ = rows[r]
            for j in range(1, len(roles)):
                if rng.random() < 0.8:
                    candidates = [t for t, _ in things[img] if t != ann]
                    if candidates:
                        role_ids[j, r] = candidates[rng.integers(len(candidates))]
        vcoco.append({"action_name": name, "role_name": list(roles),
                      "image_id": [r[0] for r in rows], "ann_id": [r[1] for r in rows],
                      "label": label.tolist(), "role_object_id": role_ids.reshape(-1).tolist(),
                      "include": [[]] * (len(roles) - 1)})
    return vcoco


def _labelled_truth(vcoco) -> dict:
    """Ground truth of each labelled person: ann_id -> action -> its role objects."""
    truth = {}
    for a, act in enumerate(vcoco):
        k = len(act["role_name"])
        rid = np.asarray(act["role_object_id"]).reshape(k, -1).T
        for r in np.flatnonzero(act["label"]):
            truth.setdefault(act["ann_id"][r], {})[a] = rid[r, 1:]
    return truth


def _score(rng, p_true, ties, edge_cases):
    """A detector's score: high with probability ``p_true``, rounded to ``ties`` digits; NaN
    now and then with ``edge_cases``."""
    s = rng.uniform(0.5, 1) if rng.random() < p_true else rng.uniform(0, 0.8)
    s = round(float(s), ties)
    if edge_cases and rng.random() < 0.05:
        return float("nan")
    return s


def _role_box(rng, obj, box_of, edge_cases) -> list:
    """A role's box: near its true object mostly; else random or empty, and with ``edge_cases``
    sometimes NaN or partly NaN."""
    u = rng.random()
    if obj and obj in box_of and u < 0.75:
        return _jitter(rng, box_of[obj])
    if u < 0.85 or not edge_cases:
        return _jitter(rng, _xyxy(_xywh(rng, 400, 400)), 0) if rng.random() < 0.5 else [0.0] * 4
    if u < 0.93:
        return [float("nan")] * 4
    return [float("nan"), 1.0, 2.0, 3.0]                 # partly NaN: a role predicted


def _detection(rng, img, candidates, truth, box_of, edge_cases, ties) -> dict:
    """One detection in ``img``: a labelled person mostly, scored for every action and role."""
    if candidates and rng.random() < 0.85:
        ann, box, lab, valid = candidates[rng.integers(len(candidates))]
        person_box = _jitter(rng, box)
    else:
        ann, person_box = None, _jitter(rng, _xyxy(_xywh(rng, 400, 400)), 0)
    det = {"image_id": img, "person_box": np.array(person_box, dtype=np.float32)}
    mine = truth.get(ann, {})
    for a, (name, roles) in enumerate(ACTIONS):
        det[f"{name}_agent"] = _score(rng, 0.8 if a in mine else 0.1, ties, edge_cases)
        for j, role in enumerate(roles[1:]):
            obj = mine[a][j] if a in mine else 0
            rbox = _role_box(rng, obj, box_of, edge_cases)
            det[f"{name}_{role}"] = np.array(rbox + [_score(rng, 0.8 if a in mine else 0.1, ties, edge_cases)],
                                             dtype=np.float64)
    return det


def _drop_keys(rng, dets, dets_nan) -> None:
    """Detections lacking keys: removed from ``dets``, NaN in ``dets_nan``."""
    keys = [k for k in dets[0] if k not in ("image_id", "person_box")]
    for d, dn in zip(dets, dets_nan):
        if rng.random() < 0.1:
            for key in rng.choice(keys, size=int(rng.integers(1, 6)), replace=False):
                del d[key]
                dn[key] = float("nan") if key.endswith("_agent") else np.full(5, np.nan)


def _detections(rng, vcoco, image_ids, split, people, things, detections, edge_cases, ties):
    """Detections that look like a detector's (NaN scores, duplicates, images outside the split
    when ``edge_cases``), and the same with a NaN for every key some of them lack."""
    truth = _labelled_truth(vcoco)
    box_of = {t: b for img in things for t, b in things[img]}
    dets = []
    for img in image_ids:
        k_det = rng.poisson(detections if img in split else 2)
        candidates = people.get(img, [])
        for _ in range(k_det):
            det = _detection(rng, img, candidates, truth, box_of, edge_cases, ties)
            dets.append(det)
            if edge_cases and rng.random() < 0.08:                           # an exact duplicate
                dets.append({k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in det.items()})
    order = rng.permutation(len(dets))
    dets = [dets[k] for k in order]
    dets_nan = [dict(d) for d in dets]
    if edge_cases:
        _drop_keys(rng, dets, dets_nan)
    return dets, dets_nan


def write_files(w: dict, folder: Path, protocol: int = pickle.DEFAULT_PROTOCOL) -> dict:
    """The workload as the official files: vcoco.json, instances.json, split.ids, detections.pkl."""
    folder.mkdir(parents=True, exist_ok=True)
    paths = {"vcoco": folder / "vcoco_test.json", "coco": folder / "instances_trainval2014.json",
             "ids": folder / "vcoco_test.ids", "pred": folder / "detections.pkl"}
    paths["vcoco"].write_text(json.dumps(w["vcoco"]))
    paths["coco"].write_text(json.dumps(w["coco"]))
    paths["ids"].write_text("".join(f"{i}\n" for i in w["ids"]))
    with open(paths["pred"], "wb") as f:
        pickle.dump(w["dets"], f, protocol=protocol)
    return paths


REFERENCE_RUN = """
import json, pickle, sys
from tests.reference.vsrl_eval import VCOCOeval
vcoco, coco, ids, pred, out = sys.argv[1:6]
import numpy as np
def load():
    with open(pred, 'rb') as f:          # vsrl_eval.py l.199-200 / 331-332: one load per evaluation
        return pickle.load(f)
ev = VCOCOeval(json.load(open(vcoco)), json.load(open(coco)), np.loadtxt(open(ids, 'r')))
ev._do_eval(load, ovr_thresh=0.5)
json.dump({"agent_ap": ev.agent_ap.tolist(), "role_ap": {k: np.where(np.isnan(v), -1, v).tolist()
           for k, v in ev.role_ap.items()}, "agent_map": float(ev.agent_map),
           "role_map": {k: float(v) for k, v in ev.role_map.items()}}, open(out, 'w'))
"""


# the command as a process, answering on its last line which pandas modules it imported
OURS_RUN = """
import sys
from metrics.cli import main
code = main(sys.argv[1:])
print(code, len([m for m in sys.modules if m.split('.')[0] == 'pandas']))
"""


def _run(cmd: list[str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``cmd`` as a process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run(cmd, cwd=ROOT, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _summary(runs: list[tuple[float, float]], digits: int) -> str:
    wall, cpu = [r[0] for r in runs], [r[1] for r in runs]
    return (f"median {statistics.median(wall):.{digits}f} s wall, {statistics.median(cpu):.{digits}f} s CPU "
            f"(runs: {', '.join(f'{x:.{digits}f}' for x in wall)}); load average {os.getloadavg()[0]:.2f}")


def parse_floor(paths: dict, runs: int) -> float:
    """Median seconds to read and parse the four files alone, as plain Python does."""
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        for key in ("vcoco", "coco"):
            with open(paths[key]) as f:
                json.load(f)
        with open(paths["ids"]) as f:
            np.loadtxt(f)
        with open(paths["pred"], "rb") as f:
            pickle.load(f)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def pandas_modules(cmd: list[str]) -> int:
    """How many pandas modules the command (``python -m metrics ...``) imported in a run."""
    done = subprocess.run([cmd[0], "-c", OURS_RUN, *cmd[3:]], cwd=ROOT, check=True, capture_output=True, text=True)
    code, n = done.stdout.strip().splitlines()[-1].split()
    if code != "0":
        raise SystemExit(f"the command failed: {done.stderr[-300:]}")
    return int(n)


def compare(ours: dict, ref: dict, actions=ACTIONS) -> float:
    """Largest |difference| between the command's JSON and the reference's numbers."""
    diff = 0.0
    for a, (name, roles) in enumerate(actions):
        diff = max(diff, abs(ours["agent_ap"][name] - ref["agent_ap"][a]))
        for r, role in enumerate(roles[1:]):
            for s in ("scenario_1", "scenario_2"):
                diff = max(diff, abs(ours["role_ap"][s][f"{name}-{role}"] - ref["role_ap"][s][a][r]))
    diff = max(diff, abs(ours["agent_map"] - ref["agent_map"]))
    for s in ("scenario_1", "scenario_2"):
        diff = max(diff, abs(ours["role_map"][s] - ref["role_map"][s]))
    return diff


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--images", type=int, default=4946, help="split size (default 4,946: V-COCO test)")
    parser.add_argument("--quick", action="store_true", help="500 images")
    parser.add_argument("--detections", type=float, default=10.0, help="detections per image (default 10)")
    parser.add_argument("--runs", type=int, default=5, help="runs of the command (default 5)")
    parser.add_argument("--reference-runs", type=int, default=1, help="runs of the reference (default 1; 0: none)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--interleave", type=int, default=0, metavar="N",
                        help="(d): N rounds of the command, then the reference, one after the other")
    args = parser.parse_args(argv)
    n_images = 500 if args.quick else args.images
    t = time.perf_counter()
    w = workload(args.seed, n_images, detections=args.detections, edge_cases=False)
    with tempfile.TemporaryDirectory() as tmp:
        paths = write_files(w, Path(tmp))
        n_people = sum(1 for a in w["coco"]["annotations"] if a["category_id"] == 1)
        print(f"workload: {len(w['ids'])} images, {len(w['vcoco'][0]['ann_id'])} labelled people, {n_people} COCO "
              f"people, {len(w['coco']['annotations'])} COCO annotations, {len(w['dets'])} detections "
              f"(pickle {paths['pred'].stat().st_size / 1e6:.0f} MB; made in {time.perf_counter() - t:.0f} s)", flush=True)
        out = Path(tmp) / "out.json"
        ours_cmd = [sys.executable, "-m", "metrics", "vcoco", "--vcoco", str(paths["vcoco"]), "--coco",
                    str(paths["coco"]), "--ids", str(paths["ids"]), "--pred", str(paths["pred"]), "--json", str(out)]
        ours = [_run(ours_cmd) for _ in range(args.runs)]
        print(f"(a) python -m metrics vcoco, end to end: {_summary(ours, 2)}; pandas modules imported: "
              f"{pandas_modules(ours_cmd)}", flush=True)
        ours_median = statistics.median(r[0] for r in ours)
        floor = parse_floor(paths, args.runs)
        print(f"(c) parse floor (json.load, np.loadtxt, one pickle.load): median {floor:.2f} s; (a) takes "
              f"{ours_median / floor:.2f}x that; load average {os.getloadavg()[0]:.2f}", flush=True)
        ref_out = Path(tmp) / "ref.json"
        ref_cmd = [sys.executable, "-c", REFERENCE_RUN, *(str(paths[k]) for k in ("vcoco", "coco", "ids", "pred")),
                   str(ref_out)]
        if args.reference_runs:
            ref = [_run(ref_cmd) for _ in range(args.reference_runs)]
            print(f"(b) vsrl_eval.py as released (transcription): {_summary(ref, 1)}")
            print(f"(b) / (a) = {statistics.median(r[0] for r in ref) / ours_median:.1f}x "
                  f"wall, {statistics.median(r[1] for r in ref) / statistics.median(r[1] for r in ours):.1f}x CPU; "
                  f"(b) / parse floor = {statistics.median(r[0] for r in ref) / floor:.1f}x")
            diff = compare(json.loads(out.read_text()), json.loads(ref_out.read_text()))
            print(f"largest |difference| of the APs and means: {diff:.1e}")
            if diff > 1e-6:
                sys.exit("the command and the reference disagree")
        if args.interleave:
            ratios = []
            for k in range(args.interleave):
                (a_wall, a_cpu), (b_wall, b_cpu) = _run(ours_cmd), _run(ref_cmd)
                ratios.append(b_wall / a_wall)
                print(f"(d) round {k + 1}: command {a_wall:.2f} s (CPU {a_cpu:.2f} s), reference {b_wall:.1f} s "
                      f"(CPU {b_cpu:.1f} s): {ratios[-1]:.1f}x; load average {os.getloadavg()[0]:.2f}", flush=True)
            print(f"(d) interleaved: median ratio {statistics.median(ratios):.1f}x over {len(ratios)} rounds "
                  f"{[round(r, 1) for r in ratios]}", flush=True)


if __name__ == "__main__":
    main()
