"""The study report computed once per state of the ratings (studyapp.platform.reporting.report_cache)."""

import json
import os
import shutil
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from projectpaths import ROOT
from studyhelpers import copy_into, database_in, make_annotators, make_study

from metrics import InputError
from metrics.study._agreement import alpha_of_matrix, rating_matrix
from studyapp.platform import assignment
from studyapp.platform.commands import cli
from studyapp.platform.records import exports
from studyapp.platform.records.simulate import simulate_study
from studyapp.platform.reporting import report_cache

T0 = datetime(2026, 11, 24, 12, 0, 0, tzinfo=UTC)
FAST = {"n_resamples": 30, "permutations": 30}


def at(seconds: int) -> datetime:
    return T0 + timedelta(seconds=seconds)


def files_of(report: Path) -> dict[str, bytes]:
    return {p.name: p.read_bytes() for p in sorted(report.parent.iterdir())}


def cache_entries(tmp_path: Path) -> list[Path]:
    folder = tmp_path / "exports" / "t" / ".report-cache"
    return sorted(p for p in folder.iterdir() if not p.name.startswith(".")) if folder.exists() else []


def alpha_of_export() -> float:
    ratings = exports.study_tables("t")["ratings.csv"]
    return alpha_of_matrix(rating_matrix(ratings.assign(rating=ratings["rating"].astype(float))))


@pytest.fixture(scope="module")
def rated_template(tmp_path_factory):
    """Study ``t`` (12 items, three simulated annotators) built once: ``db/`` holds its database,
    ``reported/`` the same with the cache entry of its report with the FAST options."""
    folder = tmp_path_factory.mktemp("rated")
    with database_in(folder / "db"):
        make_study(folder / "db", n_items=12, raters=4, slug="t")
        simulate_study("t", k=3, noise=0.7, seed=1)
    shutil.copytree(folder / "db", folder / "reported")
    with database_in(folder / "reported"):
        report_cache.cached_report("t", **FAST)
    return folder


@pytest.fixture
def rated(rated_template, tmp_path):
    """Study ``t`` rated by three annotators, no report yet."""
    return copy_into(rated_template / "db", tmp_path)


@pytest.fixture
def reported(rated_template, tmp_path):
    """:func:`rated` with the FAST report already in the cache."""
    return copy_into(rated_template / "reported", tmp_path)


def test_unchanged_ratings_give_the_cached_report_byte_for_byte(rated):
    first = report_cache.study_report("t", now=at(0), **FAST)
    second = report_cache.study_report("t", now=at(1), **FAST)
    assert (first.cached, second.cached) == (False, True)
    assert first.path != second.path and second.path.parent.parent.name == "20261124T120001Z"
    assert files_of(first.path) == files_of(second.path)
    assert second.computed_at == first.computed_at == "2026-11-24T12:00:00+00:00"
    assert second.summary == first.summary
    assert first.summary["alpha"] == pytest.approx(alpha_of_export())
    assert first.summary["n_items"] == 12 and first.summary["n_annotators"] == 3
    # recomputing (no cache) gives the same bytes: the intervals and p-values are seeded
    fresh = report_cache.study_report("t", now=at(2), use_cache=False, **FAST)
    assert not fresh.cached and files_of(fresh.path) == files_of(first.path)


def test_new_ratings_and_other_options_make_a_new_report(reported):
    before = report_cache.study_report("t", now=at(0), **FAST)
    simulate_study("t", k=1, noise=0.7, seed=2)             # a fourth annotator rates every item
    after = report_cache.study_report("t", now=at(1), **FAST)
    assert not after.cached and after.summary["n_annotators"] == 4
    assert after.summary["alpha"] == pytest.approx(alpha_of_export())
    assert after.summary["alpha"] != pytest.approx(before.summary["alpha"])
    more = report_cache.study_report("t", now=at(2), n_resamples=31, permutations=30)
    assert not more.cached
    assert len(cache_entries(reported)) == 3


def test_only_the_newest_entries_are_kept(reported, monkeypatch):
    monkeypatch.setattr(report_cache, "KEEP", 2)
    keys = []
    for seconds, options in enumerate((FAST, {"n_resamples": 21, "permutations": 20},
                                       {"n_resamples": 22, "permutations": 20})):
        report_cache.study_report("t", now=at(seconds), **options)
        keys.append(report_cache.report_key(exports.study_tables("t"), options["n_resamples"], options["permutations"]))
        os.utime(cache_entries(reported)[0].parent / keys[-1], (seconds + 1e9, seconds + 1e9))
    assert [p.name for p in cache_entries(reported)] == sorted(keys[1:])


def test_a_failed_report_writes_nothing(tmp_path):
    make_study(tmp_path, n_items=6, raters=2, slug="t")
    simulate_study("t", k=1, noise=0.7, seed=1)              # one annotator: no agreement
    with pytest.raises(InputError, match="no report yet: only one annotator .* has rated so far"):
        report_cache.study_report("t", now=at(0), **FAST)
    assert not (tmp_path / "exports").exists() or not any((tmp_path / "exports").rglob("*.html"))
    assert cache_entries(tmp_path) == []


def test_the_key_follows_the_code(rated, monkeypatch):
    tables = exports.study_tables("t")
    key = report_cache.report_key(tables, 30, 30)
    monkeypatch.setattr(report_cache, "code_fingerprint", lambda: "another version")
    assert report_cache.report_key(tables, 30, 30) != key


