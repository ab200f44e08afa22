"""A new study type is one module plus one registry line (issue 17): a toy type, written to a
file outside the project, runs through the generic platform — spec, study, assignment,
responses, exports, dashboard — with no other edit."""

from __future__ import annotations

import importlib.util

import pytest

from metrics import InputError
from studyapp import assignment, dashboard, exports, studies
from studyapp.spec_files import load_spec
from studyapp.studytypes import REGISTRY, get_type, register
from studyhelpers import make_annotators

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
def parity(tmp_path):
    """The toy type's module, loaded from its own file, and its registry line."""
    path = tmp_path / "parity_type.py"
    path.write_text(TOY_MODULE)
    spec = importlib.util.spec_from_file_location("parity_type", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    register(module.Parity())
    yield REGISTRY["parity"]
    del REGISTRY["parity"]


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
