"""The WordNet index answers exactly as NLTK's reader does.

Every answer for the HICO-DET verb and object synsets (and a sample of all nouns and verbs) is
compared with NLTK's own objects; the baseline similarity matrices rebuilt with NLTK's reader
out of reach equal the shipped ones.
"""

from __future__ import annotations

import pickle
import random

import numpy as np
import pytest
from projectpaths import SHARED_DATA

from metrics import SimilarityMatrix
from metrics.datasets.hico_det._vocabulary import hico
from metrics.vocab import _wordnet as wordnet


@pytest.fixture(scope="module")
def reader():
    return wordnet.wordnet()


def hico_synsets() -> list[tuple[str, str]]:
    vocab = hico()
    return [(s, pos) for table, pos in ((vocab.verbs, "v"), (vocab.objects, "n"))
            for s in dict.fromkeys(table["synset"]) if s]


def nltk_lemma_candidates(reader, word: str, pos: str) -> tuple[str, ...]:
    """``lemma_candidates`` computed on NLTK's reader alone (the pre-index code)."""
    key = word.strip().lower().replace(" ", "_")

    def frequency(form):
        return sum(l.count() for s in reader.synsets(form, pos) for l in s.lemmas() if l.name().lower() == form)
    forms = list(dict.fromkeys(reader._morphy(key, pos)))
    forms.sort(key=lambda form: -frequency(form))
    return tuple(forms)


def assert_synset_answers_as_nltk(reader, name: str):
    s = reader.synset(name)
    assert wordnet.is_synset_name(name)
    assert wordnet.pos_of(name) == s.pos()
    assert wordnet.gloss(name) == s.definition()
    assert wordnet.lemma_names(name) == [lemma.replace("_", " ") for lemma in s.lemma_names()]
    # NLTK returns links in set order (it varies with the hash seed); the index sorts each relation
    assert wordnet.hypernyms(name) == sorted(h.name() for h in s.hypernyms()) + sorted(
        h.name() for h in s.instance_hypernyms())
    assert wordnet.hyponyms(name) == sorted(h.name() for h in s.hyponyms()) + sorted(
        h.name() for h in s.instance_hyponyms())
    assert wordnet.verb_groups(name) == sorted(h.name() for h in s.verb_groups())
    assert wordnet.entailments(name) == sorted(h.name() for h in s.entailments())
    assert wordnet.hypernym_distances(name) == \
        {a.name(): d for a, d in s._shortest_hypernym_paths(simulate_root=False).items()}


def test_the_index_is_in_use():
    ix = wordnet.index()
    assert ix.tables["format"] == wordnet.INDEX_FORMAT
    assert len(ix.names) == 82_115 + 13_767 and ix.pos.count("v") == 13_767


def test_every_hico_synset_answers_as_nltk(reader):
    names = hico_synsets()
    assert len(names) == 190   # distinct synsets of the 116 verbs and 80 objects that have one
    for name, pos in names:
        assert_synset_answers_as_nltk(reader, name)
        assert wordnet.pos_of(name) == pos


def test_a_sample_of_all_nouns_and_verbs_answers_as_nltk(reader):
    ix = wordnet.index()
    for k in random.Random(16).sample(range(len(ix.names)), 300):
        assert_synset_answers_as_nltk(reader, ix.names[k])


def words_to_look_up(reader) -> list[tuple[str, str]]:
    """HICO labels, the lemma names of their synsets and inflected or irregular forms."""
    vocab = hico()
    words = []
    for table, pos in ((vocab.verbs, "v"), (vocab.objects, "n")):
        for label, synset in zip(table["label"], table["synset"]):
            words.append((label, pos))
            for lemma in (reader.synset(synset).lemma_names() if synset else []):
                words += [(lemma, pos), (lemma + "s", pos)]
                if pos == "v":
                    words += [(lemma + "ing", pos), (lemma + "ed", pos), (lemma[:-1] + "ing", pos)]
    words += [(w, "v") for w in ("riding", "rode", "sitting", "lying", "flew", "hugged", "Riding", "sitting on")]
    words += [(w, "n") for w in ("dining tables", "men", "knives", "geese", "mice", "skis", "buses", "xyzzy")]
    return list(dict.fromkeys(words))


