"""Models scored in the console (issue 19 item 3): the figures equal ``python -m metrics score``
run as a process on the same files, with the baseline matrices and with a saved matrix version
exported for ``--verb-sim`` / ``--object-sim``; bad files are refused naming file and line."""

import json
import subprocess
import sys

import pytest

from conftest import ROOT
from metrics import InputError
from metrics.detections import write_jsonl
from studyapp import matrix_versions, scoring
from studyapp.simulate import simulate_study
from studyhelpers import make_study


@pytest.fixture
def files(tmp_path):
    from benchmarks.score_hico_scale import workload

    gt, pred = workload(25, 90, 15, seed=2)
    _, other = workload(25, 90, 15, seed=3)
    write_jsonl(gt, tmp_path / "gt.jsonl", with_scores=False)
    write_jsonl(pred, tmp_path / "model_a.jsonl")
    write_jsonl(other, tmp_path / "model_b.jsonl")
    return tmp_path


def cli_score(folder, pred, *matrices):
    out = folder / f"cli-{pred}-{len(matrices)}.json"
    args = [sys.executable, "-m", "metrics", "score", "--gt", str(folder / "gt.jsonl"),
            "--pred", str(folder / pred), "--json", str(out), *matrices]
    subprocess.run(args, cwd=ROOT, check=True, capture_output=True)
    return json.loads(out.read_text())


def test_scores_equal_the_score_command_for_baseline_and_a_version(files):
    make_study(files, n_items=30, raters=3, slug="t")
    simulate_study("t", k=3, noise=0.5, seed=1)
    matrix_versions.save_version("v1", matrix_versions.recalibrate_studies(["t"], folds=3))
    exported = files / "v1"
    matrix_versions.export_version("v1", exported)
    steps = []
    scores = scoring.score_models(files / "gt.jsonl", {"a": files / "model_a.jsonl", "b": files / "model_b.jsonl"},
                                  ["v1"], progress=lambda f, text: steps.append(f))
    ours = json.loads(scores.to_json())["models"]
    for model, pred in (("a", "model_a.jsonl"), ("b", "model_b.jsonl")):
        assert ours[model][scoring.BASELINE] == cli_score(files, pred)
        assert ours[model]["version v1"] == cli_score(files, pred, "--verb-sim", str(exported / "verb.npz"),
                                                      "--object-sim", str(exported / "object.npz"))
    assert ours["a"][scoring.BASELINE] != ours["a"]["version v1"]   # the version changes the scores
    assert len(scores.table) == 4 and list(scores.table["model"]) == ["a", "a", "b", "b"]
    row = scores.table.iloc[0]
    assert row["SHOE mAP"] == round(100 * ours["a"][scoring.BASELINE]["shoe_map"], 2)
    assert row["mAP (Full)"] == round(100 * ours["a"][scoring.BASELINE]["hico"]["default"]["full"], 2)
    assert steps == sorted(steps) and steps[-1] == 1.0


def test_a_bad_predictions_file_is_named_with_its_line(files):
    bad = files / "broken.jsonl"
    bad.write_text((files / "model_a.jsonl").read_text().splitlines()[0] + "\n{not json\n")
    with pytest.raises(InputError, match=r"broken\.jsonl.*line 2"):
        scoring.score_models(files / "gt.jsonl", {"broken": bad})
    with pytest.raises(InputError, match="no matrix version named 'nope'"):
        scoring.score_models(files / "gt.jsonl", {"a": files / "model_a.jsonl"}, ["nope"])
