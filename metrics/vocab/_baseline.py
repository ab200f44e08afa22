"""The WordNet baseline seed matrices, so the platform works before any LLM or human rating.

Candidate sets (SHOE §4.1, "Implementation Details", in spirit):

- verbs: the dataset's verb synsets and every verb synset one link away from them through
  hypernym, hyponym, sibling (another hyponym of a hypernym), verb-group or entailment links;
- objects: the dataset's object synsets and their WordNet neighbourhood: parents, children
  and siblings.

Relatedness measure (the project's choice; documented in the matrix metadata): the shortest
path length *d* between two synsets in WordNet's hypernym/hyponym graph (instance links
included, no simulated root), where for verbs one verb-group or entailment link may also be
taken at a cost of 1. The score on the 0–4 scale is ``4 · max(0, 1 − d / 5)``: identical 4,
parent/child 3.2, sibling or grandparent 2.4, then 1.6, 0.8, and 0 from d = 5 on.

Each dataset synset is scored against every candidate; pairs of two non-dataset candidates are
not scored (they are never needed to compare a prediction with a ground truth). The result is
labelled in its metadata as a WordNet baseline, not an LLM matrix.
"""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

import numpy as np

from metrics.core._choices import SCALE_MAX
from metrics.core._registry import get
from metrics.vocab import _wordnet as wordnet
from metrics.vocab._similarity import SimilarityMatrix

MAX_DISTANCE = 5
METHOD = ("shortest path length d in the WordNet 3.0 hypernym/hyponym graph (for verbs one "
          "verb-group or entailment link may be taken at cost 1); score = 4*max(0, 1 - d/5)")


def default_path(pos: str, *, dataset: str | None = None) -> Path:
    """The shipped baseline matrix of ``dataset`` (HICO-DET by default) for verbs (``"v"``) or
    objects (``"n"``)."""
    return get(dataset).baseline_path(pos)


def load_default(pos: str, *, dataset: str | None = None) -> SimilarityMatrix:
    return SimilarityMatrix.load(default_path(pos, dataset=dataset))


def distance_to_score(d: np.ndarray) -> np.ndarray:
    """``4 · max(0, 1 − d/5)`` (d may be inf).

    >>> distance_to_score(np.array([0, 1, 2, 4, 5, np.inf])).tolist()
    [4.0, 3.2, 2.4, 0.8, 0.0, 0.0]
    """
    return np.round(SCALE_MAX * np.clip(1.0 - np.asarray(d, dtype=float) / MAX_DISTANCE, 0.0, 1.0), 6)


def _neighbourhood(seeds: list[str], pos: str) -> list[str]:
    """Seeds, their parents, siblings and children, and for verbs verb groups and entailments."""
    out = dict.fromkeys(seeds)
    for s in seeds:
        for parent in wordnet.hypernyms(s):
            out[parent] = None
            out.update(dict.fromkeys(wordnet.hyponyms(parent)))
        out.update(dict.fromkeys(wordnet.hyponyms(s)))
        if pos == "v":
            out.update(dict.fromkeys(wordnet.verb_groups(s)))
            out.update(dict.fromkeys(wordnet.entailments(s)))
    return _seeds_then_sorted(seeds, out)


def verb_candidates(seeds: list[str]) -> list[str]:
    return _neighbourhood(seeds, "v")


def object_candidates(seeds: list[str]) -> list[str]:
    return _neighbourhood(seeds, "n")


def _seeds_then_sorted(seeds: list[str], found) -> list[str]:
    """The dataset's synsets in vocabulary order, then the others alphabetically (stable files)."""
    return list(seeds) + sorted(set(found) - set(seeds))


def _hypernym_distance(da: dict[str, int], db: dict[str, int]) -> float:
    if len(da) > len(db):
        da, db = db, da
    best = np.inf
    for ancestor, d in da.items():
        other = db.get(ancestor)
        if other is not None and d + other < best:
            best = d + other
    return best


def pair_distances(seeds: list[str], candidates: list[str], pos: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Shortest-path distance of each seed to each candidate (finite ones only)."""
    anc = {s: wordnet.hypernym_distances(s) for s in dict.fromkeys(seeds + candidates)}
    links = {s: (wordnet.verb_groups(s) + wordnet.entailments(s)) if pos == "v" else [] for s in anc}
    for s in links:
        for other in links[s]:
            anc.setdefault(other, wordnet.hypernym_distances(other))
    rows, cols, dists = [], [], []
    for i, s in enumerate(seeds):
        for j, c in enumerate(candidates):
            if s == c:
                continue
            d = _hypernym_distance(anc[s], anc[c])
            for via in links[s]:
                d = min(d, 1 + _hypernym_distance(anc[via], anc[c]))
            for via in links[c]:
                d = min(d, 1 + _hypernym_distance(anc[s], anc[via]))
            if d < MAX_DISTANCE:
                rows.append(i)
                cols.append(j)
                dists.append(d)
    return np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(dists, dtype=float)


def build(pos: str, vocabulary=None) -> SimilarityMatrix:
    """Build the baseline matrix for verbs (``"v"``) or objects (``"n"``) of ``vocabulary`` (a
    :class:`metrics.datasets.Vocabulary`; the default dataset's when ``None``)."""
    vocabulary = vocabulary or get().vocabulary()
    table = vocabulary.verbs if pos == "v" else vocabulary.objects
    seeds = list(dict.fromkeys(s for s in table["synset"] if s))
    candidates = verb_candidates(seeds) if pos == "v" else object_candidates(seeds)
    start = time.perf_counter()
    rows, cols, dists = pair_distances(seeds, candidates, pos)
    index = {c: k for k, c in enumerate(candidates)}
    seed_rows = np.array([index[s] for s in seeds], dtype=np.int64)[rows] if len(rows) else rows
    meta = {
        "source": "wordnet-baseline",
        "kind": "WordNet baseline (not an LLM matrix)",
        "dataset": vocabulary.name,
        "pos": "verb" if pos == "v" else "noun",
        "method": METHOD,
        "n_dataset_synsets": len(seeds),
        "n_candidates": len(candidates),
        "wordnet": "3.0",
        "date": date.today().isoformat(),
        "models": [],
        "study": None,
    }
    matrix = SimilarityMatrix(candidates, row=seed_rows, col=cols, val=distance_to_score(dists), meta=meta)
    matrix.meta["build_seconds"] = round(time.perf_counter() - start, 3)
    return matrix
