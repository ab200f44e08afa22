"""Diag-HOI: error diagnosis of HOI detectors and the mAP gained by fixing each error.

Source: Zhu et al., *Diagnosing Human-object Interaction Detectors* — journal version §2.3–2.4,
§3 (error categories, oracles, grouped oracles, oddities of ΔmAP), §4 (pair localization,
interaction classification) and Fig. 2 (categorization flow); conference version Appendix B.

The design follows TIDE (Bolya et al., 2020): every error type is one small class (an
:class:`ErrorType`) that owns (a) the test that puts a prediction in it, in the priority of
Fig. 2, (b) its oracle ``fix``, which edits an :class:`OracleState` (which predictions are kept,
their class, whether they are true positives, the ground-truth count per class), (c) how its
errors are counted, and (d) its title, paper section and group, which the report shows. mAP
after a fix is computed from that state. The error types are listed in
:data:`ERROR_REGISTRY`; adding one is one new class (in a module of its own if you like) and
one line: an entry of that list, or ``register_error_type(NewError())`` from outside the
package. Its name then keys ``delta_map`` and ``error_counts`` and the report shows it.

Everything works on flat arrays; the (prediction, ground truth) pairs of each image are built
once, and greedy matching uses :func:`metrics.detection._ap.sequential_greedy` (one numpy step per
turn, exact). Standard matching and AP are the ``score`` command's, so the diagnosis's
baseline ``map`` equals ``score``'s ``map`` on the same input.

Definitions (a pair is *localized* for a ground truth g when IoU_h ≥ θ, IoU_o ≥ θ and the
object labels agree; θ = 0.5; the human label is always "person"):

- **true positive**: matched by standard HICO-DET matching (per class, descending score,
  largest min(IoU_h, IoU_o), each ground truth once).
- **duplicate**: not a true positive, but localized for a ground truth of the same verb (that
  ground truth was taken by a higher-scoring prediction).
- **interaction**: localized for some ground truth, never with the same verb.
- **association**: not localized for any ground truth, but its human box is correct for one
  ground truth (IoU_h ≥ θ) and its object box and label are correct for another.
- **human_box**: object box (and label) correct for some ground truth, human box for none.
- **object_box**: human box correct for some ground truth, object box (or label) for none.
- **both_boxes**: neither box correct for any ground truth of the image.
- **missed_gt**: a ground truth that no true positive matched and that no oracle fix covers
  (§3.1.3 / §3.2.3: "after fixing all the above errors, there are still ground truth
  triplets that do not match any predictions").

Decisions where the papers leave room (also in docs/method.md, "Diag-HOI"):

- *Which ground truth an error is fixed to* (human box, object box, association and
  interaction oracles): one joint assignment, computed once, so that "each ground truth pair is
  fixed only once … when addressing different error types" (§3.2.1). Fixable predictions, in
  descending score (ties: image order, then file order), each take a ground truth of their
  image that their type can be fixed to (interaction: localized; human box: object correct;
  object box: human correct; association: either box correct), which no higher-scoring true
  positive or fix holds. Preference, for "minimal changes": the verb is already right, then
  the larger IoU of the part that is kept (min(IoU_h, IoU_o) for interaction; IoU_o for human
  box; IoU_h for object box; the correct box's IoU for association), then the first ground
  truth in file order. The paper's random choice among several actions becomes this
  deterministic rule.
- *Duplicates a fix creates* ("suppress the lower-scoring prediction"): a fixed prediction
  that takes a ground truth held by a lower-scoring true positive removes that true
  positive; a prediction of the fixed type that gets no ground truth would only duplicate a
  ground truth already covered, and is removed.
- *AP after a fix*: all-point interpolated AP as in ``score``; the mean is always over the
  classes that have ground truth in the input (fixed class set). A class whose ground-truth
  count an oracle brings to 0 (missed-GT or false-negative oracle) has AP 1 when no
  prediction of it remains and 0 otherwise, so that fixing every error progressively gives
  mAP = 1 (Eq. 4).
- *Progressive fixes* (§3.4) are applied in the paper's order: human box, object box, both
  boxes, association, duplicate, interaction, missed GT.
- *Rare / non-rare*: the HICO-DET rare flag of a prediction's *predicted* class (error counts)
  or of the ground truth's class (missed GT, AP); classes outside HICO-DET count in Full only.
- *no_interaction* (§2.4): ground truths and predictions whose verb is ``no_interaction`` are
  removed before anything else unless ``keep_no_interaction=True``.

Example (one image, one ground truth, a true positive and a duplicate):

>>> from metrics.detection._detections import Detections
>>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
>>> pred = Detections.from_arrays(["a", "a"], [[0, 0, 10, 10]] * 2, [[10, 10, 20, 20]] * 2,
...                               ["ride", "ride"], ["horse", "horse"], [0.9, 0.8])
>>> d = build_diagnosis(gt, pred, map_protocol="all-point")   # mean over the classes with ground truth
>>> d.kind_names().tolist(), d.map["full"], d.delta_map["duplicate"]["full"]
(['true_positive', 'duplicate'], 1.0, 0.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metrics.core._constraints import Boolean, validate_params
from metrics.core._registry import get as get_dataset
from metrics.core._segments import distinct_indices, rank_within_blocks
from metrics.core._validation import check_choices
from metrics.detection._ap import sequential_greedy
from metrics.detection._class_ap import best_overlap_assignment
from metrics.detection._options import score_options
from metrics.diagnosis._registry import ERROR_REGISTRY
from metrics.diagnosis._scene import SUBSETS, TRUE_POSITIVE, Edges, Flags, OracleState, Scene, _edges, prepare
from metrics.diagnosis.errors import FixedToTruePositive


# ---------------------------------------------------------------------------- matching
def match_standard(s: Scene, e: Edges) -> np.ndarray:
    """Standard HICO-DET matching (as :func:`metrics.detection._ap.standard_ap`): per class,
    predictions in descending score take the free ground truth of their image they are
    localized for with the same verb and the largest min(IoU_h, IoU_o) (ties: first in file
    order). Returns the matched ground truth per prediction (−1: none).

    Under the official protocol, the VOC best-overlap rule of ``VOCevaldet_bboxpair.m``
    (:func:`metrics.detection._class_ap.best_overlap_assignment`): the best-overlapping ground truth of the
    class, a false positive when it is taken."""
    if s.protocol == "official":
        order, matched = best_overlap_assignment(
            s.gt_image, s.gt_class, s.gt_human, s.gt_object_box, s.pred_image, s.pred_class,
            s.pred_human, s.pred_object_box, s.score, n_classes=len(s.classes), iou=s.iou)
        out = np.full(s.n_pred, -1, dtype=np.int64)
        out[order] = matched
        return out
    cand = np.flatnonzero(e.localized & e.same_verb)
    ep, eg = e.p[cand], e.g[cand]
    n = s.n_pred
    preds = distinct_indices(ep, n)
    block = s.pred_image[preds] * (len(s.classes) + 1) + s.pred_class[preds]
    rank = rank_within_blocks(block, s.pos[preds], n, preds)
    chosen = sequential_greedy(ep, eg, rank, n, len(s.gt_image),
                               keys=(np.minimum(e.iou_h[cand], e.iou_o[cand]),))
    out = np.full(n, -1, dtype=np.int64)
    hit = chosen >= 0
    out[hit] = eg[chosen[hit]]
    return out


def assign_fixes(s: Scene, e: Edges, kind: np.ndarray, gt_tp: np.ndarray) -> np.ndarray:
    """The joint assignment of fixable predictions to ground truths (module docstring).
    Returns the assigned ground truth per prediction (−1: none or not fixable)."""
    fixable = [err for err in ERROR_REGISTRY.prediction_errors if isinstance(err, FixedToTruePositive)]
    ok = np.zeros(len(e.p), dtype=bool)
    kept = np.zeros(len(e.p))
    kind_p = kind[e.p] if len(e.p) else np.zeros(0, dtype=np.int64)
    for err in fixable:
        mine = kind_p == err.code
        ok |= mine & err.candidates(e)
        kept = np.where(mine, err.kept_iou(e), kept)
    holder = gt_tp[e.g]
    ok &= (holder < 0) | (s.pos[np.maximum(holder, 0)] > s.pos[e.p])
    sel = np.flatnonzero(ok)
    ep, eg = e.p[sel], e.g[sel]
    n = s.n_pred
    preds = distinct_indices(ep, n)
    rank = rank_within_blocks(s.pred_image[preds], s.pos[preds], n, preds)
    chosen = sequential_greedy(ep, eg, rank, n, len(s.gt_image),
                               keys=(e.same_verb[sel].astype(np.float64), kept[sel]))
    out = np.full(n, -1, dtype=np.int64)
    hit = chosen >= 0
    out[hit] = eg[chosen[hit]]
    return out


# ---------------------------------------------------------------------------- diagnosis
@dataclass
class Diagnosis:
    """Result of :func:`build_diagnosis`: categories, oracle mAPs and their breakdowns.

    ``kind``: category code per prediction (index into ``ERROR_REGISTRY.prediction_kinds``);
    ``tp_gt``: matched ground truth per prediction; ``gt_tp``: matching prediction per ground
    truth; ``fix_gt`` / ``gt_fix``: the joint oracle assignment; ``missed``: missed-GT flags.
    ``ap``: per-class AP before any fix; ``oracle_ap``: per oracle the per-class AP after it;
    ``progressive_ap``: per-class AP after the first k error types of :data:`ERROR_REGISTRY`.
    """

    scene: Scene
    kind: np.ndarray
    tp_gt: np.ndarray
    gt_tp: np.ndarray
    fix_gt: np.ndarray
    gt_fix: np.ndarray
    missed: np.ndarray
    ap: np.ndarray = field(default_factory=lambda: np.zeros(0))
    oracle_ap: dict = field(default_factory=dict)
    progressive_ap: list = field(default_factory=list)

    def base_state(self) -> OracleState:
        s = self.scene
        return OracleState(np.ones(s.n_pred, dtype=bool), s.pred_class.copy(), self.kind == 0,
                           s.n_gt.astype(np.int64).copy())

    def apply(self, *names: str) -> OracleState:
        """The state after applying the named oracles in order (e.g. ``"duplicate"``)."""
        state = self.base_state()
        for name in names:
            ERROR_REGISTRY[name].fix(state, self)
        return state

    def mean_ap(self, ap: np.ndarray) -> dict:
        """Full / Rare / Non-rare mean over the classes with ground truth in the input, or over
        the dataset's class set (:func:`_class_totals`; its other classes have AP 0)."""
        has = self.scene.n_gt > 0
        totals = self.scene.class_totals
        out = {}
        for name, m in self.scene.map_masks().items():
            sel = ap[has & m]
            if totals is not None:
                out[name] = float(sel.sum() / totals[name]) if totals[name] else None
            else:
                out[name] = float(sel.mean()) if len(sel) else None
        return out

    @property
    def map(self) -> dict:
        return self.mean_ap(self.ap)

    @property
    def delta_map(self) -> dict:
        base = self.map
        out = {}
        for name, ap in self.oracle_ap.items():
            after = self.mean_ap(ap)
            out[name] = {k: (None if after[k] is None else after[k] - base[k]) for k in SUBSETS}
        return out

    def kind_names(self) -> np.ndarray:
        return np.asarray(ERROR_REGISTRY.prediction_kinds, dtype=object)[self.kind]

    def error_counts(self) -> dict:
        """Counts per error type (and grouped), Full / Rare / Non-rare."""
        s = self.scene
        masks = s.subset_masks()
        out = {}
        for sub, m in masks.items():
            pm = m[s.pred_class]
            gm = m[s.gt_class]
            c = {e.name: e.count(self, pm, gm) for e in ERROR_REGISTRY.counted}
            c[TRUE_POSITIVE] = int(np.sum(pm & (self.kind == 0)))
            out[sub] = c
        return out

    def progressive(self) -> list[dict]:
        """Cumulative fixes in the paper's order: mAP after each and ΔmAP_{o_i | o_1..o_{i−1}}."""
        rows, prev = [], self.map
        for err, ap in zip(ERROR_REGISTRY.errors, self.progressive_ap):
            now = self.mean_ap(ap)
            rows.append({"oracle": err.name, "map": now,
                         "delta_map": {k: None if now[k] is None else now[k] - prev[k] for k in SUBSETS}})
            prev = now
        return rows

    def errors_frame(self) -> pd.DataFrame:
        """One row per prediction (category, score, labels, the ground truth it matched or is
        fixed to) and one per missed ground truth: the examples a researcher looks at."""
        s = self.scene
        target = np.where(self.kind == 0, self.tp_gt, self.fix_gt)
        has = target >= 0
        t = np.maximum(target, 0)
        pred = pd.DataFrame({
            "side": "prediction", "category": self.kind_names(), "image": s.images[s.pred_image],
            "row": s.pred_row, "line": s.pred_line, "score": s.score,
            "verb": s.verb_names[s.pred_verb], "object": s.object_names[s.pred_obj],
            "human_box": [list(b) for b in s.pred_human.tolist()],
            "object_box": [list(b) for b in s.pred_object_box.tolist()],
            "gt_row": np.where(has, s.gt_row[t], -1),
            "gt_verb": np.where(has, s.verb_names[s.gt_verb[t]], ""),
            "gt_object": np.where(has, s.object_names[s.gt_obj[t]], "")})
        m = np.flatnonzero(self.missed)
        missed = pd.DataFrame({
            "side": "ground_truth", "category": "missed_gt", "image": s.images[s.gt_image[m]],
            "row": s.gt_row[m], "line": s.gt_line[m], "score": np.nan,
            "verb": s.verb_names[s.gt_verb[m]], "object": s.object_names[s.gt_obj[m]],
            "human_box": [list(b) for b in s.gt_human[m].tolist()],
            "object_box": [list(b) for b in s.gt_object_box[m].tolist()],
            "gt_row": s.gt_row[m], "gt_verb": s.verb_names[s.gt_verb[m]],
            "gt_object": s.object_names[s.gt_obj[m]]})
        return pd.concat([pred.sort_values("score", ascending=False, kind="stable"), missed], ignore_index=True)

    def per_class(self) -> list[dict]:
        s = self.scene
        rows = []
        for c in np.flatnonzero(s.n_gt > 0):
            r = s.classes.iloc[c]
            rows.append({"verb": r["verb"], "object": r["object"],
                         "hoi_id": None if pd.isna(r["hoi_id"]) else int(r["hoi_id"]),
                         "rare": None if pd.isna(r["rare"]) else bool(r["rare"]), "n_gt": int(s.n_gt[c]),
                         "ap": float(self.ap[c]),
                         "ap_after": {k: float(v[c]) for k, v in self.oracle_ap.items()}})
        return rows

    def to_dict(self) -> dict:
        """JSON-able result with the keys of docs/contracts.md ``map``, ``delta_map``, ``error_counts``
        (plain numbers: Full split) and the breakdowns."""
        base = self.map
        delta = self.delta_map
        counts = self.error_counts()
        prog = self.progressive()
        s = self.scene
        oracles = tuple(self.oracle_ap)
        class_set = (f"{get_dataset(s.dataset).title} ({s.class_totals['full']} classes)" if s.class_totals
                     else "classes with ground truth")
        return {
            "map": base["full"],
            "delta_map": {k: v["full"] for k, v in delta.items()},
            "error_counts": {k: counts["full"][k] for k in ERROR_REGISTRY.oracles},
            "splits": {sub: {"map": base[sub],
                             "map_after": {k: (None if base[sub] is None or delta[k][sub] is None
                                               else base[sub] + delta[k][sub]) for k in oracles},
                             "delta_map": {k: delta[k][sub] for k in oracles},
                             "error_counts": counts[sub]} for sub in SUBSETS},
            "progressive": prog,
            "progressive_note": (
                "Fixing the seven error types cumulatively in this order reaches mAP 1 (Eq. 4); "
                "the single-oracle ΔmAPs do not sum to 1 − mAP because fixing several errors "
                "together gains more than fixing each alone (§3.4, Eqs. 3–10)."),
            "sum_delta_map": float(sum(delta[k]["full"] or 0.0 for k in ERROR_REGISTRY.names if k in delta)),
            "protocol": {"name": s.protocol, "class_set": class_set,
                         "images_left_out_no_interaction_only": s.images_left_out},
            "counts": {"images": int(len(s.images)), "gt": int(len(s.gt_image)), "predictions": int(s.n_pred),
                       "classes": int((s.n_gt > 0).sum()), TRUE_POSITIVE: int((self.kind == 0).sum()),
                       "gt_unmatched": int((self.gt_tp < 0).sum())},
            "per_class": self.per_class(),
        }


