"""WordNet 3.0, loaded offline from the data the install step provides.

The data lives in ``.data/nltk_data/corpora/wordnet`` (``scripts/install_wordnet.py``), or in
the NLTK data directory named by the ``HOI_NLTK_DATA`` environment variable. Nothing is ever
downloaded at run time.

Nouns and verbs — all the project looks up — are answered from a compact index
(:class:`WordNetIndex`: synset names, glosses, lemma names and counts, the hypernym / hyponym /
verb-group / entailment / usage-domain links, the lemma index and the morphology exception lists), built once
from NLTK's reader at install time and loaded in a fraction of the reader's start-up. Its file
is ``wordnet-index-v<N>.pickle`` beside the NLTK data (or ``HOI_WORDNET_INDEX``); a missing or
stale index is built on first use. Other parts of speech, and NLTK's similarity measures, go
to NLTK's reader (:func:`wordnet`).

Synsets are passed around by name (``"ride.v.01"``); the functions here are thin, cached
wrappers so the rest of the package never touches NLTK objects.
"""

from __future__ import annotations

import math
import os
import pickle
import re
import sys
import warnings
from array import array
from bisect import bisect_left
from collections import deque
from functools import lru_cache
from pathlib import Path

from metrics.core._errors import InputError

DEFAULT_DATA = Path(__file__).resolve().parents[2] / ".data" / "nltk_data"
SYNSET_NAME = re.compile(r"^[^\s.][^\s]*\.[nvasr]\.\d{2}$")
POS_NAMES = {"v": "verb", "n": "noun"}


def data_dir() -> Path:
    return Path(os.environ.get("HOI_NLTK_DATA", DEFAULT_DATA))


class WordNetMissing(InputError):
    """WordNet 3.0 is not installed under :func:`data_dir`: no look-up can answer, so callers
    that turn an unknown synset into False let this one through."""


def _corpus_dir() -> Path:
    """The WordNet 3.0 corpus folder; raises :class:`WordNetMissing` when it is absent."""
    corpus = data_dir() / "corpora" / "wordnet"
    if not (corpus / "data.noun").exists():
        raise WordNetMissing(f"WordNet 3.0 not found in {corpus}; run ./scripts/setup.sh to install it")
    return corpus


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
    corpus = _corpus_dir()
    # NLTK refuses corpus roots outside nltk.data.path.
    if str(root) not in nltk.data.path:
        nltk.data.path.insert(0, str(root))
    try:
        with warnings.catch_warnings():  # no Open Multilingual Wordnet: English only
            warnings.simplefilter("ignore", UserWarning)
            reader = _reader_class()(nltk.data.FileSystemPathPointer(str(corpus)), None)
    except (OSError, LookupError, ValueError) as exc:   # a file missing, truncated or garbled
        raise WordNetMissing(f"WordNet 3.0 in {corpus} is incomplete or damaged ({type(exc).__name__}: "
                             f"{exc}); run ./scripts/setup.sh to install it") from None
    if reader.get_version() != "3.0":
        raise InputError(f"{corpus} holds WordNet {reader.get_version()}, expected 3.0")
    return reader


# ---------------------------------------------------------------------------- the index
INDEX_FORMAT = 3
INDEX_POS = ("n", "v")
RELATIONS = ("hypernyms", "instance_hypernyms", "hyponyms", "instance_hyponyms", "verb_groups",
             "entailments", "usage_domains")
# files whose size identifies the WordNet data an index was built from
SOURCE_FILES = ("data.noun", "data.verb", "index.noun", "index.verb", "noun.exc", "verb.exc",
                "cntlist.rev")


def index_path() -> Path:
    """Where the index lives: ``HOI_WORDNET_INDEX``, else beside the NLTK data."""
    named = os.environ.get("HOI_WORDNET_INDEX")
    return Path(named) if named else data_dir() / f"wordnet-index-v{INDEX_FORMAT}.pickle"


def _source_signature() -> dict[str, int]:
    corpus = _corpus_dir()
    return {name: (corpus / name).stat().st_size for name in SOURCE_FILES}


