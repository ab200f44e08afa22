"""How much the released Diag-HOI code's three conventions move its §4 numbers, on one workload.

The released code (neu-vi/Diag-HOI) differs from `metrics.diagnosis._core` (and from the paper's
wording) in three places; this script measures each on the synthetic workload of
`benchmarks/score_hico_scale.py` (default 500 images, 3 predictions each):

1. pair recall: a ground-truth pair counts as recalled when *any* detected pair is localized on
   it (first match, several detected pairs may recall the same ground truth ... and one detected
   pair may recall several), where `metrics.diagnosis._core` matches detected to ground-truth pairs
   one to one (§4.1 "matched");
2. negative-pair AP: precision averaged over 101 recall points and divided by 110 (a perfect
   ranking scores 101/110 = 0.918), where `metrics.diagnosis._core` computes the exact AP;
3. role-blind box matching: a detected pair is localized when its two boxes match the ground
   truth's two boxes in either order (human box against object box too).

    .venv/bin/python -m benchmarks.diagnose_released_differences [--images 500]
"""

from __future__ import annotations

import argparse

import numpy as np

from benchmarks.score_hico_scale import workload
from metrics.detection import box_iou
from metrics.detection._pairs import image_pairs
from metrics.diagnosis import (
    build_diagnosis,
    interaction_classification,
    negative_ranking,
    pair_localization,
    unique_pairs,
)


def released_negative_ap(negative_in_order: np.ndarray) -> float:
    """101-point interpolated AP divided by 110, as the released binary classification."""
    tp = np.cumsum(negative_in_order)
    fp = np.cumsum(~negative_in_order)
    rec = tp / max(int(negative_in_order.sum()), 1)
    prec = tp / np.maximum(tp + fp, np.finfo(np.float64).eps)
    total = 0.0
    for t in np.arange(0.0, 1.01, 0.01):
        total += prec[rec >= t].max() if (rec >= t).any() else 0.0
    return total / 110


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=500)
    parser.add_argument("--per-image", type=int, default=3,
                        help="predictions per image (default 3: few enough that recall is not saturated)")
    args = parser.parse_args()
    gt, pred = workload(args.images, round(args.images * 33000 / 9658), args.per_image)
    d = build_diagnosis(gt, pred)
    s = d.scene
    ours = pair_localization(s)
    # detected pairs and ground-truth pairs, every same-image combination
    pid, first = unique_pairs(s.pred_image, s.pred_human, s.pred_object_box, s.pred_obj)
    gpid, gfirst = unique_pairs(s.gt_image, s.gt_human, s.gt_object_box, s.gt_obj)
    g_img = s.gt_image[gfirst]
    p, g = image_pairs(g_img, s.pred_image[first], by="pred")
    dh, do, dobj = s.pred_human[first][p], s.pred_object_box[first][p], s.pred_obj[first][p]
    gh, go, gobj = s.gt_human[gfirst][g], s.gt_object_box[gfirst][g], s.gt_obj[gfirst][g]
    off = 1.0 if s.protocol == "official" else 0.0
    same = (box_iou(dh, gh, pixel_offset=off) >= s.iou) & (box_iou(do, go, pixel_offset=off) >= s.iou) & (dobj == gobj)
    swapped = (box_iou(dh, go, pixel_offset=off) >= s.iou) & (box_iou(do, gh, pixel_offset=off) >= s.iou) & (dobj == gobj)
    first_match = np.zeros(len(gfirst), dtype=bool)
    first_match[g[same]] = True
    role_blind = first_match.copy()
    role_blind[g[swapped]] = True
    ic = interaction_classification(s, d)
    _, _, _, matched, o = negative_ranking(s)
    negative = matched < 0
    released = released_negative_ap(negative[o])
    print(f"workload: {args.images} images, {len(gt)} ground truths, {len(pred)} predictions")
    print(f"1. pair recall: one-to-one (here) {ours['recall']:.4f}  first match (released) "
          f"{first_match.mean():.4f}  difference {first_match.mean() - ours['recall']:+.4f}")
    print(f"2. negative-pair AP: exact (here) {ic['negative_ap']:.4f}  101 points / 110 (released) "
          f"{released:.4f}  difference {released - ic['negative_ap']:+.4f}")
    print(f"3. role-blind matching: pair recall (first match) {role_blind.mean():.4f} vs role-aware "
          f"{first_match.mean():.4f}  difference {role_blind.mean() - first_match.mean():+.4f}")


if __name__ == "__main__":
    main()
