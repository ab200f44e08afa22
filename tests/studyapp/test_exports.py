"""Exports (ratings.csv, items.csv, annotators.csv) and the platform command line."""

import os
import subprocess
import sys

import pandas as pd
import pytest
from projectpaths import ROOT
from studyhelpers import make_annotators, make_study, write_spec

from studyapp.core import storage
from studyapp.core.models import Study
from studyapp.platform import assignment
from studyapp.platform.records import exports


def run(*args, env_path, extra_env=None):
    env = {**os.environ, "STUDYAPP_DB": str(env_path / "cli.sqlite"),
           "STUDYAPP_EXPORTS": str(env_path / "out"), **(extra_env or {})}
    return subprocess.run([sys.executable, "-m", "studyapp", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=300, env=env)


def test_export_writes_the_design_columns_with_the_stored_values(tmp_path):
    study = make_study(tmp_path, n_items=2, raters=2, extra='order = "fixed"\n')
    ann_a, ann_b = make_annotators(study, 2)
    task = assignment.next_item(ann_a)                 # a: i01 -> 3, then revised to 1
    assignment.submit(ann_a, task.assignment_id, 3, 2.0, seen_ms=1900, in_view=True)
    assignment.submit(ann_a, task.assignment_id, 1, 0.5, revise=True, seen_ms=412, in_view=False)
    task = assignment.next_item(ann_b)                 # b: i01 is claimed once, i02 not yet
    assert task.item_key == "i02"
    assignment.submit(ann_b, task.assignment_id, 4, 1.25)  # not from a screen: seen unknown

    with storage.read_session() as session:
        slug = session.get(Study, study).slug
    folder = exports.export_study(slug)
    assert folder.parent == tmp_path / "exports" / slug
    ratings = pd.read_csv(folder / "ratings.csv", dtype={"annotator": str})
    assert list(ratings.columns) == ["study", "item_id", "annotator", "rating", "phase",
                                     "created_at", "seconds_spent", "revisions", "seen_ms", "in_view",
                                     "rater_kind"]
    assert set(ratings["rater_kind"]) == {"human"}
    got = ratings[["item_id", "rating", "phase", "seconds_spent", "revisions"]].values.tolist()
    assert got == [["i01", 1, "main", 2.5, 2], ["i02", 4, "main", 1.25, 1]]
    raw = (folder / "ratings.csv").read_text().splitlines()
    assert [line.split(",")[-3:-1] for line in raw[1:]] == [["412", "False"], ["", ""]]
    history = pd.read_csv(folder / "ratings_history.csv")
    assert history["rating"].tolist() == [3, 1, 4] and history["revision"].tolist() == [0, 1, 0]
    assert (folder / "ratings_history.csv").read_text().splitlines()[1].split(",")[-3:-1] == ["1900", "True"]

    items = pd.read_csv(folder / "items.csv")
    assert list(items.columns[:7]) == ["item_id", "category", "gt_verb", "gt_object", "pred_verb",
                                       "pred_object", "level"]
    assert not {"verb_sim", "object_sim"} & set(items.columns)   # not known for these items: absent, not empty
    assert items[["item_id", "category", "gt_verb", "pred_verb", "gt_object"]].values.tolist() == [
        ["i01", 2, "ride.v.01", "push.v.01", "bicycle.n.01"],
        ["i02", 2, "push.v.01", "hold.v.02", "bicycle.n.01"]]

    annotators = pd.read_csv(folder / "annotators.csv")
    assert annotators["n_ratings"].tolist() == [1, 1]
    assert annotators["median_seconds"].tolist() == [2.5, 1.25]
    assert annotators["status"].tolist() == ["rating", "rating"]


def test_export_has_the_rater_model_of_the_main_ratings(tmp_path):
    study = make_study(tmp_path, n_items=8, raters=3)
    truth = {f"i{k:02d}": k % 5 for k in range(1, 9)}
    shifts = {0: 0, 1: -1, 2: 0}  # the second annotator rates one point lower
    for index, annotator_id in enumerate(make_annotators(study, 3)):
        while (task := assignment.next_item(annotator_id)) is not None:
            value = min(4, max(0, truth[task.item_key] + shifts[index]))
            assignment.submit(annotator_id, task.assignment_id, value, 1.0)
    with storage.read_session() as session:
        slug = session.get(Study, study).slug
    folder = exports.export_study(slug)
    items = pd.read_csv(folder / "items_model.csv")
    raters = pd.read_csv(folder / "raters_model.csv", dtype={"annotator": str})
    assert list(items.columns) == ["item_id", "score", "se", "n"]
    assert list(raters.columns) == ["annotator", "severity", "consistency", "flag"]
    assert sorted(items["item_id"]) == sorted(truth) and set(items["n"]) == {3}
    by_truth = items.assign(truth=items["item_id"].map(truth)).sort_values("truth")
    assert by_truth.groupby("truth")["score"].mean().is_monotonic_increasing
    severity = raters.set_index("annotator")["severity"]
    ratings = pd.read_csv(folder / "ratings.csv", dtype={"annotator": str})
    lower = ratings.groupby("annotator")["rating"].mean().idxmin()  # the one rating lower
    assert severity.idxmax() == lower and severity[lower] > 0.4


def test_cli_create_invite_status_export(tmp_path):
    spec = write_spec(tmp_path, n_items=3, raters=2)
    res = run("create", str(spec), env_path=tmp_path)
    assert res.returncode == 0, res.stderr
    assert "created study 't'" in res.stdout and "3 items, 2 raters per item" in res.stdout
    res = run("invite", "t", "--label", "alice", "--label", "bob", env_path=tmp_path)
    lines = res.stdout.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["alice", "bob"]
    assert all("/?token=" in line for line in lines)
    res = run("status", "t", "--set", "paused", env_path=tmp_path)
    assert res.stdout.splitlines()[:2] == ["t: paused, 0 of 6 ratings (3 items)",
                                           "annotators: rated at least once: 0, arrived: 0, invited, not arrived: 2"]
    res = run("export", "t", env_path=tmp_path)
    assert res.returncode == 0
    folder = res.stdout.strip().split("wrote ")[1]
    assert sorted(p.name for p in (tmp_path / "out" / "t").glob("*/*.csv")) == [
        "annotators.csv", "items.csv", "items_model.csv", "raters_model.csv", "ratings.csv",
        "ratings_history.csv"]
    assert folder.startswith(str(tmp_path / "out" / "t"))
    res = run("export", "nope", env_path=tmp_path)
    assert res.returncode == 2 and res.stderr.strip() == "error: no study named 'nope'"


def test_create_without_wordnet_stops_with_one_line_naming_the_folder(tmp_path):
    # a machine where setup never installed WordNet: one line naming where it looked, no study,
    # not an index build announced per item followed by "no items to rate"
    spec = write_spec(tmp_path, n_items=3)
    empty = tmp_path / "no_nltk_data"
    empty.mkdir()
    res = run("create", str(spec), env_path=tmp_path,
              extra_env={"HOI_NLTK_DATA": str(empty), "HOI_WORDNET_INDEX": ""})
    assert res.returncode == 2
    assert res.stderr.strip().splitlines() == [
        f"error: WordNet 3.0 not found in {empty / 'corpora' / 'wordnet'}; "
        "run ./scripts/setup.sh to install it"]
    assert "building" not in res.stderr and not list(empty.iterdir())
    assert not (tmp_path / "cli.sqlite").exists()


@pytest.mark.slow
def test_demo_seed_is_idempotent_and_prints_a_working_link(tmp_path):
    from studyapp.platform.launch import demo
    first_id, created, link = demo.seed_demo()
    again_id, created_again, link2 = demo.seed_demo()
    assert created and not created_again and first_id == again_id
    assert link.token != link2.token
    with storage.read_session() as session:
        assert assignment.annotator_by_token(session, link2.token) is not None
    from studyapp.platform.records.studies import progress
    p = progress(first_id)
    assert p["items"] == 50 and p["ratings_needed"] == 150


def test_items_csv_has_no_empty_similarity_columns(tmp_path):
    # items without verb_sim / object_sim (SHOE's files, a plain items CSV): the columns are absent,
    # not empty; the study's analysis takes them from the baseline matrices as before
    make_study(tmp_path, n_items=4, slug="nosims")
    items = exports.study_tables("nosims")["items.csv"]
    assert "verb_sim" not in items.columns and "object_sim" not in items.columns
    assert list(items.columns[:2]) == ["item_id", "category"] and items["category"].notna().all()
