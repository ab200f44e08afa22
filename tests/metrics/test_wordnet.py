import pytest

from metrics.vocab import _wordnet as wordnet


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


def test_no_version_map_is_built_and_lookups_match_nltks_own_reader():
    """NLTK 3.10 maps WordNet 3.0 onto itself on every load (map30); skipped here."""
    import nltk
    from nltk.corpus.reader.wordnet import WordNetCorpusReader

    from metrics.vocab import _wordnet as wordnet
    reader = wordnet.wordnet()
    assert reader.map30 is None
    stock = WordNetCorpusReader(nltk.data.FileSystemPathPointer(str(wordnet.data_dir() / "corpora" / "wordnet")), None)
    for name in ("ride.v.01", "embrace.v.02", "hotdog.n.01", "television.n.01", "call.v.03"):
        a, b = reader.synset(name), stock.synset(name)
        assert (a.definition(), a.lemma_names(), [h.name() for h in a.hypernyms()]) == \
               (b.definition(), b.lemma_names(), [h.name() for h in b.hypernyms()])
    assert [s.name() for s in reader.synsets("riding", "v")] == [s.name() for s in stock.synsets("riding", "v")]


def test_a_damaged_wordnet_stops_with_one_line_naming_the_folder(tmp_path):
    # data.noun present (so it looks installed) but every other file missing: one error line
    # that names the folder and the missing file, exit 2, and no index written there
    import os
    import subprocess
    import sys
    corpus = tmp_path / "corpora" / "wordnet"
    corpus.mkdir(parents=True)
    (corpus / "data.noun").write_text("")
    env = {**os.environ, "HOI_NLTK_DATA": str(tmp_path), "HOI_WORDNET_INDEX": ""}
    done = subprocess.run([sys.executable, "-m", "metrics", "vocab", "--dataset", "vcoco", "--excluded"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 2
    error = done.stderr.strip().splitlines()[-1]
    assert error.startswith(f"metrics vocab: error: WordNet 3.0 in {corpus} is incomplete or damaged (")
    assert "lexnames" in error and error.endswith("run ./scripts/setup.sh to install it")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpora"]
