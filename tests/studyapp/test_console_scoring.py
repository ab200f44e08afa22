"""Models scored in the console: the figures equal ``python -m metrics score``
run as a process on the same files, with the baseline matrices and with a saved matrix version
exported for ``--verb-sim`` / ``--object-sim``; bad files are refused naming file and line."""

import json
import subprocess
import sys

import pytest
from projectpaths import ROOT
from studyhelpers import make_study, signed_in

from metrics import InputError
from metrics.detection._detections import write_jsonl
from studyapp.core import accounts
from studyapp.platform.operations import matrix_versions, scoring
from studyapp.platform.records.simulate import simulate_study


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


def test_console_scoring_tab_signs_in_uploads_and_shows_the_command_figures(files):
    accounts.add_account("vera", "viewer", "vera-password")     # a viewer may score models
    at = signed_in("vera", "vera-password", area="Scoring")
    gt, pred = at.file_uploader(key="score-gt"), at.file_uploader(key="score-pred")
    gt.set_value(("gt.jsonl", (files / "gt.jsonl").read_bytes(), "application/octet-stream"))
    pred.set_value([(name, (files / name).read_bytes(), "application/octet-stream")
                    for name in ("model_a.jsonl", "model_b.jsonl")])
    at.run()
    at.button(key="score").click().run()
    assert not at.exception and not at.error
    table = next(d.value for d in at.dataframe if "SHOE mAP" in d.value.columns)
    assert list(table["model"]) == ["model_a", "model_b"]
    for (_, row), pred_name in zip(table.iterrows(), ("model_a.jsonl", "model_b.jsonl")):
        cli = cli_score(files, pred_name)
        assert row["SHOE mAP"] == round(100 * cli["shoe_map"], 2)
        assert row["mAP (Full)"] == round(100 * cli["hico"]["default"]["full"], 2)
    assert accounts.audit_log(accounts.FIRST_OWNER)["who"].iloc[0] == "vera"
    assert accounts.audit_log(accounts.FIRST_OWNER)["action"].iloc[0] == "scored"

    broken = (files / "model_a.jsonl").read_text().splitlines()[0] + "\n{not json\n"
    at.file_uploader(key="score-pred").set_value(("broken.jsonl", broken.encode(), "application/octet-stream"))
    at.button(key="score").click().run()
    shown = at.error[0].value.replace("\\", "").replace("\u2060", "")    # as read, without markdown escapes
    assert len(at.error) == 1 and shown.startswith("broken.jsonl: line 2 column 2: invalid JSON")
    # the failed re-score replaces the previous results: no stale table or scores.json under the error
    assert not [d for d in at.dataframe if "SHOE mAP" in d.value.columns]
    assert "Download scores.json" not in [b.label for b in at.get("download_button")]
