"""Studies for any dataset: ``[items] dataset`` in a spec picks the vocabulary,
glosses, baseline matrices and HOI classes of the similarity studies; the sampler, the LLM matrix
builder and ``metrics match`` take ``--dataset``; a V-COCO study is created, simulated, exported,
recalibrated, and its matrices score V-COCO predictions. Expected values come from the shipped
vocabulary CSVs and baseline ``.npz`` files read directly, not from the code under test."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT

from metrics import InputError
from metrics.cli import main as metrics_main
from metrics.vocab import _wordnet as wordnet
from metrics.vocab._similarity import SimilarityMatrix
from studyapp.platform.commands.cli import main as studyapp_main
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies
from studyapp.platform.records.exports import study_tables
from studyapp.studytypes import get_type
from studyapp.studytypes.hoi_similarity.sampler import load_class_weights, sample_pairs

VCOCO_DATA = ROOT / "metrics" / "datasets" / "vcoco" / "data"
HICO_DATA = ROOT / "metrics" / "datasets" / "hico_det" / "data"
VCOCO_VERBS = pd.read_csv(VCOCO_DATA / "vcoco_verbs.csv", dtype=str, keep_default_na=False)
VERB_SYNSET = dict(zip(VCOCO_VERBS["label"], VCOCO_VERBS["synset"]))
OBJECTS = pd.read_csv(HICO_DATA / "hico_objects.csv", dtype=str, keep_default_na=False)
OBJECT_SYNSET = dict(zip(OBJECTS["label"], OBJECTS["synset"]))

# V-COCO labels; the first three pairs score differently under V-COCO's verb baseline and
# HICO-DET's (ski.v.01, work.v.01 and snowboard.v.01 are no HICO-DET verb synsets)
ITEMS = """item_id,gt_verb,gt_object,pred_verb,pred_object
w1,ski-instr,skis,surf-instr,skis
w2,work_on_computer-instr,laptop,assist.v.02,laptop
w3,snowboard-instr,snowboard,surf-instr,snowboard
w4,kick-obj,sports_ball,hit-obj,sports_ball
w5,cut-obj,cake,cut-obj,pizza
"""
CLASSES = """verb,object,weight
hit-instr,tennis_racket,2
hit-obj,sports_ball,2
kick-obj,sports_ball,1
ride-instr,horse,1
eat-obj,pizza,1
cut-instr,knife,1
cut-obj,cake,1
drink-instr,cup,1
throw-obj,frisbee,1
catch-obj,frisbee,1
read-obj,book,1
surf-instr,surfboard,1
ski-instr,skis,1
skateboard-instr,skateboard,1
talk_on_phone-instr,cell_phone,1
work_on_computer-instr,laptop,1
"""


def spec_text(items: str, dataset: str | None = "vcoco", study_type: str = "hoi_similarity",
              raters: int = 2) -> str:
    line = f'dataset = "{dataset}"\n' if dataset else ""
    return (f'title = "V-COCO pairs"\nstudy_type = "{study_type}"\ninstructions = "Rate."\n'
            f"raters_per_item = {raters}\n\n[items]\n{items}{line}")


def csv_spec(folder: Path, dataset: str | None = "vcoco", items: str = ITEMS, slug: str = "vc") -> Path:
    (folder / "items.csv").write_text(items)
    path = folder / f"{slug}.toml"
    path.write_text(spec_text('source = "csv"\npath = "items.csv"\n', dataset))
    return path


def baseline(pos: str, dataset: str) -> SimilarityMatrix:
    data = VCOCO_DATA if dataset == "vcoco" and pos == "v" else HICO_DATA
    return SimilarityMatrix.load(data / f"baseline_{'verb' if pos == 'v' else 'object'}.npz")


def synset(text: str, pos: str) -> str:
    if wordnet.is_synset_name(text):
        return text
    return VERB_SYNSET[text] if pos == "v" else OBJECT_SYNSET[text]


def expected_latent(row: dict, dataset: str) -> float:
    """4 · (v + o) / 2 from the dataset's baseline files."""
    v = baseline("v", dataset).sim(synset(row["pred_verb"], "v"), synset(row["gt_verb"], "v"))
    o = baseline("n", dataset).sim(synset(row["pred_object"], "n"), synset(row["gt_object"], "n"))
    return 4.0 * (0.5 * v + 0.5 * o)


