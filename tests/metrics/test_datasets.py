"""Datasets as plugins: the registry, a third-party dataset through its entry point, V-COCO's
vocabulary, and SHOE scores and Diag-HOI on V-COCO labels (values worked out by hand)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest
from projectpaths import ROOT, SHARED_DATA

from metrics import datasets
from metrics.core._validation import ParameterError
from metrics.datasets.vcoco._vocabulary import LEFT_OUT_OF_24, vcoco
from metrics.vocab import _wordnet as wordnet

VCOCO_VAL = SHARED_DATA / "vcoco" / "vcoco_val.json"


def run_metrics(*args, env=None):
    return subprocess.run([sys.executable, "-m", "metrics", *map(str, args)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)


def test_builtin_datasets_are_registered_and_hico_det_is_the_default():
    assert datasets.names()[:3] == ["hico-det", "swig-hoi", "vcoco"]
    assert datasets.get().name == datasets.get("hico-det").name == "hico-det"
    assert len(datasets.load_vocabulary().classes) == 600
    assert datasets.get("vcoco").baseline_path("n") == datasets.get("hico-det").baseline_path("n")


def test_an_unknown_dataset_is_one_line_naming_the_option():
    with pytest.raises(ParameterError) as err:
        datasets.get("coco")
    assert str(err.value) == "dataset must be one of hico-det, swig-hoi, vcoco, got 'coco'"
    r = run_metrics("vocab", "--dataset", "coco")
    assert r.returncode == 2 and "--dataset" in r.stderr and len(r.stderr.strip().splitlines()) <= 3


def test_a_third_party_dataset_is_found_through_its_entry_point(tmp_path):
    """A package installed elsewhere (a dist-info with an entry point on the path) adds a dataset
    that --dataset then accepts; its vocabulary is its own (two verbs, HICO-DET's objects)."""
    pkg = tmp_path / "toyhoi"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent('''
        import pandas as pd
        from metrics.datasets import Dataset, get
        from metrics.core._vocabulary import Vocabulary

        def vocabulary():
            verbs = pd.DataFrame({"label": ["pet", "feed"], "synset": ["pet.v.01", "feed.v.02"], "note": ["", ""]})
            hico = get("hico-det").vocabulary()
            return Vocabulary("toy", verbs, hico.objects, hico.classes.iloc[:0])

        DATASET = Dataset(name="toy", title="Toy", vocabulary=vocabulary,
                          baseline_verb=get("hico-det").baseline_path("v"),
                          baseline_object=get("hico-det").baseline_path("n"))
    '''))
    dist = tmp_path / "toyhoi-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyhoi\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[hoi_semantic_eval.datasets]\ntoy = toyhoi:DATASET\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    r = run_metrics("vocab", "--dataset", "toy", "--pos", "verb", "--json", tmp_path / "v.json", env=env)
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "v.json").read_text())["verbs"] == {"pet": "pet.v.01", "feed": "feed.v.02"}
    assert run_metrics("vocab", "--dataset", "toy").returncode == 2     # not installed here


def test_vcoco_vocabulary_has_25_action_roles_4_agent_only_actions_and_cocos_objects():
    v = vcoco()
    roles = v.verbs[v.verbs["role"] != ""]
    assert len(v.verbs) == 29 and len(roles) == 25
    assert sorted(v.verbs.loc[v.verbs["role"] == "", "label"]) == ["run", "smile", "stand", "walk"]
    assert LEFT_OUT_OF_24 == ("point-instr",) and "point-instr" in set(roles["label"])
    assert len(v.objects) == 80 and v.object_synset("dining table") == "dining_table.n.01"
    assert v.verb_synset("cut-instr") == v.verb_synset("cut-obj") == "cut.v.01"
    for synset in v.verbs["synset"]:
        assert wordnet.gloss(synset), synset
    assert len(v.classes) == 0


@pytest.mark.skipif(not VCOCO_VAL.exists(), reason="../shared/data/vcoco is absent")
def test_every_action_role_of_the_official_file_is_a_vocabulary_label():
    actions = json.loads(VCOCO_VAL.read_text())
    labels = set(vcoco().verbs["label"])
    expected = {f"{a['action_name']}-{r}" if len(a["role_name"]) > 1 else a["action_name"]
                for a in actions for r in (a["role_name"][1:] or ["agent"])}
    assert len(actions) == 26 and expected == labels


