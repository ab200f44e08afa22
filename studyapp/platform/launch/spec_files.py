"""Study specs: ``studies/*.toml`` → a validated :class:`StudySpec` and its items.

Every check runs before anything is written, and each problem is one line naming the file and
the key (or the items file and line). Keys:

```toml
title = "..."                   # required
study_type = "hoi_similarity"   # required, a registered study type
instructions = "..."            # required, Markdown
slug = "demo"                   # default: the file name without .toml
raters_per_item = 3             # default 3
items_per_annotator = "all"     # or a number
order = "random"                # random (per annotator, stored seed) | fixed
access_code = "..."             # optional: join with this code and a pseudonym
claim_timeout_minutes = 30      # an unanswered item returns to the pool after this

[scale]                         # default: the study type's scale
values = [0, 1, 2, 3, 4]
labels = ["...", ...]

[items]
source = "csv"                  # csv (path = "...", relative to the spec) | sampler
path = "items.csv"
dataset = "hico-det"            # HOI-pair types: whose vocabulary, baseline matrices and HOI
                                # classes the items use (metrics.datasets; default hico-det)
# sampler options of the study type, e.g. n = 50, seed = 0, class_weights = "w.csv"

[answers]                       # optional extras on every item (every study type)
cant_judge = false              # a "can't judge" answer (key X), exported apart from the ratings
comments = false                # an optional comment with each answer
min_seen_ms = 300               # an item takes an answer only once fully drawn this long (ms;
                                # default 300: about the fastest choice reaction time)

[display]                       # optional: how items are shown (every study type)
synset_codes = true             # WordNet codes (hold.v.02) beside the glosses; default: false
                                # with [prolific] (crowd participants), true otherwise
seconds_per_item = 20           # the welcome page's time estimate until the study's own
                                # median seconds per item is known (default 20)

[practice]                      # optional: items tried first, with feedback, phase "practice"
path = "practice.csv"           # item_id + the type's columns + expected (+ explanation)

[adaptive]                      # optional: collect until each item's score is precise enough
target_se = 0.3                 # an item retires once the rater model's SE of its score (0–4) is this
min_raters = 2                  # ... and it has at least this many raters
max_raters = 8                  # never more (replaces raters_per_item)
refit_every = 25                # refit the rater model after this many new ratings

[llm]                           # optional: an LLM ensemble's ratings of the main items
ratings = "llm_ratings.csv"     # item_id + one column per model (its rating on the scale);
                                # the console and report then show prediction-powered estimates

[active]                        # optional (needs [llm] with two or more models): humans rate
budget = 40                     # a sample of about this many main items, drawn once at creation
floor = 0.2                     # with probabilities growing with the models' disagreement
seed = 0                        # (metrics.study.active_selection; floor: share of uniform
cells = ["category", "level"]   # sampling); equal shares per cell of these item fields (default:
                                # category and level where the items have them)

[routing]                       # optional (needs [adaptive]): a rater whose fitted consistency
min_ratings = 10                # is below min_consistency after min_ratings main ratings is
min_consistency = 0.5           # routed out: their session ends with [prolific] routed_code

[quality]
attention_checks = 0            # items with a known answer, spread through the sequence
repeat_items = 0                # own items shown again at the end (test-retest)

[prolific]                      # optional: participants arrive with PROLIFIC_PID etc.
completion_code = "..."         # shown at the end (and/or)
completion_url = "https://..."  # linked at the end (Prolific's ...?cc=CODE: the other codes
                                # are linked with their own cc)
attention_failed_code = "..."   # instead, for those who failed attention_fail_limit checks
attention_fail_limit = 2        # (default 2)
screened_out_code = "..."       # for those who failed the comprehension check twice
routed_code = "..."             # for those routed out by [routing] (paid as agreed)

[comprehension]                 # optional: a question on the instructions, two attempts
question = "..."                # (Prolific's policy); failing twice ends the session politely
options = ["...", "..."]        # (with the screened-out code on Prolific)
answer = "..."                  # one of the options

[example]                       # optional: an item for the instructions page,
rating = 3                      # with the item fields of the study type,
explanation = "..."             # a suggested rating and why
```
"""

from __future__ import annotations

import math
import re
import tomllib
from collections.abc import Callable
from pathlib import Path

from metrics import InputError
from metrics.core import at_least_problem

