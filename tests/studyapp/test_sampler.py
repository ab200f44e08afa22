"""The SHOE user-study pair sampler over the shipped WordNet baseline matrices."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT

from metrics import InputError, hico
from metrics.vocab._baseline import load_default
from studyapp.studytypes.hoi_similarity.sampler import sample_pairs, shoe_level

# With the baseline, two different synsets score at most 3.2 (similarity 0.8). Category 1
# keeps the verb (similarity 1), so its HOI similarity is at least 0.5 -> level >= 2; the same
# for category 2; category 3 reaches at most (0.8 + 0.8) / 2 = 0.8 -> level 3.
# the WordNet baseline never rates a different synset 4, so the changed component of a
# category-1 or -2 pair cannot reach level 4
IMPOSSIBLE = {(1, 4), (2, 4)}


@pytest.fixture(scope="module")
def drawn():
    return sample_pairs(120, seed=0, redistribute=False)


def test_shoe_level_rounds_half_up():
    # 4 * mean: 0.5 -> 2, 0.625 -> 2.5 -> 3, 0.1 -> 0.4 -> 0, 0.375 -> 1.5 -> 2
    assert shoe_level([1.0, 1.0, 0.2, 0.5], [0.0, 0.25, 0.0, 0.25]).tolist() == [2, 3, 0, 2]


def test_pairs_have_the_category_and_level_they_claim(drawn):
    items, _ = drawn
    verbs, objects = load_default("v"), load_default("n")
    v = verbs.sims(items["gt_verb"], items["pred_verb"])
    o = objects.sims(items["gt_object"], items["pred_object"])
    np.testing.assert_allclose(items["verb_sim"], v)
    np.testing.assert_allclose(items["object_sim"], o)
    # SHOE's design: the changed component's rating for categories 1 / 2, the HOI level for 3
    hoi = np.floor(4 * (v + o) / 2 + 0.5 + 1e-9).astype(int)
    comp_o = np.floor(4 * o + 0.5 + 1e-9).astype(int)
    comp_v = np.floor(4 * v + 0.5 + 1e-9).astype(int)
    level = np.where(items["category"] == 1, comp_o, np.where(items["category"] == 2, comp_v, hoi))
    assert (items["level"] == level).all() and items["level"].between(1, 4).all()
    assert items.loc[items["category"] == 3, "level"].max() <= 3
    assert items["gt_hoi_id"].is_unique           # each ground truth used once
    same_v = items["gt_verb"] == items["pred_verb"]
    same_o = items["gt_object"] == items["pred_object"]
    expected = np.where(same_v & ~same_o, 1, np.where(~same_v & same_o, 2, np.where(~same_v & ~same_o, 3, 0)))
    assert (items["category"] == expected).all()
    vocab = hico()
    for row in items.itertuples():
        assert vocab.verb_synset(row.gt_verb_label) == row.gt_verb
        assert vocab.object_synset(row.gt_object_label) == row.gt_object


def test_equal_shares_and_an_honest_report(drawn):
    items, report = drawn
    table = report.table().set_index(["category", "level"])
    # 120 over SHOE's 11 cells: 10 each, and the 10 left over to 10 random cells
    assert table["share"].sum() == 120 and sorted(table["share"]) == [10] + [11] * 10
    counts = items.groupby(["category", "level"]).size()
    for cell, row in table.iterrows():
        if cell in IMPOSSIBLE:
            assert row["filled"] == 0 and row["missing"] == row["share"]
            assert "no ground truth reaches this level" in row["note"]
        else:
            assert counts[cell] == row["share"] and row["missing"] == 0
    assert set(report.unfilled.set_index(["category", "level"]).index) == IMPOSSIBLE
    assert "cells short of their share: 2 of 11" in report.text()


def test_redistribution_reaches_n_and_says_where_the_extra_pairs_went():
    items, report = sample_pairs(60, seed=3)
    assert len(items) == 60
    table = report.table()
    moved = table[table["note"].str.startswith("+")]
    impossible = table.set_index(["category", "level"]).loc[list(IMPOSSIBLE), "share"].sum()
    assert (moved["filled"] - moved["share"]).sum() == impossible   # what the 2 empty cells miss


def test_deterministic_for_a_seed_without_duplicates(drawn):
    items, _ = drawn
    again, _ = sample_pairs(120, seed=0, redistribute=False)
    pd.testing.assert_frame_equal(items, again)
    other, _ = sample_pairs(120, seed=1, redistribute=False)
    assert not items.equals(other)
    assert not items.duplicated(["gt_verb", "gt_object", "pred_verb", "pred_object"]).any()
    assert items["item_id"].is_unique


def test_class_weights_restrict_the_ground_truths():
    classes = hico().classes
    ride_bicycle = int(classes[(classes.verb == "ride") & (classes.object == "bicycle")].hoi_id.iloc[0])
    weights = pd.Series({ride_bicycle: 1.0})
    items, _ = sample_pairs(24, seed=0, class_weights=weights, redistribute=False)
    # one ground truth class, used once
    assert len(items) == 1 and set(items["gt_hoi_id"]) == {ride_bicycle}


def test_bad_n_is_refused():
    with pytest.raises(InputError, match="n must be a whole number ≥ 1"):
        sample_pairs(0)


@pytest.mark.slow
def test_cli_sample_writes_items_and_prints_the_table(tmp_path):
    out = tmp_path / "items.csv"
    res = subprocess.run([sys.executable, "-m", "studyapp", "sample", "--n", "36", "--seed", "0",
                          "--out", str(out)], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert "no ground truth reaches this level" in res.stdout and "wrote 36 pairs" in res.stdout
    items = pd.read_csv(out)
    assert len(items) == 36
    assert list(items.columns[:3]) == ["item_id", "category", "level"]
    res = subprocess.run([sys.executable, "-m", "studyapp", "sample", "--n", "5", "--out",
                          str(out), "--class-weights", str(tmp_path / "none.csv")], cwd=ROOT,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 2 and "--class-weights" in res.stderr and "none.csv: no such file" in res.stderr


def test_pool_sampling_fills_shoes_eleven_cells(shared_data):
    from metrics.study._shoe_pool import read_shoe_csv
    from studyapp.studytypes.hoi_similarity.sampler import CELLS, sample_pool
    pool = read_shoe_csv(shared_data / "shoe" / "shoe_candidate_pairs.csv")
    items, report = sample_pool(pool, 500, seed=0)
    assert len(items) == 500 and len(CELLS) == 11
    counts = items.groupby(["category", "level"]).size()
    assert set(counts.index) == set(CELLS)                    # all 11 cells have pairs
    assert counts.min() >= 27                                 # SHOE's own study had 27 in (2, 4)
    assert not items.duplicated(["image_id", "gt_verb_label", "gt_object_label"]).any()
    # every pair is a row of the pool with the level the pool gives it
    keyed = pool.set_index(["image_id", "gt_verb_synset", "gt_object_synset", "pred_verb_synset",
                            "pred_object_synset"])["similarity_level"]
    for r in items.head(50).itertuples():
        assert r.level in set(np.atleast_1d(keyed.loc[(r.image_id, r.gt_verb, r.gt_object, r.pred_verb,
                                                        r.pred_object)]))
