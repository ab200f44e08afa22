"""WordNet 3.0 through NLTK, loaded offline from the data the install step provides.

The data lives in ``.data/nltk_data/corpora/wordnet`` (``scripts/install_wordnet.py``), or in
the NLTK data directory named by the ``HOI_NLTK_DATA`` environment variable. Nothing is ever
downloaded at run time.

Synsets are passed around by name (``"ride.v.01"``); the functions here are thin, cached
wrappers so the rest of the package never touches NLTK objects.
"""

from __future__ import annotations

import os
import re
import warnings
from functools import lru_cache
from pathlib import Path

from .errors import InputError

DEFAULT_DATA = Path(__file__).resolve().parents[1] / ".data" / "nltk_data"
SYNSET_NAME = re.compile(r"^[^\s.][^\s]*\.[nvasr]\.\d{2}$")
POS_NAMES = {"v": "verb", "n": "noun"}


def data_dir() -> Path:
    return Path(os.environ.get("HOI_NLTK_DATA", DEFAULT_DATA))


@lru_cache(maxsize=1)
def _reader_class():
    """NLTK's reader without the version map it builds on every load (nltk imported here, on
    first use: importing it costs about a second)."""
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    class WordNet30Reader(WordNetCorpusReader):
        """NLTK's reader without the version map it builds on every load.

        NLTK 3.10's ``WordNetCorpusReader.__init__`` sets ``self.map30 = self.map_wn()``,
        which compares the loaded version ("3.0") with the name "wordnet" and, finding them
        different, maps every synset of WordNet 3.0 onto the loaded data by lemma and gloss —
        most of the load time. The map only serves the Open Multilingual Wordnet (never
        loaded here) and is the identity for WordNet 3.0 data, so it is skipped.
        """

        def map_wn(self, version="wordnet"):
            if version == "wordnet" and self.get_version() == "3.0":
                return None
            return super().map_wn(version)

    return WordNet30Reader


@lru_cache(maxsize=1)
def wordnet():
    """The WordNet 3.0 reader (an NLTK ``WordNetCorpusReader``, loaded once)."""
    import nltk

    root = data_dir()
    corpus = root / "corpora" / "wordnet"
    if not (corpus / "data.noun").exists():
        raise InputError(f"WordNet 3.0 not found in {corpus}; run ./scripts/setup.sh to install it")
    # NLTK refuses corpus roots outside nltk.data.path.
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    with warnings.catch_warnings():  # no Open Multilingual Wordnet: English only
        warnings.simplefilter("ignore", UserWarning)
        reader = _reader_class()(nltk.data.FileSystemPathPointer(str(corpus)), None)
    if reader.get_version() != "3.0":
        raise InputError(f"{corpus} holds WordNet {reader.get_version()}, expected 3.0")
    return reader


def is_synset_name(text: str) -> bool:
    """True when ``text`` has the form of a synset name (``ride.v.01``) and exists."""
    if not SYNSET_NAME.match(text):
        return False
    try:
        wordnet().synset(text)
    except Exception:
        return False
    return True


@lru_cache(maxsize=200_000)
def _synset(name: str):
    try:
        return wordnet().synset(name)
    except Exception as exc:
        raise InputError(f"unknown WordNet synset {name!r}") from exc


def pos_of(name: str) -> str:
    """Part of speech of a synset name: ``"v"`` or ``"n"`` (adjective satellites give ``"s"``)."""
    return _synset(name).pos()


@lru_cache(maxsize=100_000)
def synsets(lemma: str, pos: str | None = None) -> tuple[str, ...]:
    """Synset names of a lemma (spaces or underscores), in WordNet's sense order.

    >>> synsets("kite", "n")[:3]
    ('kite.n.01', 'kite.n.02', 'kite.n.03')
    """
    key = lemma.strip().lower().replace(" ", "_")
    return tuple(s.name() for s in wordnet().synsets(key, pos))


def gloss(name: str) -> str:
    """The definition of a synset: ``gloss("hold.v.02")`` → ``"have or hold in one's hands or grip"``."""
    return _synset(name).definition()


def lemma_names(name: str) -> list[str]:
    """Lemma names of a synset, with spaces: ``lemma_names("mouse.n.04")`` → ``["mouse", "computer mouse"]``."""
    return [lemma.replace("_", " ") for lemma in _synset(name).lemma_names()]


def hypernyms(name: str) -> list[str]:
    """Direct hypernyms (and instance hypernyms) of a synset."""
    s = _synset(name)
    return [h.name() for h in s.hypernyms() + s.instance_hypernyms()]


def hyponyms(name: str) -> list[str]:
    """Direct hyponyms (and instance hyponyms) of a synset."""
    s = _synset(name)
    return [h.name() for h in s.hyponyms() + s.instance_hyponyms()]


def verb_groups(name: str) -> list[str]:
    return [h.name() for h in _synset(name).verb_groups()]


def entailments(name: str) -> list[str]:
    return [h.name() for h in _synset(name).entailments()]


@lru_cache(maxsize=100_000)
def _lemma_frequency(lemma: str, pos: str) -> int:
    return sum(l.count() for s in wordnet().synsets(lemma, pos) for l in s.lemmas()
               if l.name().lower() == lemma)


@lru_cache(maxsize=100_000)
def lemma_candidates(word: str, pos: str) -> tuple[str, ...]:
    """Every base form WordNet's morphology allows for ``word``, most frequent first.

    NLTK's ``WordNetLemmatizer`` keeps only the first morphy result (``riding`` → ``rid``);
    this keeps all of them, ordered by the tagged-corpus frequency of the lemma so that
    ``lemma_candidates("riding", "v")`` is ``("ride", "rid")``.
    """
    key = word.strip().lower().replace(" ", "_")
    forms = list(dict.fromkeys(wordnet()._morphy(key, pos)))
    forms.sort(key=lambda form: -_lemma_frequency(form, pos))
    return tuple(forms)


def lemmatize(word: str, pos: str) -> str:
    """Base form of a word or phrase, with spaces between words.

    Single words take the most frequent WordNet base form (``riding`` → ``ride``); a phrase
    found in WordNet as a whole is kept (``dining_table`` → ``dining table``); otherwise the
    first word is lemmatized for verbs (``sitting on`` → ``sit on``) and the last for nouns
    (``dining tables`` → ``dining table``).

    >>> lemmatize("riding", "v"), lemmatize("dining_table", "n")
    ('ride', 'dining table')
    """
    words = word.strip().lower().replace("_", " ").split()
    if not words:
        raise InputError("cannot lemmatize an empty word")
    whole = lemma_candidates(" ".join(words), pos)
    if whole:
        return whole[0].replace("_", " ")
    head = 0 if pos == "v" else len(words) - 1
    base = lemma_candidates(words[head], pos)
    if base:
        words[head] = base[0]
    return " ".join(words)
