"""WordNet senses a study never shows a participant.

A sense is excluded when (each rule is reported as the reason):

- ``usage domain``: WordNet marks it as an obscenity, an ethnic slur or a disparagement
  (NLTK's ``usage_domains()``: ``obscenity.n.02``, ``ethnic_slur.n.01``, ``disparagement.n.01``);
- ``sex or prostitution``: it is about sex acts or prostitution — its hypernyms reach
  ``sexual_activity.n.01``, ``copulate.v.01``, ``prostitution.n.01`` or ``prostitute.n.01``, or
  its gloss names them (:data:`SEX_WORDS`: sexual intercourse, pleasure, favours, organs …;
  not sexual reproduction or orientation);
- ``word``: its displayed word (the first lemma, as the platform shows a synset) is a common
  slur or vulgarity of ``metrics/vocab/data/offensive_words.txt`` (``bitch.n.04`` is a female
  dog, but the word is what annotators read).

:func:`excluded_senses` lists them all (``python -m metrics vocab --excluded``);
:func:`excluded_reason` answers for one sense, with the extra names a study adds.

>>> excluded_reason("whore.v.01"), excluded_reason("bitch.n.04"), excluded_reason("ride.v.01")
('sex or prostitution', 'word', None)
"""

from __future__ import annotations

import re
from functools import cache, lru_cache
from pathlib import Path

from metrics.core._errors import InputError

WORDS_FILE = Path(__file__).resolve().parent / "data" / "offensive_words.txt"
USAGE_DOMAINS = ("obscenity.n.01", "obscenity.n.02", "ethnic_slur.n.01", "disparagement.n.01")
SEX_ROOTS = ("sexual_activity.n.01", "copulate.v.01", "prostitution.n.01", "prostitute.n.01")
SEX_WORDS = re.compile(r"\b(sexual(ly)? (intercourse|pleasure|favou?rs?|passion|partners?|organs?|excitement|"
                       r"gratification|activit\w*|acts?|active|powers)|sex acts?|copulat\w*|coitus|fornicat\w*|"
                       r"masturbat\w*|orgasm\w*|prostitut\w*|pornograph\w*|erotic\w*|lovemaking)\b")


@lru_cache(maxsize=1)
def offensive_words() -> dict[str, str]:
    """``{word: part of speech ('' for both)}`` of the word list."""
    out = {}
    for k, line in enumerate(WORDS_FILE.read_text(encoding="utf-8").splitlines(), 1):
        text = line.split("#", 1)[0].strip()
        if not text:
            continue
        word, _, pos = text.partition(" ")
        if pos.strip() not in ("", "n", "v"):
            raise InputError(f"{WORDS_FILE}: line {k}: part of speech must be n or v, got {pos.strip()!r}")
        out[word.lower()] = pos.strip()
    return out


def excluded_reason(synset: str, extra: frozenset | set = frozenset()) -> str | None:
    """Why ``synset`` is excluded (``usage domain``, ``sex or prostitution``, ``word``, or
    ``spec`` when it is in ``extra``), ``None`` when it may be shown."""
    if synset in extra:
        return "spec"
    return _reason(synset)


@cache
def _reason(synset: str) -> str | None:
    """The rules on the WordNet index (nouns and verbs; NLTK's reader answers for the other
    parts of speech), as NLTK's ``Synset`` gives them: ``usage_domains()``, the closure of
    hypernyms and instance hypernyms, ``definition()``, ``lemma_names()[0]`` and ``pos()``."""
    from metrics.vocab import _wordnet as wn

    parts = synset.lower().rsplit(".", 2) if isinstance(synset, str) else ()
    if len(parts) != 3 or parts[1] not in ("n", "v", "a", "s", "r"):
        return None       # not a synset name (a label, an empty cell): nothing to exclude
    try:
        domains = wn.usage_domains(synset)
    except InputError:    # no such synset
        return None
    if any(d in USAGE_DOMAINS for d in domains):
        return "usage domain"
    lineage = wn.hypernym_distances(synset)    # the synset (by its own name) and its ancestors
    if lineage.keys() & set(SEX_ROOTS) or SEX_WORDS.search(wn.gloss(synset).lower()):
        return "sex or prostitution"
    limited = offensive_words().get(wn._lemma_names(synset)[0].lower())
    if limited is not None and limited in ("", wn.pos_of(synset).replace("s", "a")):
        return "word"
    return None


def excluded_senses(synsets=None, extra=()) -> dict[str, str]:
    """``{synset: reason}`` of the excluded senses among ``synsets`` (every noun and verb
    synset of WordNet when ``None``) and the ``extra`` names."""
    from metrics.vocab._wordnet import index

    extra = frozenset(extra)
    if synsets is None:
        synsets = index().names
    out = {s: r for s in dict.fromkeys([*synsets, *sorted(extra)]) if (r := excluded_reason(s, extra))}
    return dict(sorted(out.items()))