def item_rows() -> list[dict]:
    return pd.read_csv(pd.io.common.StringIO(ITEMS), dtype=str).to_dict("records")


# ------------------------------------------------------------------------------ the spec key
def test_a_vcoco_spec_resolves_labels_glosses_and_stores_the_dataset(tmp_path):
    path = csv_spec(tmp_path)
    path.write_text(path.read_text() + '\n[example]\ngt_verb = "kick-obj"\ngt_object = "sports_ball"\n'
                    'pred_verb = "hit-obj"\npred_object = "sports_ball"\nrating = 2\n')
    spec = load_spec(path)
    assert (spec.example["fields"]["gt_verb"], spec.example["fields"]["dataset"]) == ("kick.v.01", "vcoco")
    assert spec.dataset == "vcoco" and json.loads(spec.to_json())["dataset"] == "vcoco"
    fields = {item.key: item.fields for item in spec.items}
    assert fields["w1"]["gt_verb"] == "ski.v.01" and fields["w2"]["gt_verb"] == "work.v.01"
    assert (fields["w4"]["gt_verb"], fields["w4"]["pred_verb"]) == ("kick.v.01", "hit.v.01")
    assert fields["w4"]["gt_object"] == "ball.n.01"
    assert fields["w2"]["display"]["gt_verb"] == "work on computer"      # the action, not the role label
    assert (fields["w4"]["display"]["gt_verb"], fields["w4"]["display"]["pred_verb"]) == ("kick", "hit")
    assert fields["w4"]["display"]["gt_object"] == "sports ball"
    assert fields["w2"]["display"]["gt_verb_gloss"] == wordnet.gloss("work.v.01")
    assert {f["dataset"] for f in fields.values()} == {"vcoco"}
    assert fields["w5"]["category"] == 1 and fields["w1"]["category"] == 2


def test_the_same_labels_in_a_hico_det_spec_are_refused(tmp_path):
    with pytest.raises(InputError) as err:
        load_spec(csv_spec(tmp_path, dataset=None))
    assert str(err.value) == (f"{tmp_path / 'items.csv'} line 2: gt_verb 'ski-instr' is neither a WordNet "
                              "verb synset nor a HICO-DET verb label")


def test_an_unknown_dataset_is_one_line_naming_the_spec_and_the_key_and_nothing_is_written(tmp_path, capsys):
    spec = csv_spec(tmp_path, dataset="coco")
    assert studyapp_main(["create", str(spec)]) == 2
    err = capsys.readouterr().err
    assert err == (f"error: {spec}: key 'items.dataset' must be one of hico-det, swig-hoi, vcoco, "
                   "got 'coco'\n")
    assert not Path(os.environ["STUDYAPP_DB"]).exists()
    spec.write_text(spec.read_text().replace('dataset = "coco"', "dataset = 3"))
    with pytest.raises(InputError, match=r"key 'items.dataset' must be a non-empty string, got 3"):
        load_spec(spec)


def test_a_type_without_a_dataset_vocabulary_refuses_the_key(tmp_path):
    spec = tmp_path / "im.toml"
    spec.write_text(spec_text('source = "csv"\npath = "items.csv"\n', study_type="imsitu_correctness"))
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert str(err.value) == (f"{spec}: key 'items.dataset' does not apply to study type "
                              "'imsitu_correctness' (its items use no dataset's vocabulary)")


def test_items_exported_from_a_study_over_another_dataset_are_refused(tmp_path):
    rows = ITEMS.splitlines()
    exported = "\n".join([rows[0] + ",dataset"] + [r + ",vcoco" for r in rows[1:]]) + "\n"
    assert len(load_spec(csv_spec(tmp_path, items=exported)).items) == 5      # the same dataset: fine
    with pytest.raises(InputError) as err:
        load_spec(csv_spec(tmp_path, dataset="hico-det", items=exported))
    assert str(err.value) == (f"{tmp_path / 'items.csv'} line 2: dataset 'vcoco' differs from the spec's "
                              "[items] dataset 'hico-det'")


def test_a_hico_det_study_keeps_its_items_and_export_as_before(tmp_path):
    """No dataset field in the items, no dataset column in items.csv (byte-identical exports)."""
    from studyhelpers import write_spec
    spec = load_spec(write_spec(tmp_path))
    assert spec.dataset == "hico-det" and all("dataset" not in item.fields for item in spec.items)
    studies.create_study(spec)
    assert "dataset" not in study_tables("t")["items.csv"].columns


