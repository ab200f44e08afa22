"""CrossHOI-Bench multiple-choice scoring: hand-worked rules, detections, CLI, the real benchmark."""

import json
import subprocess
import sys

import pytest
from projectpaths import ROOT

from metrics import InputError
from metrics.crosshoi._mcq import Detection, answers_from_detections, mcq_scores, option_class, parse_bench

HORSE = ["ride a/an horse", "feed a/an horse"]
BENCH = {
    "q1": {"gt_choices": HORSE, "wrong_choices": ["walk a/an horse", "hop_on a/an horse"]},
    "q2": {"gt_choices": ["hold a/an cup"], "wrong_choices": ["drink_with a/an cup", "sip a/an cup", "wash a/an cup"]},
    "q3": {"gt_choices": [], "wrong_choices": ["repair a/an bicycle", "push a/an bicycle"]},
    "q4": {"gt_choices": [], "wrong_choices": ["inspect a/an bicycle", "park a/an bicycle"]},
    "q5": {"gt_choices": ["board a/an airplane"], "wrong_choices": ["fly a/an airplane"]},
    "q6": {"gt_choices": ["no_interaction with a/an bicycle", "cut_ with a/an knife"],
           "wrong_choices": ["ride a/an bicycle", "hold a/an knife"]},
    "q7": {"gt_choices": ["lasso a/an cow"], "wrong_choices": ["herd a/an cow", "feed a/an cow"]},
}
ANSWERS = {
    "q1": ["ride a/an horse", "ride a/an horse", "walk a/an horse", "fly a/an kite"],  # dup + out
    "q2": ["hold a/an cup"],
    "q3": [],
    "q4": ["inspect a/an bicycle"],
    # q5 unanswered
    "q6": ["no_interaction a/an bicycle", "cut_ with a/an knife"],  # released spelling normalized
    "q7": ["milk a/an goat"],                                         # only out-of-options
    "zz": ["ride a/an horse"],                                        # not a question
}


def test_every_rule_on_a_hand_worked_benchmark():
    r = mcq_scores(BENCH, ANSWERS)
    # per-question F1: q1 P=R=1/2 -> .5; q2 1; q3 no answer, no correct -> 1; q4 P=0 -> 0;
    # q5 unanswered with a correct option -> 0; q6 1; q7 no in-option answer -> 0
    assert r["instance_f1"] == pytest.approx(3.5 / 7)
    assert r["avg_precision"] == pytest.approx(4 / 6)      # TP q1 1 + q2 1 + q6 2; FP q1 1 + q4 1
    assert r["avg_recall"] == pytest.approx(4 / 7)         # |C| 2 + 1 + 1 + 2 + 1
    assert r["micro_f1"] == pytest.approx(8 / 13)          # 2 (2/3)(4/7) / (2/3 + 4/7)
    assert r["exact_match"] == pytest.approx(2 / 7)        # q2 and q6
    # classes: ride horse 1, feed horse 0, walk horse 0, hold cup 1, inspect bicycle 0,
    # board airplane 0, no_interaction bicycle 1, lasso cow 0; "cut_ with knife" is no HICO class
    assert r["macro_f1"] == pytest.approx(3 / 8)
    assert r["macro"]["n_classes"] == 8
    assert r["macro"]["options_outside_classes"] == ["cut_ with a/an knife"]
    assert r["counts"] == {"tp": 4, "fp": 2, "correct_options": 7, "answered_questions": 4,
                           "unanswered_questions": 3, "out_of_options": 2, "duplicates": 1,
                           "unknown_questions": 1}


