"""A dataset's vocabulary: verb and object labels with their WordNet synsets, and its HOI classes.

A label maps to one WordNet 3.0 synset (``''`` when none, as HICO-DET's ``no_interaction``);
labels are looked up lower-cased with spaces as underscores. ``classes`` lists the dataset's
HOI classes (``hoi_id, verb, object, rare`` and any split flags ``unseen_<split>``); a dataset
without a fixed class list (V-COCO) has an empty one, and scores then use the classes of the
ground truth.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from metrics.core._choices import SPLITS
from metrics.core._errors import InputError

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True)
class Vocabulary:
    """Verb and object labels with their synsets, and the HOI classes over them."""

    name: str
    verbs: pd.DataFrame     # label, synset ('' when none), note
    objects: pd.DataFrame   # label, synset, note
    classes: pd.DataFrame   # hoi_id, verb, object, rare, unseen_<split>...

    @property
    def verb_labels(self) -> list[str]:
        return self.verbs["label"].tolist()

    @property
    def object_labels(self) -> list[str]:
        return self.objects["label"].tolist()

    def verb_synset(self, label: str) -> str | None:
        """Synset of a verb label (``None`` for ``no_interaction`` or an unknown label)."""
        return _lookup(self._verb_synsets, label)

    def object_synset(self, label: str) -> str | None:
        return _lookup(self._object_synsets, label)

    @cached_property
    def _verb_synsets(self) -> dict[str, str]:
        return _synsets_by_label(self.verbs)

    @cached_property
    def _object_synsets(self) -> dict[str, str]:
        return _synsets_by_label(self.objects)

    def synset(self, label: str, pos: str) -> str | None:
        return self.verb_synset(label) if pos == "v" else self.object_synset(label)

    def label_of_synset(self, synset: str, pos: str) -> str | None:
        """The first label (in table order) whose synset is ``synset``; None when none is."""
        return (self._verb_labels if pos == "v" else self._object_labels).get(synset)

    @cached_property
    def _verb_labels(self) -> dict[str, str]:
        return _labels_by_synset(self.verbs)

    @cached_property
    def _object_labels(self) -> dict[str, str]:
        return _labels_by_synset(self.objects)

    def class_mask(self, subset: str) -> np.ndarray:
        """Boolean mask over ``classes`` for ``full``, ``rare``, ``non_rare``,
        ``<split>_seen`` or ``<split>_unseen`` (split in rf_uc, nf_uc, uv, uo)."""
        if subset == "full":
            return np.ones(len(self.classes), dtype=bool)
        if subset == "rare":
            return self.classes["rare"].to_numpy() == 1
        if subset == "non_rare":
            return self.classes["rare"].to_numpy() == 0
        split, _, which = subset.rpartition("_")
        if split in SPLITS and which in ("seen", "unseen"):
            unseen = self.classes[f"unseen_{split}"].to_numpy() == 1
            return unseen if which == "unseen" else ~unseen
        raise InputError(f"unknown class subset {subset!r}")


def _synsets_by_label(table: pd.DataFrame) -> dict[str, str]:
    """label -> synset of a label table, the first row of a repeated label winning."""
    return _first_of_each(table["label"], table["synset"])


def _labels_by_synset(table: pd.DataFrame) -> dict[str, str]:
    """synset -> label of a label table, the first row of a repeated synset winning."""
    return _first_of_each(table["synset"], table["label"])


def _first_of_each(keys, values) -> dict[str, str]:
    out: dict[str, str] = {}
    for key, value in zip(keys, values):
        out.setdefault(key, value)
    return out


def _lookup(synsets: dict[str, str], label: str) -> str | None:
    return synsets.get(label.strip().lower().replace(" ", "_")) or None


def read_labels(path: Path) -> pd.DataFrame:
    import pandas as pd

    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    if list(table.columns[:2]) != ["label", "synset"]:
        raise InputError(f"{path}: header must start with 'label,synset'")
    return table


def read_vocabulary(name: str, verbs: Path, objects: Path, classes: Path) -> Vocabulary:
    """A dataset's vocabulary from its three CSV files, every class's verb and object checked
    against the labels."""
    import pandas as pd

    verb_table, object_table = read_labels(verbs), read_labels(objects)
    class_table = pd.read_csv(classes)
    unknown = (set(class_table["verb"]) - set(verb_table["label"])
               | set(class_table["object"]) - set(object_table["label"]))
    if unknown:
        raise InputError(f"{classes.name} names labels missing from the vocabulary: {sorted(unknown)[:5]}")
    return Vocabulary(name, verb_table, object_table, class_table)