class WordNetIndex:
    """The nouns and verbs of WordNet 3.0 in flat tables, answering as NLTK's reader does.

    Synsets are numbered; ``names``, ``pos``, ``gloss`` and ``lemmas`` (tab-joined lemma names)
    are indexed by that number, ``counts`` maps a synset with tagged lemmas to its lemma counts,
    ``min_depth`` / ``max_depth`` (bytes) hold NLTK's ``Synset.min_depth()`` / ``max_depth()``.
    Each relation is a CSR pair ``(offsets, targets)`` of ``array('i')``, targets sorted by
    name (NLTK's reader returns them in the order of a set, which varies between processes). ``lemma_index[pos]`` is ``(sorted lemmas, offsets, synset numbers)`` in
    sense order (WordNet's ``index.<pos>``); ``exceptions[pos]`` is NLTK's exception map.
    """

    def __init__(self, tables: dict):
        self.tables = tables
        self.names, self.pos, self.gloss = tables["names"], tables["pos"], tables["gloss"]
        self.lemmas, self.counts = tables["lemmas"], tables["counts"]
        self.relations, self.lemma_index = tables["relations"], tables["lemma_index"]
        self.exceptions = tables["exceptions"]
        self.min_depth, self.max_depth = tables["min_depth"], tables["max_depth"]
        self._taxonomy_depths: dict[str, int] = {}

    # -- building and storing
    @classmethod
    def build(cls, reader) -> WordNetIndex:
        """Read every noun and verb synset, the lemma index and the exception lists from NLTK's
        ``reader``, and the tagged counts from ``cntlist.rev`` (about 20 s; done once)."""
        synsets = [s for pos in INDEX_POS for s in reader.all_synsets(pos)]
        number = {s: k for k, s in enumerate(synsets)}
        relations = {}
        for relation in RELATIONS:
            offsets, targets = array("i", [0]), array("i")
            for s in synsets:   # NLTK keeps links in a set (order varies with the hash seed): sorted here
                targets.extend(sorted((number[t] for t in getattr(s, relation)()), key=lambda t: synsets[t].name()))
                offsets.append(len(targets))
            relations[relation] = (offsets, targets)
        # Lemma.count() binary-searches cntlist.rev for the lemma's sense key: read it once
        with open(data_dir() / "corpora" / "wordnet" / "cntlist.rev", encoding="utf-8") as f:
            tagged = {line.split(" ", 1)[0]: int(line.rsplit(" ", 1)[-1]) for line in f if line.strip()}
        counts = {}
        for k, s in enumerate(synsets):
            c = tuple(tagged.get(lemma.key(), 0) for lemma in s.lemmas())
            if any(c):
                counts[k] = c
        lemma_index = {}
        for pos in INDEX_POS:
            keys = sorted(lemma for lemma, by_pos in reader._lemma_pos_offset_map.items() if pos in by_pos)
            offsets, targets = array("i", [0]), array("i")
            for lemma in keys:
                targets.extend(number[reader.synset_from_pos_and_offset(pos, offset)]
                               for offset in reader._lemma_pos_offset_map[lemma][pos])
                offsets.append(len(targets))
            lemma_index[pos] = (keys, offsets, targets)
        min_depth, max_depth = _depths(relations)
        return cls({"format": INDEX_FORMAT, "source": _source_signature(),
                    "names": [s.name() for s in synsets], "pos": "".join(s.pos() for s in synsets),
                    "gloss": [s.definition() for s in synsets],
                    "lemmas": ["\t".join(s.lemma_names()) for s in synsets], "counts": counts,
                    "relations": relations, "lemma_index": lemma_index,
                    "exceptions": {pos: dict(reader._exception_map[pos]) for pos in INDEX_POS},
                    "min_depth": min_depth, "max_depth": max_depth})

    def save(self, path: Path) -> Path:
        """Store the tables atomically, readable by every user (the app may run as another)."""
        from metrics.core._jsonio import write_bytes_atomic
        stored = write_bytes_atomic(path, pickle.dumps(self.tables, protocol=pickle.HIGHEST_PROTOCOL))
        os.chmod(stored, 0o644)
        return stored

    @classmethod
    def load(cls, path: Path) -> WordNetIndex | None:
        """The index stored at ``path``, or None when it is missing, unreadable or stale."""
        try:
            with open(path, "rb") as f:
                tables = pickle.load(f)
        except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ValueError):
            return None
        if not isinstance(tables, dict) or tables.get("format") != INDEX_FORMAT \
                or tables.get("source") != _source_signature():
            return None
        return cls(tables)

    # -- look-ups (NLTK's semantics)
    def lemma_synsets(self, lemma: str, pos: str) -> array:
        """Synset numbers of an exact lemma (lower case, underscores), in sense order."""
        keys, offsets, targets = self.lemma_index[pos]
        i = bisect_left(keys, lemma)
        if i == len(keys) or keys[i] != lemma:
            return targets[0:0]
        return targets[offsets[i]:offsets[i + 1]]

    def synset_number(self, name: str) -> int:
        """The synset a name denotes, as NLTK's ``synset()`` resolves it (any of its lemmas,
        sense number within that lemma); KeyError when there is none."""
        lemma, pos, sense = name.lower().rsplit(".", 2)
        senses = self.lemma_synsets(lemma, pos)
        try:
            return senses[int(sense) - 1]
        except (IndexError, ValueError):
            raise KeyError(name) from None

    def related(self, k: int, relation: str) -> list[int]:
        offsets, targets = self.relations[relation]
        return list(targets[offsets[k]:offsets[k + 1]])

    def morphy(self, form: str, pos: str) -> list[str]:
        """NLTK's ``_morphy``: the form and its exception-list or rule-based base forms that are
        lemmas of ``pos``, without repeats."""
        exceptions = self.exceptions[pos]
        if form in exceptions:
            forms = exceptions[form]
        else:
            forms = [form[:-len(old)] + new for old, new in _SUBSTITUTIONS[pos] if form.endswith(old)]
        out = []
        for candidate in [form] + forms:
            if candidate not in out and len(self.lemma_synsets(candidate, pos)):
                out.append(candidate)
        return out

    def synsets(self, lemma: str, pos: str) -> list[int]:
        """NLTK's ``synsets(lemma, pos)``: the synsets of every base form of the (lower-cased) lemma."""
        return [k for form in self.morphy(lemma.lower(), pos) for k in self.lemma_synsets(form, pos)]

    def taxonomy_depth(self, pos: str) -> int:
        """NLTK's ``_compute_max_depth(pos, simulate_root=False)``: the largest ``max_depth`` of a
        synset of ``pos`` (LCH's D)."""
        if pos not in self._taxonomy_depths:
            self._taxonomy_depths[pos] = max(d for d, p in zip(self.max_depth, self.pos) if p == pos)
        return self._taxonomy_depths[pos]

    def hypernym_distances(self, k: int) -> dict[int, int]:
        """NLTK's ``_shortest_hypernym_paths(simulate_root=False)``: breadth-first over hypernyms
        and instance hypernyms, each ancestor (and the synset itself) at its smallest depth."""
        queue, out = deque([(k, 0)]), {}
        while queue:
            s, depth = queue.popleft()
            if s in out:
                continue
            out[s] = depth
            queue.extend((h, depth + 1) for h in self.related(s, "hypernyms"))
            queue.extend((h, depth + 1) for h in self.related(s, "instance_hypernyms"))
        return out

    # -- NLTK's path / Wu-Palmer / Leacock-Chodorow similarity (nltk.corpus.reader.wordnet.Synset)
    def _name_of(self, k: int) -> str:
        return ROOT_NAME if k == ROOT else self.names[k]

    def _root_distances(self, k: int, simulate_root: bool) -> dict[int, int]:
        """``Synset._shortest_hypernym_paths``: with ``simulate_root`` the simulated root one
        step above the synset's farthest ancestor; the root itself is at 0 from itself."""
        if k == ROOT:
            return {ROOT: 0}
        out = self.hypernym_distances(k)
        if simulate_root:
            out[ROOT] = max(out.values()) + 1
        return out

    def shortest_path_distance(self, a: int, b: int, simulate_root: bool) -> int | None:
        """``Synset.shortest_path_distance``: the fewest edges through a common ancestor."""
        if a == b:
            return 0
        da, db = self._root_distances(a, simulate_root), self._root_distances(b, simulate_root)
        return min((d + db[s] for s, d in da.items() if s in db), default=None)

    def needs_root(self, k: int) -> bool:
        """``Synset._needs_root`` for WordNet 3.0: verbs have many roots, nouns one."""
        return self.pos[k] != "n"

    def path_similarity(self, a: int, b: int) -> float | None:
        """``Synset.path_similarity(simulate_root=True)``: ``1 / (distance + 1)``."""
        distance = self.shortest_path_distance(a, b, self.needs_root(a) or self.needs_root(b))
        return None if distance is None else 1.0 / (distance + 1)

    def lch_similarity(self, a: int, b: int) -> float | None:
        """``Synset.lch_similarity(simulate_root=True)``: ``-log((distance + 1) / 2D)``, D the
        taxonomy depth of the part of speech (plus the simulated root for verbs)."""
        if self.pos[a] != self.pos[b]:
            raise InputError(f"LCH similarity needs one part of speech: {self.names[a]}, {self.names[b]}")
        root = self.needs_root(a)
        depth = self.taxonomy_depth(self.pos[a]) + int(root)
        distance = self.shortest_path_distance(a, b, root)
        if distance is None or depth == 0:
            return None
        return -math.log((distance + 1) / (2.0 * depth))

    def wup_similarity(self, a: int, b: int) -> float | None:
        """``Synset.wup_similarity(simulate_root=True)``: ``2 d / (l1 + l2 + 2 d)`` with the
        subsumer chosen as NLTK does (``lowest_common_hypernyms(use_min_depth=True)``: the
        common ancestors of largest ``min_depth``, first by name, ``a`` itself if among them),
        ``d`` its ``max_depth`` + 1 and ``l1``, ``l2`` the path lengths from a and b to it."""
        root = self.needs_root(a) or self.needs_root(b)
        common = self.hypernym_distances(a).keys() & self.hypernym_distances(b).keys()
        if root:
            common.add(ROOT)
        if not common:
            return None
        min_depth = lambda k: 0 if k == ROOT else self.min_depth[k]
        deepest = max(min_depth(k) for k in common)
        subsumers = sorted((k for k in common if min_depth(k) == deepest), key=self._name_of)
        subsumer = a if a in subsumers else subsumers[0]
        depth = (0 if subsumer == ROOT else self.max_depth[subsumer]) + 1
        len1 = self.shortest_path_distance(a, subsumer, root)
        len2 = self.shortest_path_distance(b, subsumer, root)
        if len1 is None or len2 is None:
            return None
        return (2.0 * depth) / (len1 + depth + len2 + depth)