@pytest.mark.parametrize("name", datasets.names())
def test_every_vocabulary_stores_canonical_synset_names(name):
    """A synset is stored under WordNet's own name for it (``surf.v.01`` is an alias of
    ``surfboard.v.01``: stored as the alias, a study would compare a verb with itself)."""
    reader = wordnet.wordnet()
    v = datasets.load_vocabulary(name)
    stored = [s for s in [*v.verbs["synset"], *v.objects["synset"]] if s]
    assert stored and [s for s in stored if reader.synset(s).name() != s] == []


def test_the_reviewed_senses():
    """V-COCO's hit-instr is the instrument sense, its ride and SWIG-HOI's riding the vehicle
    sense (their objects are bicycles and boats as much as horses), SWIG-HOI's reading is
    reading, not 'say out loud'; each change carries a note."""
    v, s = vcoco(), datasets.load_vocabulary("swig-hoi")
    assert (v.verb_synset("hit-instr"), v.verb_synset("hit-obj")) == ("hit.v.03", "hit.v.01")
    assert v.verb_synset("ride-instr") == s.verb_synset("riding") == "ride.v.02"
    assert s.verb_synset("reading") == v.verb_synset("read-obj") == "read.v.01"
    assert (v.verb_synset("surf-instr"), v.verb_synset("point-instr")) == ("surfboard.v.01", "indicate.v.02")
    for table, labels in ((v.verbs, ("hit-instr", "ride-instr", "surf-instr", "point-instr")),
                          (s.verbs, ("reading", "riding"))):
        notes = dict(zip(table["label"], table["note"]))
        assert all(notes[label] for label in labels)


def test_vcoco_baseline_verb_matrix_scores_wordnet_distances():
    from metrics.vocab._baseline import load_default
    m = load_default("v", dataset="vcoco")
    assert m.meta["dataset"] == "vcoco" and m.meta["n_dataset_synsets"] == 29 - 2   # eat, cut: two roles, one synset
    # hit.v.01 and kick.v.01 are both hyponyms of propel.v.01: siblings, d = 2, 4·(1 − 2/5) = 2.4
    assert m.sim("hit.v.01", "kick.v.01") == pytest.approx(2.4 / 4)    # sim() is on [0, 1]


def _write(path, rows):
    path.write_text("".join(json.dumps({"image": image, "hois": hois}) + "\n" for image, hois in rows))
    return path


def hoi(verb, obj, box=(10, 10, 20, 20), score=None):
    out = {"human_box": [0, 0, 10, 10], "object_box": list(box), "verb": verb, "object": obj}
    return out if score is None else {**out, "score": score}


@pytest.fixture
def vcoco_files(tmp_path):
    gt = _write(tmp_path / "gt.jsonl", [
        ("1", [hoi("hit-instr", "tennis racket"), hoi("hit-obj", "sports ball", (30, 30, 40, 40))]),
        ("2", [hoi("eat-obj", "pizza")])])
    pred = _write(tmp_path / "pred.jsonl", [
        ("1", [hoi("hit-instr", "tennis racket", score=0.9), hoi("kick-obj", "sports ball", (30, 30, 40, 40), 0.8)]),
        ("2", [hoi("eat-instr", "pizza", score=0.7)])])
    return gt, pred


def test_shoe_scores_on_vcoco_labels(vcoco_files, tmp_path):
    """Per class, one prediction on the ground truth's boxes with similarity σ: SHOE AP = σ·σ
    (precision σ, recall σ), SHOE F1 = 2σ / (σ + 1) (Algorithm 2: no FN for a matched GT).
    hit-instr exact: σ = 1. hit-obj ← kick-obj on the same ball: σ = (2.4/4 + 4/4) / 2 = 0.8,
    AP 0.64, F1 0.888…. eat-obj ← eat-instr: both eat.v.01, but the role differs, so the verb
    similarity is 0 (roles are part of the label): σ = (0 + 1) / 2 = 0.5, AP 0.25 (the standard AP
    is 0)."""
    gt, pred = vcoco_files
    r = run_metrics("score", "--dataset", "vcoco", "--gt", gt, "--pred", pred, "--json", tmp_path / "s.json")
    assert r.returncode == 0, r.stderr
    assert "outside HICO-DET" not in r.stdout and "rare" not in r.stdout.split("standard mAP")[0]
    out = json.loads((tmp_path / "s.json").read_text())
    per = {(c["verb"], c["object"]): c for c in out["per_class"]}
    assert per[("hit-obj", "sports_ball")]["shoe_ap"] == pytest.approx(0.64, abs=1e-6)
    assert per[("hit-obj", "sports_ball")]["shoe_f1"] == pytest.approx(2 * 0.8 / 1.8, abs=1e-6)
    assert per[("eat-obj", "pizza")]["shoe_ap"] == pytest.approx(0.25, abs=1e-6)
    assert per[("eat-obj", "pizza")]["ap"] == 0.0
    assert out["shoe_map"] == pytest.approx((1 + 0.64 + 0.25) / 3, abs=1e-6)
    assert list(out["splits"]) == ["full"] and out["params"]["dataset"] == "vcoco"
    assert out["counts"]["classes"] == 3


