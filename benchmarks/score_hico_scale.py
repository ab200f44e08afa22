"""HICO-DET-sized scoring benchmark: standard mAP + SHOE mAP + SHOE mF1 (+ miss rates).

Synthetic workload: 9,658 images, ~33,000 ground-truth HOIs over the 600 HICO-DET classes
(long-tailed class frequencies), 100 predictions per image (~966,000). A prediction copies a
ground truth of its image with jittered boxes (70 %) or has random boxes; its label is the
ground truth's class (40 %), a class sharing the verb or the object (30 %), or a random class
(30 %); scores are uniform, rounded to 1e-3 so that ties occur. Similarities: the shipped
WordNet baseline matrices.

Times, in one run:
  (a) the project's scorer (metrics.detection._scoring.evaluate) from in-memory arrays;
  (b) the same from the JSON Lines files (reading included);
  (c) the plain per-image, per-ground-truth Python transcriptions: Algorithms 1 and 2 in
      tests/reference/shoe_algorithms.py and the official HICO-DET evaluation in
      tests/reference/hico_official.py, given the same resolved labels and similarity tables
      (list preparation not timed);
checks that (a) and (c) agree to 1e-9, and prints medians, the ratio (c)/(a) and peak memory.

    .venv/bin/python -m benchmarks.score_hico_scale            # full size, 3 runs of (a) and (b)
    .venv/bin/python -m benchmarks.score_hico_scale --quick    # 1,000 images, 1 run each
"""

from __future__ import annotations

import argparse
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

import numpy as np

from metrics.datasets.hico_det import hico
from metrics.detection import Detections, read_detections, write_jsonl
from metrics.detection._scoring import evaluate
from metrics.vocab import load_default
from tests.reference import shoe_algorithms as ref
from tests.reference.hico_official import eval_one


def _boxes(rng, n):
    xy = rng.uniform(0, 400, size=(n, 2))
    wh = rng.uniform(40, 300, size=(n, 2))
    return np.round(np.hstack([xy, xy + wh]), 1)


def _jitter(rng, boxes, scale=0.08):
    w = (boxes[:, 2] - boxes[:, 0])[:, None]
    h = (boxes[:, 3] - boxes[:, 1])[:, None]
    noise = rng.normal(0, scale, size=boxes.shape) * np.hstack([w, h, w, h])
    out = boxes + noise
    out[:, 2] = np.maximum(out[:, 2], out[:, 0] + 1)
    out[:, 3] = np.maximum(out[:, 3], out[:, 1] + 1)
    return np.round(out, 1)


def workload(n_images=9658, n_gt=33000, per_image=100, seed=0, *, model_seed=None):
    """(ground truth, predictions): ``seed`` draws both; ``model_seed`` (when given) draws the
    predictions alone, so two model seeds give two models of the same ground truth."""
    rng = np.random.default_rng(seed)
    classes = hico().classes
    verbs, objects = classes["verb"].to_numpy(object), classes["object"].to_numpy(object)
    weights = 1.0 / np.arange(1, len(classes) + 1) ** 0.8
    weights = rng.permutation(weights / weights.sum())
    counts = 1 + rng.poisson(n_gt / n_images - 1, size=n_images)
    g_img = np.repeat(np.arange(n_images), counts)
    g_cls = rng.choice(len(classes), size=len(g_img), p=weights)
    g_h = _boxes(rng, len(g_img))
    share = rng.random(len(g_img)) < 0.5  # half the HOIs reuse the image's first human box
    first = np.cumsum(counts) - counts
    g_h[share] = g_h[first[g_img[share]]]
    g_o = _boxes(rng, len(g_img))

    if model_seed is not None:
        rng = np.random.default_rng([seed, model_seed])
    p_img = np.repeat(np.arange(n_images), per_image)
    n_pred = len(p_img)
    src = first[p_img] + (rng.random(n_pred) * counts[p_img]).astype(np.int64)
    near = rng.random(n_pred) < 0.7
    p_h = np.where(near[:, None], _jitter(rng, g_h[src]), _boxes(rng, n_pred))
    p_o = np.where(near[:, None], _jitter(rng, g_o[src]), _boxes(rng, n_pred))
    kind = rng.random(n_pred)
    p_cls = g_cls[src].copy()
    similar = (kind >= 0.4) & (kind < 0.7)
    same_obj = {o: np.flatnonzero(objects == o) for o in np.unique(objects)}
    same_verb = {v: np.flatnonzero(verbs == v) for v in np.unique(verbs)}
    for i in np.flatnonzero(similar):  # data generation only, not timed
        c = p_cls[i]
        pool = same_obj[objects[c]] if rng.random() < 0.5 else same_verb[verbs[c]]
        p_cls[i] = pool[rng.integers(len(pool))]
    rand = kind >= 0.7
    p_cls[rand] = rng.integers(0, len(classes), size=int(rand.sum()))
    score = np.round(rng.random(n_pred), 3)
    names = np.array([f"HICO_test2015_{i:08d}.jpg" for i in range(n_images)], dtype=object)
    gt = Detections.from_arrays(names[g_img], g_h, g_o, verbs[g_cls], objects[g_cls])
    pred = Detections.from_arrays(names[p_img], p_h, p_o, verbs[p_cls], objects[p_cls], score)
    return gt, pred


