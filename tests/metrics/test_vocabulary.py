import pandas as pd
import pytest

from metrics import hico
from metrics.vocab import _wordnet as wordnet


def test_counts():
    v = hico()
    assert len(v.verbs) == 117
    assert len(v.objects) == 80
    assert len(v.classes) == 600
    assert v.classes["rare"].sum() == 138
    assert v.class_mask("rare").sum() == 138 and v.class_mask("non_rare").sum() == 462


def test_zero_shot_splits():
    v = hico()
    assert v.class_mask("rf_uc_unseen").sum() == 120
    assert v.class_mask("nf_uc_unseen").sum() == 120
    assert v.class_mask("uv_unseen").sum() == 84
    assert v.class_mask("uo_unseen").sum() == 100
    assert v.class_mask("uv_seen").sum() == 516
    assert v.classes.loc[v.class_mask("uv_unseen"), "verb"].nunique() == 20
    assert v.classes.loc[v.class_mask("uo_unseen"), "object"].nunique() == 12


def test_every_label_maps_to_an_existing_synset_of_the_right_pos():
    v = hico()
    for table, pos in ((v.verbs, "v"), (v.objects, "n")):
        for label, synset in zip(table["label"], table["synset"]):
            if label == "no_interaction":
                assert synset == ""
                continue
            assert wordnet.pos_of(synset) == pos, (label, synset)
    assert v.verb_synset("no_interaction") is None


@pytest.mark.parametrize("label,pos,synset", [
    # SHOE's synsets (majnoa/streamlit-annotation-app, userstudy/): run a horse, pick up by hand,
    # the TV broadcast sense; SHOE maps hot_dog to hotdog.n.01 (the show-off sense) as released
    ("hold", "v", "hold.v.02"), ("run", "v", "run.v.26"), ("orange", "n", "orange.n.01"),
    ("mouse", "n", "mouse.n.04"), ("kite", "n", "kite.n.03"), ("sit_on", "v", "sit.v.01"),
    ("pick_up", "v", "pick_up.v.02"), ("dining_table", "n", "dining_table.n.01"),
    ("cell_phone", "n", "cellular_telephone.n.01"), ("tv", "n", "television.n.01"),
    ("hot_dog", "n", "hotdog.n.01"), ("ride", "v", "ride.v.01"), ("talk_on", "v", "call.v.03"),
    ("train", "v", "coach.v.01"), ("apple", "n", "apple.n.01"), ("tie", "n", "necktie.n.01"),
])
def test_tricky_mappings(label, pos, synset):
    assert hico().synset(label, pos) == synset


def test_glosses_of_tricky_mappings_read_right():
    v = hico()
    assert "fruit" in wordnet.gloss(v.object_synset("orange"))
    assert "cursor" in wordnet.gloss(v.object_synset("mouse"))
    assert "plaything" in wordnet.gloss(v.object_synset("kite"))


def test_labels_match_the_real_hico_files(shared_data):
    hico_dir = shared_data / "hico"
    verbs = (hico_dir / "verbs.txt").read_text().split()
    objects = (hico_dir / "objects.txt").read_text().split()
    assert hico().verb_labels == verbs
    assert hico().object_labels == objects
    src = pd.read_csv(hico_dir / "hoi_classes.csv")
    ours = hico().classes
    assert (ours["verb"].to_numpy() == src["verb"].to_numpy()).all()
    assert (ours["unseen_rf_uc"].to_numpy() == src["rf_uc_unseen"].to_numpy()).all()
    assert (ours["rare"].to_numpy() == src["rare"].to_numpy()).all()
