"""Datasets as plugins: each is a package with its vocabulary (labels → WordNet synsets), its class
subsets and zero-shot splits, its WordNet-baseline matrices, how its standard mAP is made
(:class:`StandardMap`: class set, protocol card, the dataset's own AP code where it has one) and,
where the dataset has one, the command running its official evaluator.

The generic scorer (``metrics.detection``) keeps no dataset of its own: it is given a
:class:`Dataset` and asks it. A dataset that says nothing gets the neutral default, the classes
of the ground truth, named as such on the protocol card.

A dataset package defines ``DATASET = Dataset(...)`` and is declared as an entry point of group
``hoi_semantic_eval.datasets`` (``name = "package.module:DATASET"``): the project's own three in
its ``pyproject.toml``, a third-party one in its package's.

The registry itself (:class:`Dataset`, :func:`get`, :func:`names`) lives in
:mod:`metrics.core._registry`, re-exported here.

>>> get("hico-det").title
'HICO-DET'
"""

from __future__ import annotations

import re

from metrics._lazy import lazy_exports
from metrics.core._registry import (
    DEFAULT,
    ENTRY_POINT_GROUP,
    GROUND_TRUTH_CLASSES,
    PLUGINS,
    Dataset,
    StandardMap,
    builtin_names,
    get,
    load_vocabulary,
    names,
)

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
    best = max(shares, key=lambda other: shares[other], default=None)
    guess = (f"they are {get(best).title}'s labels (--dataset {best})" if best and shares[best] >= 0.5
             else "they are no registered dataset's labels")
    raise ParameterError("dataset", f"{dataset.name}: {1 - share:.0%} of the ground-truth HOIs in {source} have "
                                    f"labels outside {dataset.title}'s vocabulary; {guess}; {ANY_LABELS} scores "
                                    "them anyway")


def _known(label, known: set) -> bool:
    text = str(label).strip().lower().replace(" ", "_")
    return text in known or _SYNSET_NAME.fullmatch(text) is not None


_SYNSET_NAME = re.compile(r".+\.[nvasr]\.\d{2}")


_, __getattr__, __dir__ = lazy_exports(__name__, {"Vocabulary": ".core._vocabulary"})
__all__ = ["ANY_LABELS", "DEFAULT", "ENTRY_POINT_GROUP", "GROUND_TRUTH_CLASSES", "PLUGINS",
           "Dataset", "StandardMap", "builtin_names", "check_labels", "get", "label_share", "load_vocabulary", "names",
           "Vocabulary"]