def test_lemma_look_ups_answer_as_nltk(reader):
    for word, pos in words_to_look_up(reader):
        key = word.strip().lower().replace(" ", "_")
        assert wordnet.synsets(word, pos) == tuple(s.name() for s in reader.synsets(key, pos)), word
        assert wordnet.lemma_candidates(word, pos) == nltk_lemma_candidates(reader, word, pos), word


@pytest.mark.parametrize("name", ["motorbike.n.01", "RIDE.V.01", "ride.v.00", "ride.v.99", "ride.n.01",
                                  "xyzzy.n.01", "sit_on.v.01", "hot_dog.n.01", "hotdog.n.02"])
def test_names_resolve_as_nltk_resolves_them(reader, name):
    try:
        expected = reader.synset(name).name()
    except Exception:
        expected = None
    if expected is None:
        assert not wordnet.is_synset_name(name.lower()) if wordnet.SYNSET_NAME.match(name.lower()) else True
        with pytest.raises(wordnet.InputError):
            wordnet.gloss(name)
    else:
        assert wordnet.gloss(name) == reader.synset(expected).definition()
        assert wordnet.hypernyms(name) == wordnet.hypernyms(expected)


def test_other_parts_of_speech_go_to_nltk(reader):
    assert wordnet.gloss("good.a.01") == reader.synset("good.a.01").definition()
    assert wordnet.pos_of("quickly.r.01") == "r"
    assert wordnet.synsets("good", "a") == tuple(s.name() for s in reader.synsets("good", "a"))


def test_baseline_rebuilt_from_the_index_alone_equals_the_shipped_matrix(monkeypatch):
    """NLTK's reader made unreachable: the baseline build runs on the index and gives the
    shipped matrices (scores and labels)."""
    from metrics.vocab._baseline import build, default_path

    def unreachable():
        raise AssertionError("NLTK's reader used")
    monkeypatch.setattr(wordnet, "wordnet", unreachable)
    wordnet.synsets.cache_clear()
    wordnet.lemma_candidates.cache_clear()
    for pos in ("v", "n"):
        built, shipped = build(pos), SimilarityMatrix.load(default_path(pos))
        assert list(built.labels) == list(shipped.labels)
        b, s = built.to_long(), shipped.to_long()
        assert b[["a", "b"]].values.tolist() == s[["a", "b"]].values.tolist()
        np.testing.assert_allclose(b["score"], s["score"], atol=1e-6)


def test_stored_index_round_trip_and_staleness(tmp_path):
    ix = wordnet.index()
    path = ix.save(tmp_path / "index.pickle")
    assert path.stat().st_mode & 0o777 == 0o644
    again = wordnet.WordNetIndex.load(path)
    assert again.names == ix.names and again.lemma_index["v"][0] == ix.lemma_index["v"][0]
    stale = dict(ix.tables, source={**ix.tables["source"], "data.noun": 1})
    path.write_bytes(pickle.dumps(stale))
    assert wordnet.WordNetIndex.load(path) is None
    path.write_bytes(b"not a pickle")
    assert wordnet.WordNetIndex.load(path) is None
    assert wordnet.WordNetIndex.load(tmp_path / "missing.pickle") is None


@pytest.mark.slow
def test_a_missing_index_is_built_on_first_use_with_one_line_on_stderr(tmp_path, monkeypatch, capsys):
    target = tmp_path / "sub" / "index.pickle"
    monkeypatch.setenv("HOI_WORDNET_INDEX", str(target))
    wordnet.index.cache_clear()
    try:
        built = wordnet.index()
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "building the WordNet index" in err and str(target) in err
        assert target.exists() and wordnet.WordNetIndex.load(target).names == built.names
    finally:
        wordnet.index.cache_clear()


