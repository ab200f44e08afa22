"""Image studies: the with-image pass (hoi_similarity_image) and CrossHOI curation on the platform."""

import json
import re
import subprocess
import sys

import pandas as pd
import pytest
from faults import run_in_process
from projectpaths import ROOT
from streamlit.testing.v1 import AppTest
from studyhelpers import curation_spec, earlier_study, image_spec, invite_same, make_study
from test_pages import answer_bar, content_images, content_text, notices, press, progress_text

from metrics import InputError
from metrics.crosshoi._mcq import mcq_scores, parse_bench
from metrics.study._image_update import image_update, pair_ratings
from studyapp.platform import assignment
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies
from studyapp.platform.records.exports import export_study, study_tables
from studyapp.studytypes.crosshoi_curation import crosshoi

APP = str(ROOT / "studyapp" / "views" / "app.py")


def started_page(token: str) -> AppTest:
    """The annotator page of ``token``, past the instructions."""
    at = AppTest.from_file(APP, default_timeout=60)
    at.query_params["token"] = token
    at.run()
    at.button(key="start").click().run()
    return at


def test_with_image_pass_preselects_the_earlier_rating_and_keeps_both(tmp_path):
    earlier_study(tmp_path)
    spec = load_spec(image_spec(tmp_path))
    assert [i.fields["earlier"] for i in spec.items] == [{"alice": "2", "bob": "3"}] * 3
    study = studies.create_study(spec)
    people = invite_same(study, ["alice", "bob", "carol"])
    image_type = spec.items[0].fields
    assert image_type["image"] == "classes/ride__bicycle.png"
    alice, bob, carol = (people[n][0] for n in ("alice", "bob", "carol"))
    from studyapp.studytypes import get_type
    kind = get_type("hoi_similarity_image")
    answers = {"alice": [2, 4, 2], "bob": [3, 3, 1]}  # alice: +2 once; bob: -2 once
    for name, person in (("alice", alice), ("bob", bob)):
        for value in answers[name]:
            task = assignment.next_item(person)
            assert kind.preselect(task.fields, name) == ("2" if name == "alice" else "3")
            assignment.submit(person, task.assignment_id, value, 1.0)
        assert assignment.next_item(person) is None
    assert assignment.next_item(carol) is None  # carol rated nothing before: nothing to re-rate
    ratings = study_tables(spec.slug)["ratings.csv"]
    assert ratings[["annotator", "rating", "earlier_rating"]].values.tolist() == [
        ["alice", "2", "2"], ["alice", "4", "2"], ["alice", "2", "2"],
        ["bob", "3", "3"], ["bob", "3", "3"], ["bob", "1", "3"]]
    r = image_update(pair_ratings(ratings))
    assert (r["n"], r["n_updated"], r["mean_abs_change"]) == (6, 2, 2.0)
    assert r["direction"]["up"] == 1 and r["direction"]["down"] == 1


