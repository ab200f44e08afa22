"""The doctests of the platform's modules (pytest.ini collects ``metrics/`` with
``--doctest-modules``; ``studyapp/`` is not collected that way, as importing its page script
``studyapp/views/app.py`` in the test process would run the page and leave Streamlit's state behind)."""

import doctest
import importlib

import pytest
from projectpaths import ROOT

MODULES_WITH_DOCTESTS = sorted(
    ".".join(path.relative_to(ROOT).with_suffix("").parts)
    for path in (ROOT / "studyapp").rglob("*.py") if ">>> " in path.read_text(encoding="utf-8"))


def test_the_platform_has_doctests():
    assert "studyapp.core.images" in MODULES_WITH_DOCTESTS


@pytest.mark.parametrize("name", MODULES_WITH_DOCTESTS)
def test_doctests_pass(name):
    result = doctest.testmod(importlib.import_module(name))
    assert result.attempted > 0 and result.failed == 0
