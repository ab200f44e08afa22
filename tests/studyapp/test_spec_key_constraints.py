"""Every key of a study spec fed each invalid value its constraint names (``SPEC_KEYS``), in a
spec that is otherwise valid and reaches that key: each is refused in one line naming the file
and the dotted key, in the constraint's words, the words a function option uses for the same
mistake. Keys whose value is a list or a table have their own rows below."""

from __future__ import annotations

import json
import math

import pytest
from studyhelpers import write_items

from metrics import InputError
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.specs.spec_checker import SPEC_KEYS

N_ITEMS = 6
TOP = {"title": "T", "study_type": "hoi_similarity", "instructions": "Rate.", "raters_per_item": 2}
ITEMS = {"source": "csv", "path": "items.csv"}
ADAPTIVE = {"target_se": 0.5, "min_raters": 2, "max_raters": 3}
CONTEXT = {   # the sections a key's section needs to be read at all
    "items": {}, "practice": {}, "quality": {}, "answers": {}, "display": {}, "prolific": {},
    "example": {"example": {"gt_verb": "ride", "gt_object": "bicycle", "pred_verb": "push.v.01",
                            "pred_object": "bicycle", "rating": 1, "explanation": "Related."}},
    "comprehension": {"comprehension": {"question": "Q?", "options": ["a", "b"], "answer": "a"}},
    "routing": {"adaptive": ADAPTIVE, "routing": {"min_ratings": 10, "min_consistency": 0.2}},
    "adaptive": {"adaptive": ADAPTIVE},
    "llm": {"llm": {"ratings": "llm.csv"}},
    "active": {"llm": {"ratings": "llm.csv"}, "active": {"budget": 3}},
}


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def write(folder, top: dict, sections: dict):
    lines = [f"{k} = {toml_value(v)}" for k, v in top.items()]
    for name, table in sections.items():
        lines += [f"[{name}]", *(f"{k} = {toml_value(v)}" for k, v in table.items())]
    write_items(folder / "items.csv", N_ITEMS)
    rows = (folder / "items.csv").read_text().replace("\ni0", "\np0").splitlines()
    (folder / "practice.csv").write_text("\n".join([rows[0] + ",expected", *(r + ",1" for r in rows[1:3])]) + "\n")
    (folder / "llm.csv").write_text("item_id,m1,m2\n" + "".join(
        f"i{k:02d},{k % 5},{(k * 3) % 5}\n" for k in range(1, N_ITEMS + 1)))
    path = folder / "study.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def spec_with(folder, dotted: str, value):
    """A valid spec with ``dotted`` set to ``value`` (and what that key's section needs)."""
    section, _, key = dotted.rpartition(".")
    top = dict(TOP)
    sections = {"items": dict(ITEMS), **{name: dict(t) for name, t in CONTEXT.get(section, {}).items()}}
    if "adaptive" in sections:
        del top["raters_per_item"]   # an adaptive study takes adaptive.max_raters
    if section == "practice":
        sections["practice"] = {"path": "practice.csv"}
    if section:
        sections.setdefault(section, {})[key] = value
    else:
        top[key] = value
    return write(folder, top, sections)


@pytest.mark.parametrize("dotted", sorted(SPEC_KEYS))
def test_an_invalid_value_of_every_key_is_refused_in_the_constraints_words(tmp_path, dotted):
    section = dotted.rpartition(".")[0]
    sections = {"items": dict(ITEMS), **CONTEXT.get(section, {})}
    if section == "practice":
        sections["practice"] = {"path": "practice.csv"}
    top = {k: v for k, v in TOP.items() if not ("adaptive" in sections and k == "raters_per_item")}
    load_spec(write(tmp_path, top, sections))   # valid: the invalid value below is the only mistake
    for value in SPEC_KEYS[dotted].invalid():
        path = spec_with(tmp_path, dotted, value)
        with pytest.raises(InputError) as refused:
            load_spec(path)
        assert str(refused.value) == f"{path}: key '{dotted}' {SPEC_KEYS[dotted].problem(value)}", value


def test_the_words_are_those_of_a_function_option():
    # the same constraint, the same words: a count, a positive number, a choice, a flag
    problems = {key: SPEC_KEYS[key].problem(value) for key, value in (
        ("raters_per_item", 0), ("adaptive.target_se", 0), ("order", "shuffled"), ("answers.comments", 1),
        ("active.floor", 1.5), ("title", " "))}
    assert problems == {
        "raters_per_item": "must be a whole number ≥ 1, got 0",
        "adaptive.target_se": "must be a number > 0, got 0",
        "order": "must be one of random, fixed, got 'shuffled'",
        "answers.comments": "must be true or false, got 1",
        "active.floor": "must be a number in (0, 1], got 1.5",
        "title": "must be a non-empty string, got ' '",
    }


STRUCTURED = [   # keys whose value is a list or depends on another key
    ("scale.values", "x", "must be a list of whole numbers 0–9, got 'x'"),
    ("comprehension.options", ["a"], "must be a list of at least two non-empty strings, got ['a']"),
    ("active.cells", 3, "must be a list of item field names, got 3"),
    ("adaptive.max_raters", 1, "must be a whole number ≥ 2, got 1"),
    ("active.budget", 7, "must not exceed the 6 main items, got 7"),
]


@pytest.mark.parametrize(("dotted", "value", "words"), STRUCTURED, ids=[row[0] for row in STRUCTURED])
def test_a_structured_key_is_refused_in_its_own_words(tmp_path, dotted, value, words):
    path = spec_with(tmp_path, dotted, value)
    with pytest.raises(InputError) as refused:
        load_spec(path)
    assert str(refused.value) == f"{path}: key '{dotted}' {words}"
