"""The items a study spec names: an items CSV or the study type's sampler (``[items]``), the
practice items (``[practice]``) and the dataset whose vocabulary they use; each problem is one
line naming the file and the key, or the items file and line."""

from __future__ import annotations

import math
from pathlib import Path

from metrics import InputError, datasets
from metrics.core import MAX_SEED, kind_problem, range_problem, whole_problem

from ...core.accounts import CLI, Actor, require_studies
from ...studytypes import Scale
from ..specs.spec_checker import _Checker
from ..specs.spec_model import ItemSpec

ROLES = ("main", "attention", "practice")


def _dataset(name: str, table: dict, study_type) -> str:
    """``[items] dataset``: the registered dataset whose vocabulary the items use (HOI-pair
    study types only; HICO-DET when absent)."""
    if "dataset" not in table:
        return datasets.DEFAULT
    check = _Checker(name, table, "items.")
    if not study_type.uses_dataset:
        check.fail("dataset", f"does not apply to study type {study_type.name!r} (its items use "
                              "no dataset's vocabulary)")
    value = check.get("dataset", None)
    if value not in datasets.names():
        check.fail("dataset", f"must be one of {', '.join(datasets.names())}, got {value!r}")
    return value


def with_dataset(row: dict, study_type, dataset: str, where: str) -> dict:
    """``row`` with the study's dataset for ``normalize_item``; a row that names another one
    (an exported ``items.csv`` of a study over another dataset) is refused."""
    if not study_type.uses_dataset:
        return row
    own = str(row.get("dataset") or "").strip()
    if own and own != dataset:
        raise InputError(f"{where}: dataset {own!r} differs from the spec's [items] dataset {dataset!r}")
    return {**row, "dataset": dataset}


def _practice_items(name: str, table: dict, study_type, scale: Scale, base_dir: Path,
                    taken: set[str], dataset: str = datasets.DEFAULT) -> list[ItemSpec]:
    """``[practice] path``: items shown first, each with its expected answer and an optional
    ``explanation`` (kept in the item's fields as ``feedback``) for the feedback after it."""
    if not table:
        return []
    check = _Checker(name, table, "practice.")
    check.unknown({"path"})
    path = base_dir / check.get("path")
    if not path.exists():
        check.fail("path", f"names a file that does not exist: {path}")
    items = read_items_csv(path, study_type, forced_role="practice", dataset=dataset)
    for item in items:
        where = f"{path}: item {item.key!r}"
        if item.key in taken:
            raise InputError(f"{where}: the item_id is also used by the study's items")
        try:
            item.expected = study_type.parse_response(item.expected, scale)
        except InputError as exc:
            raise InputError(f"{where}: expected {exc}") from None
    return items


def _check_sampler_options(check: _Checker, options: dict, study_type, base_dir: Path) -> None:
    """Each sampler option given has its type's kind, range, or names an existing file."""
    for key, kind in study_type.sampler_options.items():
        if key not in options:
            continue
        value = options[key]
        check.refuse(key, kind_problem(value, kind))
        if kind is int:
            check.refuse(key, whole_problem(value, 0, MAX_SEED if key == "seed" else 2**31 - 1))
        if kind is float and range_problem(value, -math.inf, math.inf):
            check.fail(key, f"must be a finite number, got {value!r}")
        if kind is str and not (base_dir / value).exists():
            check.fail(key, f"names a file that does not exist: {base_dir / value}")


def _csv_items(check: _Checker, table: dict, own: set, study_type, base_dir: Path, dataset: str):
    """``[items] source = "csv"``: the items of the file ``path``."""
    check.unknown({*own, "path"})
    rel = check.get("path")
    path = base_dir / rel
    if not path.exists():
        check.fail("path", f"names a file that does not exist: {path}")
    given = {"dataset": dataset} if "dataset" in table else {}
    return (read_items_csv(path, study_type, dataset=dataset),
            {"source": "csv", "path": rel, **given}, "")


def _tables_of(actor: Actor):
    """The export tables of an earlier study ``actor`` may download, what a type that repeats an
    earlier study reads (its items and every annotator's ratings); any other study is refused as
    if it did not exist."""
    from ..records.exports import study_tables

    def tables_of(slug: str) -> dict:
        require_studies(actor, "download", [slug])
        return study_tables(slug)
    return tables_of


def _sampled_items(name: str, check: _Checker, table: dict, own: set, study_type, base_dir: Path,
                   dataset: str, actor: Actor):
    """``[items] source = "sampler"``: the items the study type's sampler draws."""
    options = {k: v for k, v in table.items() if k != "source"}
    check.unknown({*own, *study_type.sampler_options})
    _check_sampler_options(check, options, study_type, base_dir)
    try:
        frame, report = study_type.sample_items(options, base_dir, _tables_of(actor))
    except InputError as exc:   # a sampler's complaint: name the spec (and the key)
        raise _sampler_error(exc, name, base_dir) from None
    items = []
    for row in frame.to_dict("records"):
        where = f"{name}: sampled item {row['item_id']}"
        items.append(ItemSpec(str(row["item_id"]), "main", study_type.normalize_item(
            with_dataset(row, study_type, dataset, where), where)))
    return items, {"source": "sampler", **options}, report