# ------------------------------------------------------------------- simulation and sampling
def test_simulated_ratings_of_vcoco_items_use_vcocos_baselines(tmp_path):
    spec = load_spec(csv_spec(tmp_path))
    latent = get_type("hoi_similarity").simulated_scores([item.fields for item in spec.items])
    rows = item_rows()
    np.testing.assert_allclose(latent, [expected_latent(r, "vcoco") for r in rows], atol=1e-6)
    hico = [expected_latent(r, "hico-det") for r in rows]
    assert all(abs(a - b) > 0.3 for a, b in zip(latent[:3], hico[:3]))   # not HICO-DET's baseline

    studies.create_study(spec)
    assert studyapp_main(["simulate", "vc", "--k", "2", "--noise", "0", "--profiles", "neutral,neutral"]) == 0
    ratings = study_tables("vc")["ratings.csv"]
    got = ratings.groupby("item_id")["rating"].apply(lambda r: sorted(set(r.astype(int)))).to_dict()
    assert got == {r["item_id"]: [int(np.rint(expected_latent(r, "vcoco")))] for r in rows}


def test_the_sampler_draws_vcoco_classes_with_vcocos_baselines(tmp_path):
    from metrics.datasets.vcoco._vocabulary import vcoco
    (tmp_path / "classes.csv").write_text(CLASSES)
    weights = load_class_weights(tmp_path / "classes.csv", vcoco())
    items, report = sample_pairs(40, seed=2, class_weights=weights, dataset="vcoco")
    classes = pd.read_csv(pd.io.common.StringIO(CLASSES))
    assert len(items) == report.table()["filled"].sum() > 0
    assert set(zip(items["gt_verb_label"], items["gt_object_label"])) <= set(zip(classes["verb"], classes["object"]))
    assert items["gt_hoi_id"].is_unique              # each class (its line in the file) once
    for row in items.itertuples():
        assert (row.gt_verb, row.gt_object) == (VERB_SYNSET[row.gt_verb_label], OBJECT_SYNSET[row.gt_object_label])
        assert classes.loc[row.gt_hoi_id, "verb"] == row.gt_verb_label
    v, o = baseline("v", "vcoco"), baseline("n", "vcoco")
    np.testing.assert_allclose(items["verb_sim"], v.sims(items["pred_verb"], items["gt_verb"]), atol=1e-6)
    np.testing.assert_allclose(items["object_sim"], o.sims(items["pred_object"], items["gt_object"]), atol=1e-6)
    # V-COCO has no class list: without class weights there is nothing to draw
    with pytest.raises(InputError, match="dataset vcoco has no fixed list of HOI classes"):
        sample_pairs(10, dataset="vcoco")
    (tmp_path / "bad.csv").write_text("verb,object,weight\nhit-obj,sports_ball,1\nride,horse,1\n")
    with pytest.raises(InputError) as err:
        load_class_weights(tmp_path / "bad.csv", vcoco())
    assert str(err.value) == f"{tmp_path / 'bad.csv'}: line 3: 'ride' is not a V-COCO verb label with a synset"


def test_studyapp_sample_takes_dataset(tmp_path, capsys):
    (tmp_path / "classes.csv").write_text(CLASSES)
    out = tmp_path / "pairs.csv"
    assert studyapp_main(["sample", "--dataset", "vcoco", "--n", "20", "--class-weights",
                          str(tmp_path / "classes.csv"), "--out", str(out)]) == 0
    items = pd.read_csv(out)
    assert set(items["gt_verb_label"]) <= set(VERB_SYNSET) and len(items) > 0
    capsys.readouterr()
    assert studyapp_main(["sample", "--dataset", "vcoco", "--out", str(tmp_path / "none.csv")]) == 2
    assert "no fixed list of HOI classes" in capsys.readouterr().err
    assert not (tmp_path / "none.csv").exists()


