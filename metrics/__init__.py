"""Semantic evaluation of human–object interaction detectors.

Pure Python + numpy/scipy/pandas; never imports streamlit, sqlmodel or studyapp.
"""

import importlib

from .errors import InputError

# name -> module; imported on first use (PEP 562), so ``import metrics`` and ``--help`` stay
# light: no numpy-heavy modules, nltk, scikit-learn or matplotlib until a function needs them
_LAZY = {"candidate_synsets": "matching", "match_synset": "matching", "match_synsets": "matching",
         "resolve": "matching", "SimilarityMatrix": "similarity", "combine": "similarity",
         "Vocabulary": "vocabulary", "hico": "vocabulary"}

__all__ = ["InputError", *sorted(_LAZY)]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'metrics' has no attribute {name!r}")
