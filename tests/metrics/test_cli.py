import json
import subprocess
import sys

import pytest
from projectpaths import ROOT


def run(*args):
    return subprocess.run([sys.executable, "-m", "metrics", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=120)


def test_help_lists_the_design_commands():
    out = run("--help").stdout
    for name in ("score", "agreement", "alignment", "tune-w", "recalibrate", "mcq", "imsitu",
                 "diagnose", "match", "matrix"):
        assert name in out


def test_match_prints_synset_and_score(tmp_path):
    res = run("match", "--verb", "riding", "--gt-verb", "ride.v.01", "--object", "dining table",
              "--gt-object", "dining_table.n.01", "--json", str(tmp_path / "m.json"))
    assert res.returncode == 0, res.stderr
    assert "ride.v.01" in res.stdout and "dining_table.n.01" in res.stdout
    result = json.loads((tmp_path / "m.json").read_text())
    assert result["verb"]["synset"] == "ride.v.01" and result["verb"]["score"] == 4.0
    assert result["object"]["sim"] == 1.0


def test_matrix_info_and_coverage(tmp_path):
    pairs = tmp_path / "pairs.csv"
    pairs.write_text("a,b\nbicycle.n.01,wheeled_vehicle.n.01\nbicycle.n.01,xyz\ncat.n.01,cat.n.01\n")
    res = run("matrix", "info", str(ROOT / "metrics/datasets/hico_det/data/baseline_object.npz"), "--pairs", str(pairs),
              "--json", str(tmp_path / "i.json"))
    assert res.returncode == 0, res.stderr
    info = json.loads((tmp_path / "i.json").read_text())
    assert info["coverage"]["n_found"] == 1 and info["coverage"]["n_missing"] == 1
    assert info["coverage"]["unknown_labels"] == ["xyz"]
    assert info["meta"]["source"] == "wordnet-baseline"


@pytest.mark.parametrize("content", ["a,b\nx,y\n", "a,b,score\nx,y,9\n"])
def test_bad_matrix_file_gives_one_line_error(tmp_path, content):
    bad = tmp_path / "bad.csv"
    bad.write_text(content)
    res = run("matrix", "info", str(bad))
    assert res.returncode == 2
    assert "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and str(bad) in res.stderr


def test_import_and_help_pull_in_no_heavy_library():
    """`import metrics` and `python -m metrics --help` load no nltk, scikit-learn or
    matplotlib (each costs a second or so of start-up) until a function needs them."""
    import subprocess
    import sys
    code = ("import sys, metrics, metrics.cli as c\n"
            "try:\n    c.main(['--help'])\nexcept SystemExit:\n    pass\n"
            "print(sorted(m for m in ('nltk', 'sklearn', 'matplotlib', 'scipy') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                         cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"


@pytest.mark.parametrize("signal_error, said", [(KeyboardInterrupt(), "interrupted"),
                                                (KeyboardInterrupt("terminated"), "terminated")])
def test_ctrl_c_and_sigterm_end_both_command_lines_with_one_line_saying_so(monkeypatch, capsys, signal_error, said):
    """Ctrl-C (a KeyboardInterrupt without text) says what happened, not a bare "error: "."""
    import metrics.commands._match as match
    from metrics import cli as metrics_cli
    from studyapp.platform.commands import cli as studyapp_cli

    def interrupted(*args):
        raise signal_error
    monkeypatch.setattr(match, "run", interrupted)
    monkeypatch.setitem(studyapp_cli.COMMANDS, "list", interrupted)
    assert metrics_cli.main(["match", "--verb", "ride", "--gt-verb", "ride.v.01"]) == 2
    assert studyapp_cli.main(["list"]) == 2
    assert capsys.readouterr().err.splitlines() == [f"metrics match: error: {said}", f"error: {said}"]


def test_a_closed_output_pipe_ends_quietly_with_sigpipes_status():
    """``metrics vocab | head -1``: the reader leaves after one line; no traceback, status 141."""
    done = subprocess.run(f"{sys.executable} -m metrics vocab --dataset swig-hoi | head -1; "
                          "echo status ${PIPESTATUS[0]} >&2", shell=True, executable="/bin/bash", cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert done.stdout.startswith("label") and done.stdout.count("\n") == 1
    assert done.stderr.strip() == "status 141", done.stderr