# NLTK's simulated root (``Synset`` named ``*ROOT*``) in the index's similarity measures
ROOT, ROOT_NAME = -1, "*ROOT*"


def _depths(relations: dict) -> tuple[bytes, bytes]:
    """Every synset's ``min_depth`` and ``max_depth`` (NLTK's ``Synset`` methods: the shortest
    and longest path up hypernyms and instance hypernyms to a root), from the index's links."""
    def ups(k):
        return [t for relation in ("hypernyms", "instance_hypernyms")
                for t in relations[relation][1][relations[relation][0][k]:relations[relation][0][k + 1]]]
    n = len(relations["hypernyms"][0]) - 1
    shortest, longest = [-1] * n, [-1] * n
    for start in range(n):
        stack = [start]
        while stack:
            k = stack[-1]
            if longest[k] >= 0:
                stack.pop()
                continue
            above = ups(k)
            waiting = [h for h in above if longest[h] < 0]
            if waiting:
                stack.extend(waiting)
                continue
            shortest[k] = 1 + min((shortest[h] for h in above), default=-1)
            longest[k] = 1 + max((longest[h] for h in above), default=-1)
            stack.pop()
    return bytes(shortest), bytes(longest)


# NLTK's WordNetCorpusReader.MORPHOLOGICAL_SUBSTITUTIONS for nouns and verbs
_SUBSTITUTIONS = {
    "n": [("s", ""), ("ses", "s"), ("ves", "f"), ("xes", "x"), ("zes", "z"), ("ches", "ch"),
          ("shes", "sh"), ("men", "man"), ("ies", "y")],
    "v": [("s", ""), ("ies", "y"), ("es", "e"), ("es", ""), ("ed", "e"), ("ed", ""), ("ing", "e"),
          ("ing", "")],
}


