"""imSitu sense-aware verb accuracy (:mod:`metrics`'s ``sense_accuracy``; its tables here) and
the two-step verb-sense clustering."""

from metrics._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("SenseClusters", "align_study", "gold_from_image_names", "human_accuracy", "majority_labels",
                     "parse_predictions", "read_clusters", "read_examples_predictions", "read_gold",
                     "sense_accuracy_tables", "split_verbs", "study_human_labels"), "_accuracy"),
    **dict.fromkeys(("ClusteringResult", "Nodes", "read_nodes", "result_summary", "summary_text",
                     "two_step_clustering"), "_sense_clusters"),
})
