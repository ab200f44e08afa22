"""The imsitu_correctness study type end to end: spec → items → annotator page (AppTest, generated
images) → exports (human accuracy) → console report (alignment table); and the real examples."""

import json

import pytest
from projectpaths import ROOT
from sqlmodel import select
from streamlit.testing.v1 import AppTest
from studyhelpers import IMSITU_PRED as PRED
from studyhelpers import IMSITU_TRUTH as TRUTH
from studyhelpers import console_page, make_annotators, open_tab
from studyhelpers import write_imsitu_study as write_study
from test_pages import answer_bar, content_images, content_text, notices, press, progress_text

from metrics import InputError
from metrics.imsitu._readers import read_examples_predictions
from studyapp.core import images, storage
from studyapp.core.models import Item, Rating
from studyapp.platform import assignment
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import exports, studies
from studyapp.studytypes.imsitu_correctness import analysis

APP = str(ROOT / "studyapp" / "views" / "app.py")
def marks_for(fields) -> str:
    return "".join("1" if v in TRUTH[fields["image"]] else "0" for v in fields["predictions"])


def test_spec_builds_shuffled_items_that_hide_the_model(tmp_path):
    spec = load_spec(write_study(tmp_path))
    assert len(spec.items) == 6 and [i.key for i in spec.items] == [f"q{n:04d}" for n in range(1, 7)]
    models = [i.fields["model"] for i in spec.items]
    assert sorted(models) == ["m1"] * 3 + ["m2"] * 3 and models != ["m1"] * 3 + ["m2"] * 3  # shuffled
    assert all(i.fields["gold"] == [i.fields["image"].split("_")[0]] for i in spec.items)  # from the names
    first = spec.items[0].fields
    assert first["predictions"] == PRED[first["model"]][first["image"]]
    assert "6 items: 3 images × 2 model(s)" in spec.source_report


def test_bad_sources_are_refused_naming_the_problem(tmp_path):
    spec = write_study(tmp_path)
    (tmp_path / "images" / "lying_3.jpg").unlink()
    with pytest.raises(InputError, match="image 'lying_3.jpg' under .*images"):
        load_spec(spec)
    (tmp_path / "pred.json").write_text('{"m1": {"a.jpg": "jumping"}}')
    with pytest.raises(InputError, match="model 'm1'.*image 'a.jpg': predictions must be a list"):
        load_spec(spec)


def open_app(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=60)
    for key, value in params.items():
        at.query_params[key] = value
    return at.run()


def test_annotator_marks_predictions_end_to_end(tmp_path):
    """The mark form gets the item's predictions (never the model); the marks it sends are
    stored for the item shown; Back brings them back for a revision."""
    study_id = studies.create_study(load_spec(write_study(tmp_path)))
    (invite,) = studies.invite(study_id, 1)
    at = open_app(token=invite.token)
    at.button(key="start").click().run()
    assert not at.exception and "is not available" not in content_text(at)  # the image was found and shown
    assert len(content_images(at)) == 1
    with storage.read_session() as session:
        first = json.loads(session.exec(select(Item).where(Item.item_key == "q0001")).one().fields_json)
    form = answer_bar(at)
    assert (form["mode"], form["current"], form["revising"]) == ("verbs", None, False)
    assert [row["label"] for row in form["items"]] == [v.replace("_", " ") for v in first["predictions"]]
    assert first["model"] not in json.dumps(form)
    assert first["model"] not in content_text(at)  # model hidden
    want = marks_for(first)
    press(at, "answer", want)
    assert progress_text(at, with_left=True) == "Item 2 of 6 · 5 left"
    press(at, "back")  # revise: the stored marks come back
    assert "you gave marked correct" in notices(at, "info")[0] and want not in notices(at, "info")[0]  # not "01000"
    assert (answer_bar(at)["current"], answer_bar(at)["revising"]) == (want, True)
    changed = want[:2] + ("0" if want[2] == "1" else "1")
    press(at, "answer", changed)
    with storage.read_session() as session:
        rows = session.exec(select(Rating).order_by(Rating.id)).all()
    assert [(r.revision, r.response) for r in rows] == [(0, want), (1, changed)]


def rated_study(tmp_path) -> int:
    """The study with two annotators who mark every item as TRUTH says."""
    study_id = studies.create_study(load_spec(write_study(tmp_path)))
    for annotator in make_annotators(study_id, 2):
        while (task := assignment.next_item(annotator)) is not None:
            assignment.submit(annotator, task.assignment_id, marks_for(task.fields), 1.0)
    return study_id


