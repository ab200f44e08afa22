"""The scores of HOI detections (``python -m metrics score``) and the Diag-HOI diagnosis
(``python -m metrics diagnose``), with their result dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from metrics.api._results import Result, _detections, _matrix, hidden
from metrics.core._constraints import Boolean, validate_params
from metrics.detection._options import SCORE_OPTIONS, score_options

if TYPE_CHECKING:
    import pandas as pd

    from metrics.detection._detections import Detections
    from metrics.diagnosis._core import Diagnosis
    from metrics.vocab._similarity import SimilarityMatrix


@dataclass(frozen=True)
class DetectionScores(Result):
    """The ``score`` command's result (docs/contracts.md): plain numbers for the Full split under
    ``map``, ``shoe_map``, ``shoe_mf1``, ``gt_miss_rate``, ``pred_miss_rate``; the breakdowns
    under the other keys."""

    map: float | None
    hico: dict | None
    mrec: float | None
    mrec_by_subset: dict | None
    protocol: dict | None
    shoe_map: float | None
    shoe_mf1: float | None
    gt_miss_rate: float
    pred_miss_rate: float
    splits: dict
    per_class: list
    counts: dict
    resolution: dict
    params: dict

    # The four views below share this one computation: score once, read every score from it
    # (``s = score_detections(gt, pred); s.as_hico_map(); s.as_shoe_f1()``); the functions of the same
    # names score and take one view.
    def as_hico_map(self) -> HicoMap:
        """The standard HICO-DET mAP part (see :func:`hico_map`)."""
        return HicoMap(map=self.map, hico=self.hico, mrec=self.mrec, mrec_by_subset=self.mrec_by_subset,
                       protocol=self.protocol, per_class=_class_rows(self, "ap"))

    def as_shoe_map(self) -> ShoeMap:
        """The SHOE mAP part (see :func:`shoe_map`)."""
        return ShoeMap(shoe_map=self.shoe_map, splits=_split_values(self, "shoe_map"),
                       per_class=_class_rows(self, "shoe_ap"))

    def as_shoe_f1(self) -> ShoeF1:
        """The SHOE mF1 part (see :func:`shoe_f1`)."""
        return ShoeF1(shoe_mf1=self.shoe_mf1, splits=_split_values(self, "shoe_mf1"),
                      per_class=_class_rows(self, "shoe_f1", "shoe_precision", "shoe_recall", "shoe_tp",
                                            "shoe_fp", "shoe_fn"))

    def as_miss_rates(self) -> MissRates:
        """The miss rates (see :func:`miss_rates`)."""
        return MissRates(gt_miss_rate=self.gt_miss_rate, pred_miss_rate=self.pred_miss_rate)


@validate_params(SCORE_OPTIONS)
def score_detections(gt: Detections | str | Path, pred: Detections | str | Path, *,
                     verb_sim: SimilarityMatrix | str | Path | None = None,
                     object_sim: SimilarityMatrix | str | Path | None = None,
                     combine: str = "arithmetic", w: float = 0.5, iou: float = 0.5, delta: float = 0.0,
                     tau: float = 0.5, split: str | None = None, interpolation: str = "none",
                     fn_mode: str = "algorithm2", map_protocol: str = "official",
                     dataset: str | None = None) -> DetectionScores:
    """Standard HICO-DET mAP, SHOE mAP (SHOE supp. Algorithm 1), SHOE mF1 (Algorithm 2) and the
    miss rates (supp. §2) of ``pred`` against ``gt`` (:class:`~metrics.detection._detections.Detections`
    or paths of JSON Lines / QPIC files).

    ``verb_sim`` / ``object_sim``: similarity matrices (or their files; default the WordNet
    baseline); HOI similarity σ = ``combine``(verb, object) (Eq. 1, weight ``w``); ``iou`` is
    θ for both boxes; an unmatched prediction is a false positive when σ to its image's most
    similar ground truth is ≥ ``delta``; SHOE mF1 and the miss rates use predictions with score
    ≥ ``tau``; ``split`` adds a zero-shot split's seen / unseen classes; ``interpolation``
    (SHOE AP), ``fn_mode`` (mF1 false negatives) and ``map_protocol`` (standard mAP) choose
    conventions (``metrics.detection._scoring``); ``dataset`` names whose vocabulary resolves the
    labels and whose WordNet baseline is the default matrices (``metrics.datasets``; HICO-DET).

    >>> from metrics.detection._detections import Detections
    >>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
    >>> pred = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"], [0.9])
    >>> r = score_detections(gt, pred, map_protocol="all-point")
    >>> r.map, round(r.shoe_map, 6), round(r.shoe_mf1, 6), r.gt_miss_rate
    (1.0, 1.0, 1.0, 0.0)
    """
    from metrics.detection._scoring import score_dict as score
    result = score(_detections(gt), _detections(pred), split=split, verb_sim=_matrix(verb_sim),
                   object_sim=_matrix(object_sim), combine=combine, w=w, iou=iou, delta=delta, tau=tau,
                   interpolation=interpolation, fn_mode=fn_mode, map_protocol=map_protocol, dataset=dataset)
    return DetectionScores.from_dict(result)


def _class_rows(scores: DetectionScores, *keys: str) -> list[dict]:
    return [{k: row[k] for k in ("verb", "object", "hoi_id", "rare", "n_gt", *keys)} for row in scores.per_class]


def _split_values(scores: DetectionScores, key: str, count: str = "n_classes") -> dict:
    return {name: {key: s[key], count: s[count]} for name, s in scores.splits.items()}


@dataclass(frozen=True)
class HicoMap(Result):
    """Standard HICO-DET mAP: ``map`` (Default, Full), the Default / Known-Object ×
    Full / Rare / Non-rare table ``hico``, mean recall and the protocol card; per-class AP."""

    map: float | None
    hico: dict | None
    mrec: float | None
    mrec_by_subset: dict | None
    protocol: dict | None
    per_class: list


@validate_params(score_options("iou", "map_protocol", "split"))
def hico_map(gt: Detections | str | Path, pred: Detections | str | Path, *, iou: float = 0.5,
             map_protocol: str = "official", split: str | None = None) -> HicoMap:
    """Standard HICO-DET mAP of ``pred`` against ``gt`` (``map_protocol="official"``: the
    ywchao/ho-rcnn evaluation, 11-point AP, +1-pixel IoU, 600 classes; ``"all-point"``:
    all-point AP, continuous IoU); see :func:`score_detections`, whose numbers these are.

    >>> from metrics.detection._detections import Detections
    >>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
    >>> pred = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"], [0.9])
    >>> round(hico_map(gt, pred).map * 600, 9)      # one of the 600 classes found perfectly
    1.0
    """
    return score_detections(gt, pred, iou=iou, map_protocol=map_protocol, split=split).as_hico_map()


@dataclass(frozen=True)
class ShoeMap(Result):
    """SHOE mAP: ``shoe_map`` (Full), per split and per class."""

    shoe_map: float | None
    splits: dict
    per_class: list


@dataclass(frozen=True)
class ShoeF1(Result):
    """SHOE mF1: ``shoe_mf1`` (Full), per split and per class (soft TP / FP / FN)."""

    shoe_mf1: float | None
    splits: dict
    per_class: list


@validate_params(score_options("combine", "w", "iou", "delta", "split", "interpolation"))
def shoe_map(gt: Detections | str | Path, pred: Detections | str | Path, *,
             verb_sim: SimilarityMatrix | str | Path | None = None,
             object_sim: SimilarityMatrix | str | Path | None = None, combine: str = "arithmetic", w: float = 0.5,
             iou: float = 0.5, delta: float = 0.0, split: str | None = None,
             interpolation: str = "none", dataset: str | None = None) -> ShoeMap:
    """SHOE mAP (SHOE supp. Algorithm 1; AP by Eq. 11) of ``pred`` against ``gt``; options as in
    :func:`score_detections`, whose numbers these are.

    >>> from metrics.detection._detections import Detections
    >>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
    >>> pred = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["straddle"], ["horse"], [0.9])
    >>> 0 < shoe_map(gt, pred).shoe_map < 1      # a similar verb earns part of the AP
    True
    """
    return score_detections(gt, pred, verb_sim=verb_sim, object_sim=object_sim, combine=combine, w=w, iou=iou,
                            delta=delta, split=split, interpolation=interpolation, dataset=dataset).as_shoe_map()


@validate_params(score_options("combine", "w", "iou", "delta", "tau", "split", "fn_mode"))
def shoe_f1(gt: Detections | str | Path, pred: Detections | str | Path, *,
            verb_sim: SimilarityMatrix | str | Path | None = None,
            object_sim: SimilarityMatrix | str | Path | None = None, combine: str = "arithmetic", w: float = 0.5,
            iou: float = 0.5, delta: float = 0.0, tau: float = 0.5, split: str | None = None,
            fn_mode: str = "algorithm2", dataset: str | None = None) -> ShoeF1:
    """SHOE mF1 (SHOE supp. Algorithm 2; ``fn_mode="eq5"``: main text Eq. 5) of the predictions
    with score ≥ ``tau``; options as in :func:`score_detections`, whose numbers these are.

    >>> from metrics.detection._detections import Detections
    >>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
    >>> pred = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
    >>> round(shoe_f1(gt, pred).shoe_mf1, 6)        # no scores: every prediction counts
    1.0
    """
    return score_detections(gt, pred, verb_sim=verb_sim, object_sim=object_sim, combine=combine, w=w, iou=iou,
                            delta=delta, tau=tau, split=split, fn_mode=fn_mode, dataset=dataset).as_shoe_f1()


@dataclass(frozen=True)
class MissRates(Result):
    """SHOE supp. §2: the share of ground truths no prediction matched, and of (τ-filtered)
    predictions matched to no ground truth."""

    gt_miss_rate: float
    pred_miss_rate: float


@validate_params(score_options("combine", "w", "iou", "tau"))
def miss_rates(gt: Detections | str | Path, pred: Detections | str | Path, *,
               verb_sim: SimilarityMatrix | str | Path | None = None,
               object_sim: SimilarityMatrix | str | Path | None = None, combine: str = "arithmetic", w: float = 0.5,
               iou: float = 0.5, tau: float = 0.5, dataset: str | None = None) -> MissRates:
    """Ground-truth and prediction miss rates (SHOE supp. §2) under SHOE's matching of the
    predictions with score ≥ ``tau``; options as in :func:`score_detections`.

    >>> from metrics.detection._detections import Detections
    >>> gt = Detections.from_arrays(["a", "a"], [[0, 0, 10, 10]] * 2, [[10, 10, 20, 20], [50, 50, 60, 60]],
    ...                             ["ride", "hold"], ["horse", "cup"])
    >>> pred = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
    >>> miss_rates(gt, pred)
    MissRates(gt_miss_rate=0.5, pred_miss_rate=0.0)
    """
    return score_detections(gt, pred, verb_sim=verb_sim, object_sim=object_sim, combine=combine, w=w, iou=iou,
                            tau=tau, dataset=dataset).as_miss_rates()


# ---------------------------------------------------------------------------- Diag-HOI
@dataclass(frozen=True)
class DiagnosisResult(Result):
    """One model's ``diagnose`` result: ``map``, ``delta_map`` and ``error_counts`` keyed by
    error type (Full split), the breakdowns, §4.1 pair localization and §4.2 interaction
    classification. The command adds ``params`` (its options and file names) and the model
    names. ``errors()`` gives the per-prediction categories."""

    map: float | None
    delta_map: dict
    error_counts: dict
    splits: dict
    progressive: list
    progressive_note: str
    sum_delta_map: float
    protocol: dict
    counts: dict
    per_class: list
    pair_localization: dict
    interaction_classification: dict
    diagnosis: Diagnosis = hidden()

    def errors(self) -> pd.DataFrame:
        """One row per prediction (category, score, labels, its ground truth) and one per
        missed ground truth (a DataFrame)."""
        return self.diagnosis.errors_frame()


@validate_params({**score_options("iou", "map_protocol"), "keep_no_interaction": Boolean()})
def diagnose(gt: Detections | str | Path, pred: Detections | str | Path, *, iou: float = 0.5,
             keep_no_interaction: bool = False, map_protocol: str = "official",
             pairs: Detections | str | Path | None = None, dataset: str | None = None) -> DiagnosisResult:
    """Diag-HOI (Zhu et al., §3–4): every prediction's error category (Fig. 2), mAP after
    each oracle (Eq. 2) and the grouped oracles (§3.3), progressive fixes (§3.4), pair
    localization (§4.1, of ``pairs`` — first-stage pair detections — or of the predictions'
    distinct pairs) and interaction classification (§4.2); ``dataset`` as in :func:`score_detections`
    (V-COCO has no ``no_interaction`` class: §4.2's negative score is 1 − max action score). Error types:
    :data:`metrics.diagnosis.ERROR_REGISTRY`.

    >>> from metrics.detection._detections import Detections
    >>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
    >>> pred = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["feed"], ["horse"], [0.9])
    >>> d = diagnose(gt, pred, map_protocol="all-point")
    >>> d.map, d.delta_map["interaction"], d.error_counts["interaction"]
    (0.0, 1.0, 1)
    """
    from metrics.diagnosis._core import build_diagnosis as run_diagnosis
    from metrics.diagnosis._subtasks import interaction_classification, pair_localization
    d = run_diagnosis(_detections(gt), _detections(pred), iou=iou, keep_no_interaction=keep_no_interaction,
                      map_protocol=map_protocol, dataset=dataset)
    result = d.to_dict()
    result["pair_localization"] = pair_localization(d.scene, None if pairs is None else _detections(pairs))
    result["interaction_classification"] = interaction_classification(d.scene, d)
    return DiagnosisResult.from_dict(result, diagnosis=d)
