"""The study-type registry.

A study type declares its item fields (``required_fields`` / ``normalize_item``), how an item
is shown (``render_item``), its default rating scale and what a valid response is
(``parse_response``), how its items are sampled or generated (``sample_items``,
``attention_items``) and what it exports (``export_item``). A new type is one new module
that subclasses :class:`StudyType` and is listed in ``REGISTRY``.
"""

from __future__ import annotations

from metrics import InputError

from .base import Scale, StudyType
from .crosshoi_curation import CrosshoiCuration
from .hoi_similarity import HoiSimilarity
from .hoi_similarity_image import HoiSimilarityImage
from .imsitu_correctness import ImsituCorrectness

REGISTRY: dict[str, StudyType] = {t.name: t for t in (HoiSimilarity(), HoiSimilarityImage(),
                                                      CrosshoiCuration(), ImsituCorrectness())}


def get_type(name: str) -> StudyType:
    try:
        return REGISTRY[name]
    except KeyError:
        raise InputError(f"unknown study type {name!r} (known: {', '.join(REGISTRY)})") from None


__all__ = ["REGISTRY", "Scale", "StudyType", "get_type"]