from ...core.accounts import CLI, Actor
from ...studytypes import Scale, get_type
from ...studytypes.base import THIS_STUDY
from ..specs.spec_checker import _Checker
from ..specs.spec_model import ItemSpec, StudySpec
from .spec_items import _dataset, _items, _practice_items, with_dataset

SLUG = re.compile(r"^[a-z0-9][a-z0-9_-]{0,63}$")
TOP_KEYS = {"title", "study_type", "instructions", "slug", "raters_per_item",
            "items_per_annotator", "order", "access_code", "claim_timeout_minutes", "scale",
            "items", "quality", "prolific", "example", "answers", "practice", "adaptive",
            "comprehension", "llm", "active", "routing", "display"}


def load_spec(path: str | Path, *, files: Callable[[dict], None] | None = None, actor: Actor = CLI) -> StudySpec:
    """Read and validate a spec file and its items (nothing is written); ``files(data)`` may
    point the file names of the read spec at other files first (the console's uploads). Items
    drawn from an earlier study need ``actor`` to be allowed to download it."""
    from metrics.core import read_text

    path = Path(path)
    if not path.exists():
        raise InputError(f"study spec not found: {path}")
    try:
        data = tomllib.loads(read_text(path))
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{path}: invalid TOML: {exc}") from None
    if files is not None:
        files(data)
    return parse_spec(data, name=str(path), base_dir=path.parent, default_slug=path.stem, actor=actor)


def spec_slug(path: str | Path) -> str | None:
    """The slug a spec file names (its ``slug`` key, else the file's stem), read without sampling
    or checking its items; None when the file cannot be read as TOML (``load_spec`` says why)."""
    from metrics.core import read_text

    path = Path(path)
    try:
        slug = tomllib.loads(read_text(path)).get("slug", path.stem)
    except (OSError, InputError, tomllib.TOMLDecodeError):
        return None
    return slug if isinstance(slug, str) else None


def _study_type_of(top: _Checker, name: str):
    """The registered study type the spec names; its complaint is put under the spec's key."""
    try:
        return get_type(top.get("study_type"))
    except InputError as exc:
        if str(exc).startswith(name):
            raise
        raise InputError(f"{name}: key 'study_type': {exc}") from None


def _basic_spec(top: _Checker, data: dict, study_type, default_slug: str) -> StudySpec:
    """The top-level keys: slug, title, instructions, scale, raters, access, items per annotator, order."""
    slug = top.get("slug", default_slug)
    if not SLUG.match(slug):
        top.fail("slug", f"must be lower-case letters, digits, '-' or '_' (got {slug!r})")
    spec = StudySpec(slug=slug, title=top.get("title"),
                     study_type=study_type.name,
                     instructions=top.get("instructions"),
                     scale=_scale(top, study_type.default_scale),
                     raters_per_item=top.get("raters_per_item", 3),
                     access_code=top.get("access_code", None),
                     claim_timeout_minutes=top.get("claim_timeout_minutes", 30))
    per = data.get("items_per_annotator", "all")
    if per != "all":
        spec.items_per_annotator = top.get("items_per_annotator", 0)
    spec.order = top.get("order", "random")
    return spec


def _prolific(top: _Checker, spec: StudySpec) -> None:
    """``[prolific]``: completion codes, which must differ from each other, and the return URL."""
    prolific = _Checker(top.name, top.table_of("prolific"), "prolific.")
    prolific.unknown({"completion_code", "completion_url", "attention_failed_code", "attention_fail_limit",
                      "screened_out_code", "routed_code"})
    spec.completion_code = prolific.get("completion_code", None)
    spec.completion_url = prolific.get("completion_url", None)
    if spec.completion_url and not spec.completion_url.startswith(("https://", "http://")):
        prolific.fail("completion_url", f"must be an http(s) URL, got {spec.completion_url!r}")
    spec.attention_failed_code = prolific.get("attention_failed_code", None)
    spec.attention_fail_limit = prolific.get("attention_fail_limit", 2)
    spec.screened_out_code = prolific.get("screened_out_code", None)
    spec.routed_code = prolific.get("routed_code", None)
    for key, code, others in (("attention_failed_code", spec.attention_failed_code,
                               (spec.completion_code, spec.screened_out_code)),
                              ("screened_out_code", spec.screened_out_code, (spec.completion_code,)),
                              ("routed_code", spec.routed_code, (spec.completion_code, spec.screened_out_code,
                                                                 spec.attention_failed_code))):
        if code and code in others:
            prolific.fail(key, "must differ from the other completion codes (Prolific tells "
                               "submissions apart by their code)")


