"""Constraints stated as data, fed invalid values by one generic test (as scikit-learn's
``sklearn/tests/test_public_functions.py`` does). The public functions are those the packages of
``metrics`` export in ``__all__`` (constructors of public classes included); every keyword-only
option of each states its constraint (``validate_params``), and each invalid value a constraint
lists is refused before the function runs, in one error naming the option and the value, in the
words of ``metrics.core._validation``. The keys of a study spec (``SPEC_KEYS``) are fed the same
way, and one mistake reads one way wherever it is made: a function's option, a spec's key, an LLM
config's field."""

from __future__ import annotations

import importlib
import inspect
import math
import pkgutil
import re

import pytest

import metrics
from metrics.core import InputError, ParameterError
from metrics.core._constraints import Each, Either, Interval, Options, Whole, validate_params

#: The shape of every range refusal: "must be a [whole] number <range>, got <value>".
RANGE = re.compile(r"must be a (whole )?number (in [\[(][^\]\)]+[\])]|in -?\d+\.\.\d+|[≥>] \S+), got \S+$")

#: Keyword-only arguments that are no options: data, the names of data in messages, callables.
NOT_OPTIONS = {
    # data: matrices, vocabularies, arrays, tables, rating scales, labels of the data
    "verb_sim", "object_sim", "vocabulary", "row", "col", "val", "meta", "frequency", "evaluated", "action_id",
    "object_id", "pairs", "clusters", "scale", "thresholds", "cells", "item", "rater", "rating", "probability",
    "selected", "by", "human", "model", "required", "options",
    # names of the data in messages (a file, a table, a study)
    "source", "name", "items_source", "ratings_source", "gold_source", "why", "given", "study",
    # a dataset or error type: a registered name or the plugin object itself (the registry refuses an
    # unknown name, in the same words)
    "dataset", "oracles",
    # one number or one per simulated rater (an array)
    "noise", "shift",
    # callables, streams and numpy types
    "progress", "sleep", "progress_stream", "order", "add", "dtype",
}

#: The words of the constraints themselves (metrics.core._validation): the constraints are built
#: on them, so they cannot be built on the constraints.
PRIMITIVES = {"metrics.core.at_least_problem", "metrics.core.range_problem"}

def _public_packages() -> list[str]:
    names = ["metrics"]
    for module in pkgutil.walk_packages(metrics.__path__, "metrics."):
        if module.ispkg and not any(part.startswith("_") for part in module.name.split(".")):
            names.append(module.name)
    return names


def public_functions() -> dict[str, object]:
    """Every public function and public class of the packages' ``__all__``, once each (by the
    first package that exports it), that takes keyword-only arguments."""
    found: dict[str, object] = {}
    seen: set[object] = set()
    for package in _public_packages():
        module = importlib.import_module(package)
        for name in module.__all__:
            value = getattr(module, name)
            if not (inspect.isfunction(value) or inspect.isclass(value)) or value in seen:
                continue
            seen.add(value)
            if keyword_options(value) and f"{package}.{name}" not in PRIMITIVES:
                found[f"{package}.{name}"] = value
    return found


def _callable(value):
    return value.__init__ if inspect.isclass(value) else value


def keyword_options(value) -> list[str]:
    try:
        parameters = inspect.signature(_callable(value)).parameters.values()
    except (TypeError, ValueError):
        return []
    return [p.name for p in parameters if p.kind is p.KEYWORD_ONLY]


def constraints_of(value) -> dict:
    return getattr(_callable(value), "parameter_constraints", {})


FUNCTIONS = public_functions()


def _function_cases():
    for name, value in FUNCTIONS.items():
        for parameter, constraint in constraints_of(value).items():
            for bad in constraint.invalid():
                yield pytest.param("function", name, parameter, bad, id=f"{name}-{parameter}-{bad!r}")


def _spec_key_cases():
    try:
        from studyapp.platform.specs.spec_checker import SPEC_KEYS
    except ImportError:   # metrics installed alone
        return
    for dotted, constraint in sorted(SPEC_KEYS.items()):
        for bad in constraint.invalid():
            yield pytest.param("spec key", dotted, dotted, bad, id=f"spec-{dotted}-{bad!r}")


CASES = [*_function_cases(), *_spec_key_cases()]


def shown_at_the_end(bad) -> str:
    return f"got {bad!r}" if isinstance(bad, (str, list)) or bad is True else f"got {bad}"


