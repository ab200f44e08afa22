"""Raters added by ``studyapp simulate`` are marked (annotators.csv ``source``, ratings.csv
``rater_kind``) and kept out of the dashboard's and report's statistics unless included."""

from __future__ import annotations

from studyhelpers import make_annotators, make_study, rate_all

from studyapp.platform.commands import cli
from studyapp.platform.records import exports
from studyapp.platform.records.simulate import simulate_study
from studyapp.platform.reporting import dashboard
from studyapp.platform.reporting.report_cache import study_report


def test_simulated_raters_are_marked_and_left_out_unless_included(tmp_path, capsys):
    study = make_study(tmp_path, n_items=6, raters=4, slug="t")
    alice, bob = make_annotators(study, 2)
    rate_all(alice, 1)
    rate_all(bob, 3)
    simulate_study("t", k=2, seed=1)
    tables = exports.study_tables("t")
    kinds = tables["annotators.csv"].set_index("source")["annotator"].groupby(level=0).size().to_dict()
    assert kinds == {"invite": 2, "simulated": 2}
    ratings = tables["ratings.csv"]
    assert ratings.groupby("rater_kind").size().to_dict() == {"human": 12, "simulated": 12}
    assert set(exports.study_tables("t")["ratings_history.csv"]["rater_kind"]) == {"human", "simulated"}
    humans = dashboard.study_dashboard("t")
    assert humans.agreement["n_annotators"] == 2 and len(humans.annotators) == 2
    assert humans.agreement["n_ratings"] == 12 and humans.simulated and not humans.include_simulated
    everyone = dashboard.study_dashboard("t", include_simulated=True)
    assert everyone.agreement["n_annotators"] == 4 and len(everyone.annotators) == 4
    assert study_report("t", tmp_path / "out", n_resamples=20, permutations=20).summary["n_annotators"] == 2
    assert cli.main(["report", "t", "--out", str(tmp_path / "out2"), "--include-simulated"]) == 0
    out = capsys.readouterr().out
    assert "4 annotators" in out and "left out" not in out
    assert cli.main(["report", "t", "--out", str(tmp_path / "out3")]) == 0
    assert "2 simulated raters left out (--include-simulated counts them)" in capsys.readouterr().out


def test_the_console_switch_includes_simulated_raters_and_says_how_qwk_is_weighted(tmp_path):
    from studyhelpers import console_page

    from studyapp.core import auth, storage
    study = make_study(tmp_path, n_items=6, raters=4, slug="t")
    alice, bob = make_annotators(study, 2)
    rate_all(alice, 1)
    rate_all(bob, 3)
    simulate_study("t", k=2, seed=1)
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    at = console_page(password)
    assert not at.exception and not at.error

    def captions():
        return " ".join(c.value for c in at.caption)
    assert "2 simulated raters (" in captions() and "left out of α, PPI and the rater table" in captions()
    assert "with each pair weighted by the items it shares" in captions() and "by 2 annotators" in captions()
    next(t for t in at.toggle if t.label == "Include simulated raters").set_value(True).run()
    assert not at.exception and "Simulated raters included in every figure" in captions()
    assert "by 4 annotators" in captions()
