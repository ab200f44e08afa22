"""The SWIG-HOI vocabulary: 407 actions, 1000 object categories, 14,130 interactions (5,539
evaluated), each with its frequency class: 0 novel (unseen in training), 1 rare, 2 common.

Re-typed from the released metadata (``choir/data/datasets/swig_v1_meta.py`` of
``scwangdyd/large_vocabulary_hoi_detection``) by ``scripts/make_swig_vocabulary.py`` into
``metrics/datasets/swig_hoi/data/``: ``swig_verbs.csv`` and ``swig_objects.csv`` (label, synset,
note; row k is SWIG-HOI id k) and ``swig_hoi_classes.csv`` (hoi_id, verb, object, action_id,
object_id, frequency, evaluated, rare, novel). Objects take the WordNet noun the metadata names;
actions, for which it gives only a definition, the sense whose gloss matches it, else WordNet's
first sense (the note says which). Glosses come from our WordNet
(:func:`metrics.vocab._wordnet.gloss`).

>>> v = swig()
>>> len(v.verbs), len(v.objects), len(v.classes), int(v.classes["evaluated"].sum())
(407, 1000, 14130, 5539)
>>> v.object_synset("car"), v.verb_synset("licking")
('car.n.01', 'lick.v.02')
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

import numpy as np

from metrics.core._errors import InputError
from metrics.core._vocabulary import Vocabulary, read_vocabulary

DATA = Path(__file__).resolve().parent / "data"


@lru_cache(maxsize=1)
def swig() -> Vocabulary:
    """The SWIG-HOI vocabulary shipped with the package (the shape of HICO-DET's)."""
    return read_vocabulary("swig-hoi", DATA / "swig_verbs.csv", DATA / "swig_objects.csv",
                           DATA / "swig_hoi_classes.csv")


def interaction_table(vocabulary: Vocabulary | None = None) -> dict[str, np.ndarray]:
    """The arrays the evaluator and the readers take, indexed by interaction id: ``action_id``,
    ``object_id``, ``frequency`` (0 novel, 1 rare, 2 common) and ``evaluated`` (bool)."""
    classes = (vocabulary or swig()).classes
    if not np.array_equal(classes["hoi_id"].to_numpy(), np.arange(len(classes))):
        raise InputError("swig_hoi_classes.csv: hoi_id must be 0..n-1 in order")
    return {"action_id": classes["action_id"].to_numpy(np.int64),
            "object_id": classes["object_id"].to_numpy(np.int64),
            "frequency": classes["frequency"].to_numpy(np.int64),
            "evaluated": classes["evaluated"].to_numpy() == 1}