def build_index(path: Path | None = None) -> WordNetIndex:
    """Build the index from NLTK's reader and store it at ``path`` (default :func:`index_path`)."""
    built = WordNetIndex.build(wordnet())
    try:
        built.save(path or index_path())
    except OSError as exc:   # a read-only data folder: use it in memory
        print(f"metrics.vocab.wordnet: could not store the WordNet index ({exc})", file=sys.stderr)
    return built


@lru_cache(maxsize=1)
def index() -> WordNetIndex:
    """The index, loaded once; built (and stored) on first use when missing or stale."""
    loaded = WordNetIndex.load(index_path())
    if loaded is not None:
        return loaded
    _corpus_dir()
    print(f"metrics.vocab.wordnet: building the WordNet index in {index_path()} (once, about 20 s)",
          file=sys.stderr)
    return build_index()


def _indexed(name: str) -> int | None:
    """The index's number for a synset name of a part of speech it covers, else None
    (NLTK's reader answers); raises InputError for an unknown noun or verb synset."""
    pos = name.rsplit(".", 2)[-2].lower() if name.count(".") >= 2 else None
    if pos not in INDEX_POS:
        return None
    try:
        return index().synset_number(name)
    except KeyError:
        raise InputError(f"unknown WordNet synset {name!r}") from None


