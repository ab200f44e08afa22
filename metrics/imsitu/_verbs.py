"""How imSitu verbs are compared: the lower-cased form, every WordNet base form of a gerund, and
WordNet synonymy (the ``wn_syn`` criterion, Yao, Jarvis & Jiang §4.2; WordNet purity, App. B)."""

from __future__ import annotations

from functools import lru_cache

from metrics.vocab import _wordnet as wordnet


def normalize_verb(verb) -> str:
    """The comparison form of a verb: lower case, outer spaces removed."""
    return str(verb).strip().lower()


@lru_cache(maxsize=100_000)
def base_forms(verb: str) -> tuple[str, ...]:
    """Every WordNet base form of a (gerund) verb, most frequent first; the word itself when
    WordNet knows none.

    >>> base_forms("jumping"), base_forms("lying")
    (('jump',), ('lie',))
    """
    word = normalize_verb(verb)
    return wordnet.lemma_candidates(word, "v") or (word,)


@lru_cache(maxsize=100_000)
def verb_synsets(verb: str) -> frozenset[str]:
    """WordNet verb synsets of a verb, over all its base forms (``riding``: ride's and rid's)."""
    return frozenset(s for form in base_forms(verb) for s in wordnet.synsets(form, "v"))


def wn_synonyms(a: str, b: str) -> bool:
    """True when two verbs are equal or share a WordNet verb synset after lemmatization.

    >>> wn_synonyms("jumping", "leaping"), wn_synonyms("jumping", "sleeping")
    (True, False)
    """
    a, b = normalize_verb(a), normalize_verb(b)
    return a == b or not verb_synsets(a).isdisjoint(verb_synsets(b))
