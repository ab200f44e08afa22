"""CrossHOI-Bench multiple-choice scoring (Lei, Wang & Tan, CrossHOI-Bench, CVPR 2026).

A benchmark file is a JSON object: question key (the image name) → ``{"gt_choices": [...],
"wrong_choices": [...], "boxes": {"human": [x1, y1, x2, y2], "object": [...]}}`` (``boxes``
absent in the image-level setting). Options are strings ``"verb a/an object"``, with
``"no_interaction with a/an object"`` for the no-interaction class. A question's options are its
correct and wrong choices (each distinct string once); its correct set is ``set(gt_choices)``.

Scores follow the benchmark's released scorer (``newbench_question_func.py``):

- an answer that is not one of the question's options is ignored (counted as out-of-options);
  a repeated answer counts once;
- per question, with TP / FP the in-option answers in / not in the correct set C:
  ``P = TP / (TP + FP)``, ``R = TP / |C|``, ``F1 = 2PR / (P + R)`` (0 when P + R = 0); a question
  with no in-option answer scores F1 = 1 when C is empty, else 0;
- Instance-F1 = mean per-question F1 over *all* questions of the benchmark file;
- micro ("Avg. Prec" / "Avg. Rec"): ``ΣTP / Σ(TP + FP)`` and ``ΣTP / Σ|C|``; Micro-F1 is their
  harmonic mean;
- exact match = share of questions whose in-option answer set is non-empty and equals C;
- Macro-F1 = mean per-class F1 over the dataset's HOI classes (the 600 HICO-DET classes by
  default) that are correct somewhere or were chosen somewhere. An option maps to the class
  (verb, object) with spaces read as underscores; ``no_interaction with a/an X`` is
  (no_interaction, X). Per class: TP / FP from the answers, GT = number of questions where it is
  correct; F1 = 0 when TP = 0, else the harmonic mean of TP/(TP+FP) and TP/GT. Options outside
  the class list count in every other score but not here.

Detections (JSON Lines in the project's HOI format, or the released scorer's
``{"h_boxes", "o_boxes", "ho_scores", "ao_names"}`` per image) become answers: a detection with
score ≥ the threshold whose human box has IoU ≥ 0.5 with the question's human box (and object
box with the question's object box, when the question has one) answers its label; in the
image-level setting (no boxes) every detection above the threshold answers.

>>> bench = {"img1": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["feed a/an horse"]}}
>>> round(mcq_scores(bench, {"img1": ["ride a/an horse", "feed a/an horse"]})["instance_f1"], 4)
0.6667
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

from metrics.core._constraints import FRACTION, POSITIVE_FRACTION, validate_params
from metrics.core._errors import InputError
from metrics.core._inputs import parse_json, read_json, read_text, sniff_json
from metrics.core._validation import range_problem, shown
from metrics.detection._boxes import box_iou, parse_box

BOX_ROLES = ("human", "object")


@dataclass(frozen=True)
class Question:
    key: str
    correct: tuple[str, ...]   # distinct, file order
    options: tuple[str, ...]   # correct then wrong choices, each distinct string once
    boxes: dict = field(default_factory=dict)
    image: str = ""               # the image the question is about (its key, or before "/QA_k")


def normalize_label(text: str) -> str:
    """The benchmark's spelling of an answer (``no_interaction a/an X`` gains its ``with``)."""
    text = " ".join(str(text).split())
    return text.replace("no_interaction a/an ", "no_interaction with a/an ")


def option_class(text: str) -> tuple[str, str] | None:
    """(verb, object) of ``"verb a/an object"`` with spaces read as underscores, else None.

    >>> option_class("no_interaction with a/an potted plant")
    ('no_interaction', 'potted_plant')
    """
    if " a/an " not in text:
        return None
    act, _, obj = text.partition(" a/an ")
    act, obj = act.strip().replace(" ", "_"), obj.strip().replace(" ", "_")
    if "no_interaction" in act:
        act = "no_interaction"
    return (act, obj) if act and obj else None