def _attention_items(name: str, spec: StudySpec, main: list[ItemSpec], study_type,
                     quality: _Checker) -> None:
    """Generate the attention checks the study asks for when the items give none; parse their
    expected responses."""
    attention = [item for item in spec.items if item.role == "attention"]
    if spec.attention_checks and not attention:
        for k, (fields, expected) in enumerate(
                study_type.attention_items([i.fields for i in main], spec.attention_checks), 1):
            spec.items.append(ItemSpec(f"attention-{k}", "attention", fields, expected))
        attention = [item for item in spec.items if item.role == "attention"]
    if spec.attention_checks > len(attention):
        quality.fail("attention_checks", f"asks for {spec.attention_checks} checks but only "
                                         f"{len(attention)} attention items exist")
    for item in attention:
        try:
            item.expected = study_type.parse_response(item.expected, spec.scale)
        except InputError as exc:
            raise InputError(f"{name}: attention item {item.key!r}: expected {exc}") from None


def _example(name: str, top: _Checker, study_type, spec: StudySpec) -> dict | None:
    """``[example]``: a worked item shown with the instructions, its rating and explanation."""
    example = top.table_of("example")
    if not example:
        return None
    ex = _Checker(name, example, "example.")
    ex.unknown(study_type.example_fields() | {"rating", "explanation"})
    row = {k: v for k, v in example.items() if k not in ("rating", "explanation")}
    fields = study_type.normalize_item(with_dataset(row, study_type, spec.dataset,
                                                    f"{name}: [example]"), f"{name}: [example]")
    rating = example.get("rating")
    if rating is not None:
        try:
            rating = int(study_type.parse_response(rating, spec.scale))
        except InputError as exc:
            ex.fail("rating", str(exc))
    return {"fields": fields, "rating": rating, "explanation": ex.get("explanation", "")}


def parse_spec(data: dict, name: str, base_dir: Path, default_slug: str, actor: Actor = CLI) -> StudySpec:
    top = _Checker(name, data)
    top.unknown(TOP_KEYS)
    study_type = _study_type_of(top, name)
    spec = _basic_spec(top, data, study_type, default_slug)

    quality = _Checker(name, top.table_of("quality"), "quality.")
    quality.unknown({"attention_checks", "repeat_items"})
    spec.attention_checks = quality.get("attention_checks", 0)
    spec.repeat_items = quality.get("repeat_items", 0)

    answers = _Checker(name, top.table_of("answers"), "answers.")
    answers.unknown({"cant_judge", "comments", "min_seen_ms"})
    spec.cant_judge = answers.get("cant_judge", False)
    spec.comments = answers.get("comments", False)
    spec.min_seen_ms = answers.get("min_seen_ms", 300)

    display = _Checker(name, top.table_of("display"), "display.")
    display.unknown({"synset_codes", "seconds_per_item"})
    spec.synset_codes = display.get("synset_codes", "prolific" not in top.table)
    if "seconds_per_item" in display.table:
        spec.seconds_per_item = float(display.get("seconds_per_item"))

    spec.adaptive = _adaptive(top, study_type)
    if spec.adaptive:
        spec.raters_per_item = spec.adaptive["max_raters"]
    _prolific(top, spec)
    spec.comprehension = _comprehension(top)
    spec.routing = _routing(top, spec)

    spec.dataset = _dataset(name, top.table_of("items"), study_type)
    spec.items, spec.items_source, spec.source_report = _items(name, top.table_of("items"),
                                                               study_type, base_dir, spec.dataset, actor)
    spec.source_report = spec.source_report.replace(THIS_STUDY, spec.slug)
    spec.items += _practice_items(name, top.table_of("practice"), study_type, spec.scale, base_dir,
                                  {item.key for item in spec.items}, spec.dataset)
    if spec.repeat_items and spec.repeat_items > (spec.items_per_annotator or len(spec.items)):
        quality.fail("repeat_items", "must not exceed the items each annotator rates")
    main = [item for item in spec.items if item.role == "main"]
    if not main:
        raise InputError(f"{name}: the items source gives no items to rate")
    spec.llm, members = _llm(top, main, base_dir, spec.scale, spec.items_source.get("excluded"), study_type)
    spec.active = _active(top, main, members)
    _attention_items(name, spec, main, study_type, quality)
    spec.example = _example(name, top, study_type, spec)
    return spec


