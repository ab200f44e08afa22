"""A new study type is one module plus one registry line: a toy type, written to a file outside
the project, runs through the generic platform — spec, study, assignment, responses, exports,
dashboard — with no other edit. Its view is one more module and line, in the views layer's
registry, found by the type's name: a view missing a hook is refused when it is registered, a type
without a view (or whose view lacks the answer form it needs) is told so in one line when it is
shown, and a view entry point named otherwise than its view is skipped with one warning line."""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys

import pytest
from projectpaths import ROOT
from studyhelpers import make_annotators

from metrics import InputError
from metrics.detection import Detections, write_jsonl
from studyapp.platform import assignment
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import exports, studies
from studyapp.platform.reporting import dashboard
from studyapp.studytypes import REGISTRY, get_type, register
from studyapp.views.studytypes import VIEWS, StudyView, register_view, view_of

TOY_MODULE = '''
"""``parity``: is the number shown even?"""

import pandas as pd

from metrics import InputError
from studyapp.studytypes import Scale, StudyType


class Parity(StudyType):
    name = "parity"
    title = "Parity of a number"
    default_scale = Scale(values=(0, 1), labels=("odd", "even"))
    required_fields = ("number",)
    sampler_options = {"n": int}

    def normalize_item(self, row, where):
        try:
            return {"number": int(row["number"])}
        except (KeyError, TypeError, ValueError):
            raise InputError(f"{where}: number {row.get('number')!r} is not a whole number") from None

    def export_item(self, fields):
        return {"number": fields["number"]}

    def sample_items(self, options, base_dir, tables_of):
        rows = [{"item_id": f"n{k}", "number": k} for k in range(1, options.get("n", 4) + 1)]
        return pd.DataFrame(rows), f"{len(rows)} numbers"

    def attention_items(self, items, count):
        return [({"number": 2 * k}, "1") for k in range(1, count + 1)]
'''

TOY_VIEW_MODULE = '''
"""How a ``parity`` item is shown."""

from studyapp.views.studytypes import StudyView


def render_item(fields):
    import streamlit as st

    st.markdown(f"Number: **{fields['number']}**")


def item_content(fields):
    return [["p", {}, "Number: ", ["strong", {}, str(fields["number"])]]]


VIEW = StudyView(name="parity", render_item=render_item, item_content=item_content)
'''

SPEC = '''title = "Parity"
study_type = "parity"
instructions = "Is the number even?"
raters_per_item = 2

[items]
source = "sampler"
n = 5

[quality]
attention_checks = 1
'''


