"""SWIG-HOI (large-vocabulary HOI detection, ``scwangdyd/large_vocabulary_hoi_detection``): its
vocabulary (407 actions, 1,000 objects, 14,130 interactions), WordNet-baseline matrices, the
official evaluation (``evaluation``, equal to the released ``calc_ap``) and its file readers."""

from metrics._lazy import lazy_exports
from metrics.datasets import Dataset
from metrics.datasets.swig_hoi._vocabulary import DATA, swig

DATASET = Dataset(
    name="swig-hoi", title="SWIG-HOI", vocabulary=swig,
    baseline_verb=DATA / "baseline_verb.npz", baseline_object=DATA / "baseline_object.npz",
    subsets=("full", "rare", "non_rare", "novel"),
    notes={"subsets": "SHOE scores: Full = every class of the ground truth; Rare / Non-rare / Novel = "
                      "the evaluated interactions of that frequency (metrics swig's official Full leaves "
                      "novel ones out)"},
)

_lazy, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("interaction_table", "swig"), "_vocabulary"),
    **dict.fromkeys(("evaluate", "evaluate_files", "swig_ap"), "_evaluation"),
    **dict.fromkeys(("SwigDetections", "read_ground_truth", "read_swig_detections"), "_readers"),
})
__all__ = ["DATASET", *_lazy]
