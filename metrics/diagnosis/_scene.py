"""The prepared input of a diagnosis: the scene (ground truth and predictions as arrays, classes
resolved), the candidate (prediction, ground truth) edges, the per-prediction flags the error
tests read, and the oracle state the fixes edit."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.detection._ap import class_ap
from metrics.detection._boxes import box_iou
from metrics.detection._pairs import image_pairs

if TYPE_CHECKING:
    from metrics.datasets import Vocabulary


NO_INTERACTION = "no_interaction"
SUBSETS = ("full", "rare", "non_rare")
TRUE_POSITIVE = "true_positive"


# ---------------------------------------------------------------------------- small helpers
def _pixel_offset(s) -> float:
    """+1-pixel IoU under the official protocol, continuous coordinates otherwise."""
    return 1.0 if s.protocol == "official" else 0.0


# ---------------------------------------------------------------------------- prepared input
@dataclass
class Scene:
    """Ground truth and predictions with resolved labels, on one image index.

    Verb and object labels are integer codes shared by both sides (class keys of
    :mod:`metrics.detection._hoi_labels`); classes index ``classes`` (ground-truth classes first, in
    order of appearance, then classes only predicted). ``gt_row`` / ``pred_row`` are the rows
    of the original :class:`~metrics.detection._detections.Detections` (before removing
    ``no_interaction``); ``pos`` is each prediction's place in descending-score order (ties:
    image order, then file order).
    """

    images: np.ndarray
    gt_image: np.ndarray
    gt_human: np.ndarray
    gt_object_box: np.ndarray
    gt_verb: np.ndarray
    gt_obj: np.ndarray
    gt_class: np.ndarray
    gt_row: np.ndarray
    pred_image: np.ndarray
    pred_human: np.ndarray
    pred_object_box: np.ndarray
    pred_verb: np.ndarray
    pred_obj: np.ndarray
    pred_class: np.ndarray
    pred_row: np.ndarray
    score: np.ndarray
    pos: np.ndarray
    verb_names: np.ndarray
    object_names: np.ndarray
    classes: pd.DataFrame
    n_gt: np.ndarray
    iou: float
    protocol: str = "official"
    dataset: str | None = None          # metrics.datasets name (None: HICO-DET)
    vocabulary: Vocabulary | None = field(default=None, repr=False, compare=False)
    class_totals: dict | None = None
    # the dataset's Full classes of the standard mAP (StandardMap.full) when it runs over its class set
    map_full_classes: Callable | None = field(default=None, repr=False, compare=False)
    images_left_out: int = 0
    gt_source: str = "<gt>"
    pred_source: str = "<pred>"
    gt_line: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))     # file line per row
    pred_line: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    # results the §4 analyses share (distinct pairs and their candidate matches), by name
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_pred(self) -> int:
        return len(self.pred_image)

    def subset_masks(self) -> dict[str, np.ndarray]:
        """Class masks for Full / Rare / Non-rare (:func:`class_subsets`)."""
        return class_subsets(self.classes)

    def map_masks(self) -> dict[str, np.ndarray]:
        """The masks the standard mAP averages over: :meth:`subset_masks` with Full narrowed to
        the dataset's Full classes when the mean runs over its own class set (SWIG-HOI: the
        evaluated interactions that are not novel, as ``class_totals`` counts them)."""
        return class_subsets(self.classes, self.map_full_classes if self.class_totals is not None else None)


def class_subsets(classes: pd.DataFrame, full: Callable | None = None) -> dict[str, np.ndarray]:
    """Full / Rare / Non-rare masks over a class table by the vocabulary's rare flag (classes
    outside its class list: Full only). Where the vocabulary flags evaluated and novel classes
    (SWIG-HOI), Rare and Non-rare hold evaluated classes only and Non-rare no novel one, as
    ``score`` reports them. ``full``: the rows of Full (``StandardMap.full``; ``None``: all)."""
    rare = classes["rare"].to_numpy()
    masks = {"full": np.ones(len(classes), dtype=bool) if full is None else np.asarray(full(classes), dtype=bool),
             "rare": rare == 1, "non_rare": rare == 0}
    if "novel" in classes:
        evaluated = classes["evaluated"].to_numpy() == 1
        masks["rare"] &= evaluated
        masks["non_rare"] &= evaluated & (classes["novel"].to_numpy() == 0)
    return masks


def prepare(gt, pred, *, iou: float = 0.5, keep_no_interaction: bool = False, vocabulary=None,
            need_scores: bool = True, map_protocol: str = "official", dataset: str | None = None) -> Scene:
    """Resolve labels and build the :class:`Scene` of ``gt`` and ``pred``
    (:class:`~metrics.detection._detections.Detections`).

    Without ``keep_no_interaction``, ``no_interaction`` HOIs are removed, and so are the images
    whose ground truth is only ``no_interaction`` with all their predictions (the paper's
    8,528-image protocol). ``dataset`` (``metrics.datasets``; HICO-DET by default) gives the
    vocabulary and the baseline matrices labels are resolved with; a dataset without a
    ``no_interaction`` class (V-COCO, Diag-HOI §2.5) simply has none to remove. The options
    arrive checked by :func:`metrics.diagnosis._core.build_diagnosis`, its one caller."""
    from metrics import datasets
    from metrics.detection._hoi_labels import resolve_labels
    from metrics.vocab._baseline import load_default

    if not len(gt):
        raise InputError(f"{gt.source}: no ground-truth HOIs")
    if need_scores and len(pred) and not pred.has_scores:
        raise InputError(f"{pred.source}: predictions carry no 'score'; diagnosis ranks predictions by score")
    vocabulary = datasets.load_vocabulary(dataset) if vocabulary is None else vocabulary
    images = pd.unique(np.concatenate([gt.images, pred.images]))
    gt, pred = gt.with_images(images), pred.with_images(images)

    def where(role):
        return lambda side, row: (gt if side == "gt" else pred).where(row, role)

    keys = {}
    for role, pos_ in (("verb", "v"), ("object", "n")):
        r = resolve_labels(getattr(gt, role), getattr(pred, role), pos_, load_default(pos_, dataset=dataset),
                           vocabulary, where=where(role))
        gk = np.asarray(r.gt_class_key, dtype=object)[r.gt_code]
        pk = np.array([k if k is not None else "unknown:" + str(t).strip().lower()
                       for k, t in zip(r.pred_class_key, r.pred_texts.tolist())], dtype=object)[r.pred_code]
        codes, names = pd.factorize(np.concatenate([gk, pk]))
        keys[role] = (codes[:len(gk)].astype(np.int64), codes[len(gk):].astype(np.int64),
                      np.asarray(names, dtype=object))
    gv, pv, verb_names = keys["verb"]
    go, po, object_names = keys["object"]

    gt_keep = np.ones(len(gt), dtype=bool)
    pred_keep = np.ones(len(pred), dtype=bool)
    left_out = 0
    if not keep_no_interaction:
        gt_keep = verb_names[gv] != NO_INTERACTION
        if not gt_keep.any():
            raise InputError(f"{gt.source}: every ground-truth HOI is no_interaction "
                             "(use --keep-no-interaction to diagnose them)")
        only_ni = np.zeros(len(images), dtype=bool)
        only_ni[np.unique(gt.image)] = True
        only_ni[np.unique(gt.image[gt_keep])] = False
        left_out = int(only_ni.sum())
        pred_keep = (verb_names[pv] != NO_INTERACTION) & ~only_ni[pred.image]
    gi, pi = np.flatnonzero(gt_keep), np.flatnonzero(pred_keep)

    n_o = len(object_names)
    combo, uniq = pd.factorize(np.concatenate([gv[gi] * n_o + go[gi], pv[pi] * n_o + po[pi]]))
    uniq = np.asarray(uniq, dtype=np.int64)
    classes = pd.DataFrame({"verb": verb_names[uniq // n_o].astype(str), "object": object_names[uniq % n_o].astype(str)})
    flags = ["hoi_id", "rare"] + [c for c in ("evaluated", "novel") if c in vocabulary.classes]
    classes = classes.merge(vocabulary.classes[["verb", "object", *flags]], on=["verb", "object"], how="left")
    gt_class = combo[:len(gi)].astype(np.int64)
    pred_class = combo[len(gi):].astype(np.int64)
    n_gt = np.bincount(gt_class, minlength=len(classes))

    score = np.nan_to_num(pred.score[pi], nan=0.0)
    p_image = pred.image[pi]
    pos = np.empty(len(pi), dtype=np.int64)
    pos[np.lexsort((np.arange(len(pi)), p_image, -score))] = np.arange(len(pi))
    standard_map = datasets.get(dataset).standard_map
    totals = _class_totals(classes, n_gt, vocabulary, standard_map, map_protocol, keep_no_interaction)
    return Scene(protocol=map_protocol, dataset=dataset, vocabulary=vocabulary, class_totals=totals,
                 map_full_classes=standard_map.full,
                 images_left_out=left_out, images=np.asarray(images, dtype=object), gt_image=gt.image[gi],
                 gt_human=gt.human_box[gi],
                 gt_object_box=gt.object_box[gi], gt_verb=gv[gi], gt_obj=go[gi], gt_class=gt_class, gt_row=gi,
                 pred_image=p_image, pred_human=pred.human_box[pi], pred_object_box=pred.object_box[pi],
                 pred_verb=pv[pi], pred_obj=po[pi], pred_class=pred_class, pred_row=pi, score=score, pos=pos,
                 verb_names=verb_names, object_names=object_names, classes=classes, n_gt=n_gt, iou=float(iou),
                 gt_source=gt.source, pred_source=pred.source, gt_line=gt.line[gi], pred_line=pred.line[pi])


def _class_totals(classes, n_gt, vocabulary, standard_map, protocol, keep_no_interaction) -> dict | None:
    """How many classes each mean divides by: with the official protocol and ground truth of
    the dataset's evaluated classes only (``standard_map.classes``), that class set (HICO-DET's
    600, or the 520 interaction classes when ``no_interaction`` is left out; Full narrowed by
    ``standard_map.full``) split as :func:`class_subsets` splits it, as ``eval_one.m`` averages
    over ``num_action`` classes; otherwise None (the classes with ground truth)."""
    has = n_gt > 0
    if protocol != "official" or standard_map.classes is None:
        return None
    own = vocabulary.classes[standard_map.classes(vocabulary.classes)]
    if not set(zip(classes["verb"][has], classes["object"][has])) <= set(zip(own["verb"], own["object"])):
        return None
    if not keep_no_interaction:
        own = own[own["verb"] != NO_INTERACTION]
    return {name: int(mask.sum()) for name, mask in class_subsets(own, standard_map.full).items()}


@dataclass
class Edges:
    """Every (prediction, ground truth) pair of the same image, grouped by prediction.

    ``human_ok``: IoU_h ≥ θ; ``object_ok``: IoU_o ≥ θ and the object labels agree;
    ``same_verb``: the verbs agree.
    """

    p: np.ndarray
    g: np.ndarray
    iou_h: np.ndarray
    iou_o: np.ndarray
    human_ok: np.ndarray
    object_ok: np.ndarray
    same_verb: np.ndarray

    @property
    def localized(self) -> np.ndarray:
        return self.human_ok & self.object_ok

    @classmethod
    def build(cls, s: Scene) -> Edges:
        p, g = image_pairs(s.gt_image, s.pred_image, by="pred")
        off = _pixel_offset(s)
        iou_h = box_iou(s.pred_human[p], s.gt_human[g], pixel_offset=off)
        iou_o = box_iou(s.pred_object_box[p], s.gt_object_box[g], pixel_offset=off)
        return cls(p, g, iou_h, iou_o, iou_h >= s.iou, (iou_o >= s.iou) & (s.pred_obj[p] == s.gt_obj[g]),
                   s.pred_verb[p] == s.gt_verb[g])


def _edges(s: Scene) -> Edges:
    """The scene's :class:`Edges` (built once: §3's categories and §4's pair candidates)."""
    if "edges" not in s.cache:
        s.cache["edges"] = Edges.build(s)
    return s.cache["edges"]


