"""What every study type provides (see the registry in ``studyapp.studytypes``).

A type is a package ``studyapp/studytypes/<name>/`` (or, from another installed package, one
module): its :class:`StudyType` subclass holds the logic hooks below (no Streamlit), further
modules its sampler or importer and its analyses. How its items are shown is its view, Streamlit
code in the views layer named as the type is (``studyapp.views.studytypes``).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import pandas as pd

from metrics import InputError


@dataclass(frozen=True)
class Scale:
    """An ordinal rating scale: the values and one label per value."""

    values: tuple[int, ...]
    labels: tuple[str, ...]

    def label(self, value: int) -> str:
        return self.labels[self.values.index(value)]


@dataclass
class Section:
    """One analysis of the study type: a title, a sentence, named tables and Altair charts, and
    optionally a one-line answer shown first (``headline``)."""

    title: str
    text: str = ""
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    charts: list = field(default_factory=list)
    headline: str = ""


THIS_STUDY = "{this study}"   # in a sampler report: replaced by the new study's slug


class StudyType(ABC):
    """Base class; subclasses fill in the item fields, responses, sampling and exports."""

    name: str = ""
    title: str = ""
    default_scale: Scale
    required_fields: tuple[str, ...] = ()
    sampler_options: dict[str, type] = {}  # key in [items] -> expected type

    @abstractmethod
    def normalize_item(self, row: dict, where: str) -> dict:
        """Checked and completed item fields (``where`` names the file and line for errors)."""

    @abstractmethod
    def export_item(self, fields: dict) -> dict:
        """Columns of the item in items.csv (besides item_id and role)."""

    def sample_items(self, options: dict, base_dir: Path,
                     tables_of: Callable[[str], dict]) -> tuple[pd.DataFrame, str]:
        """Items from the type's sampler and a printable report; ``tables_of(slug)`` gives the
        export tables of another study (e.g. the one a with-image pass repeats). The report may
        write ``THIS_STUDY`` where the slug of the study being created belongs: the spec's
        reader puts the slug there."""
        raise InputError(f"study type {self.name!r} has no sampler; use an items CSV")

    def attention_items(self, items: list[dict], count: int) -> list[tuple[dict, str]]:
        """``count`` attention-check items (fields, expected response) built from ``items``."""
        raise InputError(f"study type {self.name!r} cannot generate attention checks; "
                         "give rows with role=attention in the items CSV")

    def example_fields(self) -> set[str]:
        """The item fields the spec's ``[example]`` table may give."""
        return set(self.required_fields)

    def line_numbered_ids(self, columns: list[str]) -> str | None:
        """For an items CSV layout of the type without ``item_id`` (e.g. SHOE's study files):
        the prefix of the ids its rows get from their line numbers; None: ``item_id`` is needed."""
        return None

    export_columns: tuple[str, ...] = ()  # items.csv begins with these columns, in this order

    # Hooks of image and linked studies (defaults: none of it applies).
    custom_response = False  # True: the view's ``response_form`` draws the answer form

    def image_paths(self, fields: dict) -> list[tuple[str, str]]:
        """(image root, path relative to it) of the images an item shows."""
        return []

    def preselect(self, fields: dict, pseudonym: str) -> str | None:
        """The answer preselected for this annotator (e.g. their earlier rating)."""
        return None

    def eligible(self, fields: dict, pseudonym: str) -> bool:
        """Whether the item may be handed to this annotator."""
        return True

    restricts_items = False  # True: assignment asks ``eligible`` for every candidate item

    def rating_columns(self, fields: dict, pseudonym: str) -> dict:
        """Extra columns of this annotator's row in ratings.csv."""
        return {}

    # Exports, analyses and simulation.
    def export_tables(self, tables: dict, fields_by_key: dict) -> dict:
        """Further export files (name -> DataFrame, or text) from the standard tables."""
        return {}

    def dashboard_sections(self, slug: str, tables: dict, fields_by_key: dict,
                           resamples: int) -> list[Section]:
        """The type's own analyses on the console dashboard from the study's export tables and
        its items' fields (by item key); InputError says why none can be shown yet."""
        return []

    def report_analyses(self, items: pd.DataFrame, ratings: pd.DataFrame,
                        permutations: int) -> tuple[dict | None, dict | None]:
        """Metric–human alignment and w tuning for the study's HTML report, from items.csv and the
        validated main ratings (``permutations`` per p-value); None where the type has neither."""
        return None, None

    recalibrates_matrices = False  # True: the ratings recalibrate the similarity matrices
    uses_dataset = False  # True: items use a dataset's vocabulary, chosen by the spec's
    # ``[items] dataset`` (``metrics.datasets``; HICO-DET by default) and handed to
    # ``normalize_item`` as the row's ``dataset`` and to ``sample_items`` as ``options["dataset"]``

    def shown_senses(self, fields: dict) -> list[str]:
        """The WordNet senses an item shows a participant (checked against the offensive-sense
        exclusion, ``metrics.vocab.excluded_senses``); none by default."""
        return []

    def simulated_scores(self, fields_list: list[dict]) -> list[float]:
        """The true answer (0–4) of each item that simulated annotators perturb
        (``python -m studyapp simulate``)."""
        raise InputError(f"simulate does not support {self.name!r} studies")

    def describe_response(self, fields: dict, value: str, scale: Scale) -> str:
        """A stored response in the annotator's words (the revision banner)."""
        try:
            return f"{value} — {scale.label(int(value))}"
        except (ValueError, IndexError, KeyError):
            return str(value)

    def parse_response(self, value, scale: Scale) -> str:
        """The stored form of a response, or InputError when it is not valid."""
        try:
            number = int(value)
        except (TypeError, ValueError):
            raise InputError(f"response {value!r} is not a number on the scale") from None
        if number != value and str(number) != str(value):
            raise InputError(f"response {value!r} is not a whole number")
        if number not in scale.values:
            raise InputError(f"response {number} is not on the scale {list(scale.values)}")
        return str(number)
