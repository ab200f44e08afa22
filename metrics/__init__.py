"""Semantic evaluation of human–object interaction detectors.

The public API is the names in ``__all__``, imported from here (``from metrics import
shoe_map``). Module layout, one rule: every package (``metrics.core``, ``metrics.detection``,
``metrics.datasets.hico_det``, ``metrics.diagnosis.errors``, ...) is public and its ``__init__``
re-exports, in ``__all__``, the names a user or a plugin author needs (the Diag-HOI error base
classes in ``metrics.diagnosis``, the dataset plugin interface ``Dataset`` in ``metrics.datasets``);
every module of a package is private and named ``_name.py`` (``metrics/detection/_scoring.py``),
an implementation detail that may change. The package ``metrics.api`` holds the functions behind
``__all__``; besides the packages, only ``metrics.cli`` and ``python -m metrics`` are public. Code
outside the package imports public names only (tests/studyapp/test_layering.py holds ``studyapp``
to it).

Naming convention: a function is named for what it computes (``shoe_map``,
``krippendorff_alpha``) or reads (``read_detections``), in snake_case, and a class for what it
holds (``SimilarityMatrix``, ``DetectionScores``), in CamelCase. The data come first and
positionally — :class:`Detections`, DataFrames or dicts, or the paths of
their files; every option is keyword-only and named as the command-line option that sets it,
without dashes (``delta`` is ``--delta``; a command that names one otherwise, such as
``--mf1-fn`` for ``fn_mode``, lists it in its ``FLAGS``). A score that is one number is a float;
anything more a frozen dataclass whose ``to_dict()`` is the JSON the matching ``python -m
metrics`` command writes. A bad option raises :class:`ParameterError` (an
:class:`InputError`) naming the parameter; bad input data an :class:`InputError` naming the
file, line and field.

>>> from metrics import Detections, score_detections
>>> gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"])
>>> score_detections(gt, gt, delta=7)
Traceback (most recent call last):
metrics.core._validation.ParameterError: delta must be a number in [0, 1], got 7

Pure Python + numpy/scipy/pandas; never imports streamlit, sqlmodel or studyapp.
"""

from metrics._lazy import lazy_exports
from metrics.core._errors import InputError
from metrics.core._validation import ParameterError

# name -> module; imported on first use (PEP 562), so ``import metrics`` and ``--help`` stay
# light: no numpy-heavy modules, nltk, scikit-learn or matplotlib until a function needs them
_LAZY = {
    # scores and their results (metrics.api)
    **dict.fromkeys(("score_detections", "hico_map", "shoe_map", "shoe_f1", "miss_rates", "diagnose",
                     "crosshoi_scores", "sense_accuracy", "annotator_agreement", "krippendorff_alpha",
                     "pairwise_agreement", "tune_w", "recalibrate", "recalibrate_ppi", "rated_items", "Result",
                     "DetectionScores",
                     "HicoMap", "ShoeMap", "ShoeF1", "MissRates", "DiagnosisResult", "CrossHoiScores",
                     "SenseAccuracy", "PairwiseAgreement", "WTuning", "Recalibration", "PPIRecalibration"), "api"),
    "AgreementReport": "study._agreement",
    # prediction-powered inference (LLM ratings of every item + human ratings of a sample)
    **dict.fromkeys(("ppi_mean", "ppi_mean_by_group", "ppi_entries", "PPIEstimate"), "study._ppi"),
    **dict.fromkeys(("ppi_agreement", "ppi_correlation", "ppi_weight"), "study._ppi_alignment"),
    **dict.fromkeys(("active_probabilities", "active_selection", "active_ppi_mean", "ensemble_uncertainty"),
                    "study._ppi_active"),
    # inputs
    "Detections": "detection._detections", "read_detections": "detection._detections_fast",
    "read_ratings": "study._agreement",
    "read_items": "study._study_items", "SimilarityMatrix": "vocab._similarity", "combine": "vocab._similarity",
    # Diag-HOI error types
    "ErrorType": "diagnosis.errors", "ERROR_REGISTRY": "diagnosis._registry", "register_error_type": "diagnosis._registry",
    # labels and synsets
    "candidate_synsets": "vocab._matching", "match_synset": "vocab._matching", "match_synsets": "vocab._matching",
    "resolve": "vocab._matching", "Vocabulary": "core._vocabulary", "hico": "datasets.hico_det._vocabulary",
}

_, __getattr__, __dir__ = lazy_exports(__name__, _LAZY)
__all__ = ["InputError", "ParameterError", "AgreementReport", "CrossHoiScores", "DetectionScores", "Detections",
           "DiagnosisResult", "ERROR_REGISTRY", "ErrorType", "HicoMap", "MissRates", "PPIEstimate",
           "PPIRecalibration", "PairwiseAgreement", "Recalibration", "Result", "SenseAccuracy", "ShoeF1",
           "ShoeMap", "SimilarityMatrix", "Vocabulary", "WTuning", "active_ppi_mean", "active_probabilities",
           "active_selection", "annotator_agreement", "candidate_synsets", "combine", "crosshoi_scores",
           "diagnose", "ensemble_uncertainty", "hico", "hico_map", "krippendorff_alpha", "match_synset",
           "match_synsets", "miss_rates", "pairwise_agreement", "ppi_agreement", "ppi_correlation",
           "ppi_entries", "ppi_mean", "ppi_mean_by_group", "ppi_weight", "rated_items", "read_detections",
           "read_items", "read_ratings", "recalibrate", "recalibrate_ppi", "register_error_type", "resolve",
           "score_detections", "sense_accuracy", "shoe_f1", "shoe_map", "tune_w"]