def _flat_questions(data: dict) -> list[tuple[str, str, object]]:
    """(key, image, entry) of every question; an image's ``QA_k`` entries become ``image/QA_k``."""
    flat = []
    for key, entry in data.items():
        if isinstance(entry, dict) and any(str(k).startswith("QA_") for k in entry):
            flat += [(f"{key}/{qa}", str(key), sub) for qa, sub in entry.items()]
        else:
            flat.append((str(key), str(key), entry))
    return flat


def _choice_lists(entry: dict, where: str) -> dict[str, list[str]]:
    """The normalized gt_choices and wrong_choices of a question."""
    lists = {}
    for part in ("gt_choices", "wrong_choices"):
        value = entry.get(part)
        if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
            raise InputError(f"{where}: {part} must be a list of option strings")
        lists[part] = [normalize_label(v) for v in value]
    return lists


def _question_boxes(entry: dict, where: str) -> dict:
    """The question's human (and object) box, or {} in the image-level setting."""
    boxes = {}
    if "boxes" in entry:
        if not isinstance(entry["boxes"], dict) or "human" not in entry["boxes"]:
            raise InputError(f"{where}: boxes must be an object with a human box")
        for role, value in entry["boxes"].items():
            if role not in BOX_ROLES:
                raise InputError(f"{where}: boxes.{role} is not one of {', '.join(BOX_ROLES)}")
            boxes[role] = parse_box(value, f"{where}: boxes.{role}")
    return boxes


def _question(key: str, image: str, entry, name: str) -> Question:
    """One validated question of the benchmark ``name``."""
    where = f"{name}: question {key!r}"
    if not isinstance(entry, dict):
        raise InputError(f"{where}: must be an object with gt_choices and wrong_choices")
    lists = _choice_lists(entry, where)
    correct = tuple(dict.fromkeys(lists["gt_choices"]))
    options = tuple(dict.fromkeys(lists["gt_choices"] + lists["wrong_choices"]))
    if not options:
        raise InputError(f"{where}: has no options")
    return Question(key, correct, options, _question_boxes(entry, where), image)


# how detections answer a question: score at least score_threshold, IoU at least iou with its boxes
DETECTION_ANSWERS = {"score_threshold": FRACTION, "iou": POSITIVE_FRACTION}


def parse_bench(data, *, name: str = "benchmark") -> dict[str, Question]:
    """Validated questions of a benchmark object (see the module docstring)."""
    if not isinstance(data, dict) or not data:
        raise InputError(f"{name}: must be a non-empty JSON object of questions")
    out = {}
    for key, image, entry in _flat_questions(data):
        out[key] = _question(key, image, entry, name)
    return out


def read_bench(path: str | Path) -> dict[str, Question]:
    return parse_bench(read_json(path), name=str(path))


@dataclass(frozen=True)
class Detection:
    human_box: list[float] | None
    object_box: list[float] | None
    label: str
    score: float


@validate_params(DETECTION_ANSWERS)
def answers_from_detections(questions: dict[str, Question], detections: dict[str, list[Detection]], *,
                            score_threshold: float = 0.5, iou: float = 0.5) -> dict[str, list[str]]:
    """Answers per question from detections (see the module docstring), in descending score.

    A detection's label is matched to an option by its class (so ``potted_plant`` answers the
    option ``... a/an potted plant``); a label that is no option stays as written and is later
    counted as out-of-options."""
    out = {}
    for key, question in questions.items():
        by_class: dict[tuple[str, str] | str, str] = {}
        for option in question.options:
            by_class.setdefault(option_class(option) or option, option)
        chosen = []
        for det in sorted(detections.get(question.image or key, ()), key=lambda d: -d.score):
            if det.score < score_threshold:
                continue
            if "human" in question.boxes:
                if det.human_box is None or box_iou(det.human_box, question.boxes["human"]) < iou:
                    continue
            if "object" in question.boxes:
                if det.object_box is None or box_iou(det.object_box, question.boxes["object"]) < iou:
                    continue
            label = normalize_label(det.label)
            chosen.append(by_class.get(option_class(label) or label, label))
        out[key] = chosen
    return out


