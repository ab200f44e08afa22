"""Constraints stated as data: every public function of ``metrics`` that states its options'
constraints (``validate_params``) refuses an invalid value of each, before it runs, naming the
option in the words of ``metrics.core._validation``; and one mistake reads one way wherever it is
made: a function's option, a study spec's key, an LLM config's field."""

from __future__ import annotations

import inspect
import re

import pytest

import metrics
from metrics.core import InputError, ParameterError
from metrics.core._constraints import Interval, Options, Whole, validate_params

#: The shape of every range refusal: "must be a [whole] number <range>, got <value>".
RANGE = re.compile(r"must be a (whole )?number (in [\[(][^\]\)]+[\])]|in -?\d+\.\.\d+|[≥>] \S+), got \S+$")


def constrained_functions() -> dict[str, object]:
    out = {}
    for name in metrics.__all__:
        value = getattr(metrics, name)
        if callable(value) and hasattr(value, "parameter_constraints"):
            out[name] = value
    return out


CASES = [(name, parameter, bad) for name, function in constrained_functions().items()
         for parameter, constraint in function.parameter_constraints.items() for bad in constraint.invalid()]


def test_the_public_functions_state_their_constraints():
    assert {"crosshoi_scores", "recalibrate_ppi"} <= set(constrained_functions())


@pytest.mark.parametrize("name,parameter,bad", CASES, ids=[f"{n}-{p}-{b!r}" for n, p, b in CASES])
def test_each_option_refuses_an_invalid_value_before_the_function_runs(name, parameter, bad):
    function = getattr(metrics, name)
    required = [p for p in inspect.signature(function).parameters.values()
                if p.default is inspect.Parameter.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
    with pytest.raises(ParameterError) as refused:
        function(*[None] * len(required), **{parameter: bad})
    message = str(refused.value)
    assert refused.value.parameter == parameter and message.startswith(f"{parameter} must be ")
    assert message.endswith(f"got {bad!r}" if isinstance(bad, str) or bad is True else f"got {bad}")


def test_a_valid_value_passes_and_the_table_is_kept():
    @validate_params({"k": Whole(1, 5), "mode": Options(("a", "b")), "share": Interval(0, 1)})
    def f(*, k=1, mode="a", share=0.5):
        return k, mode, share

    assert f(k=5, mode="b", share=1) == (5, "b", 1)
    assert set(f.parameter_constraints) == {"k", "mode", "share"}
    with pytest.raises(TypeError, match="has no parameter nope"):
        validate_params({"nope": Whole(0)})(f)


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
