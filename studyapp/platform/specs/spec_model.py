"""A validated study spec and its items, as stored with the study (``studyapp.platform.launch.spec_files`` reads
them from a spec file)."""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from functools import lru_cache

from ...studytypes import Scale


@dataclass
class ItemSpec:
    key: str
    role: str
    fields: dict
    expected: str | None = None
    llm_rating: float | None = None          # [llm]: the ensemble's mean rating
    active_probability: float | None = None  # [active]: the item's inclusion probability
    active_priority: int | None = None       # [active]: 1 = asked first, 0 = not drawn


@dataclass
class StudySpec:
    slug: str
    title: str
    study_type: str
    instructions: str
    scale: Scale
    raters_per_item: int = 3
    items_per_annotator: int | None = None
    order: str = "random"
    access_code: str | None = None
    claim_timeout_minutes: int = 30
    attention_checks: int = 0
    repeat_items: int = 0
    cant_judge: bool = False
    comments: bool = False
    min_seen_ms: int = 300         # [answers]: an item takes an answer once drawn this long (ms)
    synset_codes: bool = True      # [display]: WordNet codes shown beside the glosses
    seconds_per_item: float = 20.0  # [display]: the time estimate before the study's own median
    completion_code: str | None = None
    completion_url: str | None = None
    attention_failed_code: str | None = None  # [prolific]: the code of those who failed attention checks
    attention_fail_limit: int = 2             # ... at least this many of them
    screened_out_code: str | None = None      # [prolific]: the code of those screened out
    routed_code: str | None = None            # [prolific]: the code of those routed out ([routing])
    comprehension: dict | None = None         # question, options, answer (two attempts)
    example: dict | None = None
    adaptive: dict | None = None  # target_se, min_raters, max_raters, refit_every
    llm: dict | None = None       # ratings (the CSV, relative to the spec), models
    active: dict | None = None    # budget, floor, seed, cells, selected
    routing: dict | None = None   # min_ratings, min_consistency
    dataset: str = "hico-det"  # [items] dataset: whose vocabulary the items use (metrics.datasets)
    items_source: dict = field(default_factory=dict)
    items: list[ItemSpec] = field(default_factory=list)
    source_report: str = ""

    def to_json(self) -> str:
        """The stored spec (without the items and the access code)."""
        data = asdict(self)
        for key in ("items", "access_code"):
            data.pop(key)
        return json.dumps(data, sort_keys=True)

    @classmethod
    def from_json(cls, text: str) -> StudySpec:
        data = json.loads(text)
        data["scale"] = Scale(tuple(data["scale"]["values"]), tuple(data["scale"]["labels"]))
        return cls(**data)


@lru_cache(maxsize=64)
def _parsed(spec_json: str) -> StudySpec:
    return StudySpec.from_json(spec_json)


def spec_of(study) -> StudySpec:
    """The spec of a stored study (``models.Study``), parsed once per spec text."""
    return _parsed(study.spec_json)
