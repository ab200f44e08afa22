"""imSitu sense-aware accuracy, breakdown, human accuracy and alignment (metrics.imsitu: _accuracy, _alignment, _readers, _cluster_files)."""

import json
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from metrics import InputError
from metrics.cli import main
from metrics.core._intervals import bootstrap_mean_interval
from metrics.imsitu._accuracy import sense_accuracy_tables
from metrics.imsitu._alignment import alignment_table, human_accuracy, majority_labels, parse_marks, read_judge
from metrics.imsitu._cluster_files import parse_clusters
from metrics.imsitu._readers import gold_from_image_names, read_examples_predictions, read_gold
from metrics.imsitu._verbs import base_forms, verb_synsets, wn_synonyms

GOLD = {"a.jpg": "jumping", "b.jpg": "riding", "c.jpg": "lying", "d.jpg": "eating", "e.jpg": "swimming"}
PRED = {"a.jpg": ["leaping", "jumping", "falling"],
        "b.jpg": ["competing", "riding"],
        "c.jpg": ["sleeping", "eating"],
        "d.jpg": ["eating"],
        "f.jpg": ["jumping"]}  # no gold: ignored
CLUSTERS = {"clusters": {"c1": ["jumping", "leaping"], "c2": ["falling"], "c3": ["riding", "driving"],
                         "c4": ["competing", "racing"], "c5": ["lying", "resting"]},
            "images": {"a.jpg": ["c1", "c2"], "b.jpg": ["c3", "c4"], "c.jpg": ["c5"]}}


@pytest.fixture
def run(capsys):
    """``python -m metrics ...`` in-process (WordNet stays loaded): (exit status, stdout, stderr)."""
    def call(*args):
        code = main(list(args))
        out, err = capsys.readouterr()
        return SimpleNamespace(returncode=code, stdout=out, stderr=err)
    return call


def test_gerunds_are_lemmatized_through_every_base_form():
    assert base_forms("jumping") == ("jump",)
    assert base_forms("lying") == ("lie",)
    assert set(base_forms("riding")) == {"ride", "rid"}  # NLTK's lemmatizer alone says "rid"
    assert "lie.v.01" in verb_synsets("lying") and "jump.v.01" in verb_synsets("jumping")
    assert wn_synonyms("jumping", "leaping") and wn_synonyms("lying", "lie")
    assert not wn_synonyms("sleeping", "lying") and not wn_synonyms("competing", "riding")
    assert wn_synonyms("Zorbing ", "zorbing")  # unknown to WordNet: equal strings still match


def test_accuracy_under_the_three_criteria_and_the_breakdown():
    r = sense_accuracy_tables(GOLD, PRED, parse_clusters(CLUSTERS))
    # five gold images; e has no prediction (wrong), f has no gold (ignored)
    # gold:   top-1 only d;                    top-5 a (rank 2), b (rank 2), d
    # wn_syn: top-1 a (leaping ~ jumping), d;  top-5 a, b, d   (sleeping !~ lying)
    # cluster (§4.2: in one of the image's clusters): top-1 a (c1), b (c4); top-5 a, b
    #   (d has no cluster, so its correct gold answer does not count)
    assert r["gold"] == {"top1": 0.2, "top5": 0.6}
    assert r["wn_syn"] == {"top1": 0.4, "top5": 0.6}
    assert r["cluster"] == {"top1": 0.4, "top5": 0.4} and r["include_gold"] is False
    b = r["breakdown"]  # a: leaping shares c1 with the gold jumping (synonym); b: competing in c4 (perspective)
    assert (b["n_synonym"], b["n_multi_perspective"]) == (1, 1)
    assert b["share_synonym"] == 0.5
    assert (r["n_images"], r["n_missing_predictions"], r["n_extra_predictions"]) == (5, 1, 1)
    assert r["n_images_without_clusters"] == 2 and r["n_gold_outside_clusters"] == 2  # d, e
    # --include-gold: d's gold answer counts as well (Cluster ≥ Gold), and the gain splits exactly
    g = sense_accuracy_tables(GOLD, PRED, parse_clusters(CLUSTERS), include_gold=True)
    assert g["cluster"] == {"top1": 0.6, "top5": 0.6}
    b = g["breakdown"]
    assert b["synonym"] == pytest.approx(0.2) and b["multi_perspective"] == pytest.approx(0.2)
    assert b["synonym"] + b["multi_perspective"] == pytest.approx(g["cluster"]["top1"] - g["gold"]["top1"])


def test_without_clusters_and_with_several_gold_verbs():
    r = sense_accuracy_tables({"a.jpg": ["jumping", "falling"]}, {"a.jpg": ["falling"]})
    assert r["gold"] == {"top1": 1.0, "top5": 1.0} and r["cluster"] is None and r["breakdown"] is None


