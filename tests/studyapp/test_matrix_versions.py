"""Recalibrated matrices as named versions: the studyapp commands against the metric
package's own ``recalibrate`` on the study's export, immutability, export and compare."""

import json

import numpy as np
import pytest
from sqlmodel import select
from studyhelpers import console_page, make_study

from metrics.cli import main as metrics_main
from metrics.vocab._baseline import default_path
from metrics.vocab._similarity import SimilarityMatrix
from studyapp.core import storage
from studyapp.core.models import MatrixVersion
from studyapp.platform.commands.cli import main as studyapp_main
from studyapp.platform.operations import matrix_versions
from studyapp.platform.records import exports
from studyapp.platform.records.simulate import simulate_study


@pytest.fixture
def rated(tmp_path):
    make_study(tmp_path, n_items=30, raters=3, slug="t")
    simulate_study("t", k=3, noise=0.5, seed=1)
    return tmp_path


def test_a_version_equals_the_metric_package_run_on_the_export(rated, capsys):
    tmp_path = rated
    assert studyapp_main(["recalibrate", "t", "--name", "v1", "--folds", "3"]) == 0
    printed = capsys.readouterr().out
    assert "held-out agreement (Eq. 13)" in printed and "saved matrix version 'v1'" in printed
    # the same ratings through `python -m metrics recalibrate` on the study's export files
    folder = exports.export_study("t", tmp_path / "exports")
    assert metrics_main(["recalibrate", "--ratings", str(folder / "ratings.csv"),
                         "--items", str(folder / "items.csv"), "--verb-sim", str(default_path("v")),
                         "--object-sim", str(default_path("n")), "--folds", "3",
                         "--out", str(tmp_path / "direct")]) == 0
    assert studyapp_main(["matrices", "export", "v1", "--out", str(tmp_path / "v1")]) == 0
    evidence = matrix_versions.recalibrate_studies(["t"], folds=3).result["evidence"]
    for role in ("verb", "object"):
        saved = SimilarityMatrix.load(tmp_path / "v1" / f"{role}.npz")
        direct = SimilarityMatrix.load(tmp_path / "direct" / f"{role}_recalibrated.npz")
        assert sorted(saved.labels) == sorted(direct.labels)
        labels = np.array(sorted(saved.labels), dtype=object)
        rng = np.random.default_rng(0)  # every rated pair, and a sample of the others
        ev = evidence[role]
        a = np.concatenate([ev.a, rng.choice(labels, 100_000)])
        b = np.concatenate([ev.b, rng.choice(labels, 100_000)])
        np.testing.assert_array_equal(saved.scores(a, b), direct.scores(a, b))
    provenance = json.loads((tmp_path / "v1" / "provenance.json").read_text())
    assert provenance["studies"] == ["t"] and provenance["based_on"] == "baseline"
    assert provenance["n_ratings"] == 90 and provenance["parameters"]["folds"] == 3
    assert set(provenance["held_out"]["by_category"]) == {"2"}  # the helper's items are category 2


def test_versions_are_never_overwritten_and_compare_to_themselves(rated, capsys):
    run = matrix_versions.recalibrate_studies(["t"], folds=3)
    matrix_versions.save_version("v1", run)
    with pytest.raises(Exception, match="exists already"):
        matrix_versions.save_version("v1", matrix_versions.recalibrate_studies(["t"], folds=3, w=0.3))
    assert studyapp_main(["recalibrate", "t", "--name", "bad name!"]) == 2
    assert "version name 'bad name!'" in capsys.readouterr().err
    with storage.read_session() as session:
        assert [v.name for v in session.exec(select(MatrixVersion))] == ["v1"]
    table = matrix_versions.list_versions()
    assert list(table["name"]) == ["v1"] and table["n_ratings"].iloc[0] == 90
    # the most-changed table: |after - before| in decreasing order
    change = run.changed["change"].abs().to_numpy()
    assert (np.diff(change) <= 1e-12).all() and len(run.changed) > 0
    assert studyapp_main(["matrices", "compare", "v1", "v1"]) == 0
    assert capsys.readouterr().out.count("Eq. 13 agreement 1.000") == 2
    assert studyapp_main(["matrices", "export", "nope", "--out", "x"]) == 2
    assert "no matrix version named 'nope'" in capsys.readouterr().err


def test_console_recalibrates_saves_and_offers_the_version(rated, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw", area="Matrices")
    at.multiselect(key="recal-studies").select("t").run()
    at.button(key="recalibrate").click().run()
    assert not at.exception and not at.error
    at.text_input(key="version-name").input("from-console")
    at.button(key="save-version").click().run()
    assert any("Saved matrix version from" in s.value for s in at.success), ([e.value for e in at.error], [s.value for s in at.success], at.exception)
    assert list(matrix_versions.list_versions()["name"]) == ["from-console"]
    assert at.selectbox(key="version-pick").value == "from-console"
    assert not [c for c in at.code if " vs " in c.value]     # nothing compared until asked
    matrix_versions.save_version("second", matrix_versions.recalibrate_studies(["t"], folds=3, w=0.3))
    at.run()
    at.selectbox(key="version-other").select("second").run()
    assert not at.exception
    assert [c.value.splitlines()[0] for c in at.code if " vs " in c.value] == [
        "verb: from-console vs second", "object: from-console vs second"]


def test_based_on_a_version_from_the_same_study_says_before_is_not_held_out(rated, tmp_path, capsys):
    """v2 based on v1, both from study t: v1's matrices have seen t's ratings, so the 'before'
    figure is in-sample. Said in the CLI; a run on another study says nothing."""
    assert studyapp_main(["recalibrate", "t", "--name", "v1", "--folds", "3"]) == 0
    capsys.readouterr()
    assert studyapp_main(["recalibrate", "t", "--name", "v2", "--based-on", "v1", "--folds", "3"]) == 0
    notes = [line for line in capsys.readouterr().out.splitlines() if line.startswith("note:")]
    assert notes == ["note: 'before' is not held out: version 'v1' was recalibrated from t already, so its "
                     "agreement on these ratings is in-sample (the folds hold out ratings from the new fit only)"]
    assert matrix_versions.recalibrate_studies(["t"], based_on="v2", folds=3).seen_by_base == ["t"]  # via v1
    (tmp_path / "other").mkdir()
    make_study(tmp_path / "other", n_items=12, raters=2, slug="u")
    simulate_study("u", k=2, seed=3)
    run = matrix_versions.recalibrate_studies(["u"], based_on="v2", folds=3)
    assert run.seen_by_base == [] and run.before_note() is None
