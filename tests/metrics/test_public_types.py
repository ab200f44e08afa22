"""The public names of ``metrics`` have typed signatures: no ``typing.Any`` in a parameter,
field or result, every parameter typed, and every function and method says what it returns (mypy checks the bodies,
tests/studyapp/test_lint.py)."""

from __future__ import annotations

import importlib
import inspect
import types
import typing
from dataclasses import dataclass

import numpy as np
import pandas as pd
import pytest

import metrics
from metrics.diagnosis import Diagnosis
from metrics.imsitu import SenseClusters
from metrics.study import AgreementReport

# the names the API's annotations use only for type checkers (its modules import nothing heavy)
TYPING_NAMES = {"pd": pd, "np": np, "Diagnosis": Diagnosis, "AgreementReport": AgreementReport,
                "SimilarityMatrix": metrics.SimilarityMatrix, "Detections": metrics.Detections,
                "SenseClusters": SenseClusters}



def _mentions_any(hint) -> bool:
    return hint is typing.Any or any(_mentions_any(arg) for arg in typing.get_args(hint))


def _signatures(name: str, obj) -> list[tuple[str, object]]:
    """(name, function or class) of a public name: the class with its public methods and properties."""
    if not inspect.isclass(obj):
        return [(name, obj)]
    out: list[tuple[str, object]] = [(name, obj)]
    for attr, member in vars(obj).items():
        if attr.startswith("_"):
            continue
        if isinstance(member, (classmethod, staticmethod)):
            out.append((f"{name}.{attr}", member.__func__))
        elif isinstance(member, property):
            out.append((f"{name}.{attr}", member.fget))
        elif inspect.isfunction(member):
            out.append((f"{name}.{attr}", member))
    return out


def untyped(names: dict[str, object]) -> list[str]:
    """``name: problem`` for each public signature that mentions Any, leaves a parameter
    without a type (Any to a type checker) or lacks its result type."""
    problems = []
    for public, obj in names.items():
        for name, target in _signatures(public, obj):
            hints = typing.get_type_hints(target, localns=TYPING_NAMES)
            problems += [f"{name}: {key} is Any" for key, hint in hints.items() if _mentions_any(hint)]
            if not inspect.isfunction(target):
                continue
            problems += [f"{name}: {p} has no type" for p in inspect.signature(target).parameters
                         if p not in hints and p not in ("self", "cls")]
            if "return" not in hints:
                problems.append(f"{name}: no return type")
    return problems


def test_no_public_signature_of_metrics_mentions_any_or_lacks_its_result_type():
    public = {name: getattr(metrics, name) for name in metrics.__all__}
    public = {name: obj for name, obj in public.items() if inspect.isclass(obj) or inspect.isfunction(obj)}
    assert len(public) > 40
    problems = untyped(public)
    assert problems == []


def test_the_check_finds_any_and_a_missing_result_type():
    def loose(x: typing.Any) -> int:
        return 0

    def open_ended(x: int):
        return x

    @dataclass(frozen=True)
    class Holder:
        table: dict[str, typing.Any]

        def rows(self, k: int) -> list[typing.Any]:
            return []

    def bare(x) -> int:
        return 0

    assert untyped({"loose": loose, "open_ended": open_ended, "bare": bare, "Holder": Holder}) == [
        "loose: x is Any", "open_ended: no return type", "bare: x has no type", "Holder: table is Any",
        "Holder.rows: return is Any"]


# data that may be left out, which stays positional: the matrices component similarities are
# looked up in, the tables of an image-update study before the images and its items, ...
OPTIONAL_DATA = {"component_similarities": {"verb_matrix", "object_matrix"}, "pair_ratings": {"before", "items"},
                 "sense_accuracy_tables": {"clusters"}, "mcq_scores": {"classes"}, "pair_localization": {"pairs"},
                 "interaction_classification": {"d"}, "write_diagnosis_report": {"errors"},
                 "align_study": {"gold", "clusters", "judges"},
                 "whole_problem": {"high"}}   # the range's ends, like range_problem's
# options still positional: parse_json's line number (studyapp's backup reader passes it so)
POSITIONAL_OPTIONS_LEFT = {"parse_json(line)"}


def positional_options(module) -> list[str]:
    """``function(parameter)`` for each public function's positional parameter with a default."""
    out = []
    for name in module.__all__:
        obj = getattr(module, name)
        if not inspect.isfunction(obj):
            continue
        for p in inspect.signature(obj).parameters.values():
            if p.kind is p.POSITIONAL_OR_KEYWORD and p.default is not p.empty \
                    and p.name not in OPTIONAL_DATA.get(name, ()):
                out.append(f"{name}({p.name})")
    return out


@pytest.mark.parametrize("package", ["metrics", "metrics.study", "metrics.core", "metrics.crosshoi", "metrics.imsitu",
                                     "metrics.llm", "metrics.diagnosis"])
def test_the_options_of_public_functions_are_keyword_only(package):
    left = positional_options(importlib.import_module(package))
    assert [name for name in left if name not in POSITIONAL_OPTIONS_LEFT] == []


def test_the_check_finds_a_positional_option():
    def score(table, level="ordinal", *, seed=0):
        return 0.0

    assert positional_options(types.SimpleNamespace(__all__=["score"], score=score)) == ["score(level)"]
