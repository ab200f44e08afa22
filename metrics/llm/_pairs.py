"""Candidate pairs (SHOE §4.1): every dataset synset against every synset of its WordNet
neighbourhood — verbs one hypernym / hyponym / sibling / verb-group / entailment link away,
objects their parents, children and siblings (the candidate functions of
:mod:`metrics.vocab._baseline`) — or the pairs of a CSV file (``a,b``). A pair is unordered: the
dataset synset is shown first, a pair is asked once.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from metrics.core._errors import InputError
from metrics.llm._cache import key
from metrics.vocab import _wordnet as wordnet
from metrics.vocab._baseline import object_candidates, verb_candidates

POS_NAME = {"v": "verb", "n": "object"}


@dataclass
class PairSet:
    """The unordered pairs to rate for one part of speech, and the matrix labels."""

    pos: str
    labels: list[str]
    pairs: list[tuple[str, str]]
    source: str
    n_seeds: int = 0


def candidate_pairs(seeds: list[str], pos: str, *, source: str = "") -> PairSet:
    """Each dataset synset against its WordNet neighbourhood (``metrics.vocab._baseline``)."""
    seeds = list(dict.fromkeys(seeds))
    for s in seeds:
        if wordnet.pos_of(s) != pos:
            raise InputError(f"{s} is not a {POS_NAME[pos]} synset")
    labels = verb_candidates(seeds) if pos == "v" else object_candidates(seeds)
    seen: set[tuple[str, str]] = set()
    pairs = []
    for s in seeds:
        for c in labels:
            k = key(s, c)
            if s != c and k not in seen:
                seen.add(k)
                pairs.append((s, c))
    return PairSet(pos, labels, pairs, source or "wordnet neighbourhood", len(seeds))


def pairs_from_file(path: str | Path, pos: str) -> PairSet:
    """Pairs of a CSV with columns ``a,b`` (synset names of one part of speech)."""
    from metrics.core._inputs import line_of, read_csv

    path = Path(path)
    df = read_csv(path, required=("a", "b"))
    seen: set[tuple[str, str]] = set()
    pairs, labels = [], {}
    for k, (a, b) in enumerate(zip(df["a"].str.strip(), df["b"].str.strip())):
        for s in (a, b):
            if not wordnet.is_synset_name(s):
                raise InputError(f"{path}: line {line_of(path, k)}: {s!r} is not a WordNet synset name")
            if wordnet.pos_of(s) != pos:
                raise InputError(f"{path}: line {line_of(path, k)}: {s} is not a {POS_NAME[pos]} synset")
        pair = key(a, b)
        if a != b and pair not in seen:
            seen.add(pair)
            pairs.append((a, b))
            labels.update(dict.fromkeys((a, b)))
    if not pairs:
        raise InputError(f"{path}: no pair of two different synsets")
    return PairSet(pos, list(labels), pairs, str(path))