def test_cli_report_from_the_cache_imports_no_analysis_library(rated, capsys):
    """The second ``studyapp report`` of unchanged ratings reads the cache: its process never
    imports scipy, scikit-learn or matplotlib, and prints the figures of the first."""
    env = {**os.environ}
    assert cli.main(["report", "t"]) == 0
    first = capsys.readouterr()
    probe = ("import runpy, sys\n"
             "sys.argv = ['studyapp', 'report', 't']\n"
             "try:\n    runpy.run_module('studyapp', run_name='__main__')\n"
             "except SystemExit:\n    pass\n"
             "print(sorted(m for m in ('scipy', 'sklearn', 'matplotlib', 'streamlit') if m in sys.modules))\n")
    second = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, env=env, capture_output=True, text=True)
    assert second.returncode == 0, second.stderr
    lines = second.stdout.splitlines()
    assert lines[0] == first.out.splitlines()[0]                     # the same figures
    assert "unchanged since" in lines[1] and lines[-1] == "[]"
    summary = json.loads(next(p for p in cache_entries(rated)).joinpath("summary.json").read_text())
    assert f"alpha (ordinal) {summary['summary']['alpha']:.4f}" in lines[0]


@pytest.mark.parametrize("damage", ["summary.json:{truncated", "summary.json:[1, 2]", "report.html:"])
def test_a_damaged_cache_entry_is_computed_again(reported, damage):
    name, text = damage.split(":", 1)
    first = report_cache.study_report("t", now=at(0), **FAST)
    (entry,) = cache_entries(reported)
    if text:
        (entry / name).write_text(text)
    else:
        (entry / name).unlink()
    again = report_cache.study_report("t", now=at(1), **FAST)
    assert not again.cached and files_of(again.path) == files_of(first.path)
    assert report_cache.study_report("t", now=at(2), **FAST).cached      # the entry was rewritten


def test_cli_report_of_an_unknown_study_is_one_line(rated):
    res = subprocess.run([sys.executable, "-m", "studyapp", "report", "nope"], cwd=ROOT, env={**os.environ},
                         capture_output=True, text=True)
    assert res.returncode != 0 and "Traceback" not in res.stderr
    assert len(res.stderr.strip().splitlines()) == 1 and "nope" in res.stderr
    assert cache_entries(rated) == []


def test_cli_report_before_two_annotators_share_an_item_is_one_line(tmp_path):
    """The normal start of a study: two annotators have rated, no item by both yet (one rater
    per item here). The report says so in one line, no traceback, no report folder."""
    study = make_study(tmp_path, n_items=6, raters=1, slug="t")
    for annotator in make_annotators(study, 2):
        assignment.accept_instructions(annotator)
        task = assignment.next_item(annotator)
        assignment.submit(annotator, task.assignment_id, "2", 1.0)
    res = subprocess.run([sys.executable, "-m", "studyapp", "report", "t", "--out", str(tmp_path / "out")],
                         cwd=ROOT, env={**os.environ}, capture_output=True, text=True)
    assert res.returncode != 0 and "Traceback" not in res.stderr, res.stderr
    assert res.stderr.strip().splitlines() == [
        "error: study 't' has no report yet: 2 annotators have rated, but no item has been rated by two "
        "of them yet (each statistic compares annotators on the items they share)"]
    assert not (tmp_path / "out").exists()


def test_a_console_download_writes_no_report_folder(rated):
    """report_html (the console's download) serves the cache entry's own report.html: two
    downloads leave one cache entry and no timestamped folder, and equal `studyapp report`'s file."""
    first = report_cache.report_html("t")
    assert report_cache.report_html("t") == first
    study_dir = rated / "exports" / "t"
    assert sorted(p.name for p in study_dir.iterdir()) == [".report-cache"]
    assert len(cache_entries(rated)) == 1
    report = report_cache.study_report("t", now=at(5))
    assert report.cached and report.path.read_bytes() == first


def test_warm_fills_the_cache_in_a_process_and_writes_no_report_folder(rated):
    """What the console starts when its dashboard sees new ratings: ``report_cache.warm`` in a
    process of its own; the download after it is a copy from the cache, with the figures of the
    ratings as they are (α recomputed from the export)."""
    code = "import sys; from studyapp.platform.reporting import report_cache; print(report_cache.warm(sys.argv[1]))"
    done = subprocess.run([sys.executable, "-c", code, "t"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0 and done.stdout.strip() == "True", done.stderr
    assert len(cache_entries(rated)) == 1
    assert [p.name for p in (rated / "exports" / "t").iterdir()] == [".report-cache"]   # no report folder
    assert report_cache.warm("t") is False                                           # nothing new to do
    report = report_cache.study_report("t", now=at(5))
    assert report.cached and report.summary["alpha"] == pytest.approx(alpha_of_export())
    simulate_study("t", k=1, noise=0.7, seed=9)                                      # new ratings: a new key
    assert report_cache.warm("t") is True and len(cache_entries(rated)) == 2



def test_the_code_fingerprint_covers_both_packages_whole():
    """The report's code fingerprint hashes every file of ``metrics`` and ``studyapp`` (a study
    type's analysis included), wherever the module computing it sits."""
    assert report_cache.code_packages() == (ROOT / "metrics", ROOT / "studyapp")
