"""SWIG-HOI (large-vocabulary HOI detection, ``scwangdyd/large_vocabulary_hoi_detection``): its
vocabulary (407 actions, 1,000 objects, 14,130 interactions), WordNet-baseline matrices, the
official evaluation (``evaluation``, equal to the released ``calc_ap``), which is also its
standard mAP in ``score`` (over the 5,539 evaluated interactions: Full = the ones not novel,
Rare / Non-rare / Novel), and its file readers."""

from metrics._lazy import lazy_exports
from metrics.datasets import Dataset, StandardMap
from metrics.datasets.swig_hoi._vocabulary import DATA, swig


def evaluated(classes):
    """The interactions ``calc_ap`` evaluates."""
    return classes["evaluated"].to_numpy() == 1


def not_novel(classes):
    """``calc_ap``'s Full: the evaluated interactions seen in training (l.330-343)."""
    return classes["novel"].to_numpy() == 0


def _standard_ap(*args, **kwargs):
    from metrics.datasets.swig_hoi._evaluation import standard_ap
    return standard_ap(*args, **kwargs)


def _procedure(iou):
    from metrics.datasets.swig_hoi._evaluation import procedure
    return procedure(iou)


DATASET = Dataset(
    name="swig-hoi", title="SWIG-HOI", vocabulary=swig,
    baseline_verb=DATA / "baseline_verb.npz", baseline_object=DATA / "baseline_object.npz",
    subsets=("full", "rare", "non_rare", "novel"),
    notes={"subsets": "SHOE scores: Full = every class of the ground truth; Rare / Non-rare / Novel = "
                      "the evaluated interactions of that frequency. Standard mAP: Full = the evaluated "
                      "interactions that are not novel, as metrics swig's official Full"},
    standard_map=StandardMap(
        classes=evaluated, full=not_novel, ap=_standard_ap, procedure=_procedure,
        class_set="5,539 evaluated SWIG-HOI interactions (without ground truth: AP 0); Full = the ones not novel",
        ground_truth_classes="classes of the SWIG-HOI ground truth (some are not evaluated interactions)",
        rare="evaluated interactions of frequency 1; non_rare = of frequency 2 (common); novel = of frequency 0 "
             "(unseen in training)",
        source="scwangdyd/large_vocabulary_hoi_detection choir/evaluation/swig_evaluation.py calc_ap"),
    official="python -m metrics swig",
)

_, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("interaction_table", "swig"), "_vocabulary"),
    **dict.fromkeys(("evaluate", "evaluate_files", "swig_ap"), "_evaluation"),
    **dict.fromkeys(("SwigDetections", "read_ground_truth", "read_swig_detections"), "_readers"),
})
__all__ = ["DATASET", "evaluated", "not_novel", "SwigDetections", "evaluate", "evaluate_files",
           "interaction_table", "read_ground_truth", "read_swig_detections", "swig", "swig_ap"]
