"""Plain-Python transcription of the official HICO-DET evaluation (reference for the tests).

ywchao/ho-rcnn, ``evaluation/VOCevaldet_bboxpair.m`` (commit a37edd2) and
``evaluation/eval_one.m`` (commit 116425b). Line numbers refer to those files. MATLAB's
1-based indexing becomes 0-based; nothing else is changed or vectorized.
"""

from __future__ import annotations

import math


def matlab_colon_0_01_1() -> list[float]:
    """``0:0.1:1`` element by element as MATLAB's colon operator forms it (first half a + k·d,
    second half b − (n − k)·d)."""
    n = 10
    return [0 + k * 0.1 if k <= n / 2 else 1 - (n - k) * 0.1 for k in range(n + 1)]


def voc_evaldet_bboxpair(det_id, det_bb, det_conf, gt_bbox, min_overlap):
    """``[rec, prec, ap] = VOCevaldet_bboxpair(det_id, det_bb, det_conf, gt_bbox, min_overlap)``.

    ``det_id[d]``: image index of detection d; ``det_bb[d]``: 8 numbers (human box, object box);
    ``gt_bbox[i]``: list of 8-number rows of image i (empty list: no ground truth)."""
    # l.3-12: load ground truth objects
    npos = 0
    gt = []
    for rows in gt_bbox:
        gt.append({"bb": rows, "det": [False] * len(rows)})
        npos += len(rows)
    # l.14-17: sort detections by decreasing confidence (MATLAB's sort is stable)
    si = sorted(range(len(det_conf)), key=lambda d: -det_conf[d])
    det_id = [det_id[d] for d in si]
    det_bb = [det_bb[d] for d in si]
    # l.19-23
    nd = len(det_conf)
    tp = [0.0] * nd
    fp = [0.0] * nd
    for d in range(nd):                                   # l.24
        i = det_id[d]
        bb_1 = det_bb[d][0:4]
        bb_2 = det_bb[d][4:8]
        ov_max = -math.inf                                # l.31
        j_max = None
        for j in range(len(gt[i]["bb"])):                 # l.32
            bbgt_1 = gt[i]["bb"][j][0:4]
            bbgt_2 = gt[i]["bb"][j][4:8]
            bi_1 = [max(bb_1[0], bbgt_1[0]), max(bb_1[1], bbgt_1[1]),
                    min(bb_1[2], bbgt_1[2]), min(bb_1[3], bbgt_1[3])]
            iw_1 = bi_1[2] - bi_1[0] + 1                  # l.39
            ih_1 = bi_1[3] - bi_1[1] + 1
            if iw_1 > 0 and ih_1 > 0:
                ua_1 = ((bb_1[2] - bb_1[0] + 1) * (bb_1[3] - bb_1[1] + 1)
                        + (bbgt_1[2] - bbgt_1[0] + 1) * (bbgt_1[3] - bbgt_1[1] + 1)
                        - iw_1 * ih_1)
                ov_1 = iw_1 * ih_1 / ua_1
            else:
                ov_1 = 0
            bi_2 = [max(bb_2[0], bbgt_2[0]), max(bb_2[1], bbgt_2[1]),
                    min(bb_2[2], bbgt_2[2]), min(bb_2[3], bbgt_2[3])]
            iw_2 = bi_2[2] - bi_2[0] + 1                  # l.53
            ih_2 = bi_2[3] - bi_2[1] + 1
            if iw_2 > 0 and ih_2 > 0:
                ua_2 = ((bb_2[2] - bb_2[0] + 1) * (bb_2[3] - bb_2[1] + 1)
                        + (bbgt_2[2] - bbgt_2[0] + 1) * (bbgt_2[3] - bbgt_2[1] + 1)
                        - iw_2 * ih_2)
                ov_2 = iw_2 * ih_2 / ua_2
            else:
                ov_2 = 0
            min_ov = min(ov_1, ov_2)                      # l.64
            if min_ov > ov_max:                           # l.66
                ov_max = min_ov
                j_max = j
        if ov_max >= min_overlap:                         # l.72
            if not gt[i]["det"][j_max]:
                tp[d] = 1.0
                gt[i]["det"][j_max] = True
            else:
                fp[d] = 1.0
        else:
            fp[d] = 1.0
    # l.82-86: precision / recall
    for d in range(1, nd):
        fp[d] += fp[d - 1]
        tp[d] += tp[d - 1]
    rec = [t / npos if npos else (math.nan if t == 0 else math.inf) for t in tp]
    prec = [t / (f + t) for t, f in zip(tp, fp)]
    # l.88-95: 11-point average precision
    ap = 0.0
    for t in matlab_colon_0_01_1():
        ps = [p for p, r in zip(prec, rec) if r >= t]
        p = max(ps) if ps else 0.0
        ap = ap + p / 11
    return rec, prec, ap


def eval_one(gt_by_class, det_by_class, n_images, *, known_object_images=None, min_overlap=0.5):
    """The per-class loop of ``eval_one.m`` (l.170-216) for one setting.

    ``gt_by_class[c][i]``: ground-truth rows of class c in image i; ``det_by_class[c]``: list of
    ``(image, 8 numbers, confidence)`` in the order ``eval_one.m`` builds it (image by image);
    ``known_object_images[c]``: the images kept in the Known-Object setting (l.199-206), None
    for Default. Returns ``(AP, REC)`` per class."""
    AP, REC = [], []
    for c in range(len(gt_by_class)):
        dets = det_by_class[c]
        if known_object_images is not None:
            dets = [d for d in dets if d[0] in known_object_images[c]]
        det_id = [d[0] for d in dets]
        det_bb = [d[1] for d in dets]
        det_conf = [d[2] for d in dets]
        gt = [gt_by_class[c].get(i, []) for i in range(n_images)]
        rec, _, ap = voc_evaldet_bboxpair(det_id, det_bb, det_conf, gt, min_overlap)
        AP.append(ap)
        REC.append(rec[-1] if rec else 0.0)              # l.212-214
    return AP, REC