@pytest.fixture
def parity(tmp_path, monkeypatch):
    """The toy type's module and its view's, imported from their own files outside the project,
    and their registry lines."""
    (tmp_path / "parity_type.py").write_text(TOY_MODULE)
    (tmp_path / "parity_view.py").write_text(TOY_VIEW_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    for module in ("parity_type", "parity_view"):
        monkeypatch.delitem(sys.modules, module, raising=False)
    register(importlib.import_module("parity_type").Parity())
    register_view(importlib.import_module("parity_view").VIEW)
    yield REGISTRY["parity"]
    del REGISTRY["parity"], VIEWS["parity"]
    del sys.modules["parity_type"], sys.modules["parity_view"]


def even(task) -> str:
    return "1" if task.fields["number"] % 2 == 0 else "0"


def test_a_toy_type_runs_through_the_generic_platform(parity, tmp_path):
    (tmp_path / "parity.toml").write_text(SPEC)
    spec = load_spec(tmp_path / "parity.toml")
    assert spec.source_report == "5 numbers"
    assert [(item.key, item.role, item.expected) for item in spec.items][-1] == ("attention-1", "attention", "1")
    study_id = studies.create_study(spec)

    first, second = make_annotators(study_id, 2)
    task = assignment.next_item(first)
    with pytest.raises(InputError, match="not on the scale"):
        assignment.submit(first, task.assignment_id, 7, 1.0)
    for annotator in (first, second):
        while (task := assignment.next_item(annotator)) is not None:
            assignment.submit(annotator, task.assignment_id, even(task), 1.0)

    tables = exports.study_tables("parity")
    items = tables["items.csv"]
    assert list(items.columns) == ["item_id", "number", "role", "expected"]
    assert items["number"].tolist() == [1, 2, 3, 4, 5, 2]
    ratings = tables["ratings.csv"]
    assert len(ratings) == 2 * 6 and set(ratings["rating"]) == {"0", "1"}
    folder = exports.export_study("parity", tmp_path / "exports")
    assert {"ratings.csv", "items.csv", "annotators.csv", "items_model.csv"} <= {p.name for p in folder.iterdir()}

    board = dashboard.study_dashboard("parity")
    assert board.agreement["alpha"][0] == pytest.approx(1.0) and board.sections == []


def test_the_registry_line_is_what_makes_the_type_known(parity):
    assert get_type("parity") is parity
    with pytest.raises(ValueError, match="already registered"):
        register(parity)
    with pytest.raises(InputError, match="unknown study type 'parity2'"):
        get_type("parity2")


def test_a_type_is_shown_through_the_view_of_its_name(parity):
    view = view_of(parity)
    assert view is VIEWS["parity"] and view.name == "parity"
    assert view.item_content({"number": 7}) == [["p", {}, "Number: ", ["strong", {}, "7"]]]
    assert view.response_form is None and view.console_section is None


def test_an_incomplete_view_is_refused_at_registration(parity):
    with pytest.raises(ValueError, match=re.escape(
            "the view of study type 'toy' has no item_content: give a StudyView with render_item, item_content")):
        register_view(StudyView(name="toy", render_item=print, item_content=None))
    with pytest.raises(TypeError, match=re.escape("parity_type:Parity is not a studyapp.views.studytypes.StudyView")):
        register_view(type(parity))
    with pytest.raises(ValueError, match="a view of study type 'parity' is already registered"):
        register_view(VIEWS["parity"])
    assert "toy" not in VIEWS


def a_type(parity, **attributes):
    return type("Toy", (type(parity),), {"name": "toy", **attributes})()


def test_a_type_without_a_view_is_told_so_in_one_line(parity):
    toy = register(a_type(parity))
    try:
        with pytest.raises(InputError) as raised:
            view_of(toy)
    finally:
        del REGISTRY["toy"]
    built_in = ["crosshoi_curation", "hoi_similarity", "hoi_similarity_image", "imsitu_correctness"]
    assert str(raised.value) == (f"study type 'toy' has no view (views: {', '.join(built_in)}, parity); "
                                 "declare its StudyView as an entry point of hoi_semantic_eval.study_views")


def test_a_type_answered_by_a_form_needs_a_view_with_one(parity):
    toy = register(a_type(parity, custom_response=True))
    register_view(StudyView(name="toy", render_item=print, item_content=list))
    try:
        with pytest.raises(InputError, match=re.escape(
                "study type 'toy' takes its answers from its view's response_form (custom_response), "
                "but its view has none")):
            view_of(toy)
    finally:
        del REGISTRY["toy"], VIEWS["toy"]


BOTH_KINDS = TOY_MODULE + '''

from metrics.diagnosis import ErrorType


class LostPrediction(ErrorType):
    name, title, section, group, priority = "lost", "Lost prediction", "toy", "false_positive", 5.5

    def test(self, f):
        return ~f.human & ~f.object

    def fix(self, state, d):
        state.keep[d.kind == self.code] = False
'''


def test_a_study_type_and_an_error_type_in_one_plugin_module_both_load(tmp_path):
    """Each registry imports the module when it is first used, not while the other registry is
    being imported (which made ``diagnose`` fail on a partially initialized module)."""
    (tmp_path / "toyboth.py").write_text(BOTH_KINDS)
    dist = tmp_path / "toyboth-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: toyboth\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[hoi_semantic_eval.study_types]\nparity = toyboth:Parity\n\n"
                                           "[hoi_semantic_eval.diagnosis_errors]\nlost = toyboth:LostPrediction\n")
    gt = Detections.from_arrays(["a"], [[0, 0, 10, 10]], [[20, 0, 30, 10]], ["ride"], ["horse"])
    pred = Detections.from_arrays(["a"], [[200, 200, 210, 210]], [[200, 200, 210, 210]], ["ride"], ["horse"], [0.9])
    write_jsonl(gt, tmp_path / "gt.jsonl", with_scores=False)
    write_jsonl(pred, tmp_path / "pred.jsonl")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    diagnosed = subprocess.run([sys.executable, "-m", "metrics", "diagnose", "--gt", str(tmp_path / "gt.jsonl"),
                                "--pred", str(tmp_path / "pred.jsonl"), "--json", str(tmp_path / "d.json")],
                               cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert diagnosed.returncode == 0 and diagnosed.stderr == "", diagnosed.stderr
    assert json.loads((tmp_path / "d.json").read_text())["error_counts"]["lost"] == 1
    listed = subprocess.run([sys.executable, "-m", "studyapp", "plugins"], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=300)
    assert listed.returncode == 0 and listed.stderr == "", listed.stderr
    loaded = {tuple(line.split()[:4]) for line in listed.stdout.splitlines()}
    assert {("study", "type", "parity", "loaded"), ("error", "type", "lost", "loaded")} <= loaded


SHOW_PARITY = ("from studyapp.studytypes import get_type; from studyapp.views.studytypes import view_of; "
               "print(view_of(get_type('parity')).item_content({'number': 3}))")


def test_a_plugin_view_is_found_by_its_types_name_and_a_misnamed_one_is_skipped_once(tmp_path):
    """A package's view is an entry point of ``hoi_semantic_eval.study_views`` named as its type;
    one named otherwise (``again``) is skipped with one warning line and the rest load."""
    (tmp_path / "parity_type.py").write_text(TOY_MODULE)
    (tmp_path / "parity_view.py").write_text(TOY_VIEW_MODULE)
    dist = tmp_path / "parity-1.0.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: parity\nVersion: 1.0\n")
    (dist / "entry_points.txt").write_text("[hoi_semantic_eval.study_types]\nparity = parity_type:Parity\n\n"
                                           "[hoi_semantic_eval.study_views]\nparity = parity_view:VIEW\n"
                                           "again = parity_view:VIEW\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), str(ROOT)])}
    shown = subprocess.run([sys.executable, "-c", SHOW_PARITY], cwd=tmp_path, env=env, capture_output=True,
                           text=True, timeout=300)
    assert shown.returncode == 0, shown.stderr
    assert shown.stdout.strip() == "[['p', {}, 'Number: ', ['strong', {}, '3']]]"
    assert shown.stderr.splitlines() == [
        "study view plugin again = parity_view:VIEW (parity 1.0) skipped: ValueError: the entry point is named "
        "'again' but its study view is named 'parity'; name the entry point 'parity'"]


def test_every_built_in_study_type_has_its_view_in_the_views_layer():
    from importlib.metadata import distribution

    declared = {}
    for entry in distribution("hoi-semantic-eval").entry_points:
        declared.setdefault(entry.group, {})[entry.name] = entry.value
    types, views = declared["hoi_semantic_eval.study_types"], declared["hoi_semantic_eval.study_views"]
    assert sorted(views) == sorted(types) == ["crosshoi_curation", "hoi_similarity", "hoi_similarity_image",
                                              "imsitu_correctness"]
    assert views == {name: f"studyapp.views.studytypes.{name}:VIEW" for name in types}
    for name in types:
        view = view_of(get_type(name))
        assert view.name == name and (view.response_form is not None) == get_type(name).custom_response
