"""Analysis of rating studies: agreement, reliability, the rater model, alignment, w tuning,
recalibration, prediction-powered estimates, simulated raters, reports. The functions here take
the tables of a study (a ratings matrix, rated items); :mod:`metrics`'s ``annotator_agreement``,
``tune_w``, ``recalibrate`` ... take files or DataFrames and return results."""

from metrics._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("AgreementReport", "agreement_report", "alpha_of_matrix", "bootstrap_intervals",
                     "eq13_agreement", "mean_offdiagonal", "pairwise_agreement_matrix", "rating_matrix",
                     "read_ratings", "validate_ratings"), "_agreement"),
    "alignment_table": "_alignment",
    **dict.fromkeys(("image_update", "pair_ratings", "summary_frame"), "_image_update"),
    **dict.fromkeys(("PPIEstimate", "ppi_entries", "ppi_mean", "ppi_mean_by_group"), "_ppi"),
    **dict.fromkeys(("RaterPopulationEstimate", "ppi_mean_rater_population"), "_ppi_raters"),
    **dict.fromkeys(("active_ppi_mean", "active_probabilities", "active_selection", "ensemble_uncertainty"),
                    "_ppi_active"),
    **dict.fromkeys(("ppi_agreement", "ppi_correlation", "ppi_weight"), "_ppi_alignment"),
    **dict.fromkeys(("RaterModel", "collection_priority", "fit_rater_model"), "_rater_model"),
    **dict.fromkeys(("recalibrate_matrices", "recalibrate_matrices_ppi"), "_recalibration"),
    "reliability": "_reliability",
    **dict.fromkeys(("ITEMS_BOOTSTRAP", "KALPHA_BOOTSTRAP", "alignment_frame", "reliability_frame", "write_report"),
                    "_report"),
    **dict.fromkeys(("SHOE_COLUMNS", "compare_lines", "is_shoe_layout", "read_shoe_csv"), "_shoe_pool"),
    **dict.fromkeys(("PROFILES", "rater_profiles", "simulate_ratings"), "_simulation"),
    **dict.fromkeys(("component_similarities", "item_synsets", "items_dataset", "join_ratings", "read_items"),
                    "_study_items"),
    "tune_w_by_category": "_tuning",
})
