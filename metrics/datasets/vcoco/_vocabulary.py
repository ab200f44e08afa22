"""The V-COCO vocabulary: its 26 actions as 25 action-role verb labels plus 4 agent-only actions,
and COCO's 80 objects.

V-COCO annotates, per person, whether they do each of 26 actions and, for 22 of them, the
object of each role (``obj`` or ``instr``; ``hit``, ``eat`` and ``cut`` have both). An HOI, as
SHOE scores it, needs an object, so a verb label here is an *action-role* (``hit-instr``,
``hit-obj``) — the unit V-COCO's role AP is reported on. ``stand``, ``walk``, ``run`` and
``smile`` have no role: they are listed (with their synsets, for studies) but give no HOI.
``point-instr`` is the 25th role, left out of the 24-role mean papers report.

The objects are COCO's 80 categories, the same labels and synsets as HICO-DET's objects
(``label`` underscored: ``dining_table``). V-COCO has no fixed list of HOI classes: ``classes`` is
empty and scores use the (verb, object) classes of the ground truth.

>>> vcoco().verb_synset("hit-instr"), vcoco().object_synset("tennis racket")
('hit.v.03', 'tennis_racket.n.01')
"""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from metrics.core._vocabulary import Vocabulary, read_labels
from metrics.datasets.hico_det._vocabulary import DATA as HICO_DATA

DATA = Path(__file__).resolve().parent / "data"
LEFT_OUT_OF_24 = ("point-instr",)


@lru_cache(maxsize=1)
def vcoco() -> Vocabulary:
    """The V-COCO vocabulary shipped with the package."""
    import pandas as pd

    verbs = read_labels(DATA / "vcoco_verbs.csv")
    objects = read_labels(HICO_DATA / "hico_objects.csv")
    classes = pd.DataFrame({"hoi_id": pd.Series(dtype="int64"), "verb": pd.Series(dtype=str),
                            "object": pd.Series(dtype=str), "rare": pd.Series(dtype="int64")})
    return Vocabulary("vcoco", verbs, objects, classes)


def role_label(action: str, role: str) -> str:
    """The verb label of one action-role: ``role_label("hit", "instr") == "hit-instr"``."""
    return f"{action}-{role}"