def test_bad_inputs_are_one_line_errors(tmp_path):
    bad = tmp_path / "gold.json"
    bad.write_text('{"a.jpg": "jumping",\n "b.jpg": 3}')
    with pytest.raises(InputError, match=r"gold.json: image 'b.jpg': gold must be a verb"):
        read_gold(bad)
    bad.write_text('{"a.jpg": "jumping",')
    with pytest.raises(InputError, match=r"gold.json: line 1 column 21: invalid JSON"):
        read_gold(bad)
    with pytest.raises(InputError, match="image 'a.jpg': unknown cluster id 'c9'"):
        parse_clusters({"clusters": {"c1": ["x"]}, "images": {"a.jpg": ["c9"]}})
    with pytest.raises(InputError, match="no image of the predictions has a gold verb"):
        sense_accuracy_tables({"a.jpg": "x"}, {"b.jpg": ["x"]})
    with pytest.raises(InputError, match="not an imSitu name"):
        gold_from_image_names(["photo.jpg"])


def test_imsitu_command(run, tmp_path):
    for name, data in (("gold", GOLD), ("pred", PRED), ("clusters", CLUSTERS)):
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    out = tmp_path / "r.json"
    done = run("imsitu", "--gold", str(tmp_path / "gold.json"), "--pred", str(tmp_path / "pred.json"),
               "--clusters", str(tmp_path / "clusters.json"), "--json", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    assert result["gold"] == {"top1": 0.2, "top5": 0.6} and result["cluster"]["top1"] == 0.4
    assert "Cluster" in done.stdout and "multi-perspective" in done.stdout
    assert "2 images whose gold verb is in none of their clusters" in done.stdout
    done = run("imsitu", "--gold", str(tmp_path / "gold.json"), "--pred", str(tmp_path / "pred.json"),
               "--clusters", str(tmp_path / "clusters.json"), "--include-gold", "--json", str(out))
    assert json.loads(out.read_text())["cluster"]["top1"] == 0.6
    (tmp_path / "clusters.json").write_text('{"clusters": {"c1": ["x"]}, "images": {"a.jpg": ["c2"]}}')
    done = run("imsitu", "--gold", str(tmp_path / "gold.json"), "--pred", str(tmp_path / "pred.json"),
               "--clusters", str(tmp_path / "clusters.json"))
    assert done.returncode == 2 and done.stderr.count("\n") == 1 and "unknown cluster id 'c2'" in done.stderr


def test_real_imsitu_examples(run, shared_data, tmp_path):
    folder = shared_data / "imsitu_examples" / "predictions"
    pred = read_examples_predictions(folder)
    assert len(pred) == 11 and all(len(v) == 10 for v in pred.values())
    assert pred["jumping_103.jpg"][:2] == ["leaping", "jumping"]  # ranked by score
    out = tmp_path / "r.json"
    done = run("imsitu", "--pred", str(folder), "--json", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    # gold "jumping" from the names: first 6 of 11 (10, 101, 102, 104, 105, 108); top-5 adds 103, 107;
    # WN-Syn top-1 adds 103 (leaping); top-5 adds 106 (leaping at rank 2)
    assert result["gold"] == {"top1": pytest.approx(6 / 11), "top5": pytest.approx(8 / 11)}
    assert result["wn_syn"] == {"top1": pytest.approx(7 / 11), "top5": pytest.approx(9 / 11)}


# ------------------------------------------------------------------------------ humans / alignment
def test_majority_marks_and_human_accuracy():
    rows = []
    marks = {  # model, image -> marks of three annotators over 3 shown predictions
        ("m1", "a"): ["100", "110", "000"],   # rank 1: 2 of 3 -> correct
        ("m1", "b"): ["010", "010", "001"],   # rank 2 correct by majority -> top5 only
        ("m2", "a"): ["000", "000", "100"],   # nothing by majority
        ("m2", "b"): ["111", "100", "100"]}   # rank 1 correct
    for (model, image), per in marks.items():
        for a, text in enumerate(per):
            for rank, c in enumerate(parse_marks(text, 3, "t"), 1):
                rows.append((model, image, rank, f"r{a}", int(c)))
    table = majority_labels(pd.DataFrame(rows, columns=["model", "image", "rank", "annotator", "correct"]))
    assert table[["top1", "top5"]].to_numpy().tolist() == [[True, True], [False, True], [False, False], [True, True]]
    acc = human_accuracy(table, n_resamples=200, seed=1)
    assert (acc["m1"]["top1"], acc["m1"]["top5"], acc["m2"]["top1"], acc["m2"]["top5"]) == (0.5, 1.0, 0.5, 0.5)
    assert acc["m1"]["top5_ci"] == [1.0, 1.0]
    lo, hi = acc["m2"]["top1_ci"]
    assert 0.0 <= lo <= 0.5 <= hi <= 1.0
    with pytest.raises(InputError, match="must be 3 characters"):
        parse_marks("10", 3, "ratings: item 'x'")


def test_bootstrap_interval_matches_a_direct_resampling():
    values = np.array([1, 0, 1, 1, 0, 1, 0, 1], dtype=float)
    rng = np.random.default_rng(5)
    means = values[rng.integers(0, 8, size=(500, 8))].mean(axis=1)
    assert bootstrap_mean_interval(values, n_resamples=500, seed=5) == tuple(np.quantile(means, [0.025, 0.975]))


def test_alignment_tau_and_alpha_by_hand(tmp_path):
    human = pd.DataFrame({"model": ["A"] * 2 + ["B"] * 2 + ["C"] * 2, "image": ["x", "y"] * 3,
                          "top1": [1, 1, 1, 0, 0, 0], "top5": [1, 1, 1, 1, 1, 0]}).astype({"top1": bool, "top5": bool})
    crit = human.copy()
    crit["top1"] = [True, False, True, True, False, False]   # accuracies A .5, B 1, C 0 (human 1, .5, 0)
    crit["top5"] = crit["top5"]                                # identical to humans
    result = alignment_table(human, {"c": crit})
    t1, t5 = result["criteria"]["c"]["top1"], result["criteria"]["c"]["top5"]
    assert t1["accuracy"] == {"A": 0.5, "B": 1.0, "C": 0.0}
    assert t1["difference"] == {"A": -0.5, "B": 0.5, "C": 0.0}
    # pairs (A,B) discordant, (A,C) and (B,C) concordant: tau = (2 - 1) / 3
    assert t1["kendall_tau"] == pytest.approx(1 / 3)
    # labels crit 1,0,1,1,0,0 vs human 1,1,1,0,0,0: o11 = 4, o00 = 4, o10 = o01 = 2, n = 12, n1 = n0 = 6
    # alpha = 1 - (n - 1) (o10 + o01) / (2 n0 n1) = 1 - 11 * 4 / 72
    assert t1["krippendorff_alpha"] == pytest.approx(1 - 44 / 72)
    assert t5["kendall_tau"] == pytest.approx(1.0) and t5["krippendorff_alpha"] == pytest.approx(1.0)
    judge = tmp_path / "judge.csv"
    judge.write_text("model,image,rank,correct\nA,x,1,yes\nA,x,2,no\nA,y,3,1\n")
    table = read_judge(judge, "llm")
    assert table.to_dict("records") == [{"model": "A", "image": "x", "top1": True, "top5": True},
                                        {"model": "A", "image": "y", "top1": False, "top5": True}]
    judge.write_text("model,image,top1,top5\nA,x,maybe,1\n")
    with pytest.raises(InputError, match="judge.csv: line 2: top1 'maybe'"):
        read_judge(judge, "llm")


def test_imsitu_align_command_on_study_exports(run, tmp_path):
    items = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"], "image": ["a.jpg", "b.jpg", "a.jpg", "b.jpg"],
                          "model": ["m1", "m1", "m2", "m2"],
                          "predictions": ["leaping;sleeping", "competing;riding", "jumping;eating", "eating;riding"],
                          "gold": ["jumping", "riding", "jumping", "riding"], "role": "main"})
    items.to_csv(tmp_path / "items.csv", index=False)
    ratings = pd.DataFrame({"item_id": ["q1", "q2", "q3", "q4"] * 2, "annotator": ["h1"] * 4 + ["h2"] * 4,
                            "rating": ["10", "10", "10", "01"] * 2, "phase": "main"})
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    (tmp_path / "clusters.json").write_text(json.dumps(CLUSTERS))
    out = tmp_path / "align.json"
    done = run("imsitu-align", "--ratings", str(tmp_path / "ratings.csv"), "--items", str(tmp_path / "items.csv"),
               "--clusters", str(tmp_path / "clusters.json"), "--json", str(out), "--resamples", "100")
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    # humans: m1 top-1 a yes, b yes -> 1.0; m2 top-1 a yes, b no (rank 2) -> 0.5, top-5 1.0 each
    assert result["human"] == {"m1": {"top1": 1.0, "top5": 1.0}, "m2": {"top1": 0.5, "top5": 1.0}}
    gold = result["criteria"]["gold"]["top1"]["accuracy"]     # m1: leaping, competing -> 0; m2: jumping -> .5
    wn = result["criteria"]["wn_syn"]["top1"]["accuracy"]     # m1: leaping ~ jumping -> .5
    cluster = result["criteria"]["cluster"]["top1"]["accuracy"]  # m1: c1, c4 -> 1.0; m2: jumping; eating not in b's
    assert gold == {"m1": 0.0, "m2": 0.5} and wn == {"m1": 0.5, "m2": 0.5} and cluster == {"m1": 1.0, "m2": 0.5}
    assert result["criteria"]["cluster"]["top1"]["krippendorff_alpha"] == pytest.approx(1.0)
    assert set(result["human_accuracy"]) == {"m1", "m2"}
    done = run("imsitu-align", "--ratings", str(tmp_path / "ratings.csv"), "--items", str(tmp_path / "nope.csv"))
    assert done.returncode == 2 and "nope.csv: no such file" in done.stderr
