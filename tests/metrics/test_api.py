"""The public API of the metric package: the names of ``metrics.__all__``, keyword-only
options checked by metrics.core._validation, frozen results whose ``to_dict()`` is the JSON the
matching command writes on the same files, and a light ``import metrics``."""

from __future__ import annotations

import dataclasses
import inspect
import json
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT

import metrics
from metrics import ParameterError
from metrics.detection._detections import Detections, write_jsonl

MATRICES = ROOT / "metrics" / "datasets" / "hico_det" / "data"
DATA_PARAMETERS = {"gt", "pred", "bench", "answers", "gold", "ratings", "items", "verb_sim", "object_sim"}


def cli(tmp_path, *args) -> dict:
    out = tmp_path / "cli.json"
    done = subprocess.run([sys.executable, "-m", "metrics", *map(str, args), "--json", str(out)], cwd=ROOT,
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())


def as_json(result) -> dict:
    """A result as the command writes it (NaN as null, numpy numbers as numbers)."""
    from metrics.core._jsonio import json_text
    return json.loads(json_text(result.to_dict()))


@pytest.fixture(scope="module")
def detections(tmp_path_factory):
    from benchmarks.score_hico_scale import workload
    folder = tmp_path_factory.mktemp("detections")
    gt, pred = workload(25, 80, 12, seed=5)
    write_jsonl(gt, folder / "gt.jsonl", with_scores=False)
    write_jsonl(pred, folder / "pred.jsonl")
    return folder


@pytest.fixture(scope="module")
def study(tmp_path_factory):
    folder = tmp_path_factory.mktemp("study")
    rng = np.random.default_rng(3)
    verbs, objects = ["ride", "push", "hold", "walk", "carry"], ["bicycle", "horse", "dog", "car", "cup"]
    rows = []
    for k in range(45):
        cat = k % 3 + 1
        gv, go = verbs[k % 5], objects[(k * 2) % 5]
        pv = gv if cat == 1 else verbs[(k + 1) % 5]
        po = go if cat == 2 else objects[(k * 2 + 1) % 5]
        rows.append((f"i{k}", cat, gv, go, pv, po, 1.0 if cat == 1 else rng.random(), 1.0 if cat == 2 else rng.random()))
    items = pd.DataFrame(rows, columns=["item_id", "category", "gt_verb", "gt_object", "pred_verb", "pred_object",
                                        "verb_sim", "object_sim"])
    latent = 4 * (0.6 * items["verb_sim"] + 0.4 * items["object_sim"])
    ratings = pd.DataFrame([(i, f"a{a}", int(np.clip(round(v + rng.normal(0, 0.6)), 0, 4)))
                            for i, v in zip(items["item_id"], latent) for a in range(3)],
                           columns=["item_id", "annotator", "rating"])
    items.to_csv(folder / "items.csv", index=False)
    ratings.to_csv(folder / "ratings.csv", index=False)
    return folder


def test_every_public_name_resolves_and_options_are_keyword_only():
    for name in metrics.__all__:
        value = getattr(metrics, name)
        if inspect.isfunction(value):
            for p in inspect.signature(value).parameters.values():
                if value.__module__.startswith("metrics.api."):   # the scores: data named, options keyword-only
                    assert p.kind is inspect.Parameter.KEYWORD_ONLY or p.name in DATA_PARAMETERS, (name, p.name)
                else:                                    # everywhere: an option (it has a default) is keyword-only
                    assert p.default is inspect.Parameter.empty or p.kind is inspect.Parameter.KEYWORD_ONLY, (name, p.name)
    assert {"score_detections", "hico_map", "shoe_map", "shoe_f1", "miss_rates", "diagnose", "crosshoi_scores",
            "sense_accuracy", "krippendorff_alpha", "pairwise_agreement", "tune_w", "recalibrate",
            "read_detections", "SimilarityMatrix"} <= set(metrics.__all__)


