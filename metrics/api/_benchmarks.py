"""The CrossHOI-Bench multiple-choice scores and the imSitu verb-sense accuracy, with their
result dataclasses."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from metrics.api._results import Result, optional
from metrics.core._choices import SETTINGS
from metrics.core._constraints import FRACTION, POSITIVE_FRACTION, Boolean, Options, OrNone, validate_params
from metrics.core._errors import InputError
from metrics.core._validation import shown

if TYPE_CHECKING:
    from metrics.imsitu._cluster_files import SenseClusters


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


@validate_params({"score_threshold": FRACTION, "iou": POSITIVE_FRACTION, "setting": OrNone(Options(SETTINGS))})
def crosshoi_scores(bench: str | Path | dict, answers: str | Path | dict[str, list[str]], *,
                    score_threshold: float = 0.5, iou: float = 0.5,
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


@validate_params({"include_gold": Boolean()})
def sense_accuracy(gold: str | Path | dict | None, pred: str | Path | dict, *,
                   clusters: SenseClusters | str | Path | dict | None = None,
                   include_gold: bool = False) -> SenseAccuracy:
    """imSitu verb accuracy with sense clusters (Yao, Jarvis & Jiang §4.2, :mod:`metrics.imsitu._accuracy`).

    ``pred``: image → ranked verbs (a dict or its JSON file, or a folder of imSitu
    ``*.predictions`` files); ``gold``: image → gold verb(s) (a dict or its file; None: from
    imSitu image names ``<verb>_<n>.jpg``); ``clusters``: sense clusters (a dict or its file);
    ``include_gold`` counts an image's gold verbs as cluster targets too.

    >>> r = sense_accuracy({"a.jpg": "jumping"}, {"a.jpg": ["leaping", "jumping"]})
    >>> r.gold, r.wn_syn
    ({'top1': 0.0, 'top5': 1.0}, {'top1': 1.0, 'top5': 1.0})
    """
    from metrics.core._errors import naming
    from metrics.imsitu._accuracy import sense_accuracy_tables as accuracy
    from metrics.imsitu._cluster_files import parse_clusters, read_clusters
    from metrics.imsitu._readers import gold_from_image_names, read_gold, read_predictions
    pred_source = str(pred) if isinstance(pred, (str, Path)) else "predictions"
    gold_source = str(gold) if isinstance(gold, (str, Path)) else "gold"
    pred = read_predictions(pred) if isinstance(pred, (str, Path)) else pred
    if gold is None:
        with naming(pred_source):
            gold = gold_from_image_names(pred)
    elif isinstance(gold, (str, Path)):
        gold = read_gold(gold)
    sense_clusters: SenseClusters | None
    if isinstance(clusters, (str, Path)):
        sense_clusters = read_clusters(clusters)
    elif isinstance(clusters, dict):
        sense_clusters = parse_clusters(clusters)
    else:
        sense_clusters = clusters
    if gold and isinstance(pred, dict) and isinstance(gold, dict) and set(pred).isdisjoint(gold):
        raise InputError(f"{pred_source}: no image of the predictions has a gold verb in {gold_source} "
                         f"(check the image names: {shown(next(iter(pred), ''))} is not among "
                         f"{len(gold)} gold images)")
    return SenseAccuracy.from_dict(accuracy(gold, pred, sense_clusters, include_gold=include_gold))
