"""Diag-HOI §4: the sub-tasks scored apart — pair localization (§4.1) and interaction
classification (§4.2)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from metrics.core._segments import distinct_indices, rank_within_blocks, run_starts
from metrics.detection._ap import class_ap, sequential_greedy
from metrics.detection._boxes import box_iou
from metrics.detection._pairs import image_pairs
from metrics.diagnosis._core import Diagnosis
from metrics.diagnosis._scene import NO_INTERACTION, SUBSETS, Scene, _edges, _pixel_offset


# ---------------------------------------------------------------------------- §4 sub-tasks
def unique_pairs(image, human, obj_box, obj):
    """Distinct (image, human box, object box, object label) rows: (pair id per row, first row
    of each pair), pairs numbered by first appearance.

    Each row is hashed into one 64-bit key (its ten values' bit patterns, -0.0 read as 0.0)
    and the keys are factorized; a check that every row equals its pair's first row guards
    against two different rows sharing a key, in which case pandas groups the ten columns
    (the reference, ~20x slower)."""
    rows = np.column_stack([image, human, obj_box, obj]).astype(np.float64) + 0.0
    bits = rows.view(np.uint64)
    key = np.zeros(len(rows), dtype=np.uint64)
    for k in range(rows.shape[1]):
        key = key * np.uint64(0x9E3779B97F4A7C15) + bits[:, k]
    pid = pd.factorize(key)[0]
    first = _first_rows(pid)
    if not (rows == rows[first[pid]]).all():
        pid = pd.DataFrame(rows).groupby(list(range(rows.shape[1])), sort=False).ngroup().to_numpy()
        first = _first_rows(pid)
    return pid.astype(np.int64), first


def _first_rows(pid: np.ndarray) -> np.ndarray:
    """The first row of each id (ids 0..max)."""
    first = np.full(pid.max() + 1 if len(pid) else 0, -1, dtype=np.int64)
    first[pid[::-1]] = np.arange(len(pid))[::-1]
    return first


def _prediction_pairs(s: Scene):
    """:func:`unique_pairs` of the scene's predictions (computed once per scene)."""
    if "prediction_pairs" not in s.cache:
        s.cache["prediction_pairs"] = unique_pairs(s.pred_image, s.pred_human, s.pred_object_box, s.pred_obj)
    return s.cache["prediction_pairs"]


def _gt_pairs(s: Scene):
    """:func:`unique_pairs` of the scene's ground truth (computed once per scene)."""
    if "gt_pairs" not in s.cache:
        s.cache["gt_pairs"] = unique_pairs(s.gt_image, s.gt_human, s.gt_object_box, s.gt_obj)
    return s.cache["gt_pairs"]


def _pair_candidates(s: Scene, det_image, det_human, det_object_box, det_obj):
    """The ground-truth pairs and, per detected pair, the ground-truth pairs it may match (same
    image and object label, IoU_h ≥ θ and IoU_o ≥ θ): ``(gt pair id per GT triplet, first GT
    row per GT pair, detected pair per candidate, GT pair per candidate, min IoU)``."""
    gpid, gfirst = _gt_pairs(s)
    g_img = s.gt_image[gfirst]
    p, g = image_pairs(g_img, det_image, by="pred")
    iou_h = box_iou(det_human[p], s.gt_human[gfirst[g]], pixel_offset=_pixel_offset(s))
    iou_o = box_iou(det_object_box[p], s.gt_object_box[gfirst[g]], pixel_offset=_pixel_offset(s))
    ok = np.flatnonzero((iou_h >= s.iou) & (iou_o >= s.iou) & (det_obj[p] == s.gt_obj[gfirst[g]]))
    return gpid, gfirst, p[ok], g[ok], np.minimum(iou_h[ok], iou_o[ok])


def match_pairs(s: Scene, det_image, det_human, det_object_box, det_obj, det_pos, *, candidates=None):
    """§4.1 one-to-one matching of detected pairs to ground-truth pairs.

    Ground-truth pairs are the distinct (human box, object box, object label) of each image's
    ground truths. Detected pairs, in ``det_pos`` order, each take the free ground-truth pair
    of their image with the same object label, IoU_h ≥ θ and IoU_o ≥ θ and the largest
    min(IoU_h, IoU_o). Returns ``(gt_pair_id per GT triplet, first GT row per GT pair,
    matched GT pair per detected pair or −1)``. ``candidates``: :func:`_pair_candidates` of
    the same detected pairs, when the caller has them."""
    if candidates is None:
        candidates = _pair_candidates(s, det_image, det_human, det_object_box, det_obj)
    gpid, gfirst, ep, eg, min_iou = candidates
    n = len(det_image)
    preds = distinct_indices(ep, n)
    rank = rank_within_blocks(det_image[preds], det_pos[preds], n, preds)
    chosen = sequential_greedy(ep, eg, rank, n, len(gfirst), keys=(min_iou,))
    matched = np.full(n, -1, dtype=np.int64)
    hit = chosen >= 0
    matched[hit] = eg[chosen[hit]]
    return gpid, gfirst, matched


def pair_localization(s: Scene, pairs=None) -> dict:
    """§4.1 pair localization: pairs per image, pair recall and pair precision.

    ``pairs``: first-stage pair detections (:class:`~metrics.detection._detections.Detections`; verbs
    ignored; scores optional) — by default the distinct pairs of the scene's predictions, each
    scored by its best triplet. Recall: share of ground-truth pairs matched (each detected pair
    matches at most one). Precision: share of detected pairs matched. Rare / Non-rare recall
    count the ground-truth pairs having at least one triplet of a rare / non-rare class;
    precision is Full only (a first-stage pair has no action, hence no HOI class).
    """
    if pairs is None:
        _, first, _, gpid, gfirst, matched = _matched_prediction_pairs(s)
        img = s.pred_image[first]
        source = "distinct pairs of the predictions"
    else:
        pairs = pairs.with_images(_extend_images(s, pairs))
        obj = _object_codes(s, pairs)
        pid, first = unique_pairs(pairs.image, pairs.human_box, pairs.object_box, obj)
        pscore = np.full(len(first), -np.inf)
        np.maximum.at(pscore, pid, np.nan_to_num(pairs.score, nan=0.0))
        img = pairs.image[first]
        gpid, gfirst, matched = match_pairs(s, img, pairs.human_box[first], pairs.object_box[first], obj[first],
                                            _pair_positions(pscore, img))
        source = pairs.source
    n_gp = len(gfirst)
    found = np.zeros(n_gp, dtype=bool)
    found[matched[matched >= 0]] = True
    masks = s.subset_masks()
    recall = {}
    for sub, m in masks.items():
        in_sub = np.zeros(n_gp, dtype=bool)
        in_sub[gpid[m[s.gt_class]]] = True
        recall[sub] = float(found[in_sub].mean()) if in_sub.any() else None
    n_images = len(s.images) if pairs is None else len(pairs.images)
    return {"source": source, "n_pairs": int(len(img)), "n_gt_pairs": int(n_gp), "n_images": int(n_images),
            "pairs_per_image": float(len(img) / n_images) if n_images else 0.0,
            "recall": recall["full"], "precision": float((matched >= 0).mean()) if len(img) else None,
            "splits": {sub: {"recall": recall[sub], "precision": float((matched >= 0).mean())
                             if sub == "full" and len(img) else None} for sub in SUBSETS}}


def _extend_images(s: Scene, det) -> np.ndarray:
    return pd.unique(np.concatenate([s.images, det.images]))


def _object_codes(s: Scene, det) -> np.ndarray:
    """Object label codes of other detections in the scene's object code space (unknown: −1)."""
    from metrics.detection._hoi_labels import resolve_labels
    from metrics.vocab._baseline import load_default

    r = resolve_labels(s.object_names, det.object, "n", load_default("n", dataset=s.dataset), s.vocabulary,
                       where=lambda side, row: det.where(row, "object"))
    index = {k: i for i, k in enumerate(s.object_names.tolist())}
    per_text = np.array([index.get(k, -1) for k in r.pred_class_key], dtype=np.int64)
    return per_text[r.pred_code]


def _prediction_pair_candidates(s: Scene):
    """:func:`_pair_candidates` of the scene's distinct prediction pairs (once per scene), read
    off the scene's :class:`Edges`: a pair's first triplet and a ground-truth pair's first row
    carry the pair's boxes and label, and the edges hold their IoUs in the same order
    (prediction, then ground truth, in index order; pair ids follow first appearance)."""
    if "prediction_pair_candidates" not in s.cache:
        pid, first = _prediction_pairs(s)
        gpid, gfirst = _gt_pairs(s)
        e = _edges(s)
        first_of_pair = np.zeros(s.n_pred, dtype=bool)
        first_of_pair[first] = True
        first_of_gt_pair = np.zeros(len(s.gt_image), dtype=bool)
        first_of_gt_pair[gfirst] = True
        ok = np.flatnonzero(e.localized & first_of_pair[e.p] & first_of_gt_pair[e.g])
        s.cache["prediction_pair_candidates"] = (gpid, gfirst, pid[e.p[ok]], gpid[e.g[ok]],
                                                 np.minimum(e.iou_h[ok], e.iou_o[ok]))
    return s.cache["prediction_pair_candidates"]


def _pair_positions(pscore: np.ndarray, img: np.ndarray) -> np.ndarray:
    """Each detected pair's turn in §4.1's matching: score descending, then image, then order."""
    order = np.lexsort((np.arange(len(img)), img, -pscore))
    dpos = np.empty(len(img), dtype=np.int64)
    dpos[order] = np.arange(len(img))
    return dpos


def _matched_prediction_pairs(s: Scene):
    """The distinct pairs of the predictions, each scored by its best triplet, matched one-to-one
    to ground-truth pairs (§4.1; once per scene, for §4.1 and §4.2): ``(pair id per triplet,
    first triplet per pair, pair score, GT pair id per GT triplet, first GT row per GT pair,
    matched GT pair per pair or −1)``."""
    if "matched_prediction_pairs" not in s.cache:
        pid, first = _prediction_pairs(s)
        pscore = np.full(len(first), -np.inf)
        np.maximum.at(pscore, pid, s.score)
        img = s.pred_image[first]
        gpid, gfirst, matched = match_pairs(s, img, s.pred_human[first], s.pred_object_box[first],
                                            s.pred_obj[first], _pair_positions(pscore, img),
                                            candidates=_prediction_pair_candidates(s))
        s.cache["matched_prediction_pairs"] = (pid, first, pscore, gpid, gfirst, matched)
    return s.cache["matched_prediction_pairs"]


def negative_ranking(s: Scene):
    """The distinct predicted pairs of §4.2 matched to ground-truth pairs (§4.1), and their
    order by negative score 1 − max actual-action score: ``(pair id per triplet, GT pair id per
    GT triplet, first GT row per GT pair, matched GT pair per pair or −1, order)``."""
    pid, first, _, gpid, gfirst, matched = _matched_prediction_pairs(s)
    n_pairs = len(first)
    actual = s.verb_names[s.pred_verb] != NO_INTERACTION
    best = np.zeros(n_pairs)
    np.maximum.at(best, pid[actual], s.score[actual])
    return pid, gpid, gfirst, matched, np.lexsort((np.arange(n_pairs), -(1.0 - best)))


def interaction_classification(s: Scene, d: Diagnosis | None = None) -> dict:
    """§4.2: AP of recognising incorrectly localized pairs, and interaction mAP over correctly
    localized pairs.

    Pairs are the distinct pairs of the predictions, matched one-to-one to ground-truth pairs
    as in §4.1. *Negative AP*: each pair's negative score is 1 − max over its actual actions
    (verbs other than ``no_interaction``; 0 when it has none) of the triplet score; positives
    are the pairs that match no ground-truth pair. *Interaction mAP*: the triplets of matched
    pairs only, so a pair's localization (and its detection confidence relative to other
    pairs) no longer matters; a triplet is a true positive when its verb is among the matched
    ground-truth pair's verbs (first triplet of that verb on the pair); AP per verb over the
    ground-truth triplets of matched pairs, averaged over verbs (``interaction_map``); per HOI
    class for the Full / Rare / Non-rare breakdown. Scores are the triplet scores as given.
    """
    pid, gpid, gfirst, matched, o = negative_ranking(s)
    n_pairs = len(matched)
    negative = matched < 0
    n_neg = int(negative.sum())
    neg_ap = float(class_ap(np.zeros(n_pairs, np.int64), negative[o], np.arange(n_pairs),
                            np.array([n_neg]))[0]) if n_neg else None

    # interaction mAP over triplets of correctly localized pairs
    gp = matched[pid]                                   # GT pair of each triplet's pair
    loc = np.flatnonzero(gp >= 0)
    n_v = len(s.verb_names)
    gt_keys = np.unique(gpid * n_v + s.gt_verb)          # (GT pair, verb) present in the ground truth
    key = gp[loc] * n_v + s.pred_verb[loc]
    is_gt = np.isin(key, gt_keys)
    first_of_key = np.zeros(len(loc), dtype=bool)
    if len(loc):
        o2 = np.lexsort((s.pos[loc], pid[loc] * n_v + s.pred_verb[loc]))
        k2 = (pid[loc] * n_v + s.pred_verb[loc])[o2]
        first_of_key[o2] = run_starts(k2)
    tp = is_gt & first_of_key
    found_pair = np.zeros(len(gfirst), dtype=bool)
    found_pair[matched[matched >= 0]] = True
    gt_loc = found_pair[gpid]
    # per verb
    n_gt_verb = np.bincount(s.gt_verb[gt_loc], minlength=n_v)
    ap_verb = class_ap(s.pred_verb[loc], tp, s.pos[loc], n_gt_verb)
    has = np.flatnonzero(n_gt_verb > 0)
    inter_map = float(ap_verb[has].mean()) if len(has) else None
    # per HOI class (object of a matched pair is the ground truth's)
    n_gt_cls = np.bincount(s.gt_class[gt_loc], minlength=len(s.classes))
    ap_cls = class_ap(s.pred_class[loc], tp, s.pos[loc], n_gt_cls)
    splits = {}
    for sub, m in s.subset_masks().items():
        sel = np.flatnonzero((n_gt_cls > 0) & m)
        splits[sub] = {"interaction_map": float(ap_cls[sel].mean()) if len(sel) else None}
    return {"negative_ap": neg_ap, "n_pairs": int(n_pairs), "n_negative_pairs": n_neg,
            "interaction_map": inter_map, "n_verbs": int(len(has)),
            "per_verb": {str(s.verb_names[v]): float(ap_verb[v]) for v in has}, "splits": splits}