def _items(name: str, table: dict, study_type, base_dir: Path, dataset: str = datasets.DEFAULT,
           actor: Actor = CLI):
    """``[items]``: the items of a CSV or the sampler's (an earlier study's only when ``actor``
    may download it)."""
    check = _Checker(name, table, "items.")
    source = check.get("source")
    own = {"source", "dataset", "exclude_senses"} if study_type.uses_dataset else {"source"}
    extra = _exclude_senses(check, table)
    if source == "csv":
        found = _csv_items(check, table, own, study_type, base_dir, dataset)
    elif source == "sampler":
        found = _sampled_items(name, check, table, own, study_type, base_dir, dataset, actor)
    else:
        check.fail("source", f"must be 'csv' or 'sampler', got {source!r}")
    return _without_excluded_senses(name, *found, study_type, extra)


def _exclude_senses(check: _Checker, table: dict) -> tuple[str, ...]:
    """``[items] exclude_senses``: synset names a study adds to the offensive-sense exclusion."""
    value = table.get("exclude_senses", [])
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        check.fail("exclude_senses", f"must be a list of synset names, got {value!r}")
    return tuple(v.strip() for v in value)


def _without_excluded_senses(name: str, items: list, source: dict, report: str, study_type, extra: tuple):
    """The items without those showing an excluded sense (``metrics.vocab.excluded_reason``),
    which are listed in the source report (a warning ``studyapp create`` prints)."""
    from metrics.vocab import excluded_reason

    left_out, kept, excluded = [], [], {}
    for item in items:
        bad = [s for s in study_type.shown_senses(item.fields) if excluded_reason(s, frozenset(extra))]
        if bad:
            left_out.append(f"{item.key} ({', '.join(bad)})")
            excluded[item.key] = bad
        else:
            kept.append(item)
    if not left_out:
        return items, source, report
    source = {**source, "excluded": excluded}     # item key -> the excluded senses it shows
    if not kept:
        raise InputError(f"{name}: [items] every item shows an excluded sense (offensive-sense exclusion): "
                         + "; ".join(left_out[:5]))
    warning = (f"warning: {len(left_out)} item{'s' * (len(left_out) != 1)} left out: they show a sense studies never show "
               f"(offensive-sense exclusion; python -m metrics vocab --excluded): {'; '.join(left_out)}")
    return kept, source, "\n".join(filter(None, [report, warning]))


def _sampler_error(exc: InputError, name: str, base_dir: Path) -> InputError:
    """A sampler's refusal with the spec file in front (``new.toml: [items] n must be a whole number ≥
    1, got 0``); one that names a file of the spec's folder is kept as it is."""
    text = str(exc)
    if text.startswith(name) or (str(base_dir) != "." and str(base_dir) in text):
        return exc
    return InputError(f"{name}: {text}" if text.startswith(("key '", "[items]")) else f"{name}: [items] {text}")


def _item_key(row: dict, line: int, where: str, numbered, seen: set) -> str:
    """The row's item_id (or, for a layout without one, its number), non-empty, short and new."""
    key = (row.get("item_id") or "").strip() or (f"{numbered}{line - 1:04d}" if numbered else "")
    if not key:
        raise InputError(f"{where}: item_id is empty")
    if len(key) > 64:
        raise InputError(f"{where}: item_id is longer than 64 characters")
    if key in seen:
        raise InputError(f"{where}: duplicate item_id {key!r}")
    return key


def _item_role(row: dict, where: str, forced_role: str | None) -> tuple[str, str | None]:
    """The row's role and expected response (required for attention and practice items)."""
    role = forced_role or (row.get("role") or "main").strip()
    if role not in ROLES or (role == "practice" and not forced_role):
        raise InputError(f"{where}: role {role!r} is not one of main, attention "
                         "(practice items go in the [practice] file)")
    expected = (row.get("expected") or "").strip() or None
    if role in ("attention", "practice") and expected is None:
        article = "an" if role == "attention" else "a"
        raise InputError(f"{where}: {article} {role} item needs an 'expected' response")
    return role, expected


def read_items_csv(path: Path, study_type, forced_role: str | None = None,
                   dataset: str = datasets.DEFAULT) -> list[ItemSpec]:
    """Items from a CSV (``item_id`` + the type's fields; optional ``role``, ``expected``).
    With ``role`` every row has that role (``practice``: ``expected`` required, an optional
    ``explanation`` column kept as the ``feedback`` field). Labels are ``dataset``'s."""
    from metrics.core import csv_rows, read_text

    header, rows = csv_rows(read_text(path), str(path))  # lines: where each row starts
    columns = header
    # a layout of the type without item_id (SHOE's study files): items numbered by their line
    try:
        numbered = study_type.line_numbered_ids(columns)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None
    for column in () if numbered else ("item_id", *study_type.required_fields):
        if column not in columns:
            raise InputError(f"{path}: missing column '{column}'")
    items, seen = [], set()
    for line, values in rows:
        where = f"{path} line {line}"
        row = dict(zip(columns, values))
        if any("\x00" in (value or "") for value in row.values()):
            raise InputError(f"{where}: contains a NUL byte")
        key = _item_key(row, line, where, numbered, seen)
        seen.add(key)
        role, expected = _item_role(row, where, forced_role)
        fields = study_type.normalize_item(with_dataset(row, study_type, dataset, where), where)
        if role == "practice":
            fields["feedback"] = (row.get("explanation") or "").strip()
        items.append(ItemSpec(key, role, fields, expected))
    if not items:
        raise InputError(f"{path}: no items")
    return items