def reference_inputs(gt, pred, ev, w=0.5):
    """Plain lists for the reference, from the same resolved labels and tables."""
    gv, go = ev.verbs.gt_code.tolist(), ev.objects.gt_code.tolist()
    pv, po = ev.verbs.pred_code.tolist(), ev.objects.pred_code.tolist()
    vt, ot = ev.verbs.table.tolist(), ev.objects.table.tolist()
    gt_class = _gt_class(ev)
    pred_class = _pred_class(ev)
    n_img = max(int(gt.image.max()), int(pred.image.max())) + 1
    images = [([], []) for _ in range(n_img)]
    gidx = [[] for _ in range(n_img)]
    pidx = [[] for _ in range(n_img)]
    gh, gob, ph, pob = gt.human_box.tolist(), gt.object_box.tolist(), pred.human_box.tolist(), pred.object_box.tolist()
    for g, i in enumerate(gt.image.tolist()):
        images[i][0].append((gh[g], gob[g], gt_class[g]))
        gidx[i].append(g)
    sc = pred.score.tolist()
    for p, i in enumerate(pred.image.tolist()):
        images[i][1].append((ph[p], pob[p], sc[p], pred_class[p]))
        pidx[i].append(p)

    def sigma(ii, pj, gi):
        p, g = pidx[ii][pj], gidx[ii][gi]
        return w * vt[pv[p]][gv[g]] + (1.0 - w) * ot[po[p]][go[g]]
    return images, sigma


def official_inputs(images, n_classes):
    """``eval_one.m``'s per-class inputs from the per-image lists (image by image, file order)."""
    gt_by_class = [dict() for _ in range(n_classes)]
    det_by_class = [[] for _ in range(n_classes)]
    for i, (gts, preds) in enumerate(images):
        for h, o, c in gts:
            gt_by_class[c].setdefault(i, []).append(h + o)
        for h, o, score, c in preds:
            if c >= 0:
                det_by_class[c].append((i, h + o, score))
    return gt_by_class, det_by_class


def _gt_class(ev):
    import pandas as pd
    keys = pd.MultiIndex.from_frame(ev.classes[["verb", "object"]])
    gkv = np.asarray(ev.verbs.gt_class_key, dtype=object)[ev.verbs.gt_code]
    gko = np.asarray(ev.objects.gt_class_key, dtype=object)[ev.objects.gt_code]
    return keys.get_indexer(pd.MultiIndex.from_arrays([gkv, gko])).tolist()


def _pred_class(ev):
    import pandas as pd
    keys = pd.MultiIndex.from_frame(ev.classes[["verb", "object"]])
    pkv = np.asarray(ev.verbs.pred_class_key, dtype=object)[ev.verbs.pred_code]
    pko = np.asarray(ev.objects.pred_class_key, dtype=object)[ev.objects.pred_code]
    return keys.get_indexer(pd.MultiIndex.from_arrays([pkv, pko])).tolist()


