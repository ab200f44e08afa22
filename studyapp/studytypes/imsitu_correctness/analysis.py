"""The analysis of an imSitu correctness study.

:func:`analyse_study` gives human Top-1 / Top-5 accuracy per model (majority over annotators,
bootstrap intervals) and, when the gold verbs are known, the alignment of the gold, WordNet and
cluster criteria with the human marks (Tables 5–6 of Yao et al.).
"""

from __future__ import annotations

import pandas as pd

from metrics import InputError
from metrics.imsitu import SenseClusters, align_study, human_accuracy, majority_labels, study_human_labels


def clusters_from_items(fields_list) -> SenseClusters | None:
    """The sense clusters carried by the items (None when no item has any)."""
    clusters: dict[str, frozenset[str]] = {}
    by_image: dict[str, tuple[str, ...]] = {}
    found = False
    for fields in fields_list:
        if "clusters" not in fields:
            continue
        found = True
        for c, verbs in fields["clusters"].items():
            clusters[c] = frozenset(verbs)
        by_image[fields["image"]] = tuple(fields["clusters"])
    return SenseClusters(clusters, by_image) if found else None


def analyse_study(slug: str, tables: dict, fields_by_key: dict, n_resamples: int = 1000,
                  seed: int = 0) -> dict:
    """Human accuracy per model, plus the alignment table when every image has a gold verb, from
    the study's export tables and its items' fields (by item key).

    Returns ``{"human_accuracy": {model: {...}}, "alignment": dict | None, "n_annotators",
    "n_ratings"}`` (see :func:`metrics.imsitu.align_study`).
    """
    ratings = tables["ratings.csv"]
    ratings = ratings[ratings["phase"] == "main"]
    if ratings.empty:
        raise InputError(f"study {slug!r} has no main ratings yet")
    items = tables["items.csv"]
    items = items[items["role"] == "main"].astype({"item_id": str})
    labels = study_human_labels(ratings, items)
    human = majority_labels(labels)
    out = {"human_accuracy": human_accuracy(human, n_resamples=n_resamples, seed=seed), "alignment": None,
           "n_annotators": int(labels["annotator"].nunique()), "n_ratings": int(len(ratings))}
    fields = [fields_by_key[key] for key in items["item_id"]]
    if items["gold"].fillna("").astype(str).str.strip().ne("").all():
        out["alignment"] = align_study(ratings, items, clusters=clusters_from_items(fields),
                                       n_resamples=n_resamples, seed=seed)
    return out


def human_accuracy_table(analysis: dict) -> pd.DataFrame:
    """One row per model: human Top-1 / Top-5 with their 95% intervals."""
    rows = [{"model": m, "top1": h["top1"], "top1_low": h["top1_ci"][0], "top1_high": h["top1_ci"][1],
             "top5": h["top5"], "top5_low": h["top5_ci"][0], "top5_high": h["top5_ci"][1],
             "n_images": h["n_images"]} for m, h in analysis["human_accuracy"].items()]
    return pd.DataFrame(rows)


def alignment_frame(alignment: dict) -> pd.DataFrame:
    """Table 6 as rows: criterion, Kendall's tau and Krippendorff's alpha at Top-1 / Top-5."""
    return pd.DataFrame([{"criterion": name,
                          "tau_top1": c["top1"]["kendall_tau"], "tau_top5": c["top5"]["kendall_tau"],
                          "alpha_top1": c["top1"]["krippendorff_alpha"], "alpha_top5": c["top5"]["krippendorff_alpha"]}
                         for name, c in alignment["criteria"].items()])


def accuracy_frame(alignment: dict) -> pd.DataFrame:
    """Table 5 as rows: model, then each criterion's Top-1 / Top-5 accuracy and human accuracy."""
    rows = []
    for m in alignment["models"]:
        row = {"model": m}
        for t in ("top1", "top5"):
            for name, c in alignment["criteria"].items():
                row[f"{name}_{t}"] = c[t]["accuracy"][m]
                row[f"{name}_{t}_diff"] = c[t]["difference"][m]
            row[f"human_{t}"] = alignment["human"][m][t]
        rows.append(row)
    return pd.DataFrame(rows)