def test_the_annotator_page_shows_the_image_and_a_missing_image_notice(tmp_path):
    earlier_study(tmp_path)
    spec_path = image_spec(tmp_path)
    study = studies.create_study(load_spec(spec_path))
    token = invite_same(study, ["alice"])["alice"][1]
    at = started_page(token)
    assert not at.exception
    assert [i["class"] for i in content_images(at)] == ["with-boxes", "without-boxes"]
    assert all(i["src"].startswith("data:image/png;base64,") for i in content_images(at))
    assert "is missing" not in content_text(at) and not notices(at, "warning")
    assert "Your earlier rating (without the image): 2." in notices(at, "info")[0]
    assert progress_text(at, with_left=True).startswith("Item 1 of 3 ")  # alice's 3 pairs
    assert answer_bar(at)["current"] == "2"  # preselected: Enter keeps it
    press(at, "answer", 2)  # keep: the same rating stored again with the image
    assert progress_text(at, with_left=True).startswith("Item 2 of 3 ")
    (tmp_path / "imgs" / "classes" / "push__bicycle.png").unlink()
    from studyapp.views.studytypes import hoi_similarity_image as view
    view._png.cache_clear()  # the server keeps the images it drew
    at.run()
    assert "is not available" in content_text(at) and not at.exception
    assert not content_images(at)
    done = subprocess.run([sys.executable, "-m", "studyapp", "check-images", str(spec_path)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 1
    assert "missing    classes/push__bicycle.png" in done.stdout
    assert "3 images under" in done.stdout and "2 ok, 1 missing" in done.stdout


def test_unsafe_image_paths_in_an_image_map_are_refused(tmp_path):
    earlier_study(tmp_path)
    spec = image_spec(tmp_path)
    csv_path = tmp_path / "imgs" / "images.csv"
    csv_path.write_text(csv_path.read_text().replace("classes/hold__bicycle.png", "../../etc/passwd"))
    from metrics import InputError
    with pytest.raises(InputError, match=r"contains '\.\.'"):
        load_spec(spec)


GT = [{"image": "one.png", "hois": [
          {"human_box": [0, 0, 10, 20], "object_box": [10, 10, 20, 20], "verb": "ride", "object": "horse"},
          {"human_box": [0, 0, 10, 20], "object_box": [10, 10, 20, 20], "verb": "straddle", "object": "horse"},
          {"human_box": [50, 0, 60, 20], "object_box": [60, 10, 70, 20], "verb": "hold", "object": "cup"}]},
      {"image": "two.png", "hois": [
          {"human_box": [0, 0, 10, 20], "object_box": [30, 30, 40, 40], "verb": "no_interaction", "object": "bicycle"}]}]


def test_questions_from_ground_truth_and_candidates_never_positive(tmp_path):
    path = tmp_path / "gt.jsonl"
    path.write_text("\n".join(json.dumps(r) for r in GT) + "\n")
    qs = crosshoi.questions_from_ground_truth(path, "human_box")
    assert [(q.key, q.positives) for q in qs] == [
        ("one.png/QA_0", ["ride a/an horse", "straddle a/an horse"]),
        ("one.png/QA_1", ["hold a/an cup"]),
        ("two.png", ["no_interaction with a/an bicycle"])]
    assert qs[0].boxes == {"human": [0.0, 0.0, 10.0, 20.0]}
    assert [len(q.key) for q in crosshoi.questions_from_ground_truth(path, "image_level")] == [7, 7]
    crosshoi.propose_candidates(qs, n=8)
    for q in qs:
        assert len(q.candidates) == 8 and not set(q.candidates) & set(q.positives)
        assert all(c.endswith(q.objects()[0]) for c in q.candidates)
    # near-synonyms of a positive come last: none is proposed before a non-flagged candidate
    flags = [qs[0].flags.get(c) == "near_synonym" for c in qs[0].candidates]
    assert flags == sorted(flags)


@pytest.mark.slow
def test_candidates_on_the_real_benchmark_never_include_a_positive(shared_data):
    qs = crosshoi.questions_from_bench(shared_data / "crosshoi" / "crosshoi_bench_hum_box_final.json")
    assert len(qs) == 1274
    crosshoi.propose_candidates(qs, n=6)
    # the file itself lists 'no_interaction with a/an stop_sign' as both correct and wrong once;
    # as a positive it is not a candidate
    assert all(not set(q.candidates) & set(q.positives) for q in qs)


def test_consensus_majority_and_ties():
    votes = {"a": {"x": "correct", "y": "incorrect", "z": "ambiguous", "w": "correct"},
             "b": {"x": "correct", "y": "correct", "z": "incorrect"},
             "c": {"x": "incorrect", "y": "ambiguous", "z": "correct"}}
    assert crosshoi.consensus(votes) == {"x": "correct"}  # y, z: 1-1-1 ties; w: 1 of 3
    assert crosshoi.consensus({"a": {"x": "correct"}, "b": {"x": "incorrect"}}) == {}  # 1-1 tie
    assert crosshoi.consensus({"a": {"x": "incorrect"}, "b": {"x": "incorrect"}, "c": {"x": "correct"}}) == {"x": "incorrect"}


def test_model_votes_keep_only_unanimously_wrong_candidates(tmp_path):
    q = crosshoi.Question("k", "k", ["ride a/an horse"], {}, ["feed a/an horse", "walk a/an horse", "hug a/an horse"])
    votes = tmp_path / "votes.csv"
    votes.write_text("question,candidate,model,vote\nk,feed a/an horse,gpt,wrong\nk,feed a/an horse,qwen,wrong\n"
                     "k,walk a/an horse,gpt,wrong\nk,walk a/an horse,qwen,correct\n")
    crosshoi.filter_by_models([q], votes)
    assert q.candidates == ["feed a/an horse"]  # walk: disagreement; hug: nobody judged it


def test_curation_study_exports_a_benchmark_that_mcq_scores(tmp_path, capsys):
    spec = curation_spec(tmp_path)
    study = studies.create_study(spec)
    people = invite_same(study, ["a", "b", "c"])
    hold_cup = crosshoi.encode_response  # readability below
    plus = 0  # hoi_id 0 = board airplane
    first = spec.items[0]
    responses = {"a": ["correct", "incorrect", "ambiguous"], "b": ["correct", "incorrect", "incorrect"],
                 "c": ["incorrect", "ambiguous", "correct"]}
    for name, (person, _) in people.items():
        while (task := assignment.next_item(person)) is not None:
            if task.item_key == first.key:
                response = hold_cup(responses[name], [plus] if name != "c" else [], [])
            else:
                response = hold_cup(["incorrect"] * len(task.fields["question"]["candidates"]))
            assignment.submit(person, task.assignment_id, response, 2.0)
    folder = export_study(spec.slug, tmp_path / "out")
    bench = json.loads((folder / "benchmark.json").read_text())
    cands = first.fields["question"]["candidates"]
    curated = parse_bench(bench)[first.key]
    question = {"gt_choices": list(curated.correct), "boxes": curated.boxes,
                "wrong_choices": [o for o in curated.options if o not in curated.correct]}
    positives = first.fields["question"]["positives"]
    # cand 0: 2 of 3 correct -> hard positive; cand 1: 2 incorrect -> negative; cand 2: tie
    # (ambiguous, incorrect, correct) -> excluded; board airplane added by 2 of 3 -> positive
    expected_gt = (positives + [cands[0], "board a/an airplane"])[:4]
    assert question["gt_choices"] == expected_gt
    assert question["wrong_choices"] == [cands[1]][:max(0, 4 - len(expected_gt))]
    assert question["boxes"]["human"] == first.fields["question"]["boxes"]["human"]
    changes = pd.read_csv(folder / "changes.csv")
    mine = changes[changes["question"] == first.key]
    assert sorted(mine[mine["annotator"] == "a"]["change"]) == ["added_positive", "marked_ambiguous", "marked_correct"]
    assert set(mine.loc[mine["action"] == cands[2], "consensus"]) == {"excluded"}
    summary = pd.read_csv(folder / "annotator_changes.csv").set_index("annotator")
    assert summary.loc["c", "questions"] == len(spec.items) and summary.loc["a", "added_positive"] == 1
    # the export loads back and scores: answering its correct choices is perfect
    parsed = parse_bench(bench)
    perfect = mcq_scores(bench, {k: list(q.correct) for k, q in parsed.items()})
    assert perfect["instance_f1"] == 1.0 and perfect["n_questions"] == len(spec.items)
    status, _out, err = run_in_process("metrics", ["mcq", "--bench", str(folder / "benchmark.json"),
                                                   "--pred", str(folder / "benchmark.json")], capsys)
    assert status == 2  # a benchmark is no answer file: refused in one line
    assert len(err.strip().splitlines()) == 1


@pytest.mark.slow
def test_readme_with_image_demo_commands_work_as_written(tmp_path, monkeypatch, capsys):
    """docs/study-types/hoi_similarity_image.md, the with-image pass: demo-images, simulate,
    create, invite --annotators-of.
    demo-images used to write no_interaction rows that create refused; invite used to invite
    annotators who had rated nothing in the earlier study. The earlier study the pass starts
    from (create, simulate) is made through the same entry point in this process; the pass's
    own commands run as processes."""
    import os

    from projectpaths import ROOT
    monkeypatch.setenv("STUDYAPP_DB", str(tmp_path / "demo.sqlite"))
    env = dict(os.environ)

    def run(*args):
        out = subprocess.run([sys.executable, "-m", "studyapp", *args], cwd=ROOT, env=env,
                             capture_output=True, text=True, timeout=600)
        assert out.returncode == 0, (args, out.stderr)
        return out.stdout

    def run_here(*args):
        status, _out, err = run_in_process("studyapp", list(args), capsys)
        assert status == 0, (args, err)

    monkeypatch.chdir(ROOT)
    run_here("create", "studies/demo.toml")
    run("demo-images")
    assert "no_interaction" not in (ROOT / ".data" / "demo_images" / "images.csv").read_text()
    run_here("simulate", "demo", "--k", "5")
    created = run("create", "studies/demo_images.toml")
    raters = created.split("rated by 3 annotators (")[1].split(")")[0].split(", ")
    # the command to run next names the new study (it printed a literal '<slug>')
    assert "`python -m studyapp invite demo-images --annotators-of demo`" in created
    invited = [line.split("\t")[0] for line in run("invite", "demo-images", "--annotators-of", "demo").splitlines()]
    # 5 simulated annotators, 3 raters per item over 50 items: only those who rated are invited
    assert sorted(invited) == sorted(raters)


def test_progress_counts_only_the_pairs_the_annotator_rated_before(tmp_path):
    """The with-image pass said "Item 1 of 50" to an annotator with 2 pairs."""
    study = make_study(tmp_path, n_items=3, raters=2, slug="first", extra='order = "fixed"\n')
    ids = {name: person[0] for name, person in invite_same(study, ["alice", "bob"]).items()}
    task = assignment.next_item(ids["alice"])                 # alice rates one pair only
    assignment.submit(ids["alice"], task.assignment_id, 2, 1.0)
    while (task := assignment.next_item(ids["bob"])) is not None:
        assignment.submit(ids["bob"], task.assignment_id, 3, 1.0)
    second = studies.create_study(load_spec(image_spec(tmp_path)))
    people = invite_same(second, ["alice", "bob"])
    assert assignment.next_item(people["alice"][0]).total == 1
    assert assignment.next_item(people["bob"][0]).total == 3


def test_linking_to_an_unfinished_study_warns(tmp_path):
    study = make_study(tmp_path, n_items=3, raters=1, slug="first", extra='order = "fixed"\n')
    alice = invite_same(study, ["alice"])["alice"][0]
    task = assignment.next_item(alice)
    assignment.submit(alice, task.assignment_id, 2, 1.0)          # 1 of 3 pairs rated
    spec = load_spec(image_spec(tmp_path))
    assert len(spec.items) == 1
    assert "warning: study 'first' is not finished — 2 of its 3 pairs have no rating yet" in spec.source_report


def test_linking_while_an_annotator_is_mid_way_warns_even_when_every_pair_is_rated(tmp_path):
    """Every pair has a rating (bob finished) but alice has rated 1 of her 3: the
    with-image pass is created with a warning naming her, and nothing when all have finished."""
    study = make_study(tmp_path, n_items=3, raters=2, slug="first", extra='order = "fixed"\n')
    people = invite_same(study, ["alice", "bob"])
    while (task := assignment.next_item(people["bob"][0])) is not None:
        assignment.submit(people["bob"][0], task.assignment_id, 3, 1.0)
    task = assignment.next_item(people["alice"][0])
    assignment.submit(people["alice"][0], task.assignment_id, 2, 1.0)
    spec = load_spec(image_spec(tmp_path))
    assert len(spec.items) == 3 and "not finished" not in spec.source_report
    assert ("warning: 1 annotator of study 'first' is still mid-way: alice (1 rated); the pairs "
            "they rate there from now on will not come with images.") in spec.source_report
    while (task := assignment.next_item(people["alice"][0])) is not None:
        assignment.submit(people["alice"][0], task.assignment_id, 2, 1.0)
    assert "mid-way" not in load_spec(image_spec(tmp_path)).source_report


def test_demo_images_csv_is_accepted_by_the_with_image_study(tmp_path):
    """The with-image demo of docs/study-types/hoi_similarity_image.md: every row of the drawn
    images.csv must resolve (HICO-DET has 600 classes, 80 of them no_interaction (one per object),
    which has no verb synset: 520 rows)."""
    from studyapp.platform.launch.demo_images import write_demo
    from studyapp.studytypes.hoi_similarity_image import read_image_map
    written = write_demo(tmp_path)
    rows = written["images_csv"].read_text().splitlines()[1:]
    assert len(rows) == 520 and not any(r.startswith("no_interaction,") for r in rows)
    assert len(read_image_map(written["images_csv"])) == 520


def test_curation_page_mounts_the_mark_form_and_refuses_an_unmarked_candidate(tmp_path):
    """The form gets the shown question's candidates with nothing preselected; an answer with a
    candidate left unmarked stores nothing and says so; a complete one is stored encoded."""
    study = studies.create_study(curation_spec(tmp_path))
    token = invite_same(study, ["a"])["a"][1]
    person = assignment.resolve_token(token)
    at = started_page(token)
    form = answer_bar(at)
    task = assignment.next_item(person)
    assert (form["mode"], form["current"], form["item_id"]) == ("candidates", None, task.assignment_id)
    assert [row["label"] for row in form["items"]] == [
        crosshoi.phrase(c) for c in task.fields["question"]["candidates"]]
    assert form["classes"][0] == crosshoi.class_phrase(0) and len(form["classes"]) == 600
    press(at, "answer", {"marks": ["correct", "incorrect", None], "plus": [], "minus": []})
    assert "incomplete" in notices(at, "error")[0]
    assert assignment.answered_count(person) == 0
    press(at, "answer", {"marks": ["correct", "incorrect", "ambiguous"], "plus": [0], "minus": [5]})
    assert assignment.answered_count(person) == 1
    assert assignment.task_at(person, task.position).response == "m=cia;p=0;n=5"


def test_crosshoi_options_read_as_the_hois_phrase_with_the_right_article():
    """The annotator reads "no interaction with a giraffe", not the benchmark's
    "no_interaction with a/an giraffe"; the option string itself is unchanged."""
    assert crosshoi.phrase("no_interaction with a/an giraffe") == "no interaction with a giraffe"
    assert crosshoi.phrase("sit_on a/an train") == "sit on a train"
    assert crosshoi.phrase("hold a/an umbrella") == "hold an umbrella"
    assert crosshoi.phrase("carry a/an skis") == "carry skis"
    assert crosshoi.option("sit_on", "train") == "sit_on a/an train"
    assert "a/an" not in " ".join(crosshoi.class_phrase(i) for i in range(600))


def test_status_counts_each_annotator_against_their_own_pairs(tmp_path):
    """In a with-image pass an annotator's target is the pairs they rated before
    (2 of the 4 here), not every pair ("bob 9 / 50" with 20 pairs)."""
    first = make_study(tmp_path, n_items=4, raters=1, per_annotator=2, slug="first",
                       extra='order = "fixed"\n')
    for _name, (person, _token) in invite_same(first, ["alice", "bob"]).items():
        while (task := assignment.next_item(person)) is not None:
            assignment.submit(person, task.assignment_id, 2, 1.0)
    study = studies.create_study(load_spec(image_spec(tmp_path, n_items=4)))
    alice = invite_same(study, ["alice"])["alice"][0]
    task = assignment.next_item(alice)
    assignment.submit(alice, task.assignment_id, 3, 1.0)
    (row,) = studies.progress(study)["annotators"]
    assert (row["annotator"], row["done"], row["target"]) == ("alice", 1, 2)


@pytest.mark.parametrize("text, message", [
    ("nan 1 2 3", "human_box must be four numbers"), ("inf 0 1 1", "human_box must be four numbers"),
    ("[5, 5, 1, 1]", "human_box has x2 < x1 or y2 < y1"), ("[1, 2, 3]", "human_box must be four numbers"),
    ("one two three four", "human_box 'one two three four' is not four numbers")])
def test_a_bad_box_of_an_image_item_is_refused_like_a_detection_box(text, message):
    """The with-image type's box reader accepted nan, inf and the inverted [5, 5, 1, 1] that the
    detections' parse_box refuses; it now goes through parse_box."""
    from studyapp.studytypes.hoi_similarity_image import _parse_box
    with pytest.raises(InputError, match=re.escape(f"images.csv line 3: {message}")):
        _parse_box(text, "images.csv line 3", "human_box")
    assert _parse_box("1, 2, 3, 4", "images.csv line 3", "human_box") == [1.0, 2.0, 3.0, 4.0]
