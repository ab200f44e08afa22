"""The public functions of the metric package (re-exported by :mod:`metrics`; see its
docstring for the naming convention).

Each takes plain inputs — :class:`~metrics.detection._detections.Detections` or a path, DataFrames or a
path, dicts or a path — and keyword-only options, whose constraints it states as data
(:func:`metrics.core._constraints.validate_params`), and returns a float (a score that is one
number) or a frozen result dataclass whose :meth:`Result.to_dict` is the JSON the matching command writes. The commands of
``python -m metrics`` compute their results through these functions, so a function and its
command give the same numbers.

One module per family: ``_detection`` (detection scores, Diag-HOI), ``_benchmarks`` (CrossHOI-Bench,
imSitu), ``_studies`` (rating studies); ``_results`` holds the result base and the input readers.
These modules import nothing heavy: numpy, pandas and the scorers load on the first call.
"""

from metrics.api._benchmarks import CrossHoiScores, SenseAccuracy, crosshoi_scores, sense_accuracy
from metrics.api._detection import (
                                    DetectionScores,
                                    DiagnosisResult,
                                    HicoMap,
                                    MissRates,
                                    ShoeF1,
                                    ShoeMap,
                                    diagnose,
                                    hico_map,
                                    miss_rates,
                                    score_detections,
                                    shoe_f1,
                                    shoe_map,
)
from metrics.api._results import Result, hidden, optional
from metrics.api._studies import (
                                    PairwiseAgreement,
                                    PPIRecalibration,
                                    Recalibration,
                                    WTuning,
                                    annotator_agreement,
                                    krippendorff_alpha,
                                    pairwise_agreement,
                                    rated_items,
                                    recalibrate,
                                    recalibrate_ppi,
                                    tune_w,
)

__all__ = ["CrossHoiScores", "DetectionScores", "DiagnosisResult", "HicoMap", "MissRates", "PPIRecalibration",
           "PairwiseAgreement", "Recalibration", "Result", "SenseAccuracy", "ShoeF1", "ShoeMap", "WTuning",
           "annotator_agreement", "crosshoi_scores", "diagnose", "hico_map", "hidden", "krippendorff_alpha",
           "miss_rates", "optional", "pairwise_agreement", "rated_items", "recalibrate", "recalibrate_ppi",
           "score_detections", "sense_accuracy", "shoe_f1", "shoe_map", "tune_w"]