@pytest.mark.slow
def test_taxonomy_depths_equal_nltks_own_computation():
    """LCH's D from the index is the depth NLTK's ``_compute_max_depth`` finds by reading every
    synset (about 30 s: a fresh reader)."""
    fresh = wordnet._reader_class()(wordnet.wordnet()._root, None)
    for pos in wordnet.INDEX_POS:
        assert fresh._compute_max_depth(pos, False) == wordnet.index().taxonomy_depth(pos)
    assert (wordnet.index().taxonomy_depth("n"), wordnet.index().taxonomy_depth("v")) == (19, 12)


def test_depths_answer_as_nltk(reader):
    ix = wordnet.index()
    names = [name for name, _ in hico_synsets()]
    names += [ix.names[k] for k in random.Random(17).sample(range(len(ix.names)), 300)]
    for name in names + ["entity.n.01", "be.v.01", "paris.n.01"]:   # a root, a verb root, an instance
        k, s = ix.synset_number(name), reader.synset(name)
        assert (ix.min_depth[k], ix.max_depth[k]) == (s.min_depth(), s.max_depth()), name


def similarity_pairs(reader) -> list[tuple[str, str]]:
    """Every pair of HICO-DET verb synsets and of object synsets, SHOE's user-study pairs (when
    the file is present), and a sample of noun / verb pairs, mixed parts of speech included."""
    by_pos = {"v": [], "n": []}
    for name, pos in hico_synsets():
        by_pos[pos].append(name)
    pairs = [(a, b) for names in by_pos.values() for a in names for b in names]
    shoe = SHARED_DATA / "shoe" / "shoe_user_study_items.csv"
    if shoe.exists():
        import pandas as pd
        items = pd.read_csv(shoe)
        for gt, pred in (("gt_verb_synset", "pred_verb_synset"), ("gt_object_synset", "pred_object_synset")):
            pairs += list(zip(items[pred], items[gt]))
    ix, rng = wordnet.index(), random.Random(18)
    sample = [ix.names[k] for k in rng.sample(range(len(ix.names)), 400)]
    pairs += list(zip(sample[:200], sample[200:]))
    return pairs


@pytest.mark.slow
def test_path_wup_and_lch_similarity_answer_as_nltk(reader):
    """Path, Wu-Palmer and Leacock-Chodorow similarity computed on the index equal NLTK's own
    (``simulate_root=True``, as the alignment baselines use them) for every pair of the HICO-DET
    vocabulary (18,500 pairs) and the other pairs of :func:`similarity_pairs` (about 20 s)."""
    for pos in wordnet.INDEX_POS:   # NLTK's depth scan takes 30 s; the test above checks the number
        reader._max_depth.setdefault((pos, False), wordnet.index().taxonomy_depth(pos))
        reader._max_depth.setdefault((pos, True), wordnet.index().taxonomy_depth(pos) + 1)
    pairs = similarity_pairs(reader)
    assert len(pairs) >= 18_500 + 200
    for a, b in pairs:
        sa, sb = reader.synset(a), reader.synset(b)
        assert wordnet.path_similarity(a, b) == sa.path_similarity(sb), (a, b)
        assert wordnet.wup_similarity(a, b) == sa.wup_similarity(sb), (a, b)
        if sa.pos() == sb.pos():
            assert wordnet.lch_similarity(a, b) == sa.lch_similarity(sb), (a, b)
        else:
            with pytest.raises(wordnet.InputError):
                wordnet.lch_similarity(a, b)