def test_exports_give_human_accuracy_and_the_alignment_table(tmp_path):
    study_id = rated_study(tmp_path)
    tables = exports.study_tables("verbs")
    accuracy = tables["human_accuracy.csv"].set_index("model")
    # humans: m1 top-1 jumping ✓, competing ✓, sleeping ✗ -> 2/3; m2 falling ✗, riding ✓, lying ✓ -> 2/3
    assert accuracy.loc["m1", "top1"] == pytest.approx(2 / 3) and accuracy.loc["m2", "top5"] == 1.0
    assert set(tables["items.csv"].columns) >= {"image", "model", "predictions", "gold", "clusters"}

    fields_by_key = {key: fields for key, _role, fields in studies.study_items(study_id)}
    result = analysis.analyse_study("verbs", tables, fields_by_key, n_resamples=200)
    a = result["alignment"]
    assert a["criteria"]["gold"]["top1"]["accuracy"] == {"m1": pytest.approx(1 / 3), "m2": pytest.approx(2 / 3)}
    assert a["criteria"]["gold"]["top1"]["kendall_tau"] is None  # the human accuracies tie
    # gold top-1 labels (images jumping, lying, riding) m1 1,0,0 m2 0,1,1 vs human m1 1,0,1 m2 0,1,1:
    # o11 = 6, o00 = 4, o01 = o10 = 1, n1 = 7, n0 = 5 -> alpha = 1 - 11 * 2 / (2 * 7 * 5)
    assert a["criteria"]["gold"]["top1"]["krippendorff_alpha"] == pytest.approx(1 - 22 / 70)
    assert a["criteria"]["cluster"]["top1"]["krippendorff_alpha"] == pytest.approx(1.0)  # the clusters match humans
    assert a["criteria"]["cluster"]["top1"]["difference"] == {"m1": 0.0, "m2": 0.0}


@pytest.mark.slow
def test_console_dashboard_shows_human_accuracy_and_alignment(tmp_path, monkeypatch):
    rated_study(tmp_path)
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw")
    assert not at.exception and not at.error
    assert any("not ratings on a scale" in i.value for i in at.info)
    assert not at.dataframe                                      # the tables are under Details
    open_tab(at, "Details")
    at.session_state["details-view"] = "Analyses"                           # the type's own tables
    frames = [d.value for d in at.run().dataframe]
    assert any("top1_low" in f.columns for f in frames)      # human accuracy with intervals
    assert any("alpha_top1" in f.columns for f in frames)    # Table 6
    assert any("cluster_top1_diff" in f.columns for f in frames)  # Table 5


def test_a_study_from_the_real_examples_loads_every_image_and_prediction(shared_data, tmp_path):
    folder = shared_data / "imsitu_examples"
    spec_path = tmp_path / "real.toml"
    spec_path.write_text(f'''title = "imSitu examples"
study_type = "imsitu_correctness"
instructions = "Mark the verbs."
[items]
source = "sampler"
examples = "{folder}"
''')
    spec = load_spec(spec_path)
    ranked = read_examples_predictions(folder / "predictions")
    assert len(spec.items) == 11 == len(ranked)
    for item in spec.items:
        f = item.fields
        assert f["predictions"] == ranked[f["image"]][:5] and f["gold"] == ["jumping"]
        assert images.load_image(f["image_root"], f["image"]) is not None
    studies.create_study(spec)
    assert len(studies.study_items(1)) == 11


def test_the_guides_spec_and_the_demo_spec_load(shared_data, tmp_path):
    """The guide's ```toml``` block is a complete spec (no "missing key 'title'") and
    studies/demo_imsitu.toml exists. Both load (from studies/, where their relative path points)."""
    import re

    guide = (ROOT / "docs" / "study-types" / "imsitu_correctness.md").read_text()
    block = re.search(r"```toml\n(.*?)```", guide, re.S).group(1)
    (tmp_path / "shared").symlink_to(shared_data.parent)      # ../../shared from tmp/project/studies
    snippet = tmp_path / "project" / "studies" / "guide-snippet.toml"
    snippet.parent.mkdir(parents=True)
    snippet.write_text(block)
    from_guide = load_spec(snippet)
    demo = load_spec(ROOT / "studies" / "demo_imsitu.toml")
    assert demo.slug == "demo-imsitu" and from_guide.slug == snippet.stem     # default slug: the file name
    n_images = len(list((shared_data / "imsitu_examples" / "images").iterdir()))
    assert len(demo.items) == len(from_guide.items) == n_images             # one model: an item per image
    assert [i.fields["predictions"] for i in demo.items] == [i.fields["predictions"] for i in from_guide.items]
