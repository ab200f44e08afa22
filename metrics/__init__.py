"""Semantic evaluation of human–object interaction detectors.

Pure Python + numpy/scipy/pandas; never imports streamlit, sqlmodel or studyapp.
"""

from .errors import InputError
from .matching import candidate_synsets, match_synset, match_synsets, resolve
from .similarity import SimilarityMatrix, combine
from .vocabulary import Vocabulary, hico

__all__ = ["InputError", "SimilarityMatrix", "Vocabulary", "candidate_synsets", "combine", "hico",
           "match_synset", "match_synsets", "resolve"]