# ---------------------------------------------------------------------------- look-ups
def is_synset_name(text: str) -> bool:
    """True when ``text`` has the form of a synset name (``ride.v.01``) and exists."""
    if not SYNSET_NAME.match(text):
        return False
    try:
        _node(text)
    except WordNetMissing:
        raise
    except InputError:
        return False
    return True


@lru_cache(maxsize=200_000)
def _synset(name: str):
    try:
        return wordnet().synset(name)
    except Exception as exc:
        raise InputError(f"unknown WordNet synset {name!r}") from exc


def _node(name: str):
    """``(index number, None)`` for a noun or verb synset, ``(None, NLTK synset)`` otherwise."""
    k = _indexed(name)
    return (k, None) if k is not None else (None, _synset(name))


def pos_of(name: str) -> str:
    """Part of speech of a synset name: ``"v"`` or ``"n"`` (adjective satellites give ``"s"``)."""
    k, s = _node(name)
    return index().pos[k] if s is None else s.pos()


@lru_cache(maxsize=100_000)
def synsets(lemma: str, pos: str | None = None) -> tuple[str, ...]:
    """Synset names of a lemma (spaces or underscores), in WordNet's sense order.

    >>> synsets("kite", "n")[:3]
    ('kite.n.01', 'kite.n.02', 'kite.n.03')
    """
    key = lemma.strip().lower().replace(" ", "_")
    if pos in INDEX_POS:
        ix = index()
        return tuple(ix.names[k] for k in ix.synsets(key, pos))
    return tuple(s.name() for s in wordnet().synsets(key, pos))


def gloss(name: str) -> str:
    """The definition of a synset: ``gloss("hold.v.02")`` → ``"have or hold in one's hands or grip"``."""
    k, s = _node(name)
    return index().gloss[k] if s is None else s.definition()


def _lemma_names(name: str) -> list[str]:
    k, s = _node(name)
    return index().lemmas[k].split("\t") if s is None else list(s.lemma_names())


def lemma_names(name: str) -> list[str]:
    """Lemma names of a synset, with spaces: ``lemma_names("mouse.n.04")`` → ``["mouse", "computer mouse"]``."""
    return [lemma.replace("_", " ") for lemma in _lemma_names(name)]


def _related(name: str, *relations: str) -> list[str]:
    k, s = _node(name)
    if s is None:
        ix = index()
        return [ix.names[t] for relation in relations for t in ix.related(k, relation)]
    return [t.name() for relation in relations for t in getattr(s, relation)()]


