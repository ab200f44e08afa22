"""CrossHOI-Bench construction run as a study (plain module; the study type and tests use it).

Three stages (CrossHOI-Bench §3: task reformulation, automatic negative filtering, manual
refinement) and the export:

1. **Questions** — :func:`questions_from_ground_truth` reads HICO-DET-style ground truth (JSON
   Lines of docs/contracts.md, one image per line) and makes one question per person (``human_box``
   setting: the person's box; ``human_object_box``: one per person–object pair, both boxes;
   ``image_level``: one per image, no boxes), its correct actions ``"verb a/an object"`` as
   positives. Persons are the distinct human boxes (boxes with IoU ≥ 0.7 are one person).
   :func:`questions_from_bench` re-audits a released CrossHOI JSON file: its ``gt_choices`` are
   the positives and its ``wrong_choices`` the first candidates.
2. **Candidates** — :func:`propose_candidates`: HOI classes of the vocabulary with an object of
   the question that are not positives, ranked by the verb similarity s (max over the
   question's positive verbs, under the verb matrix, in [0, 1]): first the plausible band
   ``low ≤ s < high`` (most similar first), then the unrelated ``s < low``, and last the
   near-synonyms ``s ≥ high`` (likely also correct). :func:`filter_by_models` keeps a candidate
   only where every imported model vote says it is wrong (the benchmark's consensus step).
3. **Refinement** — annotators mark each candidate correct (a hard positive), incorrect (a
   negative) or ambiguous (excluded) and may add correct actions or hard negatives from the
   vocabulary. :func:`consensus`: an action takes the label that more than half of the
   question's annotators gave it; otherwise (ties included) it is excluded.

Export (:func:`export_bench`): CrossHOI-Bench's own JSON — ``{image: {"gt_choices": [...],
"wrong_choices": [...], "boxes": {"human": [...], "object": [...]}}}``, with ``{"QA_0": ...,
"QA_1": ...}`` for an image holding several questions — at most four options per question
(positives first, then negatives in candidate order), plus a table of every annotator's changes.

A response is stored compactly (ratings hold short strings): ``"m=cia;p=12,40;n=7"`` — one
letter per candidate in order (c correct, i incorrect, a ambiguous), then the HICO-DET class ids
(``hoi_id``) added as positives and as negatives.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from metrics import InputError, hico
from metrics.core import check_readable, require_columns

SETTINGS = ("human_box", "human_object_box", "image_level")
MARKS = {"c": "correct", "i": "incorrect", "a": "ambiguous"}
RESPONSE = re.compile(r"^m=([cia]*);p=([0-9,]*);n=([0-9,]*)$")
SAME_PERSON_IOU = 0.7


def option(verb: str, obj: str) -> str:
    """The benchmark's option string of a class."""
    return f"{verb} with a/an {obj}" if verb == "no_interaction" else f"{verb} a/an {obj}"


# objects named in the plural (no article before them); the rest take "a" or "an"
PLURAL_OBJECTS = {"scissors", "skis", "glasses", "people"}


def phrase(text: str) -> str:
    """An option string as an annotator reads it: the HOI's phrase with the right article
    ("ride a bicycle", "no interaction with a giraffe", "hold an umbrella", "wear skis");
    the option string itself (``option``) stays the benchmark's form."""
    key = option_key(text)
    if key is None:
        return text
    verb, obj = key
    words = obj.replace("_", " ")
    article = "" if words in PLURAL_OBJECTS else ("an " if words[:1] in "aeiou" else "a ")
    lead = "no interaction with" if verb == "no_interaction" else verb.replace("_", " ")
    return f"{lead} {article}{words}"


def class_phrase(hoi_id: int) -> str:
    """:func:`phrase` of a vocabulary class."""
    return phrase(class_option(hoi_id))


def option_key(text: str) -> tuple[str, str] | None:
    from metrics.crosshoi import option_class
    return option_class(text)


@dataclass
class Question:
    key: str                      # unique within the study: image, or image/QA_k
    image: str
    positives: list[str]
    boxes: dict = field(default_factory=dict)
    candidates: list[str] = field(default_factory=list)
    flags: dict = field(default_factory=dict)   # candidate -> "near_synonym" | "existing_negative"

    def objects(self) -> list[str]:
        out = []
        for text in self.positives + self.candidates:
            key = option_key(text)
            if key and key[1] not in out:
                out.append(key[1])
        return out