def test_similarity_of_verbs_in_separate_trees_goes_through_the_simulated_root():
    """ride.v.01 and push.v.01 share no hypernym: the path runs through NLTK's simulated root,
    one step above each verb's farthest ancestor; worked out from the hypernym distances."""
    import math
    up_ride = max(wordnet.hypernym_distances("ride.v.01").values()) + 1
    up_push = max(wordnet.hypernym_distances("push.v.01").values()) + 1
    assert not set(wordnet.hypernym_distances("ride.v.01")) & set(wordnet.hypernym_distances("push.v.01"))
    assert wordnet.path_similarity("ride.v.01", "push.v.01") == 1 / (up_ride + up_push + 1)
    assert wordnet.lch_similarity("ride.v.01", "push.v.01") == -math.log((up_ride + up_push + 1) / (2 * 13))
    assert wordnet.wup_similarity("ride.v.01", "push.v.01") == 2 / (up_ride + up_push + 2)
    # nouns share entity.n.01: no simulated root, the nearest common ancestor decides
    horse, bicycle = wordnet.hypernym_distances("horse.n.01"), wordnet.hypernym_distances("bicycle.n.01")
    d = min(horse[s] + bicycle[s] for s in set(horse) & set(bicycle))
    assert wordnet.path_similarity("horse.n.01", "bicycle.n.01") == 1 / (d + 1) == 1 / 17


def nltk_excluded_reason(reader, name: str) -> str | None:
    """The offensive-sense rules (``metrics.vocab._offensive``) on NLTK's own ``Synset``."""
    from metrics.vocab._offensive import SEX_ROOTS, SEX_WORDS, USAGE_DOMAINS, offensive_words

    try:
        node = reader.synset(name)
    except Exception:
        return None
    if any(d.name() in USAGE_DOMAINS for d in node.usage_domains()):
        return "usage domain"
    ancestors = {a.name() for a in node.closure(lambda s: s.hypernyms() + s.instance_hypernyms())}
    if node.name() in SEX_ROOTS or ancestors & set(SEX_ROOTS) or SEX_WORDS.search(node.definition().lower()):
        return "sex or prostitution"
    limited = offensive_words().get(node.lemma_names()[0].lower())
    if limited is not None and limited in ("", node.pos().replace("s", "a")):
        return "word"
    return None


def test_the_offensive_sense_exclusion_answers_as_on_nltks_reader(reader):
    """Every noun and verb sense NLTK's reader could exclude — each sense of every word of the
    word list, the members of the usage domains, everything under the sex roots, every gloss
    the pattern finds — every sense of V-COCO's baseline matrices (what its sampler draws from),
    a sample of the rest, other parts of speech and labels: the same reason from the index. So
    the exclusion over all of WordNet's nouns and verbs is the same set."""
    from metrics.vocab import excluded_senses, load_default
    from metrics.vocab._offensive import SEX_ROOTS, SEX_WORDS, USAGE_DOMAINS, _reason, offensive_words

    ix = wordnet.index()
    could = {s.name() for word in offensive_words() for pos in wordnet.INDEX_POS for s in reader.synsets(word, pos)}
    could |= {s.name() for d in USAGE_DOMAINS for s in reader.synset(d).in_usage_domains()}
    for root in SEX_ROOTS:
        could |= {root} | {s.name() for s in reader.synset(root).closure(lambda s: s.hyponyms() + s.instance_hyponyms())}
    could |= {name for name, gloss in zip(ix.names, ix.gloss) if SEX_WORDS.search(gloss.lower())}
    could = {name for name in could if wordnet.pos_of(name) in wordnet.INDEX_POS}
    drawn = {s for pos in wordnet.INDEX_POS for s in load_default(pos, dataset="vcoco").labels}
    rest = [ix.names[k] for k in random.Random(19).sample(range(len(ix.names)), 500)]
    others = [float("nan"), "good.a.01", "quickly.r.01", "sexy.s.01", "ride", "ride.x.01", "ride.v.xx", "xyzzy.n.01"]
    reference = {}
    for name in sorted(could | drawn) + rest + others:
        reference[name] = nltk_excluded_reason(reader, name)
        assert _reason(name) == reference[name], name
    expected = {name: why for name, why in reference.items() if why and name in could}
    assert len(expected) == 265   # 190 sex or prostitution, 47 usage domain, 28 word (NLTK over all 95,882)
    assert excluded_senses() == dict(sorted(expected.items()))
