"""Spec files for the tests of study-spec keys: a valid spec that reaches a given key, with that
key set to a given value (``SPEC_KEYS`` in studyapp/platform/specs/spec_checker.py). Shared by the
generic test of every constraint (tests/metrics/test_parameter_constraints.py) and the tests of the
spec keys' own words (tests/studyapp/test_spec_key_constraints.py)."""

from __future__ import annotations

import json
import math

from studyhelpers import write_items

N_ITEMS = 6
TOP = {"title": "T", "study_type": "hoi_similarity", "instructions": "Rate.", "raters_per_item": 2}
ITEMS = {"source": "csv", "path": "items.csv"}
ADAPTIVE = {"target_se": 0.5, "min_raters": 2, "max_raters": 3}
CONTEXT = {   # the sections a key's section needs to be read at all
    "items": {}, "practice": {}, "quality": {}, "answers": {}, "display": {}, "prolific": {},
    "example": {"example": {"gt_verb": "ride", "gt_object": "bicycle", "pred_verb": "push.v.01",
                            "pred_object": "bicycle", "rating": 1, "explanation": "Related."}},
    "comprehension": {"comprehension": {"question": "Q?", "options": ["a", "b"], "answer": "a"}},
    "routing": {"adaptive": ADAPTIVE, "routing": {"min_ratings": 10, "min_consistency": 0.2}},
    "adaptive": {"adaptive": ADAPTIVE},
    "llm": {"llm": {"ratings": "llm.csv"}},
    "active": {"llm": {"ratings": "llm.csv"}, "active": {"budget": 3}},
}


def toml_value(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and not math.isfinite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    return json.dumps(value, ensure_ascii=False) if isinstance(value, str) else repr(value)


def write(folder, top: dict, sections: dict):
    lines = [f"{k} = {toml_value(v)}" for k, v in top.items()]
    for name, table in sections.items():
        lines += [f"[{name}]", *(f"{k} = {toml_value(v)}" for k, v in table.items())]
    write_items(folder / "items.csv", N_ITEMS)
    rows = (folder / "items.csv").read_text().replace("\ni0", "\np0").splitlines()
    (folder / "practice.csv").write_text("\n".join([rows[0] + ",expected", *(r + ",1" for r in rows[1:3])]) + "\n")
    (folder / "llm.csv").write_text("item_id,m1,m2\n" + "".join(
        f"i{k:02d},{k % 5},{(k * 3) % 5}\n" for k in range(1, N_ITEMS + 1)))
    path = folder / "study.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def spec_with(folder, dotted: str, value):
    """A valid spec with ``dotted`` set to ``value`` (and what that key's section needs)."""
    section, _, key = dotted.rpartition(".")
    top = dict(TOP)
    sections = {"items": dict(ITEMS), **{name: dict(t) for name, t in CONTEXT.get(section, {}).items()}}
    if "adaptive" in sections:
        del top["raters_per_item"]   # an adaptive study takes adaptive.max_raters
    if section == "practice":
        sections["practice"] = {"path": "practice.csv"}
    if section:
        sections.setdefault(section, {})[key] = value
    else:
        top[key] = value
    return write(folder, top, sections)


def valid_spec(folder, dotted: str):
    """A valid spec whose sections reach ``dotted`` (the key itself left at its default)."""
    section = dotted.rpartition(".")[0]
    sections = {"items": dict(ITEMS), **CONTEXT.get(section, {})}
    if section == "practice":
        sections["practice"] = {"path": "practice.csv"}
    top = {k: v for k, v in TOP.items() if not ("adaptive" in sections and k == "raters_per_item")}
    return write(folder, top, sections)
