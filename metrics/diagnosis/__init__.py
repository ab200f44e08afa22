"""Diag-HOI: error diagnosis of HOI detectors and the oracle mAP gains, with its report.

A package adds an error type through the entry-point group ``hoi_semantic_eval.diagnosis_errors``
(``ENTRY_POINT_GROUP``): a subclass of ``ErrorType`` (or of ``FixedToTruePositive``,
``RemovedByOracle``, ``GroupedOracle``, the base classes of :mod:`metrics.diagnosis.errors`);
``register_error_type`` adds one in-process."""

from metrics._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("ErrorType", "FixedToTruePositive", "GroupedOracle", "RemovedByOracle"), "errors"),
    **dict.fromkeys(("ENTRY_POINT_GROUP", "ERROR_REGISTRY", "ErrorRegistry", "register_error_type"), "_registry"),
    **dict.fromkeys(("Diagnosis", "build_diagnosis"), "_core"),
    **dict.fromkeys(("interaction_classification", "negative_ranking", "pair_localization", "unique_pairs"),
                    "_subtasks"),
    "write_diagnosis_report": "_report",
})
