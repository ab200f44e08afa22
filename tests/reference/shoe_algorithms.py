"""Plain-Python reference transcriptions of SHOE Algorithm 1 (SHOE mAP), Algorithm 2 (SHOE mF1)
and the standard HICO-DET mAP — one image, one ground truth, one prediction at a time.

Deliberately straightforward and independent of ``metrics.detection._scoring`` (no numpy in the
algorithms), so that it can check the vectorized scorer (tests/metrics/test_scoring.py and
``benchmarks/score_hico_scale.py``). Inputs are plain lists:

- ``images``: list over images (in image order) of ``(gts, preds)``;
- a ground truth is ``(human_box, object_box, class_id)``; a prediction is
  ``(human_box, object_box, score, pred_class_id)`` (pred_class_id −1 = no GT class);
- ``sigma(image_index, pred_index, gt_index)`` gives σ of a prediction and a ground truth.

Tie rules are those documented in ``metrics/detection/_scoring.py``.
"""

from __future__ import annotations

EPS = 1e-8


def iou(a, b) -> float:
    iw = min(a[2], b[2]) - max(a[0], b[0])
    ih = min(a[3], b[3]) - max(a[1], b[1])
    inter = max(iw, 0.0) * max(ih, 0.0)
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def envelope(precision: list[float]) -> list[float]:
    """All-point interpolation: each precision raised to the highest one at a higher recall."""
    out = list(precision)
    for i in range(len(out) - 2, -1, -1):
        out[i] = max(out[i], out[i + 1])
    return out


def area(precision: list[float], recall: list[float]) -> float:
    """AP = Σ_i (R_i − R_{i−1}) P_i (SHOE Eq. 11; the all-point AP with an envelope)."""
    ap, prev = 0.0, 0.0
    for p, r in zip(precision, recall):
        ap += (r - prev) * p
        prev = r
    return ap


def _match_image(gts, preds, sigma_i, theta, use):
    """Algorithm 1 lines 8–28 for one image: returns (per GT (pred index | None, σ), matched)."""
    matched = [False] * len(preds)
    out = []
    for gi, g in enumerate(gts):
        best, best_key = None, None
        for pj, p in enumerate(preds):
            if not use[pj] or matched[pj]:
                continue
            if iou(p[0], g[0]) >= theta and iou(p[1], g[1]) >= theta:
                s = sigma_i(pj, gi)
                key = (s, p[2])
                if best is None or key > best_key:   # strict: ties keep the earlier prediction
                    best, best_key = pj, key
        if best is None:
            out.append((None, 0.0))
        else:
            matched[best] = True
            out.append((best, best_key[0]))
    return out, matched


def _most_similar_gt(gts, pj, sigma_i):
    best, best_s = None, None
    for gi in range(len(gts)):
        s = sigma_i(pj, gi)
        if best is None or s > best_s:
            best, best_s = gi, s
    return best, best_s


def shoe_map(images, sigma, n_classes, *, theta=0.5, delta=0.0, interpolation="none"):
    """Algorithm 1. Returns the list of per-class AP (None for classes without GT)."""
    S = [[] for _ in range(n_classes)]
    L = [[] for _ in range(n_classes)]
    n_gt = [0] * n_classes
    for ii, (gts, preds) in enumerate(images):
        sigma_i = lambda pj, gi, ii=ii: sigma(ii, pj, gi)
        result, matched = _match_image(gts, preds, sigma_i, theta, [True] * len(preds))
        for gi, (pj, s) in enumerate(result):
            k = gts[gi][2]
            n_gt[k] += 1
            if pj is None:
                S[k].append(0.0)
                L[k].append(0.0)
            else:
                S[k].append(preds[pj][2])
                L[k].append(s)
        if not gts:
            continue
        for pj, p in enumerate(preds):
            if matched[pj]:
                continue
            gi, s = _most_similar_gt(gts, pj, sigma_i)
            if s >= delta:
                k = gts[gi][2]
                S[k].append(p[2])
                L[k].append(0.0)
    aps = []
    for k in range(n_classes):
        if n_gt[k] == 0:
            aps.append(None)
            continue
        order = sorted(range(len(S[k])), key=lambda i: -S[k][i])
        tp = 0.0
        precision, recall = [], []
        for i, idx in enumerate(order, 1):
            tp += L[k][idx]
            fp = i - tp
            precision.append(tp / (tp + fp + EPS))
            recall.append(tp / (n_gt[k] + EPS))
        aps.append(area(envelope(precision) if interpolation == "all-point" else precision, recall))
    return aps


