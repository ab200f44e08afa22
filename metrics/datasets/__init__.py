"""Datasets as plugins: each is a package with its vocabulary (labels → WordNet synsets), its class
subsets, its WordNet-baseline matrices and, where the dataset has one, its official evaluator.

A dataset package defines ``DATASET = Dataset(...)``. The built-in ones are listed in
:data:`BUILTIN` (one line each); a third-party package adds one through the entry-point group
``hoi_semantic_eval.datasets`` (``name = "package.module:DATASET"``, the name being the dataset's),
loaded on first use by :data:`PLUGINS` (:mod:`metrics.core._plugins`: a broken one is skipped).

>>> get("hico-det").title
'HICO-DET'
>>> names()[:3]
['hico-det', 'vcoco', 'swig-hoi']
>>> get("coco")
Traceback (most recent call last):
metrics.core._validation.ParameterError: dataset must be one of hico-det, vcoco, swig-hoi, got 'coco'
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Callable

from metrics._lazy import lazy_exports
from metrics.core._plugins import PLUGIN_GROUPS, PluginGroup

DEFAULT = "hico-det"
ENTRY_POINT_GROUP = PLUGIN_GROUPS["dataset"]
BUILTIN = {
    "hico-det": "metrics.datasets.hico_det",
    "vcoco": "metrics.datasets.vcoco",
    "swig-hoi": "metrics.datasets.swig_hoi",
}


@dataclass(frozen=True)
class Dataset:
    """One dataset: how to load its vocabulary and where its baseline matrices are."""

    name: str
    title: str
    vocabulary: Callable[[], object]            # () -> metrics.datasets._vocabulary.Vocabulary
    baseline_verb: Path                         # WordNet-baseline matrices (.npz)
    baseline_object: Path
    subsets: tuple[str, ...] = ("full",)        # class subsets its scores are reported on
    notes: dict = field(default_factory=dict)   # how its ground truth becomes HOIs, etc.

    def baseline_path(self, pos: str) -> Path:
        """The shipped baseline matrix for verbs (``"v"``) or objects (``"n"``)."""
        return self.baseline_verb if pos == "v" else self.baseline_object


def names() -> list[str]:
    """The names ``--dataset`` and ``[items] dataset`` accept, built-in ones first."""
    return [*BUILTIN, *PLUGINS.load()]


def get(name: str | None = None) -> Dataset:
    """The registered dataset ``name`` (HICO-DET when ``None``)."""
    from metrics.core._validation import ParameterError

    name = DEFAULT if name is None else name
    if name in BUILTIN:
        return _load(BUILTIN[name])
    if (dataset := PLUGINS.load().get(name)) is None:
        raise ParameterError("dataset", f"must be one of {', '.join(names())}, got {name!r}")
    return dataset


def load_vocabulary(name: str | None = None):
    """The vocabulary of dataset ``name`` (HICO-DET when ``None``)."""
    return get(name).vocabulary()


@lru_cache(maxsize=None)
def _load(module: str) -> Dataset:
    return importlib.import_module(module).DATASET


def _add_plugin(dataset: object, name: str) -> Dataset:
    if not isinstance(dataset, Dataset):
        raise TypeError(f"{type(dataset).__name__} is not a metrics.datasets.Dataset")
    if name in BUILTIN or dataset.name != name:
        raise ValueError(f"the entry point's name must be the dataset's own, {dataset.name!r}, and not a "
                         f"built-in one ({', '.join(BUILTIN)})")
    return dataset


#: Datasets from other packages, loaded on the first :func:`names` or :func:`get` of a name not built in.
PLUGINS = PluginGroup(ENTRY_POINT_GROUP, kind="dataset", add=_add_plugin, builtin=BUILTIN)

_lazy, __getattr__, __dir__ = lazy_exports(__name__, {"Vocabulary": "_vocabulary"})
__all__ = ["BUILTIN", "DEFAULT", "ENTRY_POINT_GROUP", "PLUGINS", "Dataset", "get", "load_vocabulary", "names", *_lazy]
