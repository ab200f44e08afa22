"""A new study type is one module plus one registry line: a toy type, written to a file outside
the project, runs through the generic platform — spec, study, assignment, responses, exports,
dashboard — with no other edit. Its view is declared in the same module; a type whose view is
missing or incomplete is refused when it is registered, with the reason."""

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
from studyapp.studytypes import REGISTRY, StudyView, get_type, register, view_of

TOY_MODULE = '''
"""``parity``: is the number shown even?"""

import pandas as pd

from metrics import InputError
from studyapp.studytypes import Scale, StudyType, StudyView


def render_item(fields):
    import streamlit as st

    st.markdown(f"Number: **{fields['number']}**")


def item_content(fields):
    return [["p", {}, "Number: ", ["strong", {}, str(fields["number"])]]]


class Parity(StudyType):
    name = "parity"
    title = "Parity of a number"
    view = StudyView(render_item=render_item, item_content=item_content)
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
    """The toy type's module, imported from its own file outside the project, and its registry line."""
    (tmp_path / "parity_type.py").write_text(TOY_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "parity_type", raising=False)
    module = importlib.import_module("parity_type")
    register(module.Parity())
    yield REGISTRY["parity"]
    del REGISTRY["parity"]
    del sys.modules["parity_type"]


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


def test_a_single_module_type_shows_its_items_through_its_declared_view(parity):
    view = view_of(parity)
    assert view.item_content({"number": 7}) == [["p", {}, "Number: ", ["strong", {}, "7"]]]
    assert view.response_form is None and view.console_section is None


def a_type(module, **attributes):
    return type("Toy", (module.Parity,), {"name": "toy", **attributes})()


def test_a_type_without_a_usable_view_is_refused_at_registration(parity):
    module = sys.modules[type(parity).__module__]
    refusals = {
        "declares no view: set view = a StudyView (render_item, item_content)": {"view": ""},
        "declares no view": {"view": "parity_type"},        # a module but no attribute
        "declares view 'no_such_module:VIEW', but there is no module 'no_such_module'": {"view": "no_such_module:VIEW"},
        "has a view without response_form": {"custom_response": True},
        "has a view without item_content": {"view": StudyView(render_item=print, item_content=None)},
    }
    for reason, attributes in refusals.items():
        with pytest.raises(ValueError, match=re.escape(f"study type 'toy' {reason}")):
            register(a_type(module, **attributes))
    assert "toy" not in REGISTRY


def test_a_view_named_by_module_and_attribute_is_resolved_on_first_use(parity):
    module = sys.modules[type(parity).__module__]
    module.VIEW = parity.view
    toy = register(a_type(module, view="parity_type:VIEW"))
    try:
        assert view_of(toy) is parity.view
        module.VIEW = "not a view"
        other = register(a_type(module, name="toy2", view="parity_type:VIEW"))
        with pytest.raises(InputError, match="study type 'toy2': its view 'parity_type:VIEW' is not a StudyView"):
            view_of(other)
    finally:
        REGISTRY.pop("toy", None)
        REGISTRY.pop("toy2", None)


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