@dataclass
class Flags:
    """Per prediction: matched (true positive) and what it is correct about for some ground
    truth of its image (``same_class``: localized with the same verb; ``localized``;
    ``human``; ``object``)."""

    tp: np.ndarray
    same_class: np.ndarray
    localized: np.ndarray
    human: np.ndarray
    object: np.ndarray

    @classmethod
    def build(cls, e: Edges, tp: np.ndarray) -> Flags:
        n = len(tp)

        def anyp(mask):
            return np.bincount(e.p[mask], minlength=n) > 0 if len(e.p) else np.zeros(n, dtype=bool)
        loc = e.localized
        return cls(tp, anyp(loc & e.same_verb), anyp(loc), anyp(e.human_ok), anyp(e.object_ok))


# ---------------------------------------------------------------------------- oracle state
@dataclass
class OracleState:
    """What an oracle edits: kept predictions, their class and TP flag, and GT counts."""

    keep: np.ndarray
    cls: np.ndarray
    tp: np.ndarray
    n_gt: np.ndarray

    def copy(self) -> OracleState:
        return OracleState(self.keep.copy(), self.cls.copy(), self.tp.copy(), self.n_gt.copy())

    def ap(self, pos: np.ndarray, protocol: str = "all-point") -> np.ndarray:
        k = self.keep
        return class_ap(self.cls[k], self.tp[k], pos[k], self.n_gt, protocol=protocol)
