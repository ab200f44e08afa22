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
once, and greedy matching uses :func:`metrics.detection.ap.sequential_greedy` (one numpy step per
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

>>> from metrics.detection.detections import Detections
>>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
>>> pred = Detections.from_arrays(["a", "a"], [[0, 0, 10, 10]] * 2, [[10, 10, 20, 20]] * 2,
...                               ["ride", "ride"], ["horse", "horse"], [0.9, 0.8])
>>> d = diagnose(gt, pred, map_protocol="all-point")   # mean over the classes with ground truth
>>> d.kind_names().tolist(), d.map["full"], d.delta_map["duplicate"]["full"]
(['true_positive', 'duplicate'], 1.0, 0.0)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from metrics.detection.boxes import box_iou
from metrics.core.choices import MAP_PROTOCOLS
from metrics.core.errors import InputError
from metrics.datasets.hico_det.evaluation import best_overlap_assignment
from metrics.detection.ap import class_ap, sequential_greedy
from metrics.detection.scoring import image_pairs
from metrics.core.segments import distinct_indices, rank_within_blocks, run_starts
from metrics.core.validation import check_choice, check_choices, check_in_range

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
    :mod:`metrics.detection.hoi_labels`); classes index ``classes`` (ground-truth classes first, in
    order of appearance, then classes only predicted). ``gt_row`` / ``pred_row`` are the rows
    of the original :class:`~metrics.detection.detections.Detections` (before removing
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
    vocabulary: object = field(default=None, repr=False, compare=False)
    class_totals: dict | None = None
    images_left_out: int = 0
    gt_source: str = "<gt>"
    pred_source: str = "<pred>"
    gt_line: np.ndarray | None = None
    pred_line: np.ndarray | None = None
    # results the §4 analyses share (distinct pairs and their candidate matches), by name
    cache: dict = field(default_factory=dict, repr=False, compare=False)

    @property
    def n_pred(self) -> int:
        return len(self.pred_image)

    def subset_masks(self) -> dict[str, np.ndarray]:
        """Class masks for Full / Rare / Non-rare (HICO-DET rare flag; others Full only)."""
        rare = self.classes["rare"].to_numpy()
        return {"full": np.ones(len(self.classes), dtype=bool), "rare": rare == 1, "non_rare": rare == 0}


def prepare(gt, pred, *, iou: float = 0.5, keep_no_interaction: bool = False, vocabulary=None,
            need_scores: bool = True, map_protocol: str = "official", dataset: str | None = None) -> Scene:
    """Resolve labels and build the :class:`Scene` of ``gt`` and ``pred``
    (:class:`~metrics.detection.detections.Detections`).

    Without ``keep_no_interaction``, ``no_interaction`` HOIs are removed, and so are the images
    whose ground truth is only ``no_interaction`` with all their predictions (the paper's
    8,528-image protocol). ``dataset`` (``metrics.datasets``; HICO-DET by default) gives the
    vocabulary and the baseline matrices labels are resolved with; a dataset without a
    ``no_interaction`` class (V-COCO, Diag-HOI §2.5) simply has none to remove."""
    from metrics import datasets
    from metrics.vocab.baseline import load_default
    from metrics.detection.hoi_labels import resolve_labels

    check_in_range("iou", iou, 0.0, 1.0, low_open=True)
    check_choice("map_protocol", map_protocol, MAP_PROTOCOLS)
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
    classes = classes.merge(vocabulary.classes[["verb", "object", "hoi_id", "rare"]], on=["verb", "object"],
                            how="left")
    gt_class = combo[:len(gi)].astype(np.int64)
    pred_class = combo[len(gi):].astype(np.int64)
    n_gt = np.bincount(gt_class, minlength=len(classes))

    score = np.nan_to_num(pred.score[pi], nan=0.0)
    p_image = pred.image[pi]
    pos = np.empty(len(pi), dtype=np.int64)
    pos[np.lexsort((np.arange(len(pi)), p_image, -score))] = np.arange(len(pi))
    return Scene(protocol=map_protocol, dataset=dataset, vocabulary=vocabulary, class_totals=_class_totals(classes, n_gt, vocabulary, map_protocol,
                                                                     keep_no_interaction),
                 images_left_out=left_out, images=np.asarray(images, dtype=object), gt_image=gt.image[gi],
                 gt_human=gt.human_box[gi],
                 gt_object_box=gt.object_box[gi], gt_verb=gv[gi], gt_obj=go[gi], gt_class=gt_class, gt_row=gi,
                 pred_image=p_image, pred_human=pred.human_box[pi], pred_object_box=pred.object_box[pi],
                 pred_verb=pv[pi], pred_obj=po[pi], pred_class=pred_class, pred_row=pi, score=score, pos=pos,
                 verb_names=verb_names, object_names=object_names, classes=classes, n_gt=n_gt, iou=float(iou),
                 gt_source=gt.source, pred_source=pred.source, gt_line=gt.line[gi], pred_line=pred.line[pi])


def _class_totals(classes, n_gt, vocabulary, protocol, keep_no_interaction) -> dict | None:
    """How many classes each mean divides by: with the official protocol and ground truth of
    HICO-DET classes only, the HICO-DET class set (600, or the 520 interaction classes when
    ``no_interaction`` is left out) split by the rare flag, as ``eval_one.m`` averages over
    ``num_action`` classes; otherwise None (the classes with ground truth)."""
    has = n_gt > 0
    if protocol != "official" or classes["hoi_id"][has].isna().any():
        return None
    hico = vocabulary.classes
    if not keep_no_interaction:
        hico = hico[hico["verb"] != NO_INTERACTION]
    return {"full": len(hico), "rare": int((hico["rare"] == 1).sum()), "non_rare": int((hico["rare"] == 0).sum())}


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
    def build(cls, s: Scene) -> "Edges":
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
    def build(cls, e: Edges, tp: np.ndarray) -> "Flags":
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

    def copy(self) -> "OracleState":
        return OracleState(self.keep.copy(), self.cls.copy(), self.tp.copy(), self.n_gt.copy())

    def ap(self, pos: np.ndarray, protocol: str = "all-point") -> np.ndarray:
        k = self.keep
        return class_ap(self.cls[k], self.tp[k], pos[k], self.n_gt, protocol=protocol)


# ---------------------------------------------------------------------------- error types
class ErrorType(ABC):
    """One error type: its name, where it sits in the paper, its oracle ``fix`` and its count.

    ``title`` and ``section`` are what the report shows; ``group`` names the grouped oracle
    (§3.3) that covers the type. Prediction errors also define ``test(flags)`` (Fig. 2: the
    first type, by ``priority``, whose test holds names the prediction) and get ``code``
    (their index in :attr:`ErrorRegistry.prediction_kinds`); an error type about ground truths
    (no ``priority``) defines ``count`` instead.
    """

    name = ""
    title = ""
    section = ""
    group = "false_positive"
    priority: float | None = None
    code: int = -1

    def test(self, f: Flags) -> np.ndarray:
        """Which predictions are of this type; error types about ground truths flag none."""
        return np.zeros(len(f.tp), dtype=bool)

    @abstractmethod
    def fix(self, state: OracleState, d: "Diagnosis") -> None:
        """Apply this type's oracle to ``state`` (which predictions are kept / true positives)."""

    def count(self, d: "Diagnosis", predictions: np.ndarray, ground_truths: np.ndarray) -> int:
        """How many errors of this type are among the ``predictions`` and ``ground_truths``
        (masks of a subset: Full, Rare, Non-rare)."""
        return int(np.sum(predictions & (d.kind == self.code)))

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class GroupedOracle(ErrorType):
    """A grouped oracle of §3.3: fixes every error of its group at once."""


class _RemovedByOracle(ErrorType):
    """Oracle: remove every prediction of this type."""

    def fix(self, state, d):
        state.keep[d.kind == self.code] = False


class _FixedToTruePositive(ErrorType):
    """Oracle: turn the prediction into a true positive of its assigned ground truth (joint
    assignment, see module docstring); the lower-scoring true positive it displaces and the
    predictions of this type left without a ground truth are suppressed."""

    @abstractmethod
    def candidates(self, e: Edges) -> np.ndarray:
        """Which (prediction, ground truth) edges this type may be fixed to."""

    @abstractmethod
    def kept_iou(self, e: Edges) -> np.ndarray:
        """IoU of the box the fix keeps (prefers the ground truth closest to the prediction)."""

    def fix(self, state, d):
        mine = d.kind == self.code
        fixed = np.flatnonzero(mine & (d.fix_gt >= 0))
        g = d.fix_gt[fixed]
        state.keep[mine & (d.fix_gt < 0)] = False
        state.cls[fixed] = d.scene.gt_class[g]
        state.tp[fixed] = True
        displaced = d.gt_tp[g]
        state.keep[displaced[displaced >= 0]] = False


class HumanBoxError(_FixedToTruePositive):
    name, title, section, priority = "human_box", "Human box", "§3.1.1, §3.2.1", 4

    def test(self, f):
        return f.object & ~f.human

    def candidates(self, e):
        return e.object_ok

    def kept_iou(self, e):
        return e.iou_o


class ObjectBoxError(_FixedToTruePositive):
    name, title, section, priority = "object_box", "Object box", "§3.1.1, §3.2.1", 5

    def test(self, f):
        return f.human & ~f.object

    def candidates(self, e):
        return e.human_ok

    def kept_iou(self, e):
        return e.iou_h


class BothBoxesError(_RemovedByOracle):
    name, title, section, priority = "both_boxes", "Both boxes", "§3.1.1, §3.2.1", 6

    def test(self, f):
        return np.ones(len(f.tp), dtype=bool)


class AssociationError(_FixedToTruePositive):
    name, title, section, priority = "association", "Association", "§3.1.1, §3.2.1", 3

    def test(self, f):
        return f.human & f.object & ~f.localized

    def candidates(self, e):
        return e.human_ok | e.object_ok

    def kept_iou(self, e):
        return np.where(e.human_ok, e.iou_h, e.iou_o)


class DuplicateError(_RemovedByOracle):
    name, title, section, priority = "duplicate", "Duplicate", "§3.1.2, §3.2.2", 1

    def test(self, f):
        return f.same_class & ~f.tp


class InteractionError(_FixedToTruePositive):
    name, title, section, priority = "interaction", "Interaction", "§3.1.2, §3.2.2", 2

    def test(self, f):
        return f.localized & ~f.same_class

    def candidates(self, e):
        return e.localized

    def kept_iou(self, e):
        return np.minimum(e.iou_h, e.iou_o)


class MissedGTError(ErrorType):
    """Oracle: the ground-truth count of each class drops by its missed ground truths."""

    name, title, section, group = "missed_gt", "Missed GT", "§3.1.3, §3.2.3", "false_negative"

    def fix(self, state, d):
        state.n_gt -= np.bincount(d.scene.gt_class[d.missed], minlength=len(state.n_gt))

    def count(self, d, predictions, ground_truths):
        return int(np.sum(ground_truths & d.missed))


class FalsePositiveGroup(GroupedOracle):
    """Grouped oracle (§3.3): remove every false positive."""

    name, title, section = "false_positive", "False positives", "§3.3"

    def fix(self, state, d):
        state.keep[d.kind != 0] = False

    def count(self, d, predictions, ground_truths):
        return int(np.sum(predictions & (d.kind != 0)))


class FalseNegativeGroup(GroupedOracle):
    """Grouped oracle (§3.3): the ground-truth count of each class becomes its true positives."""

    name, title, section, group = "false_negative", "False negatives", "§3.3", "false_negative"

    def fix(self, state, d):
        state.n_gt = np.bincount(state.cls[d.kind == 0], minlength=len(state.n_gt))

    def count(self, d, predictions, ground_truths):
        return int(np.sum(ground_truths & (d.gt_tp < 0)))


class ErrorRegistry:
    """The error types of a diagnosis, in the paper's order (Fig. 5/7), which is also the
    order of the progressive fixes (§3.4); the grouped oracles (§3.3) after them.

    >>> ERROR_REGISTRY.oracles[:3], ERROR_REGISTRY["duplicate"].title
    (('human_box', 'object_box', 'both_boxes'), 'Duplicate')
    """

    def __init__(self, *error_types: ErrorType):
        self._types: list[ErrorType] = []
        for error_type in error_types:
            self.register(error_type)

    def register(self, error_type: ErrorType) -> ErrorType:
        """Add an error type (after the others of its kind); its name must be new."""
        if not error_type.name or error_type.name in self.oracles or error_type.name == TRUE_POSITIVE:
            raise ValueError(f"an error type needs a new name, got {error_type.name!r}")
        self._types.append(error_type)
        self._number_prediction_kinds()
        return error_type

    def unregister(self, name: str) -> None:
        """Remove the error type called ``name``."""
        self._types.remove(self[name])
        self._number_prediction_kinds()

    def _number_prediction_kinds(self) -> None:
        for error_type in self.prediction_errors:
            error_type.code = self.prediction_kinds.index(error_type.name)

    def __getitem__(self, name: str) -> ErrorType:
        return next(e for e in self._types if e.name == check_choice("oracles", name, self.oracles))

    @property
    def errors(self) -> tuple[ErrorType, ...]:
        """The error types (single oracles), in the paper's order."""
        return tuple(e for e in self._types if not isinstance(e, GroupedOracle))

    @property
    def grouped(self) -> tuple[ErrorType, ...]:
        return tuple(e for e in self._types if isinstance(e, GroupedOracle))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(e.name for e in self.errors)

    @property
    def oracles(self) -> tuple[str, ...]:
        """Every oracle: the error types, then the grouped oracles."""
        return self.names + tuple(e.name for e in self.grouped)

    @property
    def prediction_errors(self) -> tuple[ErrorType, ...]:
        """The error types of predictions, in the priority of Fig. 2."""
        return tuple(sorted((e for e in self.errors if e.priority is not None), key=lambda e: e.priority))

    @property
    def prediction_kinds(self) -> tuple[str, ...]:
        """Prediction categories: code 0 is a true positive, then the prediction error types."""
        return (TRUE_POSITIVE,) + tuple(e.name for e in self.errors if e.priority is not None)

    @property
    def counted(self) -> tuple[ErrorType, ...]:
        """Every type in the order of ``error_counts``: prediction errors, ground-truth errors,
        grouped oracles."""
        return (tuple(e for e in self.errors if e.priority is not None)
                + tuple(e for e in self.errors if e.priority is None) + self.grouped)


#: The registry: one line per error type (the seven of the paper, then the grouped oracles).
ERROR_REGISTRY = ErrorRegistry(
    HumanBoxError(),
    ObjectBoxError(),
    BothBoxesError(),
    AssociationError(),
    DuplicateError(),
    InteractionError(),
    MissedGTError(),
    FalsePositiveGroup(),
    FalseNegativeGroup(),
)
register_error_type = ERROR_REGISTRY.register

#: Error types from other packages: ``[project.entry-points."hoi_semantic_eval.diagnosis_errors"]
#: name = "package.module:ErrorClass"``, registered after the paper's.
ENTRY_POINT_GROUP = "hoi_semantic_eval.diagnosis_errors"


def _register_plugins() -> None:
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        register_error_type(ep.load()())


_register_plugins()


# ---------------------------------------------------------------------------- matching
def match_standard(s: Scene, e: Edges) -> np.ndarray:
    """Standard HICO-DET matching (as :func:`metrics.detection.ap.standard_ap`): per class,
    predictions in descending score take the free ground truth of their image they are
    localized for with the same verb and the largest min(IoU_h, IoU_o) (ties: first in file
    order). Returns the matched ground truth per prediction (−1: none).

    Under the official protocol, the VOC best-overlap rule of ``VOCevaldet_bboxpair.m``
    (:func:`metrics.datasets.hico_det.evaluation.best_overlap_assignment`): the best-overlapping ground truth of the
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
    fixable = [err for err in ERROR_REGISTRY.prediction_errors if isinstance(err, _FixedToTruePositive)]
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
    """Result of :func:`diagnose`: categories, oracle mAPs and their breakdowns.

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
    ap: np.ndarray = field(default=None)
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
        the HICO-DET class set (:func:`_class_totals`; its other classes have AP 0)."""
        has = self.scene.n_gt > 0
        totals = self.scene.class_totals
        out = {}
        for name, m in self.scene.subset_masks().items():
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
            "protocol": {"name": s.protocol, "class_set": (f"HICO-DET ({s.class_totals['full']} classes)"
                                                           if s.class_totals else "classes with ground truth"),
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


def diagnose(gt, pred, *, iou: float = 0.5, keep_no_interaction: bool = False, oracles=None,
             progressive: bool = True, vocabulary=None, map_protocol: str = "official",
             dataset: str | None = None) -> Diagnosis:
    """Diag-HOI holistic analysis of ``pred`` against ``gt`` (§3): categories (Fig. 2), mAP
    after each oracle (Eq. 2), grouped oracles (§3.3) and progressive fixes (§3.4).

    ``gt`` / ``pred``: :class:`~metrics.detection.detections.Detections` (predictions need scores).
    ``oracles``: which oracles to evaluate (default every one of :data:`ERROR_REGISTRY`).

    >>> from metrics.detection.detections import Detections
    >>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
    >>> pred = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["feed"], ["horse"], [0.9])
    >>> d = diagnose(gt, pred, map_protocol="all-point")
    >>> d.kind_names().tolist(), d.map["full"], d.delta_map["interaction"]["full"]
    (['interaction'], 0.0, 1.0)
    >>> round(diagnose(gt, pred).delta_map["interaction"]["full"] * 520, 9)   # official: over 520 classes
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

    ``pairs``: first-stage pair detections (:class:`~metrics.detection.detections.Detections`; verbs
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
    from metrics.vocab.baseline import load_default
    from metrics.detection.hoi_labels import resolve_labels

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
