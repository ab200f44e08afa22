"""The dataset registry: what a dataset is (:class:`Dataset`, :class:`StandardMap`) and where
the registered ones are: the entry-point group ``hoi_semantic_eval.datasets``, where the project's
``pyproject.toml`` declares its own three and other installed packages add theirs.

It sits in ``metrics.core`` so that the generic scorer (``metrics.detection``) can look a
dataset up by name without importing the dataset packages, which build on it; the public face
is :mod:`metrics.datasets`.

>>> get("hico-det").title
'HICO-DET'
>>> names()[:3]
['hico-det', 'swig-hoi', 'vcoco']
>>> get("coco")
Traceback (most recent call last):
metrics.core._validation.ParameterError: dataset must be one of hico-det, swig-hoi, vcoco, got 'coco'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from metrics.core._plugins import PLUGIN_GROUPS, PluginGroup

if TYPE_CHECKING:
    from metrics.core._vocabulary import Vocabulary

DEFAULT = "hico-det"
ENTRY_POINT_GROUP = PLUGIN_GROUPS["dataset"]


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
    (:mod:`metrics.detection._class_ap`), with its Known-Object setting.
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
    vocabulary: Callable[[], Vocabulary]
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


def names() -> list[str]:
    """The names ``--dataset`` and ``[items] dataset`` accept, built-in ones first."""
    return list(PLUGINS.load())


def builtin_names() -> list[str]:
    """The names of the project's own datasets, in the order ``pyproject.toml`` declares them."""
    return list(PLUGINS.builtin())


def get(name: str | None = None) -> Dataset:
    """The registered dataset ``name`` (HICO-DET when ``None``)."""
    from metrics.core._validation import ParameterError

    name = DEFAULT if name is None else name
    if not isinstance(found := PLUGINS.get(name), Dataset):
        raise ParameterError("dataset", f"must be one of {', '.join(names())}, got {name!r}")
    return found


def load_vocabulary(name: str | None = None) -> Vocabulary:
    """The vocabulary of dataset ``name`` (HICO-DET when ``None``)."""
    return get(name).vocabulary()


def _add_plugin(dataset: object, name: str) -> Dataset:
    if not isinstance(dataset, Dataset):
        from metrics.core._plugins import describe

        raise TypeError(f"{describe(dataset)} is not a metrics.datasets.Dataset")
    return dataset


#: Every dataset: the project's own entry points, then other packages', loaded on first use.
PLUGINS = PluginGroup(ENTRY_POINT_GROUP, kind="dataset", add=_add_plugin,
                      order=lambda dataset: (dataset.name != DEFAULT, dataset.name))
