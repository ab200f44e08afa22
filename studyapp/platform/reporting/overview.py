"""What the home page shows: the loaded vocabulary and similarity matrices."""

from __future__ import annotations

from metrics import hico
from metrics.vocab import default_path, load_default

PROJECT_NAME = "HOI study platform"


def platform_summary() -> dict:
    """Sizes of the vocabulary and the default (baseline) similarity matrices."""
    vocab = hico()
    summary = {
        "project": PROJECT_NAME,
        "vocabulary": {
            "name": vocab.name,
            "verbs": len(vocab.verbs),
            "objects": len(vocab.objects),
            "hoi_classes": len(vocab.classes),
            "rare_classes": int(vocab.classes["rare"].sum()),
        },
        "matrices": {},
    }
    for pos, role in (("v", "verb"), ("n", "object")):
        matrix = load_default(pos)
        summary["matrices"][role] = {
            "file": default_path(pos).name,
            "labels": matrix.n_labels,
            "pairs": matrix.n_pairs,
            "sparsity": matrix.sparsity,
            "source": matrix.meta.get("kind", matrix.meta.get("source", "")),
        }
    return summary