def test_forgetting_the_dataset_is_refused_naming_the_option_and_the_labels_dataset(vcoco_files, tmp_path):
    """V-COCO labels scored under the default HICO-DET: one line naming --dataset and V-COCO,
    nothing written; --any-labels scores them anyway (the labels are then unknown)."""
    gt, pred = vcoco_files
    for command in ("score", "diagnose"):
        r = run_metrics(command, "--gt", gt, "--pred", pred, "--json", tmp_path / "s.json")
        assert r.returncode == 2 and r.stderr.count("\n") == 1, r.stderr
        assert "argument --dataset: hico-det: 100% of the ground-truth HOIs" in r.stderr
        assert "V-COCO's labels (--dataset vcoco)" in r.stderr and "--any-labels" in r.stderr
        assert not (tmp_path / "s.json").exists()
    r = run_metrics("score", "--gt", gt, "--pred", pred, "--any-labels", "--json", tmp_path / "s.json")
    out = json.loads((tmp_path / "s.json").read_text())
    assert r.returncode == 0 and "dataset" not in out["params"]
    assert out["resolution"]["verb"]["pred"]["by_kind"]["unknown"]["labels"] == 3


def test_labels_of_no_dataset_are_refused_as_such(tmp_path):
    gt = _write(tmp_path / "gt.jsonl", [("1", [hoi("zorble", "quux")] * 2), ("2", [hoi("ride", "horse")])])
    r = run_metrics("score", "--gt", gt, "--pred", gt, "--dataset", "swig-hoi")
    assert r.returncode == 2 and "they are no registered dataset's labels" in r.stderr
    assert datasets.label_share(["ride", "zorble", "ride.v.01"], ["horse", "horse", "horse"],
                                datasets.load_vocabulary()) == pytest.approx(2 / 3)


def test_a_pickle_given_to_score_names_the_commands_that_convert_it(tmp_path, vcoco_files):
    import pickle
    gt, _ = vcoco_files
    with open(tmp_path / "detections.pkl", "wb") as f:
        pickle.dump([{"image_id": 1}], f, protocol=2)
    r = run_metrics("score", "--dataset", "vcoco", "--gt", gt, "--pred", tmp_path / "detections.pkl")
    assert r.returncode == 2 and r.stderr.count("\n") == 1
    assert "detections.pkl: a Python pickle, not HOI detections" in r.stderr
    assert "metrics vcoco --pred FILE --hois-out DIR" in r.stderr and "metrics swig --pred FILE --hois-out DIR" in r.stderr


@pytest.mark.parametrize("combine, swapped", [("arithmetic", 0.5), ("geometric", 0.0), ("min", 0.0)])
def test_a_role_swap_scores_below_the_correct_role(tmp_path, combine, swapped):
    """hit-instr tennis racket predicted as hit-obj tennis racket (same action, same synset
    hit.v.01, other role) on the right boxes: verb similarity 0, so σ = f(0, 1); one prediction
    per ground truth gives SHOE AP σ² (precision σ, recall σ). The correct role scores 1."""
    gt = _write(tmp_path / "gt.jsonl", [("1", [hoi("hit-instr", "tennis racket")])])
    scores = {}
    for verb in ("hit-instr", "hit-obj"):
        pred = _write(tmp_path / f"{verb}.jsonl", [("1", [hoi(verb, "tennis racket", score=0.9)])])
        out, _ = _score(tmp_path, gt, pred, "--dataset", "vcoco", "--combine", combine)
        scores[verb] = out["shoe_map"]
    assert scores["hit-instr"] == pytest.approx(1.0, abs=1e-6)
    assert scores["hit-obj"] == pytest.approx(swapped ** 2, abs=1e-6) and scores["hit-obj"] < scores["hit-instr"]
    from metrics.detection._hoi_labels import resolve_labels
    from metrics.vocab._baseline import load_default
    r = resolve_labels(["hit-instr", "eat-obj"], ["hit-obj", "hit-instr", "hit.v.03", "eat-instr"], "v",
                       load_default("v", dataset="vcoco"), datasets.load_vocabulary("vcoco"))
    # rows: predictions; columns: hit-instr, eat-obj. A synset name carries no role: left as the matrix says.
    assert r.table[0, 0] == 0.0 and r.table[1, 0] == 1.0 and r.table[2, 0] == 1.0 and r.table[3, 1] == 0.0


