"""The words of study-spec keys: a key's constraint (``SPEC_KEYS``) words a mistake as a function
option words the same mistake, and keys whose value is a list or depends on another key refuse in
their own words. Every key fed each invalid value its constraint lists is one family of cases of
the generic test of every constraint, tests/metrics/test_parameter_constraints.py."""

from __future__ import annotations

import pytest
from spechelpers import spec_with

from metrics import InputError
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.specs.spec_checker import SPEC_KEYS


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
