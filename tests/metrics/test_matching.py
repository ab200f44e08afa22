"""Synset matching (SHOE supp. §4) on free text, against the shipped WordNet baseline."""

import numpy as np
import pytest

from metrics import SimilarityMatrix, candidate_synsets, hico, match_synset, match_synsets, resolve
from metrics.vocab._baseline import load_default

# (text, ground-truth HICO label, pos, expected synset, expected similarity)
# Expected similarities follow from WordNet: 1 for the same synset, 0.8 (score 3.2) for a
# direct hypernym/hyponym, 0 when no candidate lies within the baseline's reach.
CASES = [
    ("riding", "ride", "v", "ride.v.01", 1.0),            # NLTK's lemmatizer alone says 'rid'
    ("rides", "ride", "v", "ride.v.01", 1.0),
    ("rode", "ride", "v", "ride.v.01", 1.0),              # irregular form (verb.exc)
    ("holding", "hold", "v", "hold.v.02", 1.0),
    ("held", "hold", "v", "hold.v.02", 1.0),
    ("sitting on", "sit_on", "v", "sit.v.01", 1.0),       # phrasal verb
    ("sat on", "sit_on", "v", "sit.v.01", 1.0),
    ("picking up", "pick_up", "v", "pick_up.v.02", 1.0),  # WordNet collocation
    ("picked up", "pick_up", "v", "pick_up.v.02", 1.0),
    ("lying on", "lie_on", "v", "lie.v.02", 1.0),
    ("ate", "eat", "v", "eat.v.01", 1.0),
    ("throwing", "throw", "v", "throw.v.01", 1.0),
    ("flying", "fly", "v", "fly.v.03", 1.0),
    ("hugging", "hug", "v", "embrace.v.02", 1.0),
    ("galloping", "ride", "v", "gallop.v.03", 0.8),       # gallop.v.03 is a hyponym of ride.v.01
    ("dining tables", "dining_table", "n", "dining_table.n.01", 1.0),  # multi-word, plural
    ("mobile phone", "cell_phone", "n", "cellular_telephone.n.01", 1.0),
    ("computer mouse", "mouse", "n", "mouse.n.04", 1.0),
    ("bikes", "bicycle", "n", "bicycle.n.01", 1.0),
    ("wine glasses", "wine_glass", "n", "glass.n.02", 0.8),  # no 'wine glass' lemma: the parent
    ("puppy", "dog", "n", "puppy.n.01", 0.8),
    ("sedan", "car", "n", "sedan.n.01", 0.8),
    ("laptop computer", "laptop", "n", "laptop.n.01", 1.0),
    ("television", "tv", "n", "television.n.01", 1.0),
]


@pytest.fixture(scope="module")
def matrices():
    return {"v": load_default("v"), "n": load_default("n")}


@pytest.mark.parametrize("text,label,pos,synset,sim", CASES)
def test_free_text_resolves_to_the_most_similar_candidate(matrices, text, label, pos, synset, sim):
    gt = hico().synset(label, pos)
    m = match_synset(text, gt, pos, matrices[pos], vocabulary=hico())
    assert m.kind == "free_text"
    assert m.synset == synset
    assert m.sim == pytest.approx(sim)


def test_vectorized_matching_equals_one_by_one(matrices):
    texts = [c[0] for c in CASES if c[2] == "v"] * 3
    gts = [hico().verb_synset(c[1]) for c in CASES if c[2] == "v"] * 3
    table = match_synsets(texts, gts, "v", matrices["v"], vocabulary=hico())
    assert len(table) == len(texts)
    for text, gt, synset, sim in zip(texts, gts, table["synset"], table["sim"]):
        one = match_synset(text, gt, "v", matrices["v"], vocabulary=hico())
        assert (one.synset, one.sim) == (synset, sim)


def test_labels_synset_names_and_unknown_text(matrices):
    h = hico()
    assert match_synset("sit_on", "sit.v.01", "v", matrices["v"], vocabulary=h).kind == "label"
    named = match_synset("ride.v.01", "ride.v.02", "v", matrices["v"], vocabulary=h)
    assert (named.kind, named.synset) == ("synset", "ride.v.01")
    unknown = match_synset("xyzzy", "ride.v.02", "v", matrices["v"], vocabulary=h)
    assert (unknown.kind, unknown.synset, unknown.sim) == ("unknown", None, 0.0)
    assert resolve("dining table", "n", vocabulary=h) == "dining_table.n.01"
    assert resolve("xyzzy", "n", vocabulary=h) is None


def test_candidates_cover_whole_phrase_then_each_word():
    pool = candidate_synsets("dining table", "n")
    assert pool[0] == "dining_table.n.01"
    assert "table.n.02" in pool and "dining.n.01" in pool
    assert candidate_synsets("riding", "v")[0] == "ride.v.01"
    assert "rid.v.01" in candidate_synsets("riding", "v")


def test_ties_go_to_the_earlier_candidate():
    # identity matrix over an unrelated synset: every candidate scores 0, so the first wins
    m = SimilarityMatrix.identity(["push.v.01"])
    assert match_synset("riding", "push.v.01", "v", m).synset == "ride.v.01"
    # two candidates equally similar to the ground truth: the earlier one wins
    m2 = SimilarityMatrix(["ride.v.01", "ride.v.02", "travel.v.01"], row=[0, 1], col=[2, 2], val=[2.0, 2.0])
    assert match_synset("riding", "travel.v.01", "v", m2).synset == "ride.v.01"
    assert np.isclose(match_synset("riding", "travel.v.01", "v", m2).sim, 0.5)