def _iou(a, b) -> float:
    from metrics.detection import box_iou
    return float(box_iou(a, b))


def _box(value, where):
    from metrics.detection import parse_box
    return parse_box(value, where)


def _gt_record(line: str, where: str) -> tuple[str, list]:
    """A ground-truth line's image and its non-empty list of HOIs."""
    try:
        record = json.loads(line)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: invalid JSON ({exc.msg})") from None
    if not isinstance(record, dict) or not isinstance(record.get("image"), str) or not record["image"]:
        raise InputError(f"{where}: field 'image' must be a non-empty string")
    hois = record.get("hois")
    if not isinstance(hois, list) or not hois:
        raise InputError(f"{where}: field 'hois' must be a non-empty list")
    return record["image"], hois


def _gt_hoi(hoi, at: str) -> tuple[list, list, str]:
    """A HOI's human box, object box and option text."""
    if not isinstance(hoi, dict):
        raise InputError(f"{at}: must be an object")
    for name in ("verb", "object"):
        if not isinstance(hoi.get(name), str) or not hoi[name].strip():
            raise InputError(f"{at}: field '{name}' must be a non-empty string")
    human = _box(hoi.get("human_box"), f"{at}: human_box")
    obj = _box(hoi.get("object_box"), f"{at}: object_box")
    return human, obj, option(hoi["verb"].strip(), hoi["object"].strip().replace(" ", "_"))


def _same_group(group: dict, human, obj, setting: str) -> bool:
    """Whether a HOI belongs to the question of ``group`` in this setting (the same person, and
    the same object too with both boxes; every HOI of the image at image level)."""
    if setting == "image_level":
        return True
    same_person = _iou(group["human"], human) >= SAME_PERSON_IOU
    return same_person and (setting == "human_box" or _iou(group["object"], obj) >= SAME_PERSON_IOU)


def _image_groups(hois: list, where: str, setting: str) -> list[dict]:
    """The image's HOIs grouped into questions, each with its distinct positive options."""
    groups: list[dict] = []
    for k, hoi in enumerate(hois):
        human, obj, text = _gt_hoi(hoi, f"{where}: hois[{k}]")
        group = next((g for g in groups if _same_group(g, human, obj, setting)), None)
        if group is None:
            group = {"human": human, "object": obj, "positives": []}
            groups.append(group)
        if text not in group["positives"]:
            group["positives"].append(text)
    return groups


def _image_questions(image: str, groups: list[dict], setting: str) -> list[Question]:
    """One question per group, keyed by the image (``image/QA_k`` when it has several)."""
    out = []
    for k, g in enumerate(groups):
        boxes = {} if setting == "image_level" else {"human": g["human"]}
        if setting == "human_object_box":
            boxes["object"] = g["object"]
        key = image if len(groups) == 1 else f"{image}/QA_{k}"
        out.append(Question(key, image, g["positives"], boxes))
    return out


def questions_from_ground_truth(path: str | Path, setting: str = "human_box") -> list[Question]:
    """Stage 1 from JSON Lines ground truth (see the module docstring)."""
    if setting not in SETTINGS:
        raise InputError(f"setting must be one of {', '.join(SETTINGS)}, got {setting!r}")
    path = check_readable(path)
    out: list[Question] = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path} line {number}"
        image, hois = _gt_record(line, where)
        out += _image_questions(image, _image_groups(hois, where, setting), setting)
    if not out:
        raise InputError(f"{path}: no images")
    return out


def questions_from_bench(path: str | Path) -> list[Question]:
    """Stage 1 from a released CrossHOI JSON file (re-auditing it)."""
    from metrics.crosshoi import read_bench

    out = []
    for key, q in read_bench(path).items():
        candidates = [o for o in q.options if o not in q.correct]
        out.append(Question(key, q.image, list(q.correct), dict(q.boxes), candidates,
                            {c: "existing_negative" for c in candidates}))
    return out


