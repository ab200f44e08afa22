"""V-COCO: its vocabulary (action-role verb labels, COCO's objects), WordNet-baseline matrices,
the official evaluation (``evaluation``, equal to ``vsrl_eval.py``), its file readers and the
conversion of its ground truth into HOIs for SHOE scores (``hois``). Its standard mAP in
``score`` runs over the (action-role, object) classes of the ground truth; its own measure is
the role AP of ``python -m metrics vcoco``."""

from metrics.datasets import Dataset, StandardMap
from metrics.datasets.hico_det._vocabulary import DATA as HICO_DATA
from metrics.datasets.vcoco._vocabulary import DATA, vcoco

DATASET = Dataset(
    name="vcoco", title="V-COCO", vocabulary=vcoco,
    baseline_verb=DATA / "baseline_verb.npz", baseline_object=HICO_DATA / "baseline_object.npz",
    notes={"ground_truth": "one HOI per person, action and role with an object (role_object_id != 0); "
                           "actions without a role (stand, walk, run, smile) give no HOI"},
    standard_map=StandardMap(ground_truth_classes="(action-role, object) classes of the V-COCO ground truth"),
    official="python -m metrics vcoco",
)

__all__ = ["DATASET", "vcoco"]
