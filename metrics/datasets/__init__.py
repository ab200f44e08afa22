"""Datasets as plugins: each is a package with its vocabulary (labels → WordNet synsets), its class
subsets and zero-shot splits, its WordNet-baseline matrices, how its standard mAP is made
(:class:`StandardMap`: class set, protocol card, the dataset's own AP code where it has one) and,
where the dataset has one, the command running its official evaluator.

The generic scorer (``metrics.detection``) keeps no dataset of its own: it is given a
:class:`Dataset` and asks it. A dataset that says nothing gets the neutral default, the classes
of the ground truth, named as such on the protocol card.

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
import re
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


GROUND_TRUTH_CLASSES = "classes of the ground truth"


@dataclass(frozen=True)
class StandardMap:
    """How a dataset's standard mAP is made.

    ``classes(table)``: which rows of the vocabulary's class list form the evaluated class set
    (``None``: no such set). Under ``--map-protocol official`` it is used when every class of the
    ground truth is in it (classes without ground truth then count with AP 0, as the official
    evaluations do); otherwise the mean runs over the classes of the ground truth.
    ``full(table)``: the classes of the Full mean among those (``None``: all of them).
    ``ap(classes, gt_image, gt_class, gt_boxes, pred_image, pred_class, pred_boxes, pred_score,
    iou=)``: the dataset's own per-class ``(ap, recall)`` over its class set (boxes as
    ``[human | object]`` rows of 8); ``None``: the HICO-DET procedure of ``ywchao/ho-rcnn``
    (:mod:`metrics.datasets.hico_det._evaluation`), with its Known-Object setting.
    ``class_set`` / ``ground_truth_classes``: the protocol card's words for the two class sets;
    ``rare``: its words for the Rare subset (``None``: the dataset has no rare split);
    ``source``: where the official numbers come from (``None``: the HICO-DET procedure);
    ``procedure(iou)``: the card's entries on how ``ap`` ranks, matches and interpolates.

    >>> StandardMap().ground_truth_classes
    'classes of the ground truth'
    """

    classes: Callable | None = None
    full: Callable | None = None
    ap: Callable | None = None
    class_set: str = GROUND_TRUTH_CLASSES
    ground_truth_classes: str = GROUND_TRUTH_CLASSES
    rare: str | None = None
    source: str | None = None
    procedure: Callable | None = None


@dataclass(frozen=True)
class Dataset:
    """One dataset: how to load its vocabulary, where its baseline matrices are, and its evaluation.

    ``subsets``: the class subsets its scores are reported on; ``splits``: the zero-shot splits
    ``--split`` accepts; ``standard_map``: its standard mAP (:class:`StandardMap`);
    ``official``: the command running its official evaluator (``None``: it has none here);
    ``study_predictions``: the labels a study's predicted side is drawn from — ``"closed"``: the
    dataset's own synsets (the default: its studies ask how similar two of its labels are),
    ``"open"``: any glossed WordNet sense of its baseline matrices (HICO-DET, whose SHOE study
    rated an open-vocabulary candidate pool).
    """

    name: str
    title: str
    vocabulary: Callable[[], object]            # () -> metrics.datasets._vocabulary.Vocabulary
    baseline_verb: Path                         # WordNet-baseline matrices (.npz)
    baseline_object: Path
    subsets: tuple[str, ...] = ("full",)        # class subsets its scores are reported on
    notes: dict = field(default_factory=dict)   # how its ground truth becomes HOIs, etc.
    splits: tuple[str, ...] = ()
    standard_map: StandardMap = StandardMap()
    official: str | None = None
    study_predictions: str = "closed"

    def baseline_path(self, pos: str) -> Path:
        """The shipped baseline matrix for verbs (``"v"``) or objects (``"n"``)."""
        return self.baseline_verb if pos == "v" else self.baseline_object

    @property
    def is_default(self) -> bool:
        """Whether this is the dataset ``--dataset`` defaults to (results then do not name it)."""
        return self.name == DEFAULT

    def class_ap(self, *args, **kwargs):
        """Per-class standard AP of an evaluation over this dataset's class set
        (:meth:`metrics.datasets.hico_det._evaluation.ClassAP.compute`)."""
        from metrics.datasets.hico_det._evaluation import ClassAP

        return ClassAP.compute(*args, dataset=self, **kwargs)


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


ANY_LABELS = "--any-labels"


def label_share(verbs, objects, vocabulary) -> float:
    """The share of HOIs (given by their ``verbs`` and ``objects`` labels) whose verb and object
    are both labels of ``vocabulary`` or WordNet synset names (1.0 when there are none).

    >>> v = get("hico-det").vocabulary()
    >>> label_share(["ride", "hit-instr", "ride.v.01"], ["horse", "tennis racket", "horse"], v)
    0.6666666666666666
    """
    import numpy as np

    if not len(verbs):
        return 1.0
    inside = np.ones(len(verbs), dtype=bool)
    for labels, table in ((verbs, vocabulary.verbs), (objects, vocabulary.objects)):
        texts, code = np.unique(np.asarray(labels, dtype=object).astype(str), return_inverse=True)
        known = set(table["label"])
        inside &= np.array([_known(t, known) for t in texts.tolist()], dtype=bool)[code]
    return float(inside.mean())


def check_labels(verbs, objects, name: str | None, *, source: str) -> None:
    """Refuse ground truth whose labels are mostly (more than half of its HOIs) outside the
    vocabulary of dataset ``name``: a :class:`~metrics.core._validation.ParameterError` of
    ``dataset`` naming the registered dataset whose labels they are, if any, and the option
    (:data:`ANY_LABELS`) that scores them anyway."""
    from metrics.core._validation import ParameterError

    dataset = get(name)
    share = label_share(verbs, objects, dataset.vocabulary())
    if share >= 0.5:
        return
    shares = {other: label_share(verbs, objects, get(other).vocabulary()) for other in names() if other != dataset.name}
    best = max(shares, key=shares.get, default=None)
    guess = (f"they are {get(best).title}'s labels (--dataset {best})" if best and shares[best] >= 0.5
             else "they are no registered dataset's labels")
    raise ParameterError("dataset", f"{dataset.name}: {1 - share:.0%} of the ground-truth HOIs in {source} have "
                                    f"labels outside {dataset.title}'s vocabulary; {guess}; {ANY_LABELS} scores "
                                    "them anyway")


def _known(label, known: set) -> bool:
    text = str(label).strip().lower().replace(" ", "_")
    return text in known or _SYNSET_NAME.fullmatch(text) is not None


_SYNSET_NAME = re.compile(r".+\.[nvasr]\.\d{2}")


@lru_cache(maxsize=None)
def _load(target: str) -> Dataset:
    module, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module), attribute or "DATASET")


@lru_cache(maxsize=1)
def _plugins() -> dict[str, str]:
    return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}


_lazy, __getattr__, __dir__ = lazy_exports(__name__, {"Vocabulary": "_vocabulary"})
__all__ = ["ANY_LABELS", "BUILTIN", "DEFAULT", "ENTRY_POINT_GROUP", "GROUND_TRUTH_CLASSES", "Dataset", "StandardMap",
           "check_labels", "get", "label_share", "load_vocabulary", "names", *_lazy]