# ------------------------------------------------------- create, simulate, export, recalibrate, score
def write_detections(folder: Path) -> None:
    """V-COCO-labelled ground truth and predictions: kick-obj predicted as hit-obj on the same
    boxes, and an exact cut-obj. One prediction per class with similarity σ: SHOE AP = σ²
    (tests/metrics/test_datasets.py)."""
    def line(image, verb, obj, score=None):
        h = {"human_box": [0, 0, 100, 200], "object_box": [120, 150, 140, 170], "verb": verb, "object": obj}
        return json.dumps({"image": image, "hois": [h if score is None else {**h, "score": score}]}) + "\n"
    (folder / "gt.jsonl").write_text(line("a", "kick-obj", "sports_ball") + line("b", "cut-obj", "cake"))
    (folder / "pred.jsonl").write_text(line("a", "hit-obj", "sports_ball", 0.9) + line("b", "cut-obj", "cake", 0.8))


def test_a_vcoco_study_runs_end_to_end_and_its_matrices_score_vcoco_predictions(tmp_path, capsys):
    (tmp_path / "classes.csv").write_text(CLASSES)
    spec = tmp_path / "vcoco-verbs.toml"
    spec.write_text(spec_text('source = "sampler"\nclass_weights = "classes.csv"\nn = 40\nseed = 0\n', raters=5))
    assert studyapp_main(["create", str(spec)]) == 0
    assert studyapp_main(["simulate", "vcoco-verbs", "--k", "5", "--seed", "1"]) == 0
    assert studyapp_main(["export", "vcoco-verbs", "--out", str(tmp_path / "export")]) == 0
    (folder,) = (tmp_path / "export" / "vcoco-verbs").iterdir()
    items = pd.read_csv(folder / "items.csv")
    assert set(items["dataset"]) == {"vcoco"} and set(items["gt_verb_label"]) <= set(VERB_SYNSET)

    recal = tmp_path / "recalibrated"
    assert metrics_main(["recalibrate", "--ratings", str(folder / "ratings.csv"), "--items", str(folder / "items.csv"),
                         "--verb-sim", str(VCOCO_DATA / "baseline_verb.npz"),
                         "--object-sim", str(HICO_DATA / "baseline_object.npz"), "--out", str(recal)]) == 0
    verb = SimilarityMatrix.load(recal / "verb_recalibrated.npz")
    obj = SimilarityMatrix.load(recal / "object_recalibrated.npz")
    assert verb.meta["based_on"]["dataset"] == "vcoco" and "ski.v.01" in verb
    assert metrics_main(["tune-w", "--ratings", str(folder / "ratings.csv"), "--items", str(folder / "items.csv")]) == 0

    write_detections(tmp_path)
    assert metrics_main(["score", "--dataset", "vcoco", "--gt", str(tmp_path / "gt.jsonl"), "--pred",
                         str(tmp_path / "pred.jsonl"), "--verb-sim", str(recal / "verb_recalibrated.npz"),
                         "--object-sim", str(recal / "object_recalibrated.npz"),
                         "--json", str(tmp_path / "score.json")]) == 0
    out = json.loads((tmp_path / "score.json").read_text())
    sigma = 0.5 * verb.sim("hit.v.01", "kick.v.01") + 0.5 * obj.sim("ball.n.01", "ball.n.01")
    assert sigma != pytest.approx(0.5 * baseline("v", "vcoco").sim("hit.v.01", "kick.v.01") + 0.5, abs=1e-3)
    per = {c["verb"]: c for c in out["per_class"]}
    assert per["kick-obj"]["shoe_ap"] == pytest.approx(sigma ** 2, abs=1e-6)
    assert per["cut-obj"]["shoe_ap"] == pytest.approx(1.0, abs=1e-6)
    assert out["shoe_map"] == pytest.approx((sigma ** 2 + 1) / 2, abs=1e-6)
    assert out["map"] == pytest.approx(0.5)