def shoe_mf1(images, sigma, n_classes, *, theta=0.5, delta=0.0, tau=0.5, fn_mode="algorithm2"):
    """Algorithm 2 (and miss rates). Returns (per-class F1 list, gt_miss_rate, pred_miss_rate)."""
    TP = [0.0] * n_classes
    FP = [0.0] * n_classes
    FN = [0.0] * n_classes
    n_gt = [0] * n_classes
    gt_total = gt_missed = pred_total = pred_missed = 0
    for ii, (gts, preds) in enumerate(images):
        sigma_i = lambda pj, gi, ii=ii: sigma(ii, pj, gi)
        use = [tau is None or p[2] >= tau for p in preds]
        result, matched = _match_image(gts, preds, sigma_i, theta, use)
        for gi, (pj, s) in enumerate(result):
            k = gts[gi][2]
            n_gt[k] += 1
            gt_total += 1
            if pj is None:
                FN[k] += 1.0
                gt_missed += 1
            else:
                TP[k] += s
                FP[k] += 1.0 - s
                if fn_mode == "eq5":
                    FN[k] += 1.0 - s
        for pj, p in enumerate(preds):
            if not use[pj]:
                continue
            pred_total += 1
            if matched[pj]:
                continue
            pred_missed += 1
            if not gts:
                continue
            gi, s = _most_similar_gt(gts, pj, sigma_i)
            if s >= delta:
                FP[gts[gi][2]] += 1.0
    f1 = []
    for k in range(n_classes):
        if n_gt[k] == 0:
            f1.append(None)
            continue
        precision = TP[k] / (TP[k] + FP[k] + EPS)
        recall = TP[k] / (TP[k] + FN[k] + EPS)
        f1.append(2 * precision * recall / (precision + recall + EPS))
    return (f1, gt_missed / gt_total if gt_total else 0.0,
            pred_missed / pred_total if pred_total else 0.0)


def standard_map(images, n_classes, *, theta=0.5):
    """HICO-DET AP per class: per class, predictions of all images in descending score
    (stable), each takes the unmatched same-class GT of its image with both IoUs ≥ θ and the
    largest min IoU (ties: first); all-point interpolated AP."""
    n_gt = [0] * n_classes
    for gts, _ in images:
        for g in gts:
            n_gt[g[2]] += 1
    dets = [[] for _ in range(n_classes)]
    for ii, (_, preds) in enumerate(images):
        for pj, p in enumerate(preds):
            if p[3] >= 0:
                dets[p[3]].append((ii, pj))
    aps = []
    for k in range(n_classes):
        if n_gt[k] == 0:
            aps.append(None)
            continue
        order = sorted(dets[k], key=lambda d: -images[d[0]][1][d[1]][2])
        used = set()
        flags = []
        for ii, pj in order:
            p = images[ii][1][pj]
            best, best_ov = None, None
            for gi, g in enumerate(images[ii][0]):
                if g[2] != k or (ii, gi) in used:
                    continue
                oh, oo = iou(p[0], g[0]), iou(p[1], g[1])
                if oh >= theta and oo >= theta:
                    ov = min(oh, oo)
                    if best is None or ov > best_ov:
                        best, best_ov = gi, ov
            if best is None:
                flags.append(0)
            else:
                used.add((ii, best))
                flags.append(1)
        tp = 0
        precision, recall = [], []
        for i, f in enumerate(flags, 1):
            tp += f
            precision.append(tp / i)
            recall.append(tp / n_gt[k])
        aps.append(area(envelope(precision), recall))
    return aps