class _VerbSimilarity:
    """Similarity of two HICO-DET verb labels through their synsets (1 for the same label), cached."""

    def __init__(self, vocab, verb_matrix):
        self.synset = dict(zip(vocab.verbs["label"], vocab.verbs["synset"]))
        self.matrix = verb_matrix
        self.cache: dict[tuple[str, str], float] = {}

    def __call__(self, a: str, b: str) -> float:
        if a == b:
            return 1.0
        if (a, b) not in self.cache:
            sa, sb = self.synset.get(a), self.synset.get(b)
            self.cache[(a, b)] = float(self.matrix.sim(sa, sb)) if sa and sb else 0.0
        return self.cache[(a, b)]


def _ranked_candidates(q: Question, by_object: dict, similarity: _VerbSimilarity, low: float,
                       high: float) -> list[tuple]:
    """(band, −similarity, verb, object) of every class of the question's objects it does not
    have: band 0 for a middling similarity to its positives, 1 below ``low``, 2 (near synonym)
    from ``high``."""
    positives = {option_key(p) for p in q.positives}
    positive_verbs = [key[0] for key in positives if key]
    have = {option_key(c) for c in q.candidates} | positives
    ranked = []
    for obj in q.objects():
        for verb in by_object.get(obj, []):
            if (verb, obj) in have:
                continue
            s = max((similarity(verb, v) for v in positive_verbs), default=0.0)
            band = 2 if s >= high else 0 if s >= low else 1
            ranked.append((band, -s, verb, obj))
    ranked.sort()
    return ranked


def propose_candidates(questions: list[Question], verb_matrix=None, n: int = 6,
                       low: float = 0.25, high: float = 0.75) -> list[Question]:
    """Stage 2: fill each question's candidates up to ``n`` (see the module docstring)."""
    vocab = hico()
    if verb_matrix is None:
        from metrics.vocab import load_default
        verb_matrix = load_default("v")
    by_object: dict[str, list[str]] = {}
    for verb, obj in zip(vocab.classes["verb"], vocab.classes["object"]):
        by_object.setdefault(obj, []).append(verb)
    similarity = _VerbSimilarity(vocab, verb_matrix)
    for q in questions:
        for band, _s, verb, obj in _ranked_candidates(q, by_object, similarity, low, high):
            if len(q.candidates) >= n:
                break
            text = option(verb, obj)
            q.candidates.append(text)
            if band == 2:
                q.flags[text] = "near_synonym"
    return questions


