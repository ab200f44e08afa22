"""Studies never show an offensive sense: the exclusion's rules, every dataset's sampler over
several seeds (open and closed vocabulary), spec item files (left out, listed in a warning),
the spec's own additions, and the command listing the excluded senses."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from metrics import InputError
from metrics import cli as metrics_cli
from metrics.datasets.vcoco._vocabulary import vcoco
from metrics.vocab import excluded_reason, excluded_senses, load_default, offensive_words
from studyapp.platform.launch.spec_files import load_spec
from studyapp.studytypes.hoi_similarity.sampler import load_class_weights, sample_pairs

SEEN_IN_STUDIES = ("whore.v.01", "bitch.n.04", "ass.n.03", "cock.n.05")   # drawn before the exclusion
SLOTS = ["gt_verb", "gt_object", "pred_verb", "pred_object"]
CLASSES = "verb,object,weight\n" + "".join(f"{v},{o},1\n" for v, o in [
    ("work_on_computer-instr", "laptop"), ("hit-instr", "tennis_racket"), ("ride-instr", "horse"),
    ("kick-obj", "sports_ball"), ("eat-obj", "pizza"), ("read-obj", "book"), ("carry-obj", "dog"),
    ("look-obj", "bird"), ("hold-obj", "cat"), ("throw-obj", "frisbee"), ("sit-instr", "chair")])


def test_the_rules_and_their_reasons():
    assert excluded_reason("whore.v.01") == "sex or prostitution"       # gloss: work as a prostitute
    assert {excluded_reason(s) for s in ("bitch.n.04", "ass.n.03", "cock.n.05")} == {"word"}  # dog, donkey, bird
    assert excluded_reason("wop.n.01") == excluded_reason("bugger_all.n.01") == "usage domain"
    for fine in ("ride.v.01", "kiss.v.01", "hug.v.01", "child.n.01", "prick.v.01", "screw.n.04", "horse.n.01"):
        assert excluded_reason(fine) is None, fine
    assert excluded_reason("ride.v.01", frozenset({"ride.v.01"})) == "spec"
    assert offensive_words()["prick"] == "n" and offensive_words()["bitch"] == ""
    assert excluded_senses(["ride.v.01", "whore.v.01"], extra=["kiss.v.01"]) == {
        "kiss.v.01": "spec", "whore.v.01": "sex or prostitution"}


@pytest.mark.parametrize("dataset", ["hico-det", "vcoco", "swig-hoi"])
@pytest.mark.parametrize("closed", [False, True])
def test_no_sampler_draws_an_excluded_sense(tmp_path, dataset, closed):
    """Over several seeds, open or closed vocabulary; the senses are in the baseline matrices the
    sampler draws from (so without the exclusion they could be drawn)."""
    candidates = set(load_default("v", dataset=dataset).labels) | set(load_default("n", dataset=dataset).labels)
    assert {"bitch.n.04", "ass.n.03", "cock.n.05"} <= candidates
    weights = None
    if dataset == "vcoco":
        assert "whore.v.01" in candidates
        (tmp_path / "classes.csv").write_text(CLASSES)
        weights = load_class_weights(tmp_path / "classes.csv", vcoco())
    shown = set()
    for seed in range(4):
        items, _ = sample_pairs(60, seed, dataset=dataset, class_weights=weights, closed_vocabulary=closed)
        assert len(items) > 0
        shown |= set(items[SLOTS].to_numpy().ravel())
    assert not shown & set(SEEN_IN_STUDIES)
    assert not [s for s in shown if excluded_reason(s)]


def test_vcoco_defaults_to_its_own_vocabulary_and_hico_det_to_an_open_one(tmp_path):
    (tmp_path / "classes.csv").write_text(CLASSES)
    weights = load_class_weights(tmp_path / "classes.csv", vcoco())
    items, _ = sample_pairs(40, 0, dataset="vcoco", class_weights=weights)
    own = set(vcoco().verbs["synset"]) | set(vcoco().objects["synset"])
    assert set(items[["pred_verb", "pred_object"]].to_numpy().ravel()) <= own
    hico, _ = sample_pairs(40, 0)
    from metrics.datasets.hico_det import hico as hico_vocabulary
    h = hico_vocabulary()
    assert not set(hico["pred_verb"]) <= set(h.verbs["synset"])      # open: WordNet neighbours too


ITEMS = """item_id,gt_verb,gt_object,pred_verb,pred_object
a1,work.v.01,laptop.n.01,whore.v.01,laptop.n.01
a2,ride.v.01,horse.n.01,ride.v.01,ass.n.03
a3,ride.v.01,horse.n.01,straddle.v.01,horse.n.01
a4,hold.v.02,cup.n.01,carry.v.02,cup.n.01
"""


def spec(folder, extra: str = "", items: str = ITEMS):
    (folder / "items.csv").write_text(items)
    path = folder / "s.toml"
    path.write_text('title = "t"\nstudy_type = "hoi_similarity"\ninstructions = "Rate."\n\n'
                    f'[items]\nsource = "csv"\npath = "items.csv"\n{extra}')
    return path


def test_spec_item_files_lose_the_items_with_an_excluded_sense_and_say_which(tmp_path):
    loaded = load_spec(spec(tmp_path))
    assert [item.key for item in loaded.items] == ["a3", "a4"]
    assert loaded.source_report.startswith("warning: 2 items left out")
    assert "a1 (whore.v.01)" in loaded.source_report and "a2 (ass.n.03)" in loaded.source_report
    extended = load_spec(spec(tmp_path, 'exclude_senses = ["straddle.v.01"]\n'))
    assert [item.key for item in extended.items] == ["a4"] and "a3 (straddle.v.01)" in extended.source_report
    with pytest.raises(InputError, match="key 'items.exclude_senses' must be a list of synset names"):
        load_spec(spec(tmp_path, 'exclude_senses = "straddle.v.01"\n'))
    with pytest.raises(InputError, match="every item shows an excluded sense"):
        load_spec(spec(tmp_path, items="\n".join(ITEMS.splitlines()[:3]) + "\n"))


def test_a_sampler_spec_takes_its_own_exclusions(tmp_path):
    (tmp_path / "classes.csv").write_text(CLASSES)
    path = tmp_path / "v.toml"
    path.write_text('title = "t"\nstudy_type = "hoi_similarity"\ninstructions = "Rate."\n\n[items]\n'
                    'source = "sampler"\ndataset = "vcoco"\nclass_weights = "classes.csv"\nn = 30\n'
                    'exclude_senses = ["kick.v.01", "horse.n.01"]\n')
    items = load_spec(path).items
    shown = {s for item in items for s in (item.fields[f] for f in SLOTS)}
    assert items and not shown & {"kick.v.01", "horse.n.01"}


def test_the_command_lists_the_excluded_senses(tmp_path, capsys):
    """Through the command's entry point in this process (the tests of `vocab` run it as a process)."""
    status = metrics_cli.main(["vocab", "--dataset", "vcoco", "--excluded", "--json", str(tmp_path / "x.json")])
    done = capsys.readouterr()
    assert status == 0, done.err
    excluded = json.loads((tmp_path / "x.json").read_text())["excluded"]
    assert set(SEEN_IN_STUDIES) <= set(excluded) and excluded["whore.v.01"] == "sex or prostitution"
    assert "whore.v.01" in done.out and "offensive_words.txt" in done.out
    assert pd.Series(list(excluded.values())).isin(["usage domain", "sex or prostitution", "word"]).all()
