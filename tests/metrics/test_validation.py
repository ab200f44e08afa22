"""Every option of the metric package is checked by metrics.core._validation: a bad value raises an
InputError that names the parameter (``score_dict(..., delta=7, tau=-3)`` ran
without error), and the command line reports it with the option that sets it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT

from metrics import InputError
from metrics.core._validation import ParameterError, check_choice, check_choices, flag_of, range_problem, whole_problem
from metrics.detection._detections import Detections

A, B = [0, 0, 10, 10], [20, 20, 30, 30]


def detections(scores=(0.9,)):
    n = len(scores)
    return Detections.from_arrays(["a"] * n, [A] * n, [B] * n, ["ride"] * n, ["horse"] * n, list(scores))


GT = Detections.from_arrays(["a"], [A], [B], ["ride"], ["horse"])


def refused(parameter: str, call) -> ParameterError:
    with pytest.raises(ParameterError) as info:
        call()
    assert isinstance(info.value, InputError)
    assert info.value.parameter == parameter and str(info.value).startswith(parameter + " "), str(info.value)
    return info.value


def test_the_checks_name_the_parameter_and_keep_good_values():
    assert check_choice("level", "ordinal", ("ordinal",)) == "ordinal"
    assert check_choices("oracles", "a", ("a", "b")) == ("a",)
    assert str(refused("level", lambda: check_choice("level", "x", ("a", "b")))) == "level must be one of a, b, got 'x'"
    refused("oracles", lambda: check_choices("oracles", ("a", "x"), ("a", "b")))


def test_the_problems_refuse_what_is_out_of_range_or_not_whole():
    assert range_problem(0, 0, 1) is None and range_problem(1, 0, 1, low_open=True) is None
    for bad in (-0.1, 1.5, float("nan"), float("inf"), "0.5", True, None):
        assert range_problem(bad, 0, 1) is not None
    assert range_problem(0, 0, 1, low_open=True) == "must be a number in (0, 1], got 0"
    assert whole_problem(3, 1) is None
    for bad in (0, 2.0, "3", True):
        assert whole_problem(bad, 1) is not None


SCORE_BAD = {"delta": 7, "tau": -3, "w": 1.5, "iou": 0, "combine": "median", "interpolation": "11-point",
             "fn_mode": "eq6", "map_protocol": "voc", "split": "rare"}


@pytest.mark.parametrize("parameter", sorted(SCORE_BAD))
def test_score_detections_refuses_each_bad_parameter(parameter):
    from metrics.detection._scoring import score_dict
    refused(parameter, lambda: score_dict(GT, detections(), **{parameter: SCORE_BAD[parameter]}))


@pytest.mark.parametrize("parameter,value", [("iou", 1.2), ("map_protocol", "voc"), ("oracles", ("duplicate", "x"))])
def test_diagnose_refuses_each_bad_parameter(parameter, value):
    from metrics.diagnosis._core import build_diagnosis
    refused(parameter, lambda: build_diagnosis(GT, detections(), **{parameter: value}))


def test_combine_refuses_a_bad_method_or_weight():
    from metrics.vocab._similarity import combine
    refused("method", lambda: combine([1.0], [0.5], method="median"))
    refused("w", lambda: combine([1.0], [0.5], method="arithmetic", w=-1))


def ratings_and_items(n=12):
    rng = np.random.default_rng(0)
    items = pd.DataFrame({"item_id": [f"i{k}" for k in range(n)], "category": [k % 3 + 1 for k in range(n)],
                          "gt_verb": "ride", "gt_object": "horse", "pred_verb": "straddle", "pred_object": "horse",
                          "verb_sim": rng.random(n), "object_sim": rng.random(n)})
    ratings = pd.DataFrame({"item_id": np.repeat(items["item_id"], 3), "annotator": ["a", "b", "c"] * n,
                            "rating": rng.integers(0, 5, 3 * n).astype(float)})
    return ratings, items


@pytest.mark.parametrize("parameter,value", [("level", "ranked"), ("n_resamples", -1), ("seed", -5), ("seed", 0.5)])
def test_agreement_refuses_each_bad_parameter(parameter, value):
    from metrics.study._agreement import agreement_report
    ratings, _ = ratings_and_items()
    refused(parameter, lambda: agreement_report(ratings, **{parameter: value}))


def test_alpha_and_its_intervals_refuse_a_bad_level_or_confidence():
    from metrics.study._agreement import alpha_of_matrix, bootstrap_intervals, rating_matrix
    matrix = rating_matrix(ratings_and_items()[0])
    refused("level", lambda: alpha_of_matrix(matrix, level="ranked"))
    refused("confidence", lambda: bootstrap_intervals(matrix, confidence=1.0))


@pytest.mark.parametrize("parameter,value", [("weights", "cubic"), ("confidence", 0), ("n_resamples", 10**9)])
def test_reliability_refuses_each_bad_parameter(parameter, value):
    from metrics.study._agreement import rating_matrix
    from metrics.study._reliability import gwet_ac2, reliability
    matrix = rating_matrix(ratings_and_items()[0])
    if parameter == "weights":
        refused(parameter, lambda: gwet_ac2(matrix, weights=value))
    else:
        refused(parameter, lambda: reliability(matrix, **{parameter: value}))


def rated_items():
    from metrics.study._study_items import join_ratings
    ratings, items = ratings_and_items()
    return join_ratings(items, ratings)


@pytest.mark.parametrize("parameter,value", [("w", 0.0), ("w", 1.0), ("prior_strength", -1), ("folds", 1),
                                             ("folds", 13), ("seed", -1)])
def test_recalibrate_refuses_each_bad_parameter(parameter, value):
    from metrics.study._recalibration import recalibrate_matrices
    from metrics.vocab._baseline import load_default
    refused(parameter, lambda: recalibrate_matrices(rated_items(), load_default("v"), load_default("n"), **{parameter: value}))


def test_tune_w_refuses_a_bad_step():
    from metrics.study._tuning import tune_w_by_category
    refused("step", lambda: tune_w_by_category(rated_items(), step=0))


@pytest.mark.parametrize("parameter,value", [("score_threshold", 1.5), ("iou", 0)])
def test_crosshoi_answers_refuse_each_bad_parameter(parameter, value):
    from metrics.crosshoi._mcq import answers_from_detections, parse_bench
    bench = parse_bench({"q": {"gt_choices": ["ride a/an horse"], "wrong_choices": []}})
    refused(parameter, lambda: answers_from_detections(bench, {}, **{parameter: value}))


def test_imsitu_marks_refuse_a_bad_k():
    from metrics.imsitu._accuracy import prediction_marks
    refused("k", lambda: prediction_marks({"a.jpg": "jumping"}, {"a.jpg": ["jumping"]}, k=0))


def test_the_command_line_names_the_option_of_a_refused_parameter(tmp_path):
    """A value the option's type lets through but the function refuses (more folds than rated
    items) is reported as argparse reports its own refusals: the option, then the problem."""
    ratings, items = ratings_and_items()
    ratings.to_csv(tmp_path / "ratings.csv", index=False)
    items.to_csv(tmp_path / "items.csv", index=False)
    matrices = ROOT / "metrics" / "datasets" / "hico_det" / "data"
    done = subprocess.run([sys.executable, "-m", "metrics", "recalibrate", "--ratings", str(tmp_path / "ratings.csv"),
                           "--items", str(tmp_path / "items.csv"), "--verb-sim", str(matrices / "baseline_verb.npz"),
                           "--object-sim", str(matrices / "baseline_object.npz"), "--out", str(tmp_path / "out"),
                           "--folds", "20"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 2, done.stderr
    assert done.stderr.strip() == ("metrics recalibrate: error: argument --folds: must be at most the number of "
                                   "rated items (12), got 20")
    assert not (tmp_path / "out").exists()


def test_flags_follow_the_parameter_names_unless_a_command_renames_them():
    from metrics.commands import _score as score
    assert flag_of("delta", score.FLAGS) == "--delta" and flag_of("map_protocol", score.FLAGS) == "--map-protocol"
    assert flag_of("fn_mode", score.FLAGS) == "--mf1-fn"


def test_options_and_functions_word_a_refusal_alike(tmp_path):
    """The argparse type of --delta and the scorer refuse 7 in the same words."""
    from metrics.detection._detections import write_jsonl
    gt, pred = tmp_path / "gt.jsonl", tmp_path / "pred.jsonl"
    write_jsonl(GT, gt, with_scores=False)
    write_jsonl(detections(), pred)
    done = subprocess.run([sys.executable, "-m", "metrics", "score", "--gt", str(gt), "--pred", str(pred),
                           "--delta", "7"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert done.returncode == 2 and "argument --delta: must be a number in [0, 1], got 7" in done.stderr
    from metrics.detection._scoring import score_dict
    assert str(refused("delta", lambda: score_dict(GT, detections(), delta=7))) == \
        "delta must be a number in [0, 1], got 7"
