"""The JSON result and the readable summary of ``python -m metrics imsitu-cluster``."""

from __future__ import annotations

import pandas as pd

from metrics.imsitu._sense_clusters import ClusteringResult


def result_summary(result: ClusteringResult) -> dict:
    """The JSON result of ``imsitu-cluster``: selection, quality, ambiguity, timings."""
    return {"quality": result.quality, "ambiguity": result.ambiguity,
            "step2": result.step2, "settings": result.settings,
            "step1": {"k_distribution": {str(k): int(v) for k, v in sorted(
                pd.Series([s["k"] for s in result.step1.values()]).value_counts().items())},
                "n_step1_clusters": int(result.step1_labels.max()) + 1,
                "n_small_verbs": result.settings.get("n_small_verbs", 0),
                "silhouette_sampled": any(s["sampled"] for s in result.step1.values())},
            "seconds": result.seconds}


def _settings_lines(settings: dict) -> list[str]:
    """How the run differs from the released code, and how many verbs the extension took."""
    if not settings:
        return []
    released = {"seed": 42, "n_init": 10, "ratio_rule": "float", "step2_points": "mean"}
    changed = [f"{k} {settings[k]}" for k, v in released.items() if settings.get(k) != v]
    lines = ["settings: the released code's" if not changed else
             f"settings: the released code's except {', '.join(changed)}"]
    n, smallest = settings.get("n_small_verbs", 0), settings.get("min_nodes_per_verb", 17)
    how = "one step-1 cluster each" if settings.get("small_verbs") == "one-cluster" else "k up to n − 1"
    lines.append(f"extension: {n} verb{'s' if n != 1 else ''} with fewer than {smallest} nodes "
                 f"(the released code needs {smallest}): {how}")
    return lines


def summary_text(summary: dict) -> str:
    """The readable summary of :func:`result_summary`."""
    q, a, s2 = summary["quality"], summary["ambiguity"], summary["step2"]

    def f(v, p=3):
        return "—" if v is None else f"{v:.{p}f}"
    lines = [f"step 1: {summary['step1']['n_step1_clusters']} clusters; k per verb: "
             + ", ".join(f"{k}×{n}" for k, n in summary["step1"]["k_distribution"].items()),
             *_settings_lines(summary.get("settings", {})),
             f"step 2: k = {s2['k']} (s = {s2['ratio']}), silhouette {f(s2['silhouette'], 4)}",
             "quality (Table 1)"]
    if q:
        sampled = (f" (sampled: {q['silhouette_sample_size']} of {q['n_nodes']} nodes)"
                   if q.get("silhouette_sampled") else " (exact)")
        lines += [f"  silhouette (cosine)   {f(q['silhouette'])}{sampled}",
                  f"  Calinski–Harabasz     {f(q['calinski_harabasz'], 2)}",
                  f"  WordNet purity        {f(q['purity'])}"]
        if "step2" in q:
            lines.append(f"  over the {q['step2']['n_points']} step-2 points: silhouette "
                         f"{f(q['step2']['silhouette'])}, Calinski–Harabasz {f(q['step2']['calinski_harabasz'], 2)}")
    lines += ["ambiguity (Table 2)",
              f"  # of clusters         {a['n_clusters']}",
              f"  verbs per cluster     {a['verbs_per_cluster']:.2f}",
              f"  clusters per image    {a['clusters_per_image']:.2f}",
              f"  multi-image rate      {a['multi_image_rate']:.2f}",
              f"  clusters per verb     {a['clusters_per_verb']:.2f}",
              f"  multi-verb rate       {a['multi_verb_rate']:.2f}"]
    if summary["step1"]["silhouette_sampled"]:
        lines.append("note: some step-1 silhouettes were sampled (verbs with more nodes than the exact limit)")
    lines.append(f"time: {summary['seconds']['total']:.1f} s")
    return "\n".join(lines)