# ------------------------------------------------------------ studyapp recalibrate, build-llm, match
def test_platform_recalibration_uses_the_studies_dataset_and_refuses_a_mix(tmp_path):
    from studyhelpers import make_annotators, rate_all, write_spec

    from studyapp.platform.operations import matrix_versions

    studies.create_study(load_spec(csv_spec(tmp_path)))
    assert studyapp_main(["simulate", "vc", "--k", "2", "--seed", "0"]) == 0
    run = matrix_versions.recalibrate_studies(["vc"], folds=2)
    assert run.dataset == "vcoco" and run.provenance()["dataset"] == "vcoco"
    assert run.result["verb"].meta["based_on"]["dataset"] == "vcoco"
    matrix_versions.save_version("vc1", run)

    hico_dir = tmp_path / "h"
    hico_dir.mkdir()
    study_id = studies.create_study(load_spec(write_spec(hico_dir)))
    for annotator in make_annotators(study_id, 2):
        rate_all(annotator)
    with pytest.raises(InputError) as err:
        matrix_versions.recalibrate_studies(["vc", "t"], folds=2)
    assert str(err.value) == ("the studies are over different datasets (vc (vcoco), t (hico-det)): "
                              "recalibrate each dataset's apart")
    with pytest.raises(InputError, match="version 'vc1' holds vcoco matrices, but the studies are over hico-det"):
        matrix_versions.recalibrate_studies(["t"], folds=2, based_on="vc1")

    # the console's model scoring reads V-COCO labels for a V-COCO version (σ² per class, as above)
    from studyapp.platform.operations import scoring
    write_detections(tmp_path)
    scores = scoring.score_models(tmp_path / "gt.jsonl", {"m": tmp_path / "pred.jsonl"}, ["vc1"])
    verb = run.result["verb"]
    sigma = 0.5 * verb.sim("hit.v.01", "kick.v.01") + 0.5
    per = {c["verb"]: c for c in scores.results["m"]["version vc1"]["per_class"]}
    assert per["kick-obj"]["shoe_ap"] == pytest.approx(sigma ** 2, abs=1e-6)
    base = {c["verb"]: c for c in scores.results["m"][scoring.BASELINE]["per_class"]}
    base_sigma = 0.5 * baseline("v", "vcoco").sim("hit.v.01", "kick.v.01") + 0.5
    assert base["kick-obj"]["shoe_ap"] == pytest.approx(base_sigma ** 2, abs=1e-6)
    hico_run = matrix_versions.recalibrate_studies(["t"], folds=2)
    assert hico_run.dataset == "hico-det" and "dataset" not in hico_run.provenance()   # HICO-DET: no key
    matrix_versions.save_version("h1", hico_run)
    with pytest.raises(InputError, match="matrix version 'h1' holds hico-det matrices, not vcoco ones"):
        scoring.score_models(tmp_path / "gt.jsonl", {"m": tmp_path / "pred.jsonl"}, ["vc1", "h1"])


def test_llm_matrix_dry_run_seeds_the_candidates_from_the_dataset(tmp_path):
    from metrics.llm._pairs import candidate_pairs
    counts = {}
    for dataset in ("vcoco", "hico-det"):
        out = tmp_path / f"{dataset}.json"
        assert metrics_main(["matrix", "build-llm", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                             "--dry-run", "--pos", "verb", "--dataset", dataset, "--out", str(tmp_path / dataset),
                             "--json", str(out)]) == 0
        counts[dataset] = json.loads(out.read_text())["verb"]["n_pairs"]
    seeds = list(dict.fromkeys(s for s in VCOCO_VERBS["synset"] if s))
    assert counts["vcoco"] == len(candidate_pairs(seeds, "v", source="test").pairs) != counts["hico-det"]


def test_match_takes_dataset(tmp_path, capsys):
    out = tmp_path / "m.json"
    assert metrics_main(["match", "--dataset", "vcoco", "--verb", "kicking", "--gt-verb", "hit-obj",
                         "--json", str(out)]) == 0
    result = json.loads(out.read_text())["verb"]
    assert result["gt"] == "hit.v.01" and result["synset"] == "kick.v.01"
    assert result["sim"] == pytest.approx(baseline("v", "vcoco").sim("kick.v.01", "hit.v.01"))
    capsys.readouterr()
    assert metrics_main(["match", "--verb", "kicking", "--gt-verb", "hit-obj"]) == 2
    assert "neither a synset name nor a HICO-DET label" in capsys.readouterr().err