def _hico_classes() -> set[tuple[str, str]]:
    """The 600 HICO-DET (verb, object) classes, Macro-F1's default."""
    from metrics.datasets.hico_det._vocabulary import hico
    table = hico().classes
    return set(zip(table["verb"], table["object"]))


@dataclass
class _McqTally:
    """Running sums of :func:`mcq_scores` over the questions."""

    classes: set
    tp: int = 0
    fp: int = 0
    n_correct: int = 0
    exact: int = 0
    out_of_options: int = 0
    duplicates: int = 0
    answered: int = 0
    f1_sum: float = 0.0
    per_class: dict = field(default_factory=dict)   # class -> [tp, fp, gt]
    outside: set = field(default_factory=set)       # options outside the classes

    def class_counts(self, option: str) -> list[int] | None:
        """The [tp, fp, gt] of the option's class, or None (noted) when it is outside the classes."""
        cls = option_class(option)
        if cls is None or cls not in self.classes:
            self.outside.add(option)
            return None
        return self.per_class.setdefault(cls, [0, 0, 0])

    def chosen_options(self, key: str, question: Question, given) -> list[str]:
        """The distinct in-option answers; repeats and out-of-option answers are counted."""
        if isinstance(given, str) or not isinstance(given, (list, tuple)):
            raise InputError(f"answers for {key!r} must be a list of option strings")
        labels = [normalize_label(a) for a in given]
        unique = list(dict.fromkeys(labels))
        self.duplicates += len(labels) - len(unique)
        options = set(question.options)
        chosen = [a for a in unique if a in options]
        self.out_of_options += len(unique) - len(chosen)
        return chosen

    def count_correct(self, question: Question) -> None:
        """Each correct option is one ground truth of its class."""
        for option in question.correct:
            counts = self.class_counts(option)
            if counts is not None:
                counts[2] += 1

    def count_chosen(self, chosen: list[str], correct: set) -> None:
        """Each chosen option is a TP or FP of its class."""
        for a in chosen:
            counts = self.class_counts(a)
            if counts is not None:
                counts[0 if a in correct else 1] += 1

    def add(self, key: str, question: Question, given) -> None:
        """Score one question's answers."""
        chosen = self.chosen_options(key, question, given)
        correct = set(question.correct)
        self.count_correct(question)
        self.n_correct += len(correct)
        if not chosen:
            self.f1_sum += 0.0 if correct else 1.0
            return
        self.answered += 1
        tp = sum(1 for a in chosen if a in correct)
        fp = len(chosen) - tp
        self.count_chosen(chosen, correct)
        self.tp, self.fp = self.tp + tp, self.fp + fp
        precision = tp / len(chosen)
        recall = tp / len(correct) if correct else 0.0
        self.f1_sum += 2 * precision * recall / (precision + recall) if precision + recall > 0 else 0.0
        self.exact += set(chosen) == correct


def _micro_scores(tp: int, fp: int, n_correct: int) -> tuple[float, float, float]:
    """Avg. Prec, Avg. Rec and their harmonic mean, Micro-F1."""
    avg_precision = tp / (tp + fp) if tp + fp else 0.0
    avg_recall = tp / n_correct if n_correct else 0.0
    micro_f1 = (2 * avg_precision * avg_recall / (avg_precision + avg_recall)
                if avg_precision + avg_recall > 0 else 0.0)
    return avg_precision, avg_recall, micro_f1


def _class_rows(per_class: dict) -> list[dict]:
    """Precision, recall and F1 of each class (all 0 when it has no TP), sorted by class."""
    class_rows = []
    for (verb, obj), (tp, fp, gt) in sorted(per_class.items()):
        if tp == 0:
            p = r = f1 = 0.0
        else:
            p, r = tp / (tp + fp), tp / gt
            f1 = 2 * p * r / (p + r)
        class_rows.append({"verb": verb, "object": obj, "tp": tp, "fp": fp, "gt": gt,
                           "precision": p, "recall": r, "f1": f1})
    return class_rows


