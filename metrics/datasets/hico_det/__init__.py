"""HICO-DET: its vocabulary (117 verbs, 80 objects, 600 HOI classes with rare and zero-shot
flags), its WordNet-baseline matrices and its standard mAP: the official evaluation of
``ywchao/ho-rcnn`` over the 600 classes, Default and Known-Object, Full / Rare / Non-rare."""

import numpy as np

from metrics.core._choices import SPLITS
from metrics.datasets import Dataset, StandardMap
from metrics.datasets.hico_det._vocabulary import DATA, hico

HO_RCNN = "ywchao/ho-rcnn evaluation/eval_one.m, evaluation/VOCevaldet_bboxpair.m"


def all_classes(classes):
    """``eval_one.m`` evaluates ``num_action`` = 600: every class of the list."""
    return np.ones(len(classes), dtype=bool)


DATASET = Dataset(
    name="hico-det", title="HICO-DET", vocabulary=hico,
    baseline_verb=DATA / "baseline_verb.npz", baseline_object=DATA / "baseline_object.npz",
    subsets=("full", "rare", "non_rare"), splits=SPLITS,
    standard_map=StandardMap(classes=all_classes, class_set="600 HICO-DET classes (classes without ground truth: AP 0)",
                             rare="138 rare classes (< 10 training instances)", source=HO_RCNN),
    official="python -m metrics score --map-protocol official",
    study_predictions="open",
)

__all__ = ["DATASET", "hico"]