def test_diagnose_on_vcoco_has_no_no_interaction_class(vcoco_files, tmp_path):
    """Two of three predictions carry the wrong action on correct boxes: interaction errors;
    the standard mAP is 1/3 (only hit-instr found) and fixing them gives the other 2/3."""
    gt, pred = vcoco_files
    r = run_metrics("diagnose", "--dataset", "vcoco", "--gt", gt, "--pred", pred, "--map-protocol", "all-point",
                    "--json", tmp_path / "d.json")
    assert r.returncode == 0, r.stderr
    assert "no_interaction" not in r.stdout
    assert "rare" not in r.stdout, r.stdout   # V-COCO has no rare / non-rare split
    assert "mAP and ΔmAP\n" in r.stdout and "\npair recall  " in r.stdout
    out = json.loads((tmp_path / "d.json").read_text())
    assert out["map"] == pytest.approx(1 / 3) and out["error_counts"]["interaction"] == 2
    assert out["delta_map"]["interaction"] == pytest.approx(2 / 3)
    assert out["params"]["dataset"] == "vcoco"
    ic = out["interaction_classification"]
    assert ic["n_pairs"] == 3 and ic["n_negative_pairs"] == 0 and ic["per_verb"]["hit-instr"] == 1.0


def test_swig_hoi_subsets_keep_novel_and_unevaluated_classes_apart():
    """SWIG-HOI's flags: rare = evaluated of frequency 1, non-rare = evaluated common ones (not
    novel), novel = evaluated novel ones; an unevaluated class or one outside the vocabulary's
    class list is in Full only. HICO-DET's table has no novel column and keeps its three."""
    import pandas as pd

    from metrics.detection._scoring import _subset_masks
    classes = pd.DataFrame({"hoi_id": [0, 1, 2, 3, None], "rare": [1, 0, 0, 0, None],
                            "novel": [0, 0, 1, 0, None], "evaluated": [1, 1, 1, 0, None]})
    masks = {k: v.tolist() for k, v in _subset_masks(classes, None).items()}
    assert masks == {"full": [True] * 5, "rare": [True, False, False, False, False],
                     "non_rare": [False, True, False, False, False], "novel": [False, False, True, False, False]}
    hico = pd.DataFrame({"hoi_id": [0, 1], "rare": [1, 0]})
    assert set(_subset_masks(hico, None)) == {"full", "rare", "non_rare"}


# ----------------------------------------------------------------- each dataset owns its mAP
def _perfect_copy(tmp_path, classes, per_image=6):
    """A ground truth with one HOI of every (verb, object) class given, ``per_image`` to an
    image on disjoint boxes, and the same HOIs as predictions with scores."""
    rows = []
    for start in range(0, len(classes), per_image):
        hois = [hoi(v, o, (20 * k + 30, 0, 20 * k + 45, 15)) | {"human_box": [20 * k + 30, 20, 20 * k + 45, 40]}
                for k, (v, o) in enumerate(classes[start:start + per_image])]
        rows.append((f"im{start}", hois))
    gt = _write(tmp_path / "gt.jsonl", rows)
    pred = _write(tmp_path / "pred.jsonl", [(image, [h | {"score": 0.9} for h in hois]) for image, hois in rows])
    return gt, pred


def _score(tmp_path, gt, pred, *options):
    r = run_metrics("score", "--gt", gt, "--pred", pred, "--json", tmp_path / "s.json", *options)
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / "s.json").read_text()), r.stdout


def test_a_perfect_copy_of_hico_det_scores_one_over_its_600_classes(tmp_path):
    v = datasets.load_vocabulary("hico-det")
    out, stdout = _score(tmp_path, *_perfect_copy(tmp_path, list(zip(v.classes["verb"], v.classes["object"]))))
    assert out["map"] == pytest.approx(1.0, abs=1e-9) and out["shoe_map"] == pytest.approx(1.0, abs=1e-6)
    assert out["hico"]["default"] == pytest.approx({"full": 1.0, "rare": 1.0, "non_rare": 1.0})
    assert out["protocol"]["class_set"] == "600 HICO-DET classes (classes without ground truth: AP 0)"
    assert "dataset" not in out["params"]


