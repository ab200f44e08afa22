"""Standard HICO-DET mAP, SHOE mAP (Algorithm 1), SHOE mF1 (Algorithm 2) and miss rates.

Source: SHOE paper §3.1–3.2, supplementary §2 (miss rates) and §6.4 (Algorithms 1 and 2).

The pair table and the step-wise greedy matching are in :mod:`metrics.detection._pairs`,
SHOE's matching, AP and soft counts in :mod:`metrics.detection._shoe`; this module checks the
options, resolves the labels and assembles the scores (:func:`evaluate`, :func:`score_dict`).

Decisions where the paper leaves room (also in docs/method.md, "SHOE mAP and SHOE mF1"):

- SHOE candidate choice (Alg. 1 l.16, Alg. 2 l.15): highest σ, ties by higher confidence,
  then earlier prediction in file order. Alg. 1 l.30: the most similar ground truth of the
  image, ties to the first in file order; σ = 0 ≥ δ = 0, so with the default every unmatched
  prediction of an image that has ground truth is a false positive somewhere.
- Per-class sort (Alg. 1 l.39): descending confidence, stable — equal confidences keep the
  order in which Algorithm 1 appends them (image order; within an image the ground-truth
  entries in file order, then the unmatched predictions in file order). Image order is the
  ground-truth file's, then images only in the predictions.
- SHOE AP is Eq. 11, Σ (R_i − R_{i−1}) P_i, not interpolated; ``interpolation="all-point"``
  replaces P_i by max_{j≥i} P_j. An unmatched ground truth's (0, 0) entry counts as one more
  false positive at confidence 0, exactly as FP_i = i − TP_i in the algorithm makes it.
- SHOE mF1: Algorithm 2 adds FN += 1 only for unmatched ground truths; Eq. 5 of the main text
  adds FN += 1 − t_j for every ground truth. ``fn_mode="eq5"`` gives the latter.
- Miss rates count a ground truth as matched when a prediction passed the IoU test and was
  assigned to it (even with σ = 0), over the τ-filtered predictions.
- Standard mAP: per class, predictions in descending score (ties: image order, then file
  order within the image, which is plain file order for JSON Lines); a
  prediction takes the unmatched same-class ground truth of its image with both IoUs ≥ θ and
  the largest min(IoU_h, IoU_o) (ties: first in file order); all-point interpolated AP
  (VOC 2010+); mean over the classes that have ground truth.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from metrics.core._constraints import validate_params
from metrics.core._errors import InputError
from metrics.core._validation import ParameterError
from metrics.detection._options import score_options
from metrics.detection._pairs import PairTable, SigmaTable
from metrics.detection._shoe import ShoeMatch, SoftCounts, match_miss_rates, shoe_ap, shoe_match, shoe_soft_counts

if TYPE_CHECKING:
    from metrics.detection._class_ap import ClassAP
    from metrics.detection._hoi_labels import ResolvedLabels

SIGMA_TABLE_MAX = 1 << 24  # entries of the label-pair σ table (128 MiB); beyond, σ per pair


SUBSET_ORDER = ("full", "rare", "non_rare", "novel")   # those of them a dataset has


@dataclass
class Evaluation:
    """Everything :func:`score_dict` computed, before it is turned into a result dict."""

    classes: pd.DataFrame
    ap: np.ndarray | None
    hico: ClassAP | None
    shoe_ap: np.ndarray | None
    f1: SoftCounts
    gt_miss_rate: float
    pred_miss_rate: float
    match_all: ShoeMatch | None
    match_tau: ShoeMatch
    verbs: ResolvedLabels
    objects: ResolvedLabels
    n_images: int
    n_gt: int
    n_pred: int
    n_pred_tau: int
    has_scores: bool


def _mean(values: np.ndarray, mask: np.ndarray) -> float | None:
    sel = values[mask]
    sel = sel[~np.isnan(sel)]
    return float(sel.mean()) if len(sel) else None


@validate_params(score_options("combine", "w", "iou", "delta", "tau", "interpolation", "fn_mode",
                               "map_protocol"))
def evaluate(gt, pred, *, verb_sim=None, object_sim=None, vocabulary=None,
             combine: str = "arithmetic", w: float = 0.5, iou: float = 0.5, delta: float = 0.0,
             tau: float = 0.5, interpolation: str = "none", fn_mode: str = "algorithm2",
             map_protocol: str = "official", dataset=None) -> Evaluation:
    """Standard mAP, SHOE mAP, SHOE mF1 and miss rates of ``pred`` against ``gt``
    (both :class:`metrics.detection._detections.Detections`) on ``dataset`` (see
    :func:`as_dataset`); see :func:`score_dict`."""
    from metrics.detection._class_ap import ClassAP
    from metrics.detection._hoi_labels import class_table, classes_of, label_pairs, resolve_labels
    from metrics.vocab._similarity import SimilarityMatrix
    from metrics.vocab._similarity import combine as combine_fn

    if not len(gt):
        raise InputError(f"{gt.source}: no ground-truth HOIs")
    dataset = as_dataset(dataset)
    vocabulary = dataset.vocabulary() if vocabulary is None else vocabulary
    verb_sim = SimilarityMatrix.load(dataset.baseline_path("v")) if verb_sim is None else verb_sim
    object_sim = SimilarityMatrix.load(dataset.baseline_path("n")) if object_sim is None else object_sim
    has_scores = pred.has_scores

    # one image index for both sides: ground-truth images first, then prediction-only images
    images = pd.unique(np.concatenate([gt.images, pred.images]))
    gt, pred = gt.with_images(images), pred.with_images(images)

    def where(role):
        def _where(side, row):
            det = gt if side == "gt" else pred
            return det.where(row, role)
        return _where

    # the geometry (IoUs, confidence order) needs no labels: it runs while they are resolved
    with PairTable.start(gt.image, gt.human_box, gt.object_box, pred.image, pred.human_box,
                         pred.object_box, iou=iou, pred_score=pred.score if has_scores else None) as pending:
        verbs = resolve_labels(gt.verb, pred.verb, "v", verb_sim, vocabulary, where=where("verb"))
        objects = resolve_labels(gt.object, pred.object, "n", object_sim, vocabulary, where=where("object"))

        # classes = distinct (verb, object) class keys of the ground truth, in order of appearance
        n_o = max(len(objects.gt_texts), len(objects.pred_texts), 1)
        gt_combo, gt_v, gt_o = label_pairs(verbs.gt_code, objects.gt_code, n_o)
        pred_combo, pred_v, pred_o = label_pairs(verbs.pred_code, objects.pred_code, n_o)
        gt_class, class_keys = classes_of(gt_combo, gt_v, gt_o, verbs.gt_class_key, objects.gt_class_key)
        n_classes = len(class_keys)
        classes = class_table(class_keys, vocabulary)
        # σ of every (predicted label pair, ground-truth label pair), looked up per detection pair;
        # per detection pair when there are too many distinct label pairs for one table
        sigma: Callable[[np.ndarray, np.ndarray], np.ndarray]
        if len(pred_v) * len(gt_v) <= SIGMA_TABLE_MAX:
            sigma = SigmaTable(pred_combo, gt_combo,
                               combine_fn(verbs.table[pred_v[:, None], gt_v[None, :]],
                                          objects.table[pred_o[:, None], gt_o[None, :]], method=combine, w=w))
        else:
            vt, ot = verbs.table, objects.table
            gv, go, pv, po = verbs.gt_code, objects.gt_code, verbs.pred_code, objects.pred_code

            def sigma_per_pair(p, g):
                return combine_fn(vt[pv[p], gv[g]], ot[po[p], go[g]], method=combine, w=w)
            sigma = sigma_per_pair
        pairs = pending.finish(sigma)
    ap = shoe = match_all = hico_map = None
    # second thread: the standard mAP (it shares nothing with the SHOE scores but the pair
    # table), then the τ-filtered matching when τ filters something
    with ThreadPoolExecutor(max_workers=1) as pool:
        if has_scores:
            active = pred.score >= tau
            map_job = pool.submit(lambda: ClassAP.compute(
                gt, pred, gt_class, pred_combo, pred_v, pred_o, verbs, objects, class_keys, classes,
                vocabulary, iou=iou, protocol=map_protocol, pairs=pairs, dataset=dataset))
            tau_job = None if active.all() else pool.submit(lambda: shoe_match(pairs, pred.score, active=active))
            match_all = shoe_match(pairs, pred.score)
            shoe, _ = shoe_ap(pairs, gt_class, pred.score, match_all, n_classes=n_classes, delta=delta,
                              interpolation=interpolation)
            match_tau = match_all if tau_job is None else tau_job.result()
            hico_map = map_job.result()
            ap = hico_map.default_ap[:n_classes]
        else:
            active = np.ones(len(pred), dtype=bool)
            match_tau = shoe_match(pairs, pred.score, active=active)
    f1 = shoe_soft_counts(gt_class, match_tau, n_classes=n_classes, delta=delta, fn_mode=fn_mode)
    gt_rate, pred_rate = match_miss_rates(match_tau)
    return Evaluation(classes=classes, ap=ap, hico=hico_map, shoe_ap=shoe, f1=f1, gt_miss_rate=gt_rate,
                      pred_miss_rate=pred_rate, match_all=match_all, match_tau=match_tau,
                      verbs=verbs, objects=objects, n_images=len(images), n_gt=len(gt),
                      n_pred=len(pred), n_pred_tau=int(active.sum()), has_scores=has_scores)


@validate_params(score_options("split"))
def score_dict(gt, pred, *, split: str | None = None, **params) -> dict:
    """The ``score`` command's result: JSON-able dict with the keys of docs/contracts.md.

    ``map``, ``shoe_map``, ``shoe_mf1``, ``gt_miss_rate``, ``pred_miss_rate`` are plain
    numbers (Full split; ``map``/``shoe_map`` are None when the predictions have no scores);
    ``splits`` holds the dataset's subsets (Full / Rare / Non-rare / Novel, and a zero-shot
    split's ``<split>_seen`` / ``_unseen``), ``per_class`` one record per ground-truth class,
    ``resolution`` how labels resolved, ``counts`` and ``params`` the rest. Classes outside the
    dataset's class list count in Full only. ``dataset``: see :func:`as_dataset`.
    """
    dataset = params["dataset"] = as_dataset(params.get("dataset"))
    if split is not None and split not in dataset.splits:
        raise ParameterError("split", f"{split!r}: {dataset.title} has no zero-shot splits")
    ev = evaluate(gt, pred, **params)
    classes = ev.classes
    subsets = [s for s in SUBSET_ORDER if s in dataset.subsets] + (
        [f"{split}_seen", f"{split}_unseen"] if split else [])
    masks = _subset_masks(classes, split)
    hico = hico_masks = None
    if ev.hico is not None:
        hico_masks = ev.hico.masks(_subset_masks(ev.hico.classes, split))
        hico = ev.hico.subsets(hico_masks)
    splits = {}
    for name in subsets:
        m = masks[name]
        splits[name] = {"map": hico["default"][name] if hico else None,
                        "shoe_map": _mean(ev.shoe_ap, m) if ev.shoe_ap is not None else None,
                        "shoe_mf1": _mean(ev.f1.f1, m), "n_classes": int(m.sum()),
                        "n_classes_map": int(hico_masks[name].sum()) if hico_masks is not None else None}
    in_hico = classes["hoi_id"].notna().to_numpy()
    per_class = []
    f1 = ev.f1
    for c, row in enumerate(classes[["verb", "object", "hoi_id", "rare"]].to_dict("records")):
        per_class.append({
            "verb": row["verb"], "object": row["object"],
            "hoi_id": None if pd.isna(row["hoi_id"]) else int(row["hoi_id"]),
            "rare": None if pd.isna(row["rare"]) else bool(row["rare"]),
            "n_gt": int(f1.n_gt[c]),
            "ap": None if ev.ap is None else float(ev.ap[c]),
            "shoe_ap": None if ev.shoe_ap is None else float(ev.shoe_ap[c]),
            "shoe_f1": float(f1.f1[c]), "shoe_precision": float(f1.precision[c]),
            "shoe_recall": float(f1.recall[c]), "shoe_tp": float(f1.tp[c]),
            "shoe_fp": float(f1.fp[c]), "shoe_fn": float(f1.fn[c])})
    m = ev.match_tau
    iou = params.get("iou", 0.5)
    result: dict[str, Any] = {
        "map": splits["full"]["map"],
        "hico": None if hico is None else {s: hico[s] for s in ("default", "known_object")},
        "mrec": None if hico is None else hico["default_mrec"]["full"],
        "mrec_by_subset": None if hico is None else {s: hico[s + "_mrec"] for s in ("default", "known_object")},
        "protocol": None if ev.hico is None else ev.hico.card(iou),
        "shoe_map": splits["full"]["shoe_map"],
        "shoe_mf1": splits["full"]["shoe_mf1"],
        "gt_miss_rate": ev.gt_miss_rate, "pred_miss_rate": ev.pred_miss_rate,
        "splits": splits, "per_class": per_class,
        "counts": {"images": ev.n_images, "gt": ev.n_gt, "predictions": ev.n_pred,
                   "predictions_scored_f1": ev.n_pred_tau, "classes": len(classes),
                   "classes_outside_hico": int((~in_hico).sum()),
                   "gt_matched": int((m.gt_pred >= 0).sum()),
                   "predictions_matched": int(m.pred_matched.sum())}
                  # HICO-DET classes predicted but without ground truth: recall 0/0 (official mRec NaN)
                  | ({} if ev.hico is None else {"recall_undefined_classes": int(np.isnan(ev.hico.default_rec).sum())}),
        "resolution": {"verb": ev.verbs.report("verb"), "object": ev.objects.report("object")},
        "params": {k: params.get(k, d) for k, d in (("combine", "arithmetic"), ("w", 0.5), ("iou", 0.5),
                                                     ("delta", 0.0), ("tau", 0.5), ("interpolation", "none"),
                                                     ("fn_mode", "algorithm2"), ("map_protocol", "official"))}
                  | {"split": split, "confidence_scores": ev.has_scores,
                     "verb_sim": _provenance(params.get("verb_sim")),
                     "object_sim": _provenance(params.get("object_sim"))},
    }
    if not ev.has_scores:
        result["params"]["tau"] = None
    if not dataset.is_default:
        result["params"]["dataset"] = dataset.name
    return result


def as_dataset(dataset):
    """The :class:`metrics.datasets.Dataset` the scores are made on: ``dataset`` itself, or the
    registered one of that name (the default dataset when ``None``; the registry,
    :mod:`metrics.core._registry`, not a dataset package). The scorer asks it for its
    vocabulary, baseline matrices, class set and protocol card; it keeps none of its own."""
    if dataset is None or isinstance(dataset, str):
        from metrics.core._registry import get
        return get(dataset)
    return dataset


def _subset_masks(classes: pd.DataFrame, split: str | None) -> dict:
    """Full / Rare / Non-rare (Novel where the vocabulary flags novel classes; a zero-shot
    split's seen / unseen) masks over a class table; classes outside the vocabulary's class list
    count in Full only."""
    in_hico = classes["hoi_id"].notna().to_numpy()
    rare = classes["rare"].to_numpy()
    masks = {"full": np.ones(len(classes), dtype=bool), "rare": in_hico & (rare == 1),
             "non_rare": in_hico & (rare == 0)}
    if "novel" in classes:      # SWIG-HOI: novel (unseen in training) apart, evaluated classes only
        evaluated = classes["evaluated"].to_numpy() == 1 if "evaluated" in classes else in_hico
        novel = classes["novel"].to_numpy() == 1
        masks["rare"] &= evaluated
        masks["non_rare"] &= evaluated & ~novel
        masks["novel"] = in_hico & evaluated & novel
    if split:
        unseen = classes[f"unseen_{split}"].to_numpy() == 1
        masks[f"{split}_seen"] = in_hico & ~unseen
        masks[f"{split}_unseen"] = in_hico & unseen
    return masks


def _provenance(matrix) -> str:
    """Where a matrix comes from, in one phrase: a recalibrated one names its version (when saved
    as one) and the study or studies it was recalibrated from."""
    if matrix is None:
        return "WordNet baseline (default)"
    meta = matrix.meta
    if meta.get("source") == "recalibrated":
        version = f" version {meta['version']!r}" if meta.get("version") else ""
        study = f" from study {meta['study']}" if meta.get("study") else ""
        return f"recalibrated{version}{study}"
    return str(meta.get("source") or meta.get("method") or repr(matrix))