def hypernyms(name: str) -> list[str]:
    """Direct hypernyms (and instance hypernyms) of a synset."""
    return _related(name, "hypernyms", "instance_hypernyms")


def hyponyms(name: str) -> list[str]:
    """Direct hyponyms (and instance hyponyms) of a synset."""
    return _related(name, "hyponyms", "instance_hyponyms")


def verb_groups(name: str) -> list[str]:
    return _related(name, "verb_groups")


def entailments(name: str) -> list[str]:
    return _related(name, "entailments")


def usage_domains(name: str) -> list[str]:
    """The usage domains WordNet marks a synset with (``obscenity.n.02``, ``ethnic_slur.n.01`` …)."""
    return _related(name, "usage_domains")


def hypernym_distances(name: str) -> dict[str, int]:
    """Each ancestor of a synset (hypernyms and instance hypernyms, itself at 0) with its
    smallest depth, as NLTK's ``_shortest_hypernym_paths(simulate_root=False)``."""
    k, s = _node(name)
    if s is None:
        ix = index()
        return {ix.names[a]: d for a, d in ix.hypernym_distances(k).items()}
    return {a.name(): d for a, d in s._shortest_hypernym_paths(simulate_root=False).items()}


def _similarity(measure: str, a: str, b: str) -> float | None:
    ka, sa = _node(a)
    kb, sb = _node(b)
    if sa is None and sb is None:
        return getattr(index(), measure)(ka, kb)
    sa, sb = _synset(a), _synset(b)
    return getattr(sa, measure)(sb, simulate_root=True)


def path_similarity(a: str, b: str) -> float | None:
    """NLTK's ``path_similarity`` (simulated root for verbs): ``1 / (shortest path + 1)``, None
    when no path joins them.

    >>> path_similarity("horse.n.01", "bicycle.n.01")  # 16 edges through whole.n.02
    0.058823529411764705
    """
    return _similarity("path_similarity", a, b)


def wup_similarity(a: str, b: str) -> float | None:
    """NLTK's ``wup_similarity`` (simulated root for verbs): Wu–Palmer, ``2 d / (l1 + l2 + 2 d)``
    with d the depth of the deepest common subsumer and l1, l2 the paths to it.

    >>> round(wup_similarity("ride.v.01", "ride.v.02"), 4)
    0.2857
    """
    return _similarity("wup_similarity", a, b)


def lch_similarity(a: str, b: str) -> float | None:
    """NLTK's ``lch_similarity`` (simulated root for verbs): Leacock–Chodorow,
    ``-log((shortest path + 1) / 2D)`` with D the depth of the part of speech's taxonomy
    (both synsets must share it).

    >>> round(lch_similarity("horse.n.01", "horse.n.01"), 4)  # -log(1 / (2 * 19))
    3.6376
    """
    return _similarity("lch_similarity", a, b)


@lru_cache(maxsize=100_000)
def _lemma_frequency(lemma: str, pos: str) -> int:
    if pos in INDEX_POS:
        ix = index()
        return sum(count for k in ix.synsets(lemma, pos)
                   for name, count in zip(ix.lemmas[k].split("\t"), ix.counts.get(k, ()))
                   if name.lower() == lemma)
    return sum(l.count() for s in wordnet().synsets(lemma, pos) for l in s.lemmas()
               if l.name().lower() == lemma)


def _morphy(form: str, pos: str) -> list[str]:
    return index().morphy(form, pos) if pos in INDEX_POS else wordnet()._morphy(form, pos)


@lru_cache(maxsize=100_000)
def lemma_candidates(word: str, pos: str) -> tuple[str, ...]:
    """Every base form WordNet's morphology allows for ``word``, most frequent first.

    NLTK's ``WordNetLemmatizer`` keeps only the first morphy result (``riding`` → ``rid``);
    this keeps all of them, ordered by the tagged-corpus frequency of the lemma so that
    ``lemma_candidates("riding", "v")`` is ``("ride", "rid")``.
    """
    key = word.strip().lower().replace(" ", "_")
    forms = list(dict.fromkeys(_morphy(key, pos)))
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