def filter_by_models(questions: list[Question], path: str | Path) -> list[Question]:
    """Keep a proposed candidate only where every model vote in the CSV says it is wrong.

    CSV columns ``question, candidate, model, vote`` with vote ``wrong`` or ``correct``
    (``incorrect`` / ``0`` read as wrong, ``1`` as correct). A candidate no model judged is
    dropped; candidates from a re-audited benchmark file stay."""
    path = check_readable(path)
    votes: dict[tuple[str, str], list[str]] = {}
    with open(path, newline="", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        require_columns(reader.fieldnames or [], ("question", "candidate", "model", "vote"), str(path))
        for row in reader:
            vote = (row["vote"] or "").strip().lower()
            if vote in ("wrong", "incorrect", "0"):
                vote = "wrong"
            elif vote in ("correct", "1"):
                vote = "correct"
            else:
                raise InputError(f"{path} line {reader.line_num}: vote {row['vote']!r} is not "
                                 "'wrong' or 'correct'")
            votes.setdefault((row["question"].strip(), row["candidate"].strip()), []).append(vote)
    for q in questions:
        q.candidates = [c for c in q.candidates if q.flags.get(c) == "existing_negative"
                        or (votes.get((q.key, c)) and set(votes[(q.key, c)]) == {"wrong"})]
    return questions


# ------------------------------------------------------------------------------ responses
def encode_response(marks: list[str], added_positive: list[int] = (), added_negative: list[int] = ()) -> str:
    letters = "".join({v: k for k, v in MARKS.items()}[m] for m in marks)
    return (f"m={letters};p={','.join(str(i) for i in sorted(set(added_positive)))}"
            f";n={','.join(str(i) for i in sorted(set(added_negative)))}")


def decode_response(text: str) -> tuple[list[str], list[int], list[int]]:
    """(marks per candidate, added positive class ids, added negative class ids)."""
    match = RESPONSE.match(str(text))
    if not match:
        raise InputError(f"response {text!r} is not of the form m=<c|i|a...>;p=<ids>;n=<ids>")
    marks = [MARKS[ch] for ch in match.group(1)]
    ids = [[int(x) for x in group.split(",") if x] for group in match.groups()[1:]]
    n_classes = len(hico().classes)
    for i in ids[0] + ids[1]:
        if i >= n_classes:
            raise InputError(f"response adds class id {i}, outside 0–{n_classes - 1}")
    if set(ids[0]) & set(ids[1]):
        raise InputError("response adds the same action as a positive and as a negative")
    return marks, ids[0], ids[1]


def class_option(hoi_id: int) -> str:
    row = hico().classes.iloc[hoi_id]
    return option(row["verb"], row["object"])


def annotator_votes(question: dict, response: str) -> dict[str, str]:
    """action -> correct / incorrect / ambiguous from one annotator's response to a question."""
    marks, plus, minus = decode_response(response)
    candidates = question["candidates"]
    if len(marks) != len(candidates):
        raise InputError(f"response marks {len(marks)} candidates, the question has {len(candidates)}")
    votes = dict(zip(candidates, marks))
    for i in plus:
        votes[class_option(i)] = "correct"
    for i in minus:
        votes[class_option(i)] = "incorrect"
    return votes


def consensus(votes_by_annotator: dict[str, dict[str, str]]) -> dict[str, str]:
    """action -> label given by more than half of the annotators; other actions are left out
    (ties, and additions too few annotators made)."""
    n = len(votes_by_annotator)
    counts: dict[str, Counter] = {}
    for votes in votes_by_annotator.values():
        for action, label in votes.items():
            counts.setdefault(action, Counter())[label] += 1
    out = {}
    for action, c in counts.items():
        label, k = c.most_common(1)[0]
        if 2 * k > n:
            out[action] = label
    return out


def curate(question: dict, votes_by_annotator: dict[str, dict[str, str]], max_options: int = 4) -> dict:
    """The curated question in CrossHOI-Bench form (``gt_choices``, ``wrong_choices``, ``boxes``)."""
    agreed = consensus(votes_by_annotator) if votes_by_annotator else {}
    positives = list(question["positives"])
    negatives = []
    order = list(question["candidates"]) + [a for a in agreed if a not in question["candidates"]]
    for action in order:
        label = agreed.get(action)
        if label == "correct" and action not in positives:
            positives.append(action)
        elif label == "incorrect" and action not in positives:
            negatives.append(action)
    positives = positives[:max_options]
    out = {"gt_choices": positives, "wrong_choices": negatives[:max(0, max_options - len(positives))]}
    if question.get("boxes"):
        out["boxes"] = question["boxes"]
    return out


def export_bench(curated: dict[str, tuple[str, dict]]) -> dict:
    """CrossHOI JSON from ``question key -> (image, curated question)``; several questions of
    one image become ``QA_0``, ``QA_1``, ... in key order."""
    by_image: dict[str, list[dict]] = {}
    for _key, (image, question) in curated.items():
        by_image.setdefault(image, []).append(question)
    out = {}
    for image, questions in by_image.items():
        out[image] = questions[0] if len(questions) == 1 else {
            f"QA_{k}": q for k, q in enumerate(questions)}
    return out


def change_rows(question_key: str, question: dict, votes_by_annotator: dict[str, dict[str, str]]) -> list[dict]:
    """What each annotator changed: candidates not left as negatives, and every addition."""
    agreed = consensus(votes_by_annotator) if votes_by_annotator else {}
    rows = []
    for annotator, votes in votes_by_annotator.items():
        for action, label in votes.items():
            if action in question["candidates"]:
                if label == "incorrect":
                    continue
                change = "marked_correct" if label == "correct" else "marked_ambiguous"
            else:
                change = "added_positive" if label == "correct" else "added_negative"
            rows.append({"annotator": annotator, "question": question_key, "action": action,
                         "change": change, "consensus": agreed.get(action, "excluded")})
    return rows
