"""Open-vocabulary synset matching (SHOE supplementary §4).

A predicted verb or object is resolved to one WordNet synset:

1. a synset name (``ride.v.01``) is taken as it is;
2. a dataset label (``sit_on``, ``dining_table``, also with spaces) takes its curated synset;
3. free text is normalized (lower case, underscores split into words), lemmatized with every
   base form WordNet's morphology allows (``riding`` → ``ride`` *and* ``rid``: NLTK's
   lemmatizer alone keeps only ``rid``), and every synset of the whole phrase and of each word
   joins the candidate pool (whole phrase first, then word by word, each in WordNet's sense
   order). Among the candidates, the one most similar to the ground-truth synset under the
   similarity matrix is chosen; ties go to the earlier candidate, so with no similar candidate
   the most common sense of the whole phrase wins.

Text with no candidate of the right part of speech is *unknown*: it matches nothing and
scores similarity 0. ``vocabulary`` (a :class:`metrics.datasets.Vocabulary`, or ``None`` for
synset names and free text only) gives the dataset labels of step 2.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from metrics.core._errors import InputError
from metrics.core._types import Texts
from metrics.core._vocabulary import Vocabulary
from metrics.vocab import _wordnet as wordnet
from metrics.vocab._similarity import SimilarityMatrix

KINDS = ("synset", "label", "free_text", "unknown")


@dataclass(frozen=True)
class Match:
    text: str
    synset: str | None
    sim: float
    kind: str
    n_candidates: int


def _words(text: str) -> list[str]:
    return text.strip().lower().replace("_", " ").split()


@lru_cache(maxsize=100_000)
def candidate_synsets(text: str, pos: str) -> tuple[str, ...]:
    """The candidate pool of free text, most plausible first.

    >>> candidate_synsets("riding", "v")[:2]
    ('ride.v.01', 'ride.v.02')
    """
    if pos not in ("v", "n"):
        raise InputError(f"part of speech must be 'v' or 'n', got {pos!r}")
    words = _words(text)
    if not words:
        return ()
    pool: list[str] = []
    head = 0 if pos == "v" else len(words) - 1
    for base in wordnet.lemma_candidates(words[head], pos) or (words[head],):
        phrase = words[:head] + [base] + words[head + 1:]
        pool.extend(wordnet.synsets("_".join(phrase), pos))
    pool.extend(wordnet.synsets("_".join(words), pos))
    if len(words) > 1:
        for word in words:
            for base in wordnet.lemma_candidates(word, pos):
                pool.extend(wordnet.synsets(base, pos))
    return tuple(dict.fromkeys(pool))


def classify(text: str, pos: str, vocabulary=None) -> tuple[str, tuple[str, ...]]:
    """How ``text`` will be resolved: its kind and its candidate synsets."""
    text = str(text).strip()
    if wordnet.is_synset_name(text):
        if wordnet.pos_of(text) not in (pos, "s" if pos == "a" else pos):
            raise InputError(f"{text!r} is not a {wordnet.POS_NAMES.get(pos, pos)} synset")
        return "synset", (text,)
    if vocabulary is not None:
        mapped = vocabulary.synset(text, pos)
        if mapped:
            return "label", (mapped,)
    candidates = candidate_synsets(text, pos)
    return ("free_text", candidates) if candidates else ("unknown", ())


def match_synsets(texts: Texts | pd.Series, gt_synsets: Texts | pd.Series, pos: str, matrix: SimilarityMatrix, *,
                  vocabulary: Vocabulary | None = None) -> pd.DataFrame:
    """Resolve each text against its ground-truth synset, vectorized over the list.

    Candidate pools are built once per distinct text; all (candidate, ground truth) pairs are
    scored in one matrix lookup and the best candidate per row is taken with numpy.

    Returns a DataFrame with columns ``text, gt, synset, sim, kind, n_candidates``
    (``synset`` is None and ``sim`` 0 for unknown text).

    >>> from metrics.vocab._similarity import SimilarityMatrix
    >>> m = SimilarityMatrix.identity(["ride.v.01"])
    >>> match_synsets(["riding"], ["ride.v.01"], "v", m)[["synset", "sim"]].values.tolist()
    [['ride.v.01', 1.0]]
    """
    texts = [str(t) for t in texts]
    gts = [str(g) for g in gt_synsets]
    if len(texts) != len(gts):
        raise InputError(f"{len(texts)} texts but {len(gts)} ground-truth synsets")
    frame = pd.DataFrame({"text": texts, "gt": gts})
    pairs = frame.drop_duplicates().reset_index(drop=True)
    resolved = {t: classify(t, pos, vocabulary) for t in pd.unique(pairs["text"])}
    sizes = np.array([len(resolved[t][1]) for t in pairs["text"]], dtype=np.int64)
    flat_cands = np.array([c for t in pairs["text"] for c in resolved[t][1]], dtype=object)
    flat_gts = np.repeat(pairs["gt"].to_numpy(dtype=object), sizes)
    flat_sims = matrix.sims(flat_cands, flat_gts) if len(flat_cands) else np.zeros(0)
    starts = np.concatenate([[0], np.cumsum(sizes)[:-1]])
    has = sizes > 0
    best_sim = np.zeros(len(pairs))
    best_idx = np.full(len(pairs), -1)
    if has.any():
        best_sim[has] = np.maximum.reduceat(flat_sims, starts[has])
        # first candidate reaching the group maximum
        group = np.repeat(np.arange(len(pairs)), sizes)
        at_max = flat_sims >= best_sim[group] - 1e-12
        first = pd.Series(np.arange(len(flat_sims))[at_max]).groupby(group[at_max]).min()
        best_idx[first.index.to_numpy()] = first.to_numpy()
    pairs["synset"] = [flat_cands[i] if i >= 0 else None for i in best_idx]
    pairs["sim"] = best_sim
    pairs["kind"] = [resolved[t][0] for t in pairs["text"]]
    pairs["n_candidates"] = sizes
    return frame.merge(pairs, on=["text", "gt"], how="left")


def match_synset(text: str, gt_synset: str, pos: str, matrix: SimilarityMatrix, *,
                 vocabulary: Vocabulary | None = None) -> Match:
    """Resolve one text against one ground-truth synset (see :func:`match_synsets`)."""
    row = match_synsets([text], [gt_synset], pos, matrix, vocabulary=vocabulary).iloc[0]
    return Match(text=text, synset=row["synset"], sim=float(row["sim"]), kind=row["kind"],
                 n_candidates=int(row["n_candidates"]))


def resolve(text: str, pos: str, *, vocabulary: Vocabulary | None = None) -> str | None:
    """Synset of ``text`` without a ground truth to compare with: a synset name, a label's
    curated synset, or the first candidate of free text (None when unknown)."""
    _, candidates = classify(text, pos, vocabulary)
    return candidates[0] if candidates else None