def test_a_perfect_copy_of_swig_hoi_scores_one_over_its_evaluated_interactions(tmp_path):
    """Standard mAP over the 5,539 evaluated interactions (not the 14,130 of the list, which gave
    a perfect copy 41.32), with SWIG-HOI's own AP code (calc_ap), Full = not novel, and Novel;
    the card names SWIG-HOI's evaluation, not HICO-DET's."""
    v = datasets.load_vocabulary("swig-hoi")
    evaluated = v.classes[v.classes["evaluated"] == 1]
    out, stdout = _score(tmp_path, *_perfect_copy(tmp_path, list(zip(evaluated["verb"], evaluated["object"]))),
                         "--dataset", "swig-hoi")
    assert out["map"] == pytest.approx(1.0, abs=1e-9) and out["shoe_map"] == pytest.approx(1.0, abs=1e-6)
    assert out["hico"]["default"] == pytest.approx({"full": 1.0, "rare": 1.0, "non_rare": 1.0, "novel": 1.0})
    assert out["hico"]["known_object"] is None
    assert out["splits"]["full"]["n_classes_map"] == int((evaluated["novel"] == 0).sum())
    assert out["splits"]["novel"]["n_classes_map"] == int((evaluated["novel"] == 1).sum()) > 0
    card = out["protocol"]
    assert card["class_set"].startswith("5,539 evaluated SWIG-HOI interactions") and "calc_ap" in card["source"]
    assert "HICO" not in json.dumps(card) and "HICO" not in stdout.split("protocol:")[1]
    table = stdout.split("protocol:")[0]
    assert "Novel" in table and "Known-Object" not in table


def test_swig_hoi_standard_map_equals_its_official_evaluation(tmp_path):
    """Half of the predictions moved off their ground truth: the score's Full / Rare / Non-rare
    / Novel are calc_ap's (swig_ap on the same rows)."""
    import numpy as np

    from metrics.datasets.swig_hoi import swig_ap
    v = datasets.load_vocabulary("swig-hoi")
    evaluated = v.classes[v.classes["evaluated"] == 1].iloc[::7]
    gt, _ = _perfect_copy(tmp_path, list(zip(evaluated["verb"], evaluated["object"])))
    lines = [json.loads(line) for line in gt.read_text().splitlines()]
    rng = np.random.default_rng(3)
    for line in lines:
        for h in line["hois"]:
            h["score"] = float(rng.random())
            if rng.random() < .5:
                h["object_box"] = [b + 12 for b in h["object_box"]]
    pred = _write(tmp_path / "moved.jsonl", [(line["image"], line["hois"]) for line in lines])
    out, _ = _score(tmp_path, gt, pred, "--dataset", "swig-hoi")
    hoi_id = {(a, b): i for i, a, b in zip(v.classes["hoi_id"], v.classes["verb"], v.classes["object"])}
    rows = [(k, hoi_id[(h["verb"], h["object"])], h["human_box"] + h["object_box"], h["score"])
            for k, line in enumerate(lines) for h in line["hois"]]
    image, cls, boxes, score = (np.array(x) for x in zip(*rows))
    gt_boxes = np.array([h["human_box"] + h["object_box"] for line in json.loads(
        "[" + ",".join(gt.read_text().splitlines()) + "]") for h in line["hois"]], dtype=float)
    ref = swig_ap(image, cls, gt_boxes, image, cls, boxes, score, frequency=v.classes["frequency"],
                  evaluated=v.classes["evaluated"] == 1)
    assert out["map"] == pytest.approx(ref.mean("full"), abs=1e-12)
    for subset in ("rare", "non_rare", "novel"):
        assert out["hico"]["default"][subset] == pytest.approx(ref.mean(subset), abs=1e-12)
    assert 0 < out["map"] < 1 / 7      # one interaction in 7 has ground truth; the others AP 0


