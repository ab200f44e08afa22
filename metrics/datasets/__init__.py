"""Datasets as plugins: each is a package with its vocabulary (labels → WordNet synsets), its class
subsets, its WordNet-baseline matrices and, where the dataset has one, its official evaluator.

A dataset package defines ``DATASET = Dataset(...)``. The built-in ones are listed in
:data:`BUILTIN` (one line each); a third-party package adds one through the entry-point group
``hoi_semantic_eval.datasets`` (``name = "package.module:DATASET"``).

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
from importlib.metadata import entry_points
from pathlib import Path
from typing import Callable

from metrics._lazy import lazy_exports

DEFAULT = "hico-det"
ENTRY_POINT_GROUP = "hoi_semantic_eval.datasets"
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
    return list(dict.fromkeys([*BUILTIN, *_plugins()]))


def get(name: str | None = None) -> Dataset:
    """The registered dataset ``name`` (HICO-DET when ``None``)."""
    from metrics.core._validation import ParameterError

    name = DEFAULT if name is None else name
    module = BUILTIN.get(name) or _plugins().get(name)
    if module is None:
        raise ParameterError("dataset", f"must be one of {', '.join(names())}, got {name!r}")
    return _load(module)


def load_vocabulary(name: str | None = None):
    """The vocabulary of dataset ``name`` (HICO-DET when ``None``)."""
    return get(name).vocabulary()


@lru_cache(maxsize=None)
def _load(target: str) -> Dataset:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute or "DATASET")


@lru_cache(maxsize=1)
def _plugins() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


_lazy, __getattr__, __dir__ = lazy_exports(__name__, {"Vocabulary": "_vocabulary"})
__all__ = ["BUILTIN", "DEFAULT", "ENTRY_POINT_GROUP", "Dataset", "get", "load_vocabulary", "names", *_lazy]
