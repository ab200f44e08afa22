"""HICO-DET-sized Diag-HOI benchmark: categorization plus all nine single-oracle ΔmAPs.

Workload: the scoring benchmark's synthetic generator (benchmarks/score_hico_scale.py):
9,658 images, ~33,000 ground-truth HOIs over the 600 HICO-DET classes, 100 predictions per
image (~966,000). Timed, from in-memory arrays (label resolution included): ``diagnose`` with
the nine single oracles (categorization, joint oracle assignment, ten mAPs), and separately
the progressive fixes (§3.4) and the §4 sub-task analyses. Prints the median of several runs.
Target: categorization + nine single-oracle ΔmAPs ≤ 60 s.

    .venv/bin/python -m benchmarks.diagnose_hico_scale            # full size, 3 runs
    .venv/bin/python -m benchmarks.diagnose_hico_scale --quick    # 1,000 images, 1 run
"""

from __future__ import annotations

import argparse
import os
import resource
import statistics
import time

import numpy as np

from benchmarks.score_hico_scale import workload
from metrics.detection._scoring import evaluate
from metrics.diagnosis import ERROR_REGISTRY, build_diagnosis, interaction_classification, pair_localization


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=9658)
    parser.add_argument("--per-image", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--quick", action="store_true", help="1,000 images, one run")
    parser.add_argument("--check-map", action="store_true",
                        help="also check that the diagnosis's mAP equals the score command's")
    args = parser.parse_args()
    if args.quick:
        args.images, args.repeats = 1000, 1
    n_gt = round(args.images * 33000 / 9658)
    t = time.perf_counter()
    gt, pred = workload(args.images, n_gt, args.per_image)
    print(f"workload: {len(gt.images)} images, {len(gt)} ground-truth HOIs, {len(pred)} predictions "
          f"(generated in {time.perf_counter() - t:.1f} s); machine: {len(os.sched_getaffinity(0))} cores")

    build_diagnosis(gt.__class__.from_arrays(gt.images[gt.image[:50]], gt.human_box[:50], gt.object_box[:50],
                                      gt.verb[:50], gt.object[:50]),
             pred.__class__.from_arrays(pred.images[pred.image[:500]], pred.human_box[:500],
                                        pred.object_box[:500], pred.verb[:500], pred.object[:500],
                                        pred.score[:500]))  # warm-up: imports, caches
    single, prog, sub = [], [], []
    for _ in range(args.repeats):
        t = time.perf_counter()
        d = build_diagnosis(gt, pred, oracles=ERROR_REGISTRY.oracles, progressive=False)
        single.append(time.perf_counter() - t)
        t = time.perf_counter()
        dp = build_diagnosis(gt, pred, oracles=(), progressive=True)
        prog.append(time.perf_counter() - t)
        t = time.perf_counter()
        loc = pair_localization(d.scene)
        inter = interaction_classification(d.scene, d)
        sub.append(time.perf_counter() - t)

    r = d.to_dict()
    counts = r["error_counts"]
    print(f"mAP {r['map']:.4f}; predictions {len(d.kind)} = "
          + " + ".join(f"{k} {v}" for k, v in [("true_positive", int((d.kind == 0).sum()))]
                       + [(k, counts[k]) for k in ERROR_REGISTRY.oracles[:6]])
          + f"; missed GT {counts['missed_gt']}")
    print("ΔmAP: " + ", ".join(f"{k} {v:+.4f}" for k, v in r["delta_map"].items()))
    final = dp.progressive()[-1]["map"]["full"]
    print(f"progressive fixes end at mAP {final:.6f}; pair recall {loc['recall']:.4f}, precision "
          f"{loc['precision']:.4f}, {loc['pairs_per_image']:.1f} pairs/image; negative AP "
          f"{inter['negative_ap']:.4f}, interaction mAP {inter['interaction_map']:.4f}")
    if args.check_map:
        ev = evaluate(gt, pred)
        keep = build_diagnosis(gt, pred, oracles=(), progressive=False, keep_no_interaction=True).map["full"]
        print(f"score's mAP {float(np.nanmean(ev.ap)):.12f} vs diagnose --keep-no-interaction {keep:.12f}")
    med = statistics.median(single)
    print(f"categorization + 9 single-oracle ΔmAPs: median {med:7.2f} s over {len(single)} runs "
          f"{[round(x, 2) for x in single]}  (target ≤ 60 s: {'met' if med <= 60 else 'MISSED'})")
    print(f"categorization + 7 progressive fixes:   median {statistics.median(prog):7.2f} s")
    print(f"pair localization + interaction cls.:   median {statistics.median(sub):7.2f} s")
    print(f"max RSS {resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.2f} GiB")


if __name__ == "__main__":
    main()