def test_diagnose_on_swig_hoi_averages_as_score_does(tmp_path):
    """A perfect copy of one evaluated interaction in seven, novel ones among them: diagnose's
    Full / Rare / Non-rare mAP are score's (Full: the classes that are not novel over the 4,148
    of them; Non-rare without the novel ones), and its class set is named SWIG-HOI's."""
    v = datasets.load_vocabulary("swig-hoi")
    evaluated = v.classes[v.classes["evaluated"] == 1].iloc[::7]
    assert (evaluated["novel"] == 1).any()
    gt, pred = _perfect_copy(tmp_path, list(zip(evaluated["verb"], evaluated["object"])))
    scored, _ = _score(tmp_path, gt, pred, "--dataset", "swig-hoi")
    r = run_metrics("diagnose", "--dataset", "swig-hoi", "--gt", gt, "--pred", pred, "--json", tmp_path / "d.json")
    assert r.returncode == 0, r.stderr
    diagnosed = json.loads((tmp_path / "d.json").read_text())
    for subset in ("full", "rare", "non_rare"):
        assert diagnosed["splits"][subset]["map"] == pytest.approx(scored["hico"]["default"][subset], abs=1e-12)
    not_novel = int((v.classes.loc[v.classes["evaluated"] == 1, "novel"] == 0).sum())
    assert diagnosed["map"] == pytest.approx(int((evaluated["novel"] == 0).sum()) / not_novel, abs=1e-12)
    assert diagnosed["protocol"]["class_set"] == f"SWIG-HOI ({not_novel} classes)"


def test_a_plugin_dataset_gets_the_neutral_card_and_a_perfect_copy_scores_one(tmp_path):
    from metrics.datasets import Dataset
    toy = Dataset(name="toy", title="Toy", vocabulary=datasets.load_vocabulary,
                  baseline_verb=datasets.get().baseline_path("v"), baseline_object=datasets.get().baseline_path("n"))
    assert toy.standard_map.classes is None and toy.standard_map.ground_truth_classes == "classes of the ground truth"
    from metrics.api import DetectionScores
    from metrics.detection._detections_fast import read_detections
    from metrics.detection._scoring import score_dict
    gt, pred = _perfect_copy(tmp_path, [("ride", "horse"), ("feed", "horse"), ("hold", "cup")])
    out = DetectionScores.from_dict(score_dict(read_detections(gt), read_detections(pred), dataset=toy))
    assert out.map == pytest.approx(1.0) and out.shoe_map == pytest.approx(1.0, abs=1e-6)
    assert out.protocol["class_set"] == "classes of the ground truth"
    assert out.protocol["rare"] == "none (Toy has no rare split)" and "Toy" in out.protocol["source"]


def test_a_zero_shot_split_is_refused_on_a_dataset_without_one(vcoco_files, tmp_path):
    gt, pred = vcoco_files
    r = run_metrics("score", "--dataset", "vcoco", "--gt", gt, "--pred", pred, "--split", "uv")
    assert r.returncode == 2 and "V-COCO has no zero-shot splits" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_the_detection_package_imports_no_dataset():
    """The generic scorer asks a Dataset (looked up by name in the registry,
    ``metrics.core._registry``) and never imports ``metrics.datasets``, which builds on it: no
    package cycle detection ⇄ datasets (``tests/studyapp/test_layering.py`` checks the whole
    package graph)."""
    import ast
    offending = []
    for path in sorted((ROOT / "metrics" / "detection").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                     else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if isinstance(node, ast.ImportFrom) and node.module == "metrics":
                names = [f"metrics.{a.name}" for a in node.names]
            offending += [f"{path.name}: {n}" for n in names if n.split(".")[:2] == ["metrics", "datasets"]]
    assert not offending, offending


def test_the_metric_packages_form_no_cycle():
    """Package by package (``metrics.detection``, ``metrics.datasets``, ``metrics.vocab``, …),
    every import counted as ``tests/studyapp/test_layering.py`` counts it: the datasets build on
    the scorer and the vocabulary, which reach datasets only through ``metrics.core._registry``."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("layering", ROOT / "tests" / "studyapp" / "test_layering.py")
    layering = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(layering)

    def package(module: str) -> str:
        return ".".join(module.split(".")[:2])
    edges: dict[str, set] = {}
    for module in layering.MODULES:
        if module.startswith("metrics."):
            edges.setdefault(package(module), set()).update(
                package(t) for t in layering.imports_of(module)
                if t.startswith("metrics.") and package(t) != package(module))
    assert "metrics.datasets" in edges["metrics.commands"] and "metrics.detection" in edges["metrics.datasets"]
    assert layering.find_cycle(edges) is None, layering.find_cycle(edges)
