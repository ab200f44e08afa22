"""SWIG-HOI official evaluation: the vectorized ``metrics swig`` path next to the plain
transcription of the released evaluator (``tests/reference/swig_eval.py``), same files.

Workload (synthetic, SWIG-HOI's real interaction list): ``--images`` test images with 1-4
annotated HOIs each over the 5,539 evaluated interactions, and ``--per-image`` detections per
image (half near a ground truth of the image, half random), written as the annotation JSON and
the ``write_hoi_results`` pickle. Timed: reading both files and evaluating (``evaluate_files``),
and the released logic from the parsed JSON and the unpickled list (its own parsing excluded).
Both must give the same APs (checked to 1e-9).

    .venv/bin/python -m benchmarks.swig_eval                 # 14,000 images x 100 detections
    .venv/bin/python -m benchmarks.swig_eval --quick         # 1,000 images
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import tempfile
import time
from pathlib import Path

import numpy as np

from metrics.datasets.swig_hoi import (
    evaluate,
    evaluate_files,
    interaction_table,
    read_ground_truth,
    read_swig_detections,
    swig,
)
from tests.reference import swig_eval as ref


def workload(n_images: int, per_image: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    classes = swig().classes
    evaluated = classes.loc[classes["evaluated"] == 1]
    action, obj = evaluated["action_id"].to_numpy(), evaluated["object_id"].to_numpy()
    hoi_of = dict(zip(zip(classes["action_id"], classes["object_id"]), classes["hoi_id"]))
    gt_json, dets = [], [[] for _ in range(20000)]

    def box():
        x, y = rng.uniform(0, 400, 2)
        w, h = rng.uniform(10, 200, 2)
        return [round(float(v), 2) for v in (x, y, x + w, y + h)]

    for i in range(n_images):
        boxes, hois, pairs = [], [], []
        for _ in range(int(rng.integers(1, 5))):
            k = int(rng.integers(len(action)))
            boxes += [{"bbox": box(), "category_id": 0}, {"bbox": box(), "category_id": int(obj[k])}]
            hois.append({"subject_id": len(boxes) - 2, "object_id": len(boxes) - 1, "action_id": int(action[k])})
            pairs.append((hoi_of[(action[k], obj[k])], boxes[-2]["bbox"] + boxes[-1]["bbox"]))
        gt_json.append({"img_id": i, "box_annotations": boxes, "hoi_annotations": hois})
        for _ in range(per_image):
            if rng.random() < 0.5:
                hoi, row = pairs[int(rng.integers(len(pairs)))]
                row = [v + float(rng.normal(0, 6)) for v in row]
            else:
                hoi, row = int(evaluated["hoi_id"].iloc[int(rng.integers(len(evaluated)))]), box() + box()
            dets[i].append([int(hoi), *row, float(rng.random()), 0])
    interactions = [{"id": int(k), "action_id": int(a), "object_id": int(o), "frequency": int(f), "evaluation": int(e)}
                    for k, a, o, f, e in classes[["hoi_id", "action_id", "object_id", "frequency", "evaluated"]]
                    .itertuples(index=False)]
    return gt_json, dets, interactions


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=14000)
    parser.add_argument("--per-image", type=int, default=100)
    parser.add_argument("--quick", action="store_true", help="1,000 images")
    args = parser.parse_args()
    if args.quick:
        args.images = 1000
    t = time.perf_counter()
    gt_json, dets, interactions = workload(args.images, args.per_image)
    n_dets = sum(map(len, dets))
    with tempfile.TemporaryDirectory() as folder:
        gt_path, pred_path = Path(folder) / "swig_test.json", Path(folder) / "swig_interaction_results.pkl"
        gt_path.write_text(json.dumps(gt_json))
        pred_path.write_bytes(pickle.dumps(dets))
        print(f"workload: {args.images} images, {sum(len(g['hoi_annotations']) for g in gt_json)} ground-truth "
              f"HOIs, {n_dets} detections (generated in {time.perf_counter() - t:.1f} s; pickle "
              f"{pred_path.stat().st_size / 2**20:.0f} MiB); machine: {len(os.sched_getaffinity(0))} cores, "
              f"load {os.getloadavg()[0]:.2f}")
        evaluate_files(gt_path, pred_path)                        # warm: imports, vocabulary
        table = interaction_table()
        t0 = time.perf_counter()
        gt = read_ground_truth(gt_path, action_id=table["action_id"], object_id=table["object_id"])
        t1 = time.perf_counter()
        pred = read_swig_detections(pred_path)
        t2 = time.perf_counter()
        fast = evaluate(gt, pred, frequency=table["frequency"], evaluated=table["evaluated"])
        t3 = time.perf_counter()
        fast_s = t3 - t0
        print(f"metrics swig: {fast_s:.2f} s = read JSON {t1 - t0:.2f} + read pickle {t2 - t1:.2f} "
              f"+ evaluate {t3 - t2:.2f}")
        t = time.perf_counter()
        parsed_gt = json.loads(gt_path.read_text())
        parsed_dets = pickle.loads(pred_path.read_bytes())
        t_parse = time.perf_counter() - t
    t = time.perf_counter()
    swig_ap, _, means = ref.evaluate(parsed_gt, parsed_dets, interactions, 407)
    ref_s = time.perf_counter() - t
    print(f"released logic (transcribed): {ref_s + t_parse:.2f} s = json.load + pickle.load {t_parse:.2f} "
          f"+ evaluate {ref_s:.2f}; evaluation alone {ref_s / (t3 - t2):.0f}x the vectorized one")
    ids = np.flatnonzero(fast.evaluated)
    worst = float(np.max(np.abs(fast.ap[ids] - swig_ap[ids])))
    print(f"full mAP {100 * fast.mean('full'):.4f} vs {means['full']:.4f}; largest AP difference {worst:.1e}; "
          f"load {os.getloadavg()[0]:.2f}")
    assert worst <= 1e-9


if __name__ == "__main__":
    main()
