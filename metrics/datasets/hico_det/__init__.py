"""HICO-DET: its vocabulary (117 verbs, 80 objects, 600 HOI classes with rare and zero-shot
flags), its WordNet-baseline matrices and the official evaluation (``evaluation``)."""

from metrics.datasets import Dataset
from metrics.datasets.hico_det._vocabulary import DATA, hico

DATASET = Dataset(
    name="hico-det", title="HICO-DET", vocabulary=hico,
    baseline_verb=DATA / "baseline_verb.npz", baseline_object=DATA / "baseline_object.npz",
    subsets=("full", "rare", "non_rare"),
)

__all__ = ["DATASET", "hico"]