def categorize(s: Scene, e: Edges | None = None) -> Diagnosis:
    """Fig. 2: every prediction is exactly one category; unmatched ground truths that no
    oracle covers are missed GT. Returns a :class:`Diagnosis` without mAPs."""
    e = _edges(s) if e is None else e
    n, n_gt = s.n_pred, len(s.gt_image)
    tp_gt = match_standard(s, e)
    flags = Flags.build(e, tp_gt >= 0)
    kind = np.zeros(n, dtype=np.int64)
    todo = ~flags.tp
    for err in ERROR_REGISTRY.prediction_errors:
        hit = todo & err.test(flags)
        kind[hit] = err.code
        todo &= ~hit
    gt_tp = np.full(n_gt, -1, dtype=np.int64)
    gt_tp[tp_gt[tp_gt >= 0]] = np.flatnonzero(tp_gt >= 0)
    fix_gt = assign_fixes(s, e, kind, gt_tp)
    gt_fix = np.full(n_gt, -1, dtype=np.int64)
    gt_fix[fix_gt[fix_gt >= 0]] = np.flatnonzero(fix_gt >= 0)
    missed = (gt_tp < 0) & (gt_fix < 0)
    return Diagnosis(s, kind, tp_gt, gt_tp, fix_gt, gt_fix, missed)