def _max_diff(a, b):
    a = np.asarray(a, dtype=float)
    b = np.array([np.nan if x is None else x for x in b], dtype=float)
    assert np.array_equal(np.isnan(a), np.isnan(b)), "classes with ground truth differ"
    ok = ~np.isnan(a)
    return float(np.max(np.abs(a[ok] - b[ok]))) if ok.any() else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--images", type=int, default=9658)
    parser.add_argument("--gt", type=int, default=None, help="ground-truth HOIs (default 3.42 per image)")
    parser.add_argument("--per-image", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--reference-repeats", type=int, default=1)
    parser.add_argument("--quick", action="store_true", help="1,000 images, one run each")
    args = parser.parse_args()
    if args.quick:
        args.images, args.repeats = 1000, 1
    n_gt = args.gt or round(args.images * 33000 / 9658)

    t = time.perf_counter()
    gt, pred = workload(args.images, n_gt, args.per_image)
    verb_sim, object_sim = load_default("v"), load_default("n")
    print(f"workload: {len(gt.images)} images, {len(gt)} ground-truth HOIs in "
          f"{len(set(zip(gt.verb, gt.object)))} classes, {len(pred)} predictions "
          f"(generated in {time.perf_counter() - t:.1f} s); machine: {len(__import__('os').sched_getaffinity(0))} cores")
    params = dict(verb_sim=verb_sim, object_sim=object_sim)

    evaluate(gt, pred, **params)  # warm-up (imports, caches)
    times_a = []
    for _ in range(args.repeats):
        t = time.perf_counter()
        ev = evaluate(gt, pred, **params)
        times_a.append(time.perf_counter() - t)

    with tempfile.TemporaryDirectory() as tmp:
        gt_path, pred_path = Path(tmp) / "gt.jsonl", Path(tmp) / "pred.jsonl"
        write_jsonl(gt, gt_path, with_scores=False)
        write_jsonl(pred, pred_path)
        size_mb = pred_path.stat().st_size / 2**20
        times_b = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            ev_b = evaluate(read_detections(gt_path), read_detections(pred_path), **params)
            times_b.append(time.perf_counter() - t)
    same_b = (np.allclose(ev_b.shoe_ap, ev.shoe_ap, equal_nan=True)
              and np.allclose(ev_b.ap, ev.ap, equal_nan=True))

    images, sigma = reference_inputs(gt, pred, ev)
    n_classes = len(ev.classes)
    times_c = []
    for _ in range(args.reference_repeats):
        t = time.perf_counter()
        r_shoe = ref.shoe_map(images, sigma, n_classes)
        r_f1, r_gmr, r_pmr = ref.shoe_mf1(images, sigma, n_classes, tau=0.5)
        r_ap = eval_one(*official_inputs(images, n_classes), len(images))[0]
        times_c.append(time.perf_counter() - t)

    d_shoe = _max_diff(ev.shoe_ap, r_shoe)
    d_f1 = _max_diff(ev.f1.f1, r_f1)
    d_ap = _max_diff(ev.ap, r_ap)
    d_rates = max(abs(ev.gt_miss_rate - r_gmr), abs(ev.pred_miss_rate - r_pmr))
    agree = max(d_shoe, d_f1, d_ap, d_rates) <= 1e-9

    tracemalloc.start()
    evaluate(gt, pred, **params)
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()

    med_a, med_b, med_c = (statistics.median(x) for x in (times_a, times_b, times_c))
    full = lambda a: float(np.nanmean(a))
    all_point = evaluate(gt, pred, map_protocol="all-point", **params)
    print(f"standard mAP, Default Full: official {float(ev.hico.default_ap.mean()):.4f} "
          f"(Known-Object {float(ev.hico.ko_ap.mean()):.4f}), official transcription "
          f"{float(np.sum(r_ap)) / len(ev.hico.default_ap):.4f}, all-point reading {full(all_point.ap):.4f}")
    print(f"scores: mean AP over GT classes {full(ev.ap):.4f}  SHOE mAP {full(ev.shoe_ap):.4f}  SHOE mF1 {full(ev.f1.f1):.4f}  "
          f"GT miss {ev.gt_miss_rate:.4f}  pred miss {ev.pred_miss_rate:.4f}")
    print(f"(a) in-memory arrays      median {med_a:7.3f} s  over {len(times_a)} runs "
          f"{[round(x, 3) for x in times_a]}")
    print(f"(b) from JSON Lines       median {med_b:7.3f} s  over {len(times_b)} runs "
          f"(predictions file {size_mb:.0f} MiB; same scores as (a): {same_b})")
    print(f"(c) Python reference      median {med_c:7.3f} s  over {len(times_c)} runs")
    print(f"ratio (c)/(a): {med_c / med_a:.1f}x")
    print(f"(a) vs (c) max |diff|: SHOE AP {d_shoe:.2e}, SHOE F1 {d_f1:.2e}, AP {d_ap:.2e}, "
          f"miss rates {d_rates:.2e} -> {'agree to 1e-9' if agree else 'DISAGREE'}")
    print(f"peak memory: (a) traced allocations {peak / 2**30:.3f} GiB; whole process max RSS "
          f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20:.3f} GiB (includes (b), (c))")
    if not agree:
        sys.exit(1)


if __name__ == "__main__":
    main()