def _comprehension(top: _Checker) -> dict | None:
    """``[comprehension]``: one multiple-choice question on the instructions page."""
    table = top.table_of("comprehension")
    if not table:
        return None
    check = _Checker(top.name, table, "comprehension.")
    check.unknown({"question", "options", "answer"})
    question = check.get("question")
    options = table.get("options")
    if not isinstance(options, list) or len(options) < 2 or not all(
            isinstance(o, str) and o.strip() for o in options):
        check.fail("options", f"must be a list of at least two non-empty strings, got {options!r}")
    if len(set(options)) != len(options):
        check.fail("options", "must not repeat an option")
    answer = check.get("answer")
    if answer not in options:
        check.fail("answer", f"must be one of the options, got {answer!r}")
    return {"question": question, "options": options, "answer": answer}


def _routing(top: _Checker, spec: StudySpec) -> dict | None:
    """``[routing]``: route raters whose fitted consistency stays low away from the items."""
    table = top.table_of("routing")
    if not table:
        return None
    check = _Checker(top.name, table, "routing.")
    check.unknown({"min_ratings", "min_consistency"})
    if not spec.adaptive:
        check.fail("min_consistency", "needs an [adaptive] section (its rater model gives each "
                                      "rater's consistency)")
    return {"min_ratings": check.get("min_ratings", 10),
            "min_consistency": float(check.get("min_consistency"))}


def _llm_member_ratings(row: dict, models: list[str], where: str, low, high) -> list[float]:
    """One row's rating by each model (NaN for an empty cell), on the scale [low, high]."""
    ratings = []
    for model in models:
        text = (row.get(model) or "").strip()
        try:
            value = float(text) if text else float("nan")
        except ValueError:
            raise InputError(f"{where}: {model} {text!r} is not a number") from None
        if text and not low <= value <= high:
            raise InputError(f"{where}: {model} {value:g} is outside the scale [{low}, {high}]")
        ratings.append(value)
    return ratings


def _llm_members(path: Path, header: list[str], rows, models: list[str], by_key: dict,
                 scale: Scale, excluded: dict | None = None) -> dict[str, list[float]]:
    """Each main item's ratings by the models, every main item rated by at least one."""
    low, high = min(scale.values), max(scale.values)
    members: dict[str, list[float]] = {}
    for line, values in rows:
        row = dict(zip(header, values))
        key = (row.get("item_id") or "").strip()
        where = f"{path} line {line}"
        if key in (excluded or {}):
            raise InputError(f"{where}: item_id {key!r} is excluded from the study: it shows "
                             f"{', '.join(excluded[key])} (offensive-sense exclusion); drop its row")
        if key not in by_key:
            raise InputError(f"{where}: item_id {key!r} is not a main item of the study")
        if key in members:
            raise InputError(f"{where}: duplicate item_id {key!r}")
        ratings = _llm_member_ratings(row, models, where, low, high)
        if all(math.isnan(v) for v in ratings):
            raise InputError(f"{where}: no model rated item {key!r}")
        members[key] = ratings
    missing = [key for key in by_key if key not in members]
    if missing:
        raise InputError(f"{path}: no LLM ratings for {len(missing)} main items, e.g. {missing[0]!r}")
    return members


def _llm(top: _Checker, main: list[ItemSpec], base_dir: Path, scale: Scale, excluded: dict | None,
         study_type) -> tuple[dict | None, list[list[float]] | None]:
    """``[llm] ratings``: each main item's ratings by an LLM ensemble (``item_id`` + one column
    per model, values on the scale, an empty cell for a model without a rating), kept per item
    as the ensemble's mean (``llm_rating``) and the members' ratings for ``[active]``."""
    table = top.table_of("llm")
    if not table:
        return None, None
    from metrics.core import csv_rows, read_text

    check = _Checker(top.name, table, "llm.")
    check.unknown({"ratings"})
    if study_type.custom_response:
        check.fail("ratings", f"is not available for study type {study_type.name!r} (its answers "
                              "are not ratings on a scale)")
    rel = check.get("ratings")
    path = base_dir / rel
    if not path.exists():
        check.fail("ratings", f"names a file that does not exist: {path}")
    header, rows = csv_rows(read_text(path), str(path))
    models = [c for c in header if c != "item_id"]
    if "item_id" not in header or not models:
        raise InputError(f"{path}: needs an item_id column and one column per model")
    by_key = {item.key: item for item in main}
    members = _llm_members(path, header, rows, models, by_key, scale, excluded)
    for key, item in by_key.items():
        given = [v for v in members[key] if not math.isnan(v)]
        item.llm_rating = sum(given) / len(given)
    return {"ratings": rel, "models": models}, [members[item.key] for item in main]


