"""The public functions of the metric package (re-exported by :mod:`metrics`; see its
docstring for the naming convention).

Each takes plain inputs — :class:`~metrics.detection._detections.Detections` or a path, DataFrames or a
path, dicts or a path — and keyword-only options, checks the options with
:mod:`metrics.core._validation`, and returns a float (a score that is one number) or a frozen result
dataclass whose :meth:`Result.to_dict` is the JSON the matching command writes. The commands of
``python -m metrics`` compute their results through these functions, so a function and its
command give the same numbers.

This module imports nothing heavy: numpy, pandas and the scorers load on the first call.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from metrics.core._choices import SCALE, SETTINGS
from metrics.core._errors import InputError
from metrics.core._validation import check_choice, check_fraction, check_in_range, shown


def hidden(**options):
    """A result field that ``to_dict`` leaves out (tables and objects behind the JSON)."""
    return field(metadata={"json": False}, repr=False, compare=False, **options)


def optional(**options):
    """A result field that ``to_dict`` leaves out when it is None (a key the JSON has only
    in some cases)."""
    return field(default=None, metadata={"optional": True}, **options)


@dataclass(frozen=True)
class Result:
    """Base of the result dataclasses: one field per key of the JSON result, in its order."""

    def to_dict(self) -> dict:
        """The JSON-able result (a copy): the keys the command writes, in its order."""
        out = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if f.metadata.get("json") is False or (f.metadata.get("optional") and value is None):
                continue
            out[f.name] = copy.deepcopy(value)
        return out

    @classmethod
    def from_dict(cls, result: dict, **hidden_fields):
        """The result holding ``result``'s keys (each field's, the others ignored)."""
        names = {f.name for f in fields(cls) if f.metadata.get("json") is not False}
        return cls(**{k: v for k, v in result.items() if k in names}, **hidden_fields)


# ---------------------------------------------------------------------------- inputs
def _detections(value):
    """Detections, or the Detections a path holds."""
    if isinstance(value, (str, Path)):
        from metrics.detection._detections import read_detections
        return read_detections(value)
    return value


def _matrix(value):
    """A SimilarityMatrix, the one a path holds, or None."""
    if isinstance(value, (str, Path)):
        from metrics.vocab._similarity import SimilarityMatrix
        return SimilarityMatrix.load(value)
    return value


def _ratings(value):
    """(ratings, source name): a ratings DataFrame checked as ``ratings.csv`` is, or read from a path."""
    from metrics.study._agreement import read_ratings, validate_ratings
    if isinstance(value, (str, Path)):
        return read_ratings(value), str(value)
    return validate_ratings(value, "ratings"), "ratings"


def _items(value):
    """(items, source name): an items DataFrame checked as ``items.csv`` is, or read from a path."""
    from metrics.study._study_items import read_items, validate_items
    if isinstance(value, (str, Path)):
        return read_items(value), str(value)
    return validate_items(value, "items"), "items"


def rated_items(ratings, items, *, verb_sim=None, object_sim=None, need_similarities: bool = True):
    """``(ratings, rated items)``: the items that have ratings, with ``human_mean``,
    ``n_ratings`` and (with ``need_similarities``) ``verb_sim`` / ``object_sim``, looked up in
    the matrices where the items lack them. Every rated item must be in ``items``."""
    from metrics.study._study_items import check_rated_items, component_similarities, join_ratings
    ratings, ratings_source = _ratings(ratings)
    items, items_source = _items(items)
    check_rated_items(items, ratings, items_source, ratings_source)
    if need_similarities:
        items = component_similarities(items, _matrix(verb_sim), _matrix(object_sim))
    return ratings, join_ratings(items, ratings)


# ---------------------------------------------------------------------------- HOI detection scores
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
    def as_hico_map(self) -> "HicoMap":
        """The standard HICO-DET mAP part (see :func:`hico_map`)."""
        return HicoMap(map=self.map, hico=self.hico, mrec=self.mrec, mrec_by_subset=self.mrec_by_subset,
                       protocol=self.protocol, per_class=_class_rows(self, "ap"))

    def as_shoe_map(self) -> "ShoeMap":
        """The SHOE mAP part (see :func:`shoe_map`)."""
        return ShoeMap(shoe_map=self.shoe_map, splits=_split_values(self, "shoe_map"),
                       per_class=_class_rows(self, "shoe_ap"))

    def as_shoe_f1(self) -> "ShoeF1":
        """The SHOE mF1 part (see :func:`shoe_f1`)."""
        return ShoeF1(shoe_mf1=self.shoe_mf1, splits=_split_values(self, "shoe_mf1"),
                      per_class=_class_rows(self, "shoe_f1", "shoe_precision", "shoe_recall", "shoe_tp",
                                            "shoe_fp", "shoe_fn"))

    def as_miss_rates(self) -> "MissRates":
        """The miss rates (see :func:`miss_rates`)."""
        return MissRates(gt_miss_rate=self.gt_miss_rate, pred_miss_rate=self.pred_miss_rate)


def score_detections(gt, pred, *, verb_sim=None, object_sim=None, combine: str = "arithmetic", w: float = 0.5,
                     iou: float = 0.5, delta: float = 0.0, tau: float = 0.5, split: str | None = None,
                     interpolation: str = "none", fn_mode: str = "algorithm2",
                     map_protocol: str = "official", dataset: str | None = None) -> DetectionScores:
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


def hico_map(gt, pred, *, iou: float = 0.5, map_protocol: str = "official", split: str | None = None) -> HicoMap:
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


def shoe_map(gt, pred, *, verb_sim=None, object_sim=None, combine: str = "arithmetic", w: float = 0.5,
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


def shoe_f1(gt, pred, *, verb_sim=None, object_sim=None, combine: str = "arithmetic", w: float = 0.5,
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


def miss_rates(gt, pred, *, verb_sim=None, object_sim=None, combine: str = "arithmetic", w: float = 0.5,
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
    diagnosis: Any = hidden()

    def errors(self):
        """One row per prediction (category, score, labels, its ground truth) and one per
        missed ground truth (a DataFrame)."""
        return self.diagnosis.errors_frame()


def diagnose(gt, pred, *, iou: float = 0.5, keep_no_interaction: bool = False, map_protocol: str = "official",
             pairs=None, dataset: str | None = None) -> DiagnosisResult:
    """Diag-HOI (Zhu et al., §3–4): every prediction's error category (Fig. 2), mAP after
    each oracle (Eq. 2) and the grouped oracles (§3.3), progressive fixes (§3.4), pair
    localization (§4.1, of ``pairs`` — first-stage pair detections — or of the predictions'
    distinct pairs) and interaction classification (§4.2); ``dataset`` as in :func:`score_detections`
    (V-COCO has no ``no_interaction`` class: §4.2's negative score is 1 − max action score). Error types:
    :data:`metrics.diagnosis._core.ERROR_REGISTRY`.

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


# ---------------------------------------------------------------------------- CrossHOI-Bench
@dataclass(frozen=True)
class CrossHoiScores(Result):
    """The ``mcq`` command's result: Macro-F1, Instance-F1, Micro-F1, exact match, average
    precision and recall (fractions), the counts behind them, and how the answers were read."""

    macro_f1: float
    instance_f1: float
    micro_f1: float
    exact_match: float
    avg_precision: float
    avg_recall: float
    n_questions: int
    counts: dict
    macro: dict
    per_class: list
    setting: str | None
    bench: str | None
    pred: str | None
    pred_kind: str
    score_threshold: float | None
    iou: float | None


def crosshoi_scores(bench, answers, *, score_threshold: float = 0.5, iou: float = 0.5,
                    setting: str | None = None) -> CrossHoiScores:
    """CrossHOI-Bench multiple-choice scores (the released scorer's semantics,
    :mod:`metrics.crosshoi._mcq`) of ``answers`` on ``bench``.

    ``bench``: the benchmark (a path or its JSON object); ``answers``: a path (option strings
    per question, the released detection records, or JSON Lines detections) or a dict question
    key → chosen option strings. Detections answer with score ≥ ``score_threshold`` and IoU ≥
    ``iou`` with the question's boxes. ``setting`` is recorded.

    >>> bench = {"q": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["feed a/an horse"]}}
    >>> r = crosshoi_scores(bench, {"q": ["ride a/an horse", "feed a/an horse"]})
    >>> round(r.instance_f1, 4), r.exact_match
    (0.6667, 0.0)
    """
    from metrics.crosshoi._mcq import mcq_scores, parse_bench, read_answers, read_bench
    check_fraction("score_threshold", score_threshold)
    check_in_range("iou", iou, 0.0, 1.0, low_open=True)
    if setting is not None:
        check_choice("setting", setting, SETTINGS)
    questions = read_bench(bench) if isinstance(bench, (str, Path)) else parse_bench(bench)
    if isinstance(answers, (str, Path)):
        chosen, kind = read_answers(answers, questions, score_threshold=score_threshold, iou=iou)
    else:
        chosen, kind = answers, "options"
    result = mcq_scores(questions, chosen)
    detections = kind == "detections"
    return CrossHoiScores.from_dict({
        **result, "setting": setting, "bench": str(Path(bench)) if isinstance(bench, (str, Path)) else None,
        "pred": str(Path(answers)) if isinstance(answers, (str, Path)) else None, "pred_kind": kind,
        "score_threshold": score_threshold if detections else None, "iou": iou if detections else None})


# ---------------------------------------------------------------------------- imSitu
@dataclass(frozen=True)
class SenseAccuracy(Result):
    """The ``imsitu`` command's result: Top-1 / Top-5 accuracy under the gold, WordNet-synonym
    and (with clusters) sense-cluster criteria (Tables 3–4), and the counts behind them."""

    gold: dict
    wn_syn: dict
    cluster: dict | None
    breakdown: dict | None
    n_images_without_clusters: int | None = optional()
    n_gold_outside_clusters: int | None = optional()
    include_gold: bool | None = optional()
    n_images: int = 0
    n_missing_predictions: int = 0
    n_extra_predictions: int = 0


def sense_accuracy(gold, pred, *, clusters=None, include_gold: bool = False) -> SenseAccuracy:
    """imSitu verb accuracy with sense clusters (Yao, Jarvis & Jiang §4.2, :mod:`metrics.imsitu._accuracy`).

    ``pred``: image → ranked verbs (a dict or its JSON file, or a folder of imSitu
    ``*.predictions`` files); ``gold``: image → gold verb(s) (a dict or its file; None: from
    imSitu image names ``<verb>_<n>.jpg``); ``clusters``: sense clusters (a dict or its file);
    ``include_gold`` counts an image's gold verbs as cluster targets too.

    >>> r = sense_accuracy({"a.jpg": "jumping"}, {"a.jpg": ["leaping", "jumping"]})
    >>> r.gold, r.wn_syn
    ({'top1': 0.0, 'top5': 1.0}, {'top1': 1.0, 'top5': 1.0})
    """
    from metrics.imsitu._accuracy import (gold_from_image_names, parse_clusters, read_clusters, read_gold, read_predictions,
                         sense_accuracy_tables as accuracy)
    from metrics.core._errors import naming
    pred_source = str(pred) if isinstance(pred, (str, Path)) else "predictions"
    gold_source = str(gold) if isinstance(gold, (str, Path)) else "gold"
    pred = read_predictions(pred) if isinstance(pred, (str, Path)) else pred
    if gold is None:
        with naming(pred_source):
            gold = gold_from_image_names(pred)
    elif isinstance(gold, (str, Path)):
        gold = read_gold(gold)
    if isinstance(clusters, (str, Path)):
        clusters = read_clusters(clusters)
    elif isinstance(clusters, dict):
        clusters = parse_clusters(clusters)
    if gold and isinstance(pred, dict) and isinstance(gold, dict) and set(pred).isdisjoint(gold):
        raise InputError(f"{pred_source}: no image of the predictions has a gold verb in {gold_source} "
                         f"(check the image names: {shown(next(iter(pred), ''))} is not among "
                         f"{len(gold)} gold images)")
    return SenseAccuracy.from_dict(accuracy(gold, pred, clusters, include_gold=include_gold))


# ---------------------------------------------------------------------------- rating studies
def annotator_agreement(ratings, *, level: str = "ordinal", n_resamples: int = 1000, seed: int = 0):
    """Inter-annotator agreement of a rating study (SHOE §4.3, supp. §5.2–5.3, §6.3):
    Krippendorff's alpha at ``level``, mean pairwise Eq. 13 agreement, quadratic weighted
    kappa and Spearman ρ, with bootstrap intervals (``n_resamples``, 0 for none).

    ``ratings``: ``ratings.csv`` or its DataFrame (``item_id, annotator, rating``). Returns an
    :class:`~metrics.study._agreement.AgreementReport`, whose ``to_dict()`` is the ``agreement``
    command's result and whose tables feed the report.

    >>> import pandas as pd
    >>> r = pd.DataFrame({"item_id": list("aabbcc"), "annotator": ["x", "y"] * 3, "rating": [0, 0, 2, 3, 4, 4]})
    >>> round(annotator_agreement(r, n_resamples=0).mean_pairwise_agreement, 4)
    0.9167
    """
    from metrics.study._agreement import agreement_report
    return agreement_report(_ratings(ratings)[0], level=level, n_resamples=n_resamples, seed=seed)


def krippendorff_alpha(ratings, *, level: str = "ordinal", scale=SCALE) -> float:
    """Krippendorff's alpha of a rating study at ``level`` (nominal, ordinal, interval,
    ratio) over the values of ``scale``; items rated once are left out.

    >>> import pandas as pd
    >>> r = pd.DataFrame({"item_id": list("aabbcc"), "annotator": ["x", "y"] * 3, "rating": [0, 0, 2, 2, 4, 4]})
    >>> krippendorff_alpha(r)
    1.0
    """
    from metrics.study._agreement import alpha_of_matrix as alpha, rating_matrix
    return alpha(rating_matrix(_ratings(ratings)[0]), level, scale)


@dataclass(frozen=True)
class PairwiseAgreement(Result):
    """SHOE Eq. 13 agreement, ``1 − |r_i − r_j| / (max − min of the scale)``, of every
    annotator pair over the items both rated: the mean over pairs and the annotator ×
    annotator table."""

    mean_pairwise_agreement: float
    pairwise_agreement: dict


def pairwise_agreement(ratings, *, scale=SCALE) -> PairwiseAgreement:
    """Eq. 13 agreement of every pair of annotators (``ratings`` as in
    :func:`annotator_agreement`).

    >>> import pandas as pd
    >>> r = pd.DataFrame({"item_id": list("aabb"), "annotator": ["x", "y"] * 2, "rating": [0, 1, 4, 4]})
    >>> pairwise_agreement(r).mean_pairwise_agreement
    0.875
    """
    from metrics.study._agreement import mean_offdiagonal, pairwise_agreement_matrix as agreement, rating_matrix, table_dict
    table = agreement(rating_matrix(_ratings(ratings)[0]), float(max(scale) - min(scale)))
    return PairwiseAgreement(mean_pairwise_agreement=mean_offdiagonal(table), pairwise_agreement=table_dict(table))


@dataclass(frozen=True)
class WTuning(Result):
    """The ``tune-w`` command's result: the verb weight w minimizing the mean absolute error
    against the mean human rating (SHOE §4.5, Eq. 14), per category and overall."""

    w_overall: float
    mae_overall: float
    w_by_category: dict
    mae_by_category: dict
    n_by_category: dict
    curve: dict
    agreement_tuned: float
    agreement_w05: float
    n_items: int = hidden()


def tune_w(ratings, items, *, verb_sim=None, object_sim=None, step: float = 0.001) -> WTuning:
    """Per-category verb weight w of the HOI similarity (SHOE §4.5, Eq. 14; exact optimum,
    MAE curve on a grid of ``step``). ``ratings`` / ``items``: ``ratings.csv`` / ``items.csv``
    or their DataFrames; ``verb_sim`` / ``object_sim`` fill ``verb_sim`` / ``object_sim`` where
    the items lack them.

    >>> import pandas as pd
    >>> items = pd.DataFrame({"item_id": ["a", "b"], "verb_sim": [1.0, 0.0], "object_sim": [0.0, 1.0]})
    >>> ratings = pd.DataFrame({"item_id": ["a", "b"], "annotator": ["x", "x"], "rating": [1, 3]})
    >>> tune_w(ratings, items).w_overall
    0.25
    """
    from metrics.study._tuning import tune_w_by_category as tune
    _, rated = rated_items(ratings, items, verb_sim=verb_sim, object_sim=object_sim)
    return WTuning.from_dict(tune(rated, step=step), n_items=len(rated))


@dataclass(frozen=True)
class Recalibration(Result):
    """The ``recalibrate`` command's result (held-out agreement ``before`` / ``after``, the
    method and its parameters); the new matrices are ``verb`` and ``object``, and
    :meth:`save` writes them as the command does."""

    before: dict
    after: dict
    method: str
    parameters: dict
    folds: list
    n_items: int
    n_ratings: int
    verb: Any = hidden()
    object: Any = hidden()
    details: dict = hidden()

    def save(self, folder) -> list[str]:
        """Write ``{verb,object}_recalibrated.{npz,csv}`` into ``folder``; returns the paths."""
        folder = Path(folder)
        return [str(matrix.save(folder / f"{role}_recalibrated{suffix}"))
                for role, matrix in (("verb", self.verb), ("object", self.object)) for suffix in (".npz", ".csv")]


def recalibrate(ratings, items, verb_sim, object_sim, *, w: float = 0.5, prior_strength: float = 5.0,
                folds: int = 5, seed: int = 0, study: str | None = None) -> Recalibration:
    """New verb and object similarity matrices from the ratings of an HOI-similarity study
    (isotonic calibration of every entry, shrinkage of rated entries toward the human evidence;
    ``metrics.study._recalibration``), with ``folds``-fold cross-validated agreement before and after.
    ``study`` names the study in the matrices' provenance (default: the ratings' ``study``
    column).

    >>> from metrics.vocab._baseline import load_default
    >>> import pandas as pd
    >>> items = pd.DataFrame({"item_id": ["a", "b", "c", "d"], "category": [2, 2, 1, 1],
    ...                       "gt_verb": ["ride", "ride", "hold", "hold"], "gt_object": ["horse", "bicycle", "cup", "cup"],
    ...                       "pred_verb": ["straddle", "sit_on", "hold", "hold"],
    ...                       "pred_object": ["horse", "bicycle", "bowl", "bottle"]})
    >>> ratings = pd.DataFrame({"item_id": list("abcd"), "annotator": "x", "rating": [4, 2, 3, 2]})
    >>> r = recalibrate(ratings, items, load_default("v"), load_default("n"), folds=2)
    >>> sorted(r.to_dict())
    ['after', 'before', 'folds', 'method', 'n_items', 'n_ratings', 'parameters']
    """
    from metrics.study._recalibration import recalibrate_matrices as fit
    ratings, rated = rated_items(ratings, items, need_similarities=False)
    if not study and "study" in ratings.columns and len(ratings):
        study = str(ratings["study"].iloc[0])
    result = fit(rated, _matrix(verb_sim), _matrix(object_sim), w=w, prior_strength=prior_strength, folds=folds,
                 seed=seed, study=study)
    return Recalibration.from_dict(result, verb=result["verb"], object=result["object"], details=result)




@dataclass(frozen=True)
class PPIRecalibration(Result):
    """The ``recalibrate --estimator ppi`` command's result: per matrix (``verb``, ``object``)
    the summary of each LLM level (entries, human-rated entries, λ, the mean PPI estimate beside
    the human-only mean and its interval, effective n); the new matrices are ``verb_matrix`` and
    ``object_matrix``, each entry's interval table ``intervals``, and :meth:`save` writes them."""

    method: str
    parameters: dict
    by_level: dict
    n_items: int
    n_ratings: int
    verb_matrix: Any = hidden()
    object_matrix: Any = hidden()
    intervals: dict = hidden()

    def save(self, folder) -> list[str]:
        """Write ``{verb,object}_recalibrated.{npz,csv}`` and, beside each matrix,
        ``{verb,object}_recalibrated_intervals.csv`` (one row per entry); returns the paths."""
        from metrics.core._jsonio import write_text_atomic
        folder = Path(folder)
        paths = [str(matrix.save(folder / f"{role}_recalibrated{suffix}"))
                 for role, matrix in (("verb", self.verb_matrix), ("object", self.object_matrix))
                 for suffix in (".npz", ".csv")]
        for role, table in self.intervals.items():
            path = folder / f"{role}_recalibrated_intervals.csv"
            write_text_atomic(path, table.to_csv(index=False, float_format="%.6g"))
            paths.append(str(path))
        return paths


def recalibrate_ppi(ratings, items, verb_sim, object_sim, *, w: float = 0.5, confidence: float = 0.95,
                    study: str | None = None) -> PPIRecalibration:
    """New verb and object matrices from prediction-powered estimates
    (``metrics.study._recalibration.recalibrate_matrices_ppi``): ``verb_sim`` / ``object_sim`` are the LLM
    ratings of every pair, the ratings of an HOI-similarity study the human evidence; every entry
    gets its expected human similarity with an interval, beside the human-only estimate of its
    LLM level.

    >>> from metrics.vocab._baseline import load_default
    >>> import pandas as pd
    >>> items = pd.DataFrame({"item_id": list("abcd"), "category": [2, 2, 1, 1],
    ...                       "gt_verb": ["ride", "ride", "hold", "hold"], "gt_object": ["horse", "bicycle", "cup", "cup"],
    ...                       "pred_verb": ["straddle", "sit_on", "hold", "hold"],
    ...                       "pred_object": ["horse", "bicycle", "bowl", "bottle"]})
    >>> ratings = pd.DataFrame({"item_id": list("abcd"), "annotator": "x", "rating": [4, 2, 3, 2]})
    >>> r = recalibrate_ppi(ratings, items, load_default("v"), load_default("n"))
    >>> sorted(r.to_dict()), sorted(r.intervals)
    (['by_level', 'method', 'n_items', 'n_ratings', 'parameters'], ['object', 'verb'])
    """
    from metrics.core._validation import check_confidence
    from metrics.study._recalibration import recalibrate_matrices_ppi as fit
    check_confidence("confidence", confidence)
    ratings, rated = rated_items(ratings, items, need_similarities=False)
    if not study and "study" in ratings.columns and len(ratings):
        study = str(ratings["study"].iloc[0])
    result = fit(rated, _matrix(verb_sim), _matrix(object_sim), w=w, confidence=confidence, study=study)
    return PPIRecalibration.from_dict(result, verb_matrix=result["verb"], object_matrix=result["object"],
                                      intervals=result["intervals"])