def test_import_metrics_and_a_public_name_stay_light():
    code = ("import sys, time; t = time.perf_counter(); import metrics; from metrics import score_detections, "
            "diagnose, tune_w; print(round(time.perf_counter() - t, 3), sorted(m for m in ('numpy', 'pandas', "
            "'scipy', 'sklearn', 'nltk', 'matplotlib') if m in sys.modules))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    seconds, heavy = done.stdout.strip().split(" ", 1)
    assert heavy == "[]" and float(seconds) < 0.5, done.stdout


def test_score_results_equal_the_command_and_share_its_numbers(detections, tmp_path):
    gt, pred = detections / "gt.jsonl", detections / "pred.jsonl"
    options = {"delta": 0.2, "tau": 0.3, "split": "rf_uc"}
    scores = metrics.score_detections(gt, pred, **options)
    assert as_json(scores) == cli(tmp_path, "score", "--gt", gt, "--pred", pred, "--delta", 0.2, "--tau", 0.3,
                                  "--split", "rf_uc")
    with pytest.raises(dataclasses.FrozenInstanceError):
        scores.map = 1.0
    assert metrics.hico_map(gt, pred, split="rf_uc").map == scores.map
    assert metrics.shoe_map(gt, pred, delta=0.2).shoe_map == scores.shoe_map
    assert metrics.shoe_f1(gt, pred, delta=0.2, tau=0.3).shoe_mf1 == scores.shoe_mf1
    rates = metrics.miss_rates(gt, pred, tau=0.3)
    assert (rates.gt_miss_rate, rates.pred_miss_rate) == (scores.gt_miss_rate, scores.pred_miss_rate)
    # Detections and paths are the same input
    assert metrics.score_detections(metrics.read_detections(gt), metrics.read_detections(pred), **options) == scores


def test_diagnosis_equals_the_command_but_its_file_names(detections, tmp_path):
    gt, pred = detections / "gt.jsonl", detections / "pred.jsonl"
    result = metrics.diagnose(gt, pred)
    written = cli(tmp_path, "diagnose", "--gt", gt, "--pred", pred)
    assert written.pop("model") == "pred" and written.pop("params")["gt"] == str(gt)
    assert as_json(result) == written
    assert len(result.errors()) >= result.counts["predictions"]


def test_crosshoi_and_imsitu_results_equal_the_commands(tmp_path):
    bench = {"q1": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["feed a/an horse"]},
             "q2": {"gt_choices": ["hold a/an cup"], "wrong_choices": ["wash a/an cup"]}}
    answers = {"q1": ["ride a/an horse"], "q2": ["wash a/an cup", "nope"]}
    for name, data in (("bench", bench), ("answers", answers)):
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    from_files = metrics.crosshoi_scores(tmp_path / "bench.json", tmp_path / "answers.json", setting="image_level")
    assert as_json(from_files) == cli(tmp_path, "mcq", "--bench", tmp_path / "bench.json", "--pred",
                                      tmp_path / "answers.json", "--setting", "image_level")
    from_objects = metrics.crosshoi_scores(bench, answers)
    assert (from_objects.macro_f1, from_objects.bench, from_objects.pred_kind) == (from_files.macro_f1, None, "options")

    gold, pred = {"a.jpg": "jumping", "b.jpg": "riding"}, {"a.jpg": ["leaping", "jumping"], "b.jpg": ["driving"]}
    clusters = {"clusters": {"c1": ["jumping", "leaping"], "c2": ["riding", "driving"]},
                "images": {"a.jpg": ["c1"], "b.jpg": ["c2"]}}
    for name, data in (("gold", gold), ("pred", pred), ("clusters", clusters)):
        (tmp_path / f"{name}.json").write_text(json.dumps(data))
    accuracy = metrics.sense_accuracy(gold, pred, clusters=clusters)
    assert as_json(accuracy) == cli(tmp_path, "imsitu", "--gold", tmp_path / "gold.json", "--pred",
                                    tmp_path / "pred.json", "--clusters", tmp_path / "clusters.json")
    assert "n_images_without_clusters" not in metrics.sense_accuracy(gold, pred).to_dict()


