"""What every study type provides (see the registry in ``studyapp.studytypes``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass

import pandas as pd

from metrics import InputError


@dataclass(frozen=True)
class Scale:
    """An ordinal rating scale: the values and one label per value."""

    values: tuple[int, ...]
    labels: tuple[str, ...]

    def label(self, value: int) -> str:
        return self.labels[self.values.index(value)]


class StudyType(ABC):
    """Base class; subclasses fill in the item fields, rendering and exports."""

    name: str = ""
    title: str = ""
    default_scale: Scale
    required_fields: tuple[str, ...] = ()
    sampler_options: dict[str, type] = {}  # key in [items] -> expected type

    @abstractmethod
    def normalize_item(self, row: dict, where: str) -> dict:
        """Checked and completed item fields (``where`` names the file and line for errors)."""

    @abstractmethod
    def render_item(self, fields: dict) -> None:
        """Show one item with Streamlit (the rating controls are the page's)."""

    @abstractmethod
    def export_item(self, fields: dict) -> dict:
        """Columns of the item in items.csv (besides item_id and role)."""

    def sample_items(self, options: dict, base_dir) -> tuple[pd.DataFrame, str]:
        """Items from the type's sampler and a printable report."""
        raise InputError(f"study type {self.name!r} has no sampler; use an items CSV")

    def attention_items(self, items: list[dict], count: int) -> list[tuple[dict, str]]:
        """``count`` attention-check items (fields, expected response) built from ``items``."""
        raise InputError(f"study type {self.name!r} cannot generate attention checks; "
                         "give rows with role=attention in the items CSV")

    # Hooks of image and linked studies (defaults: none of it applies).
    custom_response = False  # True: the type draws its own answer form: ``response_form(fields,
    # current, **mount)`` mounts ``components.mark_form`` with the page's ``mount`` arguments

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

    def export_tables(self, tables: dict, fields_by_key: dict) -> dict:
        """Further export files (name -> DataFrame, or text) from the standard tables."""
        return {}

    def dashboard_sections(self, slug: str, tables: dict, resamples: int) -> list:
        """The type's own analyses on the console dashboard (``studyapp.dashboard.Section``
        objects) from the study's export tables; InputError says why none can be shown yet."""
        return []

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