@validate_params({**score_options("iou", "map_protocol"), "keep_no_interaction": Boolean(),
                  "progressive": Boolean()})
def build_diagnosis(gt, pred, *, iou: float = 0.5, keep_no_interaction: bool = False, oracles=None,
             progressive: bool = True, vocabulary=None, map_protocol: str = "official",
             dataset: str | None = None) -> Diagnosis:
    """Diag-HOI holistic analysis of ``pred`` against ``gt`` (§3): categories (Fig. 2), mAP
    after each oracle (Eq. 2), grouped oracles (§3.3) and progressive fixes (§3.4).

    ``gt`` / ``pred``: :class:`~metrics.detection._detections.Detections` (predictions need scores).
    ``oracles``: which oracles to evaluate (default every one of :data:`ERROR_REGISTRY`).

    >>> from metrics.detection._detections import Detections
    >>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
    >>> pred = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["feed"], ["horse"], [0.9])
    >>> d = build_diagnosis(gt, pred, map_protocol="all-point")
    >>> d.kind_names().tolist(), d.map["full"], d.delta_map["interaction"]["full"]
    (['interaction'], 0.0, 1.0)
    >>> round(build_diagnosis(gt, pred).delta_map["interaction"]["full"] * 520, 9)   # official: over 520 classes
    1.0
    """
    oracles = check_choices("oracles", ERROR_REGISTRY.oracles if oracles is None else oracles, ERROR_REGISTRY.oracles)
    s = prepare(gt, pred, iou=iou, keep_no_interaction=keep_no_interaction, vocabulary=vocabulary,
                map_protocol=map_protocol, dataset=dataset)
    d = categorize(s)
    d.ap = d.base_state().ap(s.pos, s.protocol)
    for name in oracles:
        d.oracle_ap[name] = d.apply(name).ap(s.pos, s.protocol)
    if progressive:
        state = d.base_state()
        for err in ERROR_REGISTRY.errors:
            err.fix(state, d)
            d.progressive_ap.append(state.ap(s.pos, s.protocol))
    return d
