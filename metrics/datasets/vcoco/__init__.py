"""V-COCO: its vocabulary (action-role verb labels, COCO's objects), WordNet-baseline matrices,
the official evaluation (``evaluation``, equal to ``vsrl_eval.py``), its file readers and the
conversion of its ground truth into HOIs for SHOE scores (``hois``)."""

from metrics.datasets import Dataset
from metrics.datasets.hico_det._vocabulary import DATA as HICO_DATA
from metrics.datasets.vcoco._vocabulary import DATA, vcoco

DATASET = Dataset(
    name="vcoco", title="V-COCO", vocabulary=vcoco,
    baseline_verb=DATA / "baseline_verb.npz", baseline_object=HICO_DATA / "baseline_object.npz",
    notes={"ground_truth": "one HOI per person, action and role with an object (role_object_id != 0); "
                           "actions without a role (stand, walk, run, smile) give no HOI"},
)

__all__ = ["DATASET", "vcoco"]
