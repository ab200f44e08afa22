"""imSitu sense-aware verb accuracy (:mod:`metrics`'s ``sense_accuracy``; its tables here), the
alignment of its criteria with human judgment, the two-step verb-sense clustering, and the
sense-cluster files (the project's JSON and the released code's results JSON and step-2 CSV)."""

from metrics._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("sense_accuracy_tables",), "_accuracy"),
    **dict.fromkeys(("align_study", "human_accuracy", "majority_labels", "study_human_labels"), "_alignment"),
    **dict.fromkeys(("gold_from_image_names", "parse_predictions", "read_examples_predictions", "read_gold",
                     "split_verbs"), "_readers"),
    **dict.fromkeys(("SenseClusters", "read_clusters"), "_cluster_files"),
    **dict.fromkeys(("Nodes", "read_nodes"), "_nodes"),
    **dict.fromkeys(("result_summary", "summary_text"), "_cluster_report"),
    **dict.fromkeys(("ClusteringResult", "two_step_clustering"), "_sense_clusters"),
})