def test_per_class_counts_aggregate_over_questions():
    bench = {"a": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["feed a/an horse"]},
             "b": {"gt_choices": ["feed a/an horse"], "wrong_choices": ["ride a/an horse"]},
             "c": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["walk a/an horse"]}}
    r = mcq_scores(bench, {"a": ["ride a/an horse"], "b": ["ride a/an horse"]})
    rows = {(x["verb"], x["object"]): x for x in r["per_class"]}
    assert (rows["ride", "horse"]["tp"], rows["ride", "horse"]["fp"], rows["ride", "horse"]["gt"]) == (1, 1, 2)
    assert rows["ride", "horse"]["f1"] == pytest.approx(0.5)  # P = 1/2, R = 1/2
    assert rows["feed", "horse"]["f1"] == 0 and ("walk", "horse") not in rows  # never correct nor chosen
    assert r["macro_f1"] == pytest.approx(0.25)


def test_a_class_chosen_but_never_correct_scores_zero_and_no_answers_at_all():
    bench = {"a": {"gt_choices": [], "wrong_choices": ["feed a/an horse"]}}
    assert mcq_scores(bench, {"a": ["feed a/an horse"]})["macro_f1"] == 0
    empty = mcq_scores(bench, {})
    assert (empty["instance_f1"], empty["avg_precision"], empty["macro_f1"]) == (1.0, 0.0, 0.0)


def test_option_classes():
    assert option_class("no_interaction with a/an potted plant") == ("no_interaction", "potted_plant")
    assert option_class("cut_with a/an knife") == ("cut_with", "knife")
    assert option_class("cut_ with a/an knife") == ("cut__with", "knife")  # as the released scorer reads it
    assert option_class("hugging") is None


def test_detections_are_matched_to_the_question_boxes():
    bench = parse_bench({
        "boxed": {"gt_choices": ["ride a/an horse", "hold a/an potted plant"],
                  "wrong_choices": ["feed a/an horse", "walk a/an horse"],
                  "boxes": {"human": [0, 0, 10, 10], "object": [20, 20, 30, 30]}},
        "human_only": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["feed a/an horse"],
                       "boxes": {"human": [0, 0, 10, 10]}},
        "image": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["feed a/an horse"]}})
    obj = [20, 20, 30, 30]
    dets = [Detection([0, 0, 10, 10], obj, "ride a/an horse", 0.9),
            Detection([0, 0, 10, 5], obj, "walk a/an horse", 0.8),        # human IoU exactly 0.5
            Detection([0, 0, 10, 4.9], obj, "feed a/an horse", 0.8),      # IoU 0.49: not this person
            Detection([0, 0, 10, 10], [0, 0, 5, 5], "feed a/an horse", 0.8),  # other object
            Detection([0, 0, 10, 10], obj, "feed a/an horse", 0.4),       # below the threshold
            Detection([0, 0, 10, 10], obj, "hold a/an potted_plant", 0.7),  # class spelling
            Detection([0, 0, 10, 10], obj, "kick a/an ball", 0.6)]        # not an option
    answers = answers_from_detections(bench, {k: dets for k in bench}, score_threshold=0.5)
    assert answers["boxed"] == ["ride a/an horse", "walk a/an horse", "hold a/an potted plant",
                                "kick a/an ball"]
    assert answers["human_only"] == ["ride a/an horse", "walk a/an horse", "feed a/an horse",
                                     "hold a/an potted_plant", "kick a/an ball"]
    assert len(answers["image"]) == 6  # no boxes: every detection above the threshold
    r = mcq_scores(bench, answers)
    assert r["counts"]["out_of_options"] == 1 + 3 + 3  # kick; walk, potted_plant, kick (twice)
    assert r["counts"]["duplicates"] == 1  # image level: feed twice


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "metrics", "mcq", *args], cwd=ROOT,
                          capture_output=True, text=True)