def mcq_scores(questions, answers: dict[str, list[str]], classes=None) -> dict:
    """CrossHOI-Bench scores of ``answers`` (question key → chosen option strings).

    ``questions`` is the output of :func:`read_bench` / :func:`parse_bench` or the raw benchmark
    object; ``classes`` the (verb, object) pairs Macro-F1 averages over (default: the 600
    HICO-DET classes). Every question of the benchmark counts; answers for keys that are not
    questions are counted under ``unknown_questions`` and otherwise ignored. Returns plain
    numbers in [0, 1] under ``macro_f1``, ``instance_f1``, ``micro_f1``, ``exact_match``,
    ``avg_precision``, ``avg_recall`` and the counts behind them. Formulas: module docstring.
    """
    if not questions or not isinstance(next(iter(questions.values())), Question):
        questions = parse_bench(questions)
    if not isinstance(answers, dict):
        raise InputError("answers must map question keys to lists of option strings")
    tally = _McqTally(set(_hico_classes() if classes is None else classes))
    for key, question in questions.items():
        tally.add(key, question, answers.get(key) or [])

    n = len(questions)
    avg_precision, avg_recall, micro_f1 = _micro_scores(tally.tp, tally.fp, tally.n_correct)
    class_rows = _class_rows(tally.per_class)
    macro_f1 = sum(row["f1"] for row in class_rows) / len(class_rows) if class_rows else 0.0
    unknown = sorted(set(answers) - set(questions))
    return {
        "macro_f1": macro_f1, "instance_f1": tally.f1_sum / n, "micro_f1": micro_f1,
        "exact_match": tally.exact / n, "avg_precision": avg_precision, "avg_recall": avg_recall,
        "n_questions": n,
        "counts": {"tp": tally.tp, "fp": tally.fp, "correct_options": tally.n_correct,
                   "answered_questions": tally.answered, "unanswered_questions": n - tally.answered,
                   "out_of_options": tally.out_of_options, "duplicates": tally.duplicates,
                   "unknown_questions": len(unknown)},
        "macro": {"n_classes": len(class_rows), "options_outside_classes": sorted(tally.outside)},
        "per_class": class_rows,
    }


# ------------------------------------------------------------------------------ reading answers
def _detection(entry: dict, where: str) -> Detection:
    if not isinstance(entry, dict):
        raise InputError(f"{where}: must be an object")
    if "label" in entry:
        label = entry["label"]
    elif "verb" in entry and "object" in entry:
        verb, obj = entry["verb"], entry["object"]
        for part, value in (("verb", verb), ("object", obj)):
            if not isinstance(value, str) or not value.strip():
                raise InputError(f"{where}: {part} must be a non-empty string, got {shown(value)}")
        label = f"{verb} with a/an {obj}" if verb == "no_interaction" else f"{verb} a/an {obj}"
    else:
        raise InputError(f"{where}: needs 'verb' and 'object' (or a 'label' \"verb a/an object\")")
    if not isinstance(label, str) or not label.strip():
        raise InputError(f"{where}: label must be a non-empty string")
    score = entry.get("score", 1.0)
    if range_problem(score, -math.inf, math.inf):
        raise InputError(f"{where}: score must be a number (finite), got {shown(score)}")
    human = parse_box(entry["human_box"], f"{where}: human_box") if entry.get("human_box") is not None else None
    obj_box = parse_box(entry["object_box"], f"{where}: object_box") if entry.get("object_box") is not None else None
    return Detection(human, obj_box, label, float(score))


def _released_detections(key: str, entry: dict, where: str) -> list[Detection]:
    names = entry.get("ao_names", [])
    h, o = entry.get("h_boxes", []), entry.get("o_boxes", [])
    scores = entry.get("ho_scores", [1.0] * len(names) if isinstance(names, list) else [])
    for field_name, value in (("ao_names", names), ("ho_scores", scores), ("h_boxes", h), ("o_boxes", o)):
        if not isinstance(value, list):
            raise InputError(f"{where}: {field_name} must be a list, got {shown(value)}")
    if not (len(names) == len(scores)
            and (not h or len(h) == len(names)) and (not o or len(o) == len(names))):
        raise InputError(f"{where}: ao_names, ho_scores, h_boxes and o_boxes must be lists of "
                         "the same length")
    return [_detection({"label": names[i], "score": scores[i],
                        "human_box": h[i] if h else None, "object_box": o[i] if o else None},
                       f"{where}: detection {i}") for i in range(len(names))]