def _active(top: _Checker, main: list[ItemSpec], members: list[list[float]] | None) -> dict | None:
    """``[active]``: draw once which main items humans rate, with probabilities from the LLM
    ensemble's disagreement (``metrics.study.active_selection``); each item keeps its
    probability and priority (0: not drawn, never handed out)."""
    from metrics.study import active_selection, ensemble_uncertainty

    table = top.table_of("active")
    if not table:
        return None
    check = _Checker(top.name, table, "active.")
    check.unknown({"budget", "floor", "seed", "cells"})
    if members is None or len(members[0]) < 2:
        check.fail("budget", "needs an [llm] ratings file with two or more models (their "
                             "disagreement sets each item's probability)")
    budget = float(check.get("budget"))
    if budget > len(main):
        check.fail("budget", f"must not exceed the {len(main)} main items, got {budget:g}")
    floor = check.get("floor", 0.2)   # above 0: every item keeps a chance of being drawn
    seed = check.get("seed", 0)
    default_cells = [c for c in ("category", "level") if all(c in item.fields for item in main)]
    cells = table.get("cells", default_cells)
    if not isinstance(cells, list) or not all(isinstance(c, str) for c in cells):
        check.fail("cells", f"must be a list of item field names, got {cells!r}")
    for cell in cells:
        if not all(cell in item.fields for item in main):
            check.fail("cells", f"names {cell!r}, which not every main item has")
    labels = [" / ".join(str(item.fields[c]) for c in cells) for item in main] if cells else None
    drawn = active_selection(ensemble_uncertainty(members), budget=budget, cells=labels,
                             floor=float(floor), seed=seed)
    for item, probability, priority in zip(main, drawn["probability"], drawn["priority"]):
        item.active_probability, item.active_priority = float(probability), int(priority)
    return {"budget": budget, "floor": float(floor), "seed": seed, "cells": cells,
            "selected": int(drawn["selected"].sum())}


def _adaptive(top: _Checker, study_type) -> dict | None:
    """``[adaptive]``: collect ratings until the rater model's SE of each item reaches a target."""
    table = top.table_of("adaptive")
    if not table:
        return None
    check = _Checker(top.name, table, "adaptive.")
    check.unknown({"target_se", "min_raters", "max_raters", "refit_every"})
    if "raters_per_item" in top.table:
        top.fail("raters_per_item", "does not apply to an adaptive study (set adaptive.max_raters)")
    if study_type.custom_response:
        check.fail("target_se", f"is not available for study type {study_type.name!r} (its answers "
                                "are not ratings on a scale)")
    adaptive = {"target_se": float(check.get("target_se")),
                "min_raters": check.get("min_raters", 2)}
    if "max_raters" not in table:
        raise InputError(f"{top.name}: missing key 'adaptive.max_raters'")
    adaptive["max_raters"] = check.get("max_raters")
    check.refuse("max_raters", at_least_problem(adaptive["max_raters"], adaptive["min_raters"]))
    adaptive["refit_every"] = check.get("refit_every", 25)
    return adaptive


def _scale(top: _Checker, default: Scale) -> Scale:
    table = top.table_of("scale")
    if not table:
        return default
    check = _Checker(top.name, table, "scale.")
    check.unknown({"values", "labels"})
    values = table.get("values", list(default.values))
    labels = table.get("labels", list(default.labels))
    if not isinstance(values, list) or not values or not all(
            isinstance(v, int) and not isinstance(v, bool) and 0 <= v <= 9 for v in values):
        check.fail("values", f"must be a list of whole numbers 0–9, got {values!r}")
    if len(set(values)) != len(values):
        check.fail("values", "must not repeat a value")
    if not isinstance(labels, list) or not all(isinstance(x, str) and x for x in labels):
        check.fail("labels", "must be a list of non-empty strings")
    if len(labels) != len(values):
        check.fail("labels", f"has {len(labels)} labels for {len(values)} values")
    return Scale(tuple(values), tuple(labels))