def test_cli_scores_options_and_detections_and_refuses_bad_input(tmp_path):
    bench = tmp_path / "bench.json"
    bench.write_text(json.dumps(BENCH))
    pred = tmp_path / "pred.json"
    pred.write_text(json.dumps(ANSWERS))
    out = tmp_path / "r.json"
    done = run_cli("--bench", str(bench), "--pred", str(pred), "--setting", "human_box", "--json", str(out))
    assert done.returncode == 0, done.stderr
    result = json.loads(out.read_text())
    for key in ("macro_f1", "instance_f1", "micro_f1", "exact_match", "avg_precision", "avg_recall"):
        assert isinstance(result[key], float) and 0 <= result[key] <= 1
    assert result["setting"] == "human_box" and result["exact_match"] == pytest.approx(2 / 7)

    jsonl = tmp_path / "det.jsonl"
    jsonl.write_text(json.dumps({"image": "q2", "hois": [
        {"human_box": [0, 0, 1, 1], "object_box": [0, 0, 1, 1], "verb": "hold", "object": "cup", "score": 0.9}]}) + "\n")
    done = run_cli("--bench", str(bench), "--pred", str(jsonl), "--json", str(out))
    assert done.returncode == 0, done.stderr
    assert json.loads(out.read_text())["counts"]["tp"] == 1

    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"q1": {"gt_choices": "ride a/an horse", "wrong_choices": []}}))
    done = run_cli("--bench", str(bad), "--pred", str(pred))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1
    assert "question 'q1': gt_choices must be a list" in done.stderr
    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"image": "q1", "hois": [{"verb": "ride", "object": "horse", "score": "high"}]}\n')
    done = run_cli("--bench", str(bench), "--pred", str(broken))
    assert done.returncode == 2 and "line 1: hois[0]: score must be a number" in done.stderr


def test_bad_benchmark_boxes_are_refused():
    with pytest.raises(InputError, match="boxes.human must be four numbers"):
        parse_bench({"a": {"gt_choices": [], "wrong_choices": ["x a/an y"], "boxes": {"human": [1, 2]}}})


SETTING_FILES = ["crosshoi_bench_allscene_final.json", "crosshoi_bench_hum_box_final.json",
                 "crosshoi_bench_hum_obj_box_final.json"]


@pytest.mark.parametrize("name", SETTING_FILES)
def test_real_benchmark_reference_answerers(shared_data, name):
    raw = json.loads((shared_data / "crosshoi" / name).read_text())
    assert len(raw) == 1274
    perfect = mcq_scores(raw, {k: v["gt_choices"] for k, v in raw.items()})
    with_correct = sum(1 for v in raw.values() if v["gt_choices"])
    for key in ("macro_f1", "instance_f1", "micro_f1", "avg_precision", "avg_recall"):
        assert perfect[key] == 1.0, key
    assert perfect["exact_match"] == with_correct / 1274

    everything = mcq_scores(raw, {k: v["gt_choices"] + v["wrong_choices"] for k, v in raw.items()})
    n_correct = sum(len(set(v["gt_choices"])) for v in raw.values())
    n_options = sum(len(set(v["gt_choices"]) | set(v["wrong_choices"])) for v in raw.values())
    assert everything["avg_recall"] == 1.0
    assert everything["avg_precision"] == pytest.approx(n_correct / n_options)
    # per question P = |C| / |O|, R = 1 (0 without correct options): F1 = 2|C| / (|C| + |O|)
    f1 = [2 * len(set(v["gt_choices"])) / (len(set(v["gt_choices"])) + len(set(v["gt_choices"]) | set(v["wrong_choices"])))
          for v in raw.values()]
    assert everything["instance_f1"] == pytest.approx(sum(f1) / 1274)
    exact = sum(1 for v in raw.values() if v["gt_choices"] and not set(v["wrong_choices"]) - set(v["gt_choices"]))
    assert everything["exact_match"] == pytest.approx(exact / 1274)


def test_answers_nested_past_pythons_parser_are_one_line(tmp_path):
    """Answers nested 100,000 arrays deep: one line naming the file, as any invalid JSON."""
    (tmp_path / "bench.json").write_text(json.dumps(BENCH))
    deep = tmp_path / "answers.json"
    deep.write_text('{"q": ' + "[" * 100_000 + "]" * 100_000 + "}")
    done = subprocess.run([sys.executable, "-m", "metrics", "mcq", "--bench", str(tmp_path / "bench.json"),
                           "--pred", str(deep)], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == f"metrics mcq: error: {deep}: line 1: invalid JSON (nested too deeply)"
