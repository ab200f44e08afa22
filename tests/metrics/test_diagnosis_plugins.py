"""A new Diag-HOI error type is one class and one registry line: it is categorized,
fixed by its oracle, counted, keyed in ``delta_map`` and ``error_counts`` and shown in the
report, with no other edit; without it the outputs are the default ones."""

from __future__ import annotations

import json

import numpy as np
import pytest

from metrics.detection import Detections, write_jsonl
from metrics.diagnosis import ERROR_REGISTRY, ErrorType, build_diagnosis, register_error_type, write_diagnosis_report

H, O, FAR = [0, 0, 10, 10], [20, 0, 30, 10], [200, 200, 210, 210]


class LostPrediction(ErrorType):
    """Toy: a prediction with neither box right for any ground truth (what ``both_boxes``
    catches, one step earlier in Fig. 2's order); its oracle removes it."""

    name, title, section, group, priority = "lost", "Lost prediction", "toy", "false_positive", 5.5

    def test(self, f):
        return ~f.human & ~f.object

    def fix(self, state, d):
        state.keep[d.kind == self.code] = False


def scene():
    gt = Detections.from_arrays(["a", "b"], [H, H], [O, O], ["ride", "feed"], ["horse", "horse"])
    pred = Detections.from_arrays(["a", "a", "b", "b"], [H, FAR, H, FAR], [O, FAR, O, FAR],
                                  ["ride", "ride", "feed", "feed"], ["horse"] * 4, [0.9, 0.95, 0.8, 0.7])
    return gt, pred


@pytest.fixture
def toy():
    register_error_type(LostPrediction())        # the one registry line
    yield
    ERROR_REGISTRY.unregister("lost")


def test_a_registered_error_type_is_categorized_fixed_counted_and_reported(toy, tmp_path):
    gt, pred = scene()
    result = build_diagnosis(gt, pred, map_protocol="all-point").to_dict()
    assert "lost" in result["delta_map"] and "lost" in result["error_counts"]
    assert result["error_counts"]["lost"] == 2 and result["error_counts"]["both_boxes"] == 0
    assert result["delta_map"]["both_boxes"] == 0.0 and result["delta_map"]["lost"] > 0
    assert [step["oracle"] for step in result["progressive"]][-1] == "lost"
    assert result["progressive"][-1]["map"]["full"] == pytest.approx(1.0)      # Eq. 4 still holds
    report = write_diagnosis_report(tmp_path / "report", {"toy model": result})
    page = report.read_text()
    assert "Lost prediction" in page and "toy" in page
    assert "lost" in (tmp_path / "report" / "delta_map.csv").read_text().splitlines()[0].split(",")


def test_the_command_line_keys_a_registered_error_type(toy, tmp_path, capsys):
    from metrics.cli import main
    gt, pred = scene()
    write_jsonl(gt, tmp_path / "gt.jsonl", with_scores=False)
    write_jsonl(pred, tmp_path / "pred.jsonl")
    assert main(["diagnose", "--gt", str(tmp_path / "gt.jsonl"), "--pred", str(tmp_path / "pred.jsonl"),
                 "--json", str(tmp_path / "d.json")]) == 0
    result = json.loads((tmp_path / "d.json").read_text())
    assert result["error_counts"]["lost"] == 2 and "lost" in result["delta_map"]
    assert "Δ lost" in capsys.readouterr().out


def test_without_the_toy_the_outputs_are_the_default_ones(tmp_path):
    gt, pred = scene()
    result = build_diagnosis(gt, pred, map_protocol="all-point").to_dict()
    assert list(result["delta_map"]) == ["human_box", "object_box", "both_boxes", "association", "duplicate",
                                         "interaction", "missed_gt", "false_positive", "false_negative"]
    assert result["error_counts"]["both_boxes"] == 2
    register_error_type(LostPrediction())
    try:
        with_toy = build_diagnosis(gt, pred, map_protocol="all-point").to_dict()
    finally:
        ERROR_REGISTRY.unregister("lost")
    assert with_toy["delta_map"]["lost"] == result["delta_map"]["both_boxes"]
    assert with_toy["map"] == result["map"]
    assert build_diagnosis(gt, pred, map_protocol="all-point").to_dict() == result
    assert np.all(ERROR_REGISTRY.prediction_kinds[1:] == ("human_box", "object_box", "both_boxes", "association",
                                                           "duplicate", "interaction"))


def test_a_name_is_registered_once():
    with pytest.raises(ValueError, match="new name"):
        register_error_type(type("Again", (LostPrediction,), {"name": "duplicate"})())
