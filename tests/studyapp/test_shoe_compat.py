"""SHOE compatibility: SHOE's synsets in the vocabulary, its candidate pool as partial
matrices, and matrix comparison. Tests on SHOE's own files skip when ../shared/data is absent."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

import numpy as np
import pytest
from projectpaths import ROOT

from metrics import InputError
from metrics.datasets.hico_det._vocabulary import hico
from metrics.study._shoe_pool import compare_matrices, pool_levels, pool_matrices, read_shoe_csv
from metrics.vocab._similarity import SimilarityMatrix

HEADER = ["image_id", "gt_verb", "gt_object", "gt_verb_synset", "gt_object_synset", "pred_verb_synset",
          "pred_object_synset", "category", "similarity_level"]


def metrics_cli(*args):
    return subprocess.run([sys.executable, "-m", "metrics", *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=300)


def _write(path, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        w.writerows(rows)
    return path


def test_every_label_shoe_covers_has_shoes_synset(shared_data):
    v, o = hico(), hico()
    with open(shared_data / "shoe" / "shoe_verb_synsets.csv", newline="") as f:
        verbs = {r["original_verb"]: r["synset"] for r in csv.DictReader(f)}
    with open(shared_data / "shoe" / "shoe_object_synsets.csv", newline="") as f:
        objects = {r["Object"]: r["Synset"] for r in csv.DictReader(f)}
    covered = [lab for lab in v.verb_labels if lab in verbs]
    assert len(covered) == 115 and set(v.verb_labels) - set(covered) == {"no_interaction", "stop_at"}
    assert all(v.verb_synset(lab) == verbs[lab] for lab in covered)
    assert all(o.object_synset(lab) == objects[lab] for lab in o.object_labels)


def test_vocab_command_marks_non_first_senses(tmp_path):
    out = metrics_cli("vocab", "--json", str(tmp_path / "v.json"))
    assert out.returncode == 0, out.stderr
    d = json.loads((tmp_path / "v.json").read_text())
    assert len(d["verbs"]) == 117 and len(d["objects"]) == 80
    assert d["verbs"]["ride"] == "ride.v.01" and d["verbs"]["hug"] == "embrace.v.02"
    assert d["verbs"]["no_interaction"] is None and d["objects"]["tv"] == "television.n.01"
    lines = {line.split()[1] if line.startswith("*") else line.split()[0]: line for line in out.stdout.splitlines()[2:]
             if line.strip() and not line.startswith("--")}
    # block -> obstruct.v.02 is not WordNet's first sense of 'block'; ride.v.01 is
    assert lines["block"].startswith("*") and not lines["ride"].startswith("*")
    assert "sit and travel on the back of animal" in lines["ride"]


def test_pool_levels_by_hand(tmp_path):
    pool = _write(tmp_path / "pool.csv", [
        [1, "ride", "horse", "ride.v.01", "horse.n.01", "ride.v.01", "pony.n.01", 1, 3],     # object pair
        [2, "ride", "horse", "ride.v.01", "horse.n.01", "ride.v.01", "pony.n.01", 1, 3],     # repeat, same
        [3, "feed", "cow", "feed.v.01", "cow.n.01", "ride.v.01", "cow.n.01", 2, 0],         # verb pair, 0
        [4, "hold", "cup", "hold.v.02", "cup.n.01", "carry.v.01", "mug.n.04", 3, 2],        # HOI level only
    ])
    levels = pool_levels(read_shoe_csv(pool))
    assert levels["object"].to_dict("records") == [{"a": "horse.n.01", "b": "pony.n.01", "score": 3.0}]
    assert levels["verb"].to_dict("records") == [{"a": "feed.v.01", "b": "ride.v.01", "score": 0.0}]
    m = pool_matrices(read_shoe_csv(pool), "test")
    assert m["object"].sim("pony.n.01", "horse.n.01") == 0.75
    assert m["verb"].meta["rated_pairs"] == [["feed.v.01", "ride.v.01"]]   # kept although it scores 0


def test_inconsistent_pool_and_bad_rows_name_the_line(tmp_path):
    pool = _write(tmp_path / "pool.csv", [
        [1, "ride", "horse", "ride.v.01", "horse.n.01", "ride.v.01", "pony.n.01", 1, 3],
        [2, "ride", "horse", "ride.v.01", "pony.n.01", "ride.v.01", "horse.n.01", 1, 2]])
    with pytest.raises(InputError, match=r"object pair \(horse.n.01, pony.n.01\) has levels 3 \(line 2\) and 2 \(line 3\)"):
        pool_levels(read_shoe_csv(pool), "pool.csv")
    bad = _write(tmp_path / "bad.csv", [[1, "ride", "horse", "ride.v.01", "horse.n.01", "ride.v.01", "pony.n.01", 1, 7]])
    with pytest.raises(InputError, match=r"bad.csv: line 2: similarity_level '7'"):
        read_shoe_csv(bad)


def test_compare_on_shared_pairs_by_hand():
    full = SimilarityMatrix.from_long(["a", "a", "b"], ["b", "c", "c"], [4, 2, 1])
    partial = SimilarityMatrix.from_long(["a", "a"], ["b", "c"], [3, 2],
                                         meta={"partial": True, "rated_pairs": [["a", "b"], ["a", "c"], ["a", "d"]]})
    r = compare_matrices(full, partial)
    # shared: (a,b) 4 vs 3, (a,c) 2 vs 2; (a,d): d unknown to the full matrix; (b,c) not rated
    assert r["n_pairs"] == 2 and r["agreement"] == pytest.approx((0.75 + 1) / 2)
    assert r["confusion"][4][3] == 1 and r["confusion"][2][2] == 1 and r["same_level"] == 0.5


@pytest.mark.slow
def test_import_shoe_pool_and_compare_with_the_baseline(shared_data, tmp_path):
    pool = shared_data / "shoe" / "shoe_candidate_pairs.csv"
    out = metrics_cli("matrix", "import-shoe-pool", str(pool), "--out", str(tmp_path))
    assert out.returncode == 0, out.stderr
    verb, obj = SimilarityMatrix.load(tmp_path / "shoe_verb.npz"), SimilarityMatrix.load(tmp_path / "shoe_object.npz")
    # 1,657 verb pairs and 1,389 ordered object pairs (1,381 unordered: 8 appear both ways, same level)
    assert len(verb.meta["rated_pairs"]) == 1657 and len(obj.meta["rated_pairs"]) == 1381
    assert verb.meta["method"] == "SHOE similarity levels for these pairs only"
    out = metrics_cli("matrix", "compare", str(ROOT / "metrics" / "datasets" / "hico_det" / "data" / "baseline_verb.npz"),
                      str(tmp_path / "shoe_verb.npz"), "--json", str(tmp_path / "c.json"))
    assert out.returncode == 0, out.stderr
    r = json.loads((tmp_path / "c.json").read_text())
    # worked out independently: SHOE's verb pairs (category-2 rows) whose two synsets the
    # baseline knows, each scored 1 - |baseline - SHOE| / 4 with plain Python
    baseline = SimilarityMatrix.load(ROOT / "metrics" / "datasets" / "hico_det" / "data" / "baseline_verb.npz")
    known = set(baseline.labels)
    with open(pool, newline="") as f:
        levels = {tuple(sorted((row["gt_verb_synset"], row["pred_verb_synset"]))): int(row["similarity_level"])
                  for row in csv.DictReader(f) if row["category"] == "2"
                  and row["gt_verb_synset"] != row["pred_verb_synset"]}
    shared = {p: lev for p, lev in levels.items() if p[0] in known and p[1] in known}
    agreement = sum(1 - abs(4 * baseline.sim(a, b) - lev) / 4 for (a, b), lev in shared.items()) / len(shared)
    assert r["n_pairs"] == len(shared) and r["agreement"] == pytest.approx(agreement, abs=1e-6)
    assert np.sum(r["confusion"]) == r["n_pairs"]


def test_shoes_500_pair_study_is_created_from_its_file(shared_data, tmp_path, monkeypatch):
    """`studyapp create studies/shoe_study.toml` makes hoi_similarity items from SHOE's 500 pairs:
    499, since pair 135 shows bitch.n.04 (a female dog, but the word is a slur), which the
    offensive-sense exclusion leaves out, saying so."""
    from studyapp.platform.launch.spec_files import load_spec
    monkeypatch.setenv("STUDYAPP_DB", str(tmp_path / "db.sqlite"))
    spec = load_spec(ROOT / "studies" / "shoe_study.toml")
    assert len(spec.items) == 499 and spec.raters_per_item == 5
    assert spec.source_report.endswith("shoe0135 (bitch.n.04)") and "shoe0135" not in {i.key for i in spec.items}
    first = spec.items[0]
    # line 2 of SHOE's file: 33428, lick, wine_glass, lick.v.02, wineglass.n.01, lick.v.02, schooner.n.01, 1, 1
    assert first.key == "shoe0001"
    f = first.fields
    assert (f["gt_verb"], f["gt_object"], f["pred_verb"], f["pred_object"]) == (
        "lick.v.02", "wineglass.n.01", "lick.v.02", "schooner.n.01")
    assert f["category"] == 1 and f["level"] == 1 and f["image_id"] == "33428"
    assert f["display"]["gt_verb"] == "lick" and f["display"]["gt_object"] == "wine glass"
    assert f["display"]["pred_object"] == "schooner"          # the synset's first lemma, as SHOE's app
    assert f["display"]["pred_object_gloss"].startswith("a large beer glass")
    cells = {}
    for item in spec.items:
        cells[(item.fields["category"], item.fields["level"])] = cells.get((item.fields["category"], item.fields["level"]), 0) + 1
    assert len(cells) == 11 and (3, 4) not in cells and cells[(2, 4)] == 27 and sum(cells.values()) == 499
    out = subprocess.run([sys.executable, "-m", "studyapp", "create", str(ROOT / "studies" / "shoe_study.toml")],
                         cwd=ROOT, capture_output=True, text=True, timeout=300,
                         env={**__import__("os").environ, "STUDYAPP_DB": str(tmp_path / "db.sqlite")})
    assert out.returncode == 0, out.stderr
    assert "499 items" in out.stdout and "warning: 1 item left out" in out.stdout and "shoe0135 (bitch.n.04)" in out.stdout


def test_compare_with_a_constant_side_says_spearman_is_undefined_without_a_warning():
    """Every shared pair scored 2 in A: Spearman's ρ is undefined (None, "n/a"), and SciPy's
    ConstantInputWarning does not reach the log."""
    import warnings

    from metrics.study._shoe_pool import compare_lines
    a = SimilarityMatrix.from_long(["x", "x"], ["y", "z"], [2.0, 2.0])
    b = SimilarityMatrix.from_long(["x", "x"], ["y", "z"], [1.0, 3.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        result, text = compare_lines(a, b)
    assert result["spearman"] is None and "Spearman n/a" in text
    assert result["agreement"] == 0.75                     # Eq. 13: 1 - |2-1|/4 and 1 - |2-3|/4
