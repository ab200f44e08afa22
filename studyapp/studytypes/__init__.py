"""The study-type registry.

A study type declares its item fields (``required_fields`` / ``normalize_item``), its default
rating scale and what a valid response is (``parse_response``), how its items are sampled or
generated (``sample_items``, ``attention_items``), what it exports (``export_item``,
``export_tables``) and analyses (``dashboard_sections``, ``report_analyses``), and how an item
is shown (its ``view`` module). A new type is one new package (or, without pages, one module)
that subclasses :class:`StudyType`, plus one :func:`register` line below for the types of the
project, or an entry point of group ``hoi_semantic_eval.study_types`` for a type from another
installed package.
"""

from __future__ import annotations

from metrics import InputError

from .base import Scale, Section, StudyType
from .crosshoi_curation import CrosshoiCuration
from .hoi_similarity import HoiSimilarity
from .hoi_similarity_image import HoiSimilarityImage
from .imsitu_correctness import ImsituCorrectness

REGISTRY: dict[str, StudyType] = {}


def register(study_type: StudyType) -> StudyType:
    """Make ``study_type`` available to specs, studies and pages under its ``name``."""
    if study_type.name in REGISTRY:
        raise ValueError(f"a study type named {study_type.name!r} is already registered")
    REGISTRY[study_type.name] = study_type
    return study_type


def get_type(name: str) -> StudyType:
    try:
        return REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown study type {name!r} (known: {', '.join(REGISTRY)})") from None


#: Study types from other packages: ``[project.entry-points."hoi_semantic_eval.study_types"]
#: name = "package.module:StudyTypeClass"`` (the class; registered after the project's own).
ENTRY_POINT_GROUP = "hoi_semantic_eval.study_types"


def _register_plugins() -> None:
    from importlib.metadata import entry_points

    for ep in sorted(entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name):
        register(ep.load()())


register(HoiSimilarity())
register(HoiSimilarityImage())
register(CrosshoiCuration())
register(ImsituCorrectness())
_register_plugins()

__all__ = ["REGISTRY", "Scale", "Section", "StudyType", "get_type", "register"]
