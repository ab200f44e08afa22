"""The HICO-DET vocabulary: 117 verbs, 80 objects, 600 HOI classes, rare flag, zero-shot splits.

Each verb and object label maps to one WordNet 3.0 synset, curated by reading the glosses
(``metrics/datasets/hico_det/data/hico_verbs.csv`` and ``hico_objects.csv``, with a note wherever the chosen
sense is not WordNet's first). ``no_interaction`` is a label without a synset.

Zero-shot splits (1 = the class is unseen in training under that protocol):
``rf_uc`` rare-first unseen combinations (120 classes), ``nf_uc`` non-rare-first unseen
combinations (120), ``uv`` unseen verbs (20 verbs, 84 classes), ``uo`` unseen objects
(12 objects, 100 classes).
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from metrics.core._vocabulary import Vocabulary, read_vocabulary

DATA = Path(__file__).resolve().parent / "data"


@lru_cache(maxsize=1)
def hico() -> Vocabulary:
    """The HICO-DET vocabulary shipped with the package."""
    return read_vocabulary("hico-det", DATA / "hico_verbs.csv", DATA / "hico_objects.csv",
                           DATA / "hico_hoi_classes.csv")