def test_study_results_equal_the_commands(study, tmp_path):
    ratings, items = study / "ratings.csv", study / "items.csv"
    agreement = metrics.annotator_agreement(ratings, n_resamples=100, seed=2)
    assert as_json(agreement) == cli(tmp_path, "agreement", "--ratings", ratings, "--bootstrap", 100, "--seed", 2)
    frame = pd.read_csv(ratings)
    assert metrics.krippendorff_alpha(frame) == agreement.krippendorff_alpha
    pairwise = metrics.pairwise_agreement(frame)
    assert pairwise.mean_pairwise_agreement == agreement.mean_pairwise_agreement
    assert pairwise.to_dict()["pairwise_agreement"] == agreement.to_dict()["pairwise_agreement"]

    tuning = metrics.tune_w(ratings, items, step=0.01)
    assert as_json(tuning) == cli(tmp_path, "tune-w", "--ratings", ratings, "--items", items, "--step", 0.01)
    assert metrics.tune_w(frame, pd.read_csv(items), step=0.01) == tuning

    verb, obj = MATRICES / "baseline_verb.npz", MATRICES / "baseline_object.npz"
    recalibration = metrics.recalibrate(ratings, items, verb, obj, folds=3, study="s")
    written = cli(tmp_path, "recalibrate", "--ratings", ratings, "--items", items, "--verb-sim", verb,
                  "--object-sim", obj, "--folds", 3, "--study", "s", "--out", tmp_path / "out")
    assert len(written.pop("files")) == 4 and as_json(recalibration) == written
    assert recalibration.verb.meta["study"] == "s"


@pytest.mark.parametrize("call", [
    lambda gt: metrics.hico_map(gt, gt, iou=1.5),
    lambda gt: metrics.shoe_map(gt, gt, combine="median"),
    lambda gt: metrics.shoe_f1(gt, gt, tau=-3),
    lambda gt: metrics.miss_rates(gt, gt, w=2),
    lambda gt: metrics.diagnose(gt, gt, map_protocol="voc"),
    lambda gt: metrics.crosshoi_scores({"q": {"gt_choices": [], "wrong_choices": ["x a/an y"]}}, {}, setting="x"),
    lambda gt: metrics.crosshoi_scores({"q": {"gt_choices": [], "wrong_choices": ["x a/an y"]}}, {}, iou=0),
    lambda gt: metrics.krippendorff_alpha(pd.DataFrame({"item_id": ["a"], "annotator": ["x"], "rating": [1]}),
                                          level="ranked"),
], ids=["hico_map-iou", "shoe_map-combine", "shoe_f1-tau", "miss_rates-w", "diagnose-map_protocol",
        "crosshoi-setting", "crosshoi-iou", "alpha-level"])
def test_public_functions_refuse_bad_options_naming_them(call):
    gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[10, 10, 20, 20]], ["ride"], ["horse"], [0.9])
    with pytest.raises(ParameterError):
        call(gt)


def test_dir_lists_every_public_name_before_it_is_used():
    """``dir(metrics)`` in a fresh process holds the lazily imported names (it lacked shoe_map)."""
    code = "import metrics; print(sorted(set(metrics.__all__) - set(dir(metrics))))"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.stdout.strip() == "[]", done.stdout + done.stderr


def test_the_package_is_typed():
    assert (ROOT / "metrics" / "py.typed").is_file() and (ROOT / "studyapp" / "py.typed").is_file()


def test_one_scoring_serves_the_four_views(detections):
    """score_detections once, then every view from it: equal to the functions, which each score
    again (each repeated the whole computation)."""
    gt, pred = detections / "gt.jsonl", detections / "pred.jsonl"
    scores = metrics.score_detections(gt, pred, tau=0.3)
    assert scores.as_hico_map() == metrics.hico_map(gt, pred)
    assert scores.as_shoe_map() == metrics.shoe_map(gt, pred)
    assert scores.as_shoe_f1() == metrics.shoe_f1(gt, pred, tau=0.3)
    assert scores.as_miss_rates() == metrics.miss_rates(gt, pred, tau=0.3)
