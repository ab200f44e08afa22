import pytest

from metrics import wordnet


@pytest.mark.slow
def test_wordnet_3_0_synset_counts():
    wn = wordnet.wordnet()
    assert wn.get_version() == "3.0"
    assert sum(1 for _ in wn.all_synsets("v")) == 13_767
    assert sum(1 for _ in wn.all_synsets("n")) == 82_115


def test_synsets_by_part_of_speech_in_sense_order():
    assert wordnet.synsets("kite", "n")[:3] == ("kite.n.01", "kite.n.02", "kite.n.03")
    assert "kite.v.01" in wordnet.synsets("kite", "v")
    assert all(".n." in s for s in wordnet.synsets("dining table", "n"))


def test_gloss_lemma_names_and_relations():
    assert wordnet.gloss("hold.v.02") == "have or hold in one's hands or grip"
    assert wordnet.lemma_names("mouse.n.04") == ["mouse", "computer mouse"]
    assert wordnet.hypernyms("bicycle.n.01") == ["wheeled_vehicle.n.01"]
    assert "bicycle.n.01" in wordnet.hyponyms("wheeled_vehicle.n.01")
    assert "mountain_bike.n.01" in wordnet.hyponyms("bicycle.n.01")


def test_lemmatize_keeps_every_morphological_candidate():
    # NLTK's WordNetLemmatizer alone says 'rid'
    assert wordnet.lemma_candidates("riding", "v") == ("ride", "rid")
    assert wordnet.lemmatize("riding", "v") == "ride"
    assert wordnet.lemmatize("rode", "v") == "ride"
    assert wordnet.lemmatize("dining_table", "n") == "dining table"
    assert wordnet.lemmatize("dining tables", "n") == "dining table"
    assert wordnet.lemmatize("sitting on", "v") == "sit on"


def test_synset_names_are_recognised():
    assert wordnet.is_synset_name("ride.v.01")
    assert not wordnet.is_synset_name("ride")
    assert not wordnet.is_synset_name("ride.v.99")