def test_an_exported_items_csv_resolves_labels_through_its_dataset_column(tmp_path, capsys):
    """``metrics tune-w`` on items with V-COCO labels (no similarities): the dataset column makes
    them V-COCO's; without it, 'ski-instr' is nothing HICO-DET knows."""
    from metrics.study._study_items import item_synsets
    items = pd.read_csv(pd.io.common.StringIO(ITEMS), dtype=str)
    assert item_synsets(items.assign(dataset="vcoco"))["gt_verb"].tolist() == [
        VERB_SYNSET[v] for v in items["gt_verb"]]
    table = items
    ratings = pd.DataFrame({"item_id": table["item_id"], "annotator": "a", "rating": [3, 2, 3, 3, 2]})
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    args = ["tune-w", "--ratings", str(tmp_path / "ratings.csv"), "--items", str(tmp_path / "items.csv"),
            "--verb-sim", str(VCOCO_DATA / "baseline_verb.npz"), "--object-sim", str(HICO_DATA / "baseline_object.npz")]
    table.assign(dataset="vcoco").to_csv(tmp_path / "items.csv", index=False)
    assert metrics_main(args) == 0
    table.to_csv(tmp_path / "items.csv", index=False)
    capsys.readouterr()
    assert metrics_main(args) == 2
    assert "items: gt_verb 'ski-instr' has no WordNet synset" in capsys.readouterr().err


def test_the_with_image_pass_of_a_vcoco_study_reads_vcoco_labels_and_must_name_its_dataset(tmp_path):
    from studyapp.platform.launch.demo_images import class_images
    studies.create_study(load_spec(csv_spec(tmp_path)))
    assert studyapp_main(["simulate", "vc", "--k", "2", "--seed", "0"]) == 0
    rows = item_rows()
    class_images(tmp_path / "imgs", [(r["gt_verb"], r["gt_object"]) for r in rows])   # V-COCO labels
    spec = tmp_path / "second.toml"
    spec.write_text(spec_text('source = "sampler"\nlinked_study = "vc"\nimages = "imgs/images.csv"\n'
                              'image_root = "imgs"\n', study_type="hoi_similarity_image"))
    loaded = load_spec(spec)
    assert loaded.dataset == "vcoco" and len(loaded.items) == 5
    by_key = {item.key: item.fields for item in loaded.items}
    assert by_key["w1"]["image"] == "classes/ski-instr__skis.png" and by_key["w1"]["gt_verb"] == "ski.v.01"
    assert {f["dataset"] for f in by_key.values()} == {"vcoco"}
    spec.write_text(spec.read_text().replace('dataset = "vcoco"\n', ""))    # HICO-DET: its labels are unknown
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert str(err.value) == (f"{tmp_path / 'imgs' / 'images.csv'} line 2: gt_verb 'ski-instr' is neither a "
                              "WordNet verb synset nor a HICO-DET verb label")
    images = tmp_path / "imgs" / "images.csv"        # synsets: readable under any dataset
    table = pd.read_csv(images, dtype=str)
    table["gt_verb"] = [VERB_SYNSET[v] for v in table["gt_verb"]]
    table["gt_object"] = [OBJECT_SYNSET[o] for o in table["gt_object"]]
    table.to_csv(images, index=False)
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert str(err.value) == (f"{spec}: sampled item w1: dataset 'vcoco' differs from the spec's "
                              "[items] dataset 'hico-det'")


def test_categories_make_a_verb_similarity_study(tmp_path):
    from metrics.datasets.vcoco._vocabulary import vcoco
    (tmp_path / "classes.csv").write_text(CLASSES)
    weights = load_class_weights(tmp_path / "classes.csv", vcoco())
    items, report = sample_pairs(16, seed=1, class_weights=weights, dataset="vcoco", categories=[2],
                                 closed_vocabulary=False)      # open: any WordNet neighbour may be the prediction
    assert len(items) == 16 and set(items["category"]) == {2}
    assert (items["gt_object"] == items["pred_object"]).all() and (items["gt_verb"] != items["pred_verb"]).all()
    assert report.table()[["category", "level"]].values.tolist() == [[2, 1], [2, 2], [2, 3], [2, 4]]
    assert report.table()["share"].tolist() == [4, 4, 4, 4]
    spec = tmp_path / "v.toml"
    spec.write_text(spec_text('source = "sampler"\nclass_weights = "classes.csv"\nn = 8\ncategories = [2, 4]\n'))
    with pytest.raises(InputError) as err:
        load_spec(spec)
    assert str(err.value) == f"{spec}: key 'items.categories' must list 1, 2 and/or 3, each once, got [2, 4]"
    spec.write_text(spec.read_text().replace("[2, 4]", "[2]"))
    assert {item.fields["category"] for item in load_spec(spec).items} == {2}