def _flat_answer_keys(data: dict) -> dict:
    """Answers keyed by question: an image's ``{"QA_k": ...}`` entries become ``image/QA_k``."""
    return {f"{k}/{qa}" if isinstance(v, dict) and str(qa).startswith("QA_") else k: sub
            for k, v in data.items()
            for qa, sub in (v.items() if isinstance(v, dict) and any(
                str(q).startswith("QA_") for q in v) else [(None, v)])}


def _option_answers(path: Path, data: dict) -> dict[str, list[str]]:
    """A JSON object key → list of option strings, checked."""
    for key, value in data.items():
        if not all(isinstance(a, str) for a in value):
            raise InputError(f"{path}: answers of {key!r} must be option strings")
    return {str(k): list(v) for k, v in data.items()}


def _released_records(path: Path, data: dict) -> dict[str, list[Detection]]:
    """A JSON object key → the released scorer's detection record, read as detections."""
    detections = {}
    for key, value in data.items():
        if not isinstance(value, dict) or "ao_names" not in value:
            raise InputError(f"{path}: {key!r} must be a list of option strings or a "
                             "detection record with ao_names")
        detections[str(key)] = _released_detections(key, value, f"{path}: {key!r}")
    return detections


def _jsonl_detections(path: Path, text: str) -> dict[str, list[Detection]]:
    """JSON Lines ``{"image", "hois": [...]}`` records as detections per image."""
    detections = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}: line {number}"
        record = parse_json(line, where)
        if not isinstance(record, dict) or not isinstance(record.get("image"), str):
            raise InputError(f"{where}: field 'image' must be a string")
        hois = record.get("hois", [])
        if not isinstance(hois, list):
            raise InputError(f"{where}: field 'hois' must be a list")
        key = record["image"]
        if key in detections:
            raise InputError(f"{where}: image {key!r} appears twice")
        detections[key] = [_detection(h, f"{where}: hois[{i}]") for i, h in enumerate(hois)]
    if not detections:
        raise InputError(f"{path}: no predictions")
    return detections


@validate_params(DETECTION_ANSWERS)
def read_answers(path: str | Path, questions: dict[str, Question], *, score_threshold: float = 0.5,
                 iou: float = 0.5) -> tuple[dict[str, list[str]], str]:
    """Answers per question from ``--pred`` and its kind (``options`` or ``detections``).

    An image with several questions (``QA_0``, ``QA_1``, ... in the benchmark) is answered with
    ``{image: {"QA_0": [...], ...}}`` or under the keys ``image/QA_0``; detections of an image
    answer each of its questions.

    Accepted: a JSON object key → list of option strings; a JSON object key → the released
    scorer's detection record (``ao_names``, ``ho_scores``, ``h_boxes``, ``o_boxes``); or JSON
    Lines ``{"image", "hois": [{"human_box", "object_box", "verb", "object", "score"}]}``."""
    path = Path(path)
    text = read_text(path)
    # one JSON document (read under the policy), else JSON Lines detections
    data = parse_json(text, str(path)) if sniff_json(text) is not None else None
    if isinstance(data, dict) and "image" not in data:
        data = _flat_answer_keys(data)
        if all(isinstance(v, list) for v in data.values()):
            return _option_answers(path, data), "options"
        detections = _released_records(path, data)
        return answers_from_detections(questions, detections, score_threshold=score_threshold, iou=iou), "detections"
    detections = _jsonl_detections(path, text)
    answers = answers_from_detections(questions, detections, score_threshold=score_threshold, iou=iou)
    for key in detections:
        answers.setdefault(key, [])
    return answers, "detections"