def test_the_functions_are_found_from_the_packages():
    assert {"metrics.score_detections", "metrics.crosshoi_scores", "metrics.detection.score_dict",
            "metrics.imsitu.two_step_clustering", "metrics.SimilarityMatrix"} <= set(FUNCTIONS)
    assert len(FUNCTIONS) > 60
    # each exemption is an argument of some public function (the list holds no stale name)
    assert NOT_OPTIONS <= {option for value in FUNCTIONS.values() for option in keyword_options(value)}


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_every_option_of_every_public_function_states_its_constraint(name):
    value = FUNCTIONS[name]
    options = set(keyword_options(value)) - NOT_OPTIONS
    assert options <= set(constraints_of(value)), f"{name}: no constraint for {sorted(options - set(constraints_of(value)))}"


@pytest.mark.parametrize("kind,owner,parameter,bad", CASES)
def test_each_invalid_value_is_refused_naming_the_option_and_the_value(tmp_path, kind, owner, parameter, bad):
    """One case per (function or spec key, invalid value its constraint lists)."""
    if kind == "spec key":
        pytest.importorskip("sqlmodel")
        from spechelpers import spec_with, valid_spec

        from studyapp.platform.launch.spec_files import load_spec
        from studyapp.platform.specs.spec_checker import SPEC_KEYS
        load_spec(valid_spec(tmp_path, owner))   # valid: the invalid value below is the only mistake
        path = spec_with(tmp_path, owner, bad)
        with pytest.raises(InputError) as refused:
            load_spec(path)
        assert str(refused.value) == f"{path}: key '{owner}' {SPEC_KEYS[owner].problem(bad)}"
        assert str(refused.value).endswith(shown_at_the_end(bad))
        return
    value = FUNCTIONS[owner]
    required = [p for p in inspect.signature(_callable(value)).parameters.values()
                if p.default is inspect.Parameter.empty and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
                and p.name != "self"]
    with pytest.raises(ParameterError) as refused:   # refused before the missing arguments are noticed
        value(*[None] * len(required), **{parameter: bad})
    message = str(refused.value)
    assert refused.value.parameter == parameter and message.startswith(f"{parameter} must be ")
    assert message.endswith(shown_at_the_end(bad))


def test_a_valid_value_passes_and_the_table_is_kept():
    @validate_params({"k": Whole(1, 5), "mode": Options(("a", "b")), "share": Interval(0, 1)})
    def f(*, k=1, mode="a", share=0.5):
        return k, mode, share

    assert f(k=5, mode="b", share=1) == (5, "b", 1)
    assert set(f.parameter_constraints) == {"k", "mode", "share"}
    with pytest.raises(TypeError, match="has no parameter nope"):
        validate_params({"nope": Whole(0)})(f)


def test_an_option_given_by_position_is_checked_too():
    @validate_params({"confidence": Interval(0, 1, low_open=True, high_open=True)})
    def g(values, confidence=0.95):
        return confidence

    assert g([], 0.5) == 0.5
    with pytest.raises(ParameterError, match=r"^confidence must be a number in \(0, 1\), got 1$"):
        g([], 1)


def test_either_and_each_word_what_both_parts_accept():
    n_init = Either(Whole(1, 1000), Options(("auto",)))
    assert n_init.problem(10) is None and n_init.problem("auto") is None
    assert n_init.problem(0) == "must be a whole number in 1..1000 or one of auto, got 0"
    assert 0 in n_init.invalid() and "auto" not in n_init.invalid() and 3 not in n_init.invalid()
    ks = Each(Whole(2))
    assert ks.problem([2, 3]) is None and ks.problem((2,)) is None
    assert ks.problem([2, 1]) == "must be a non-empty list, each a whole number ≥ 2, got [2, 1]"
    assert ks.problem([]) == "must be a non-empty list, each a whole number ≥ 2, got []"
    assert math.isnan(Interval(0, 1).invalid()[2])


def test_one_mistake_reads_one_way_in_a_function_a_spec_and_an_llm_config(tmp_path):
    from metrics.llm._config import load as load_config

    with pytest.raises(ParameterError) as option:
        metrics.crosshoi_scores({}, {}, iou=-1)
    assert RANGE.search(str(option.value)), option.value

    config = tmp_path / "llm.toml"
    config.write_text('[[endpoints]]\nname = "e"\nbase_url = "http://127.0.0.1:1/v1"\ntimeout = -1\n'
                      '[[models]]\nname = "m"\nendpoint = "e"\n')
    with pytest.raises(InputError) as field:
        load_config(config)
    assert str(field.value).endswith("endpoints[0].timeout must be a number in (0, 3600], got -1"), field.value

    pytest.importorskip("sqlmodel")
    from studyapp.platform.specs.spec_checker import _Checker
    with pytest.raises(InputError) as key:
        _Checker("study.toml", {"raters_per_item": -1}).get("raters_per_item", 3)
    assert str(key.value) == "study.toml: key 'raters_per_item' must be a whole number ≥ 1, got -1"
    assert all(RANGE.search(str(e.value)) for e in (option, field, key))
