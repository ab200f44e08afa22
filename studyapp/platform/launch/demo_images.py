"""Images the project draws itself (Pillow) for the image-study demos — nothing is downloaded.

- :func:`class_images` draws one scene per HOI class (a stick-figure person in a blue-grey box,
  the object as a coloured shape with its name, the interaction as a caption) and writes
  ``images.csv`` (``gt_verb, gt_object, image, human_box, object_box``) for the
  ``hoi_similarity_image`` study type.
- :func:`crosshoi_scenes` draws scenes with one or two persons and writes HICO-DET-style ground
  truth (``gt.jsonl``, the JSON Lines of docs/contracts.md) for the ``crosshoi_curation`` study type.

``python -m studyapp demo-images`` writes both into ``.data/demo_images/`` (what the demo specs
in ``studies/`` read).
"""

from __future__ import annotations

import hashlib
import json
import random
from pathlib import Path

from PIL import Image, ImageDraw

SIZE = (480, 360)


def _rng(*parts) -> random.Random:
    return random.Random(int(hashlib.sha256("|".join(map(str, parts)).encode()).hexdigest()[:12], 16))


def _person(draw: ImageDraw.ImageDraw, box) -> None:
    x1, y1, x2, y2 = box
    cx, h = (x1 + x2) / 2, y2 - y1
    head = h * 0.12
    draw.ellipse([cx - head, y1 + 2, cx + head, y1 + 2 + 2 * head], outline=(40, 40, 40), width=3)
    neck, hip = y1 + 2 + 2 * head, y1 + h * 0.62
    draw.line([cx, neck, cx, hip], fill=(40, 40, 40), width=3)
    draw.line([x1 + 4, y1 + h * 0.38, x2 - 4, y1 + h * 0.38], fill=(40, 40, 40), width=3)
    draw.line([cx, hip, x1 + 6, y2 - 2], fill=(40, 40, 40), width=3)
    draw.line([cx, hip, x2 - 6, y2 - 2], fill=(40, 40, 40), width=3)


def _object(draw: ImageDraw.ImageDraw, box, name: str, rng: random.Random) -> None:
    color = tuple(rng.randint(60, 220) for _ in range(3))
    if rng.random() < 0.5:
        draw.rounded_rectangle(box, radius=8, fill=color)
    else:
        draw.ellipse(box, fill=color)
    draw.text((box[0] + 4, (box[1] + box[3]) / 2 - 5), name.replace("_", " "), fill=(0, 0, 0))


def _scene(persons: list[list[float]], objects: list[tuple[list[float], str]], caption: str,
           rng: random.Random) -> Image.Image:
    image = Image.new("RGB", SIZE, (205, 225, 240))
    draw = ImageDraw.Draw(image)
    draw.rectangle([0, SIZE[1] * 0.7, SIZE[0], SIZE[1]], fill=(170, 200, 150))
    for box, name in objects:
        _object(draw, box, name, rng)
    for box in persons:
        _person(draw, box)
    draw.rectangle([0, 0, SIZE[0], 18], fill=(255, 255, 255))
    draw.text((6, 3), caption, fill=(0, 0, 0))
    return image


def _boxes(rng: random.Random, left: bool = True):
    x = rng.randint(20, 80) if left else rng.randint(250, 320)
    human = [x, rng.randint(60, 100), x + rng.randint(70, 100), rng.randint(280, 340)]
    ox = human[2] + rng.randint(-30, 30)
    obj = [ox, rng.randint(150, 220), min(SIZE[0] - 5, ox + rng.randint(60, 120)), rng.randint(250, 330)]
    return [float(v) for v in human], [float(v) for v in obj]


def class_images(folder: str | Path, classes: list[tuple[str, str]]) -> Path:
    """One scene per (verb, object) class under ``folder/classes/``; returns ``images.csv``."""
    folder = Path(folder)
    (folder / "classes").mkdir(parents=True, exist_ok=True)
    lines = ["gt_verb,gt_object,image,human_box,object_box"]
    for verb, obj in classes:
        rng = _rng("class", verb, obj)
        human, box = _boxes(rng)
        name = f"classes/{verb}__{obj}.png"
        if not (folder / name).exists():
            _scene([human], [(box, obj)], f"{verb.replace('_', ' ')} {obj.replace('_', ' ')}",
                   rng).save(folder / name)
        fmt = lambda b: " ".join(f"{v:g}" for v in b)
        lines.append(f"{verb},{obj},{name},{fmt(human)},{fmt(box)}")
    path = folder / "images.csv"
    path.write_text("\n".join(lines) + "\n")
    return path


def crosshoi_scenes(folder: str | Path, n_images: int = 12, seed: int = 0) -> Path:
    """``n_images`` scenes with 1–2 persons and their HOIs; returns ``gt.jsonl``."""
    from metrics import hico

    folder = Path(folder)
    (folder / "scenes").mkdir(parents=True, exist_ok=True)
    table = hico().classes
    by_object: dict[str, list[str]] = {}
    for verb, obj in zip(table["verb"], table["object"]):
        if verb != "no_interaction":
            by_object.setdefault(obj, []).append(verb)
    objects = sorted(o for o, verbs in by_object.items() if len(verbs) >= 5)
    rng = random.Random(seed)
    lines = []
    for k in range(n_images):
        name = f"scenes/scene_{k:03d}.png"
        persons, drawn, hois = [], [], []
        for p in range(1 + (k % 3 == 0)):
            obj = rng.choice(objects)
            human, box = _boxes(rng, left=p == 0)
            verbs = rng.sample(by_object[obj], k=1 + (rng.random() < 0.4))
            persons.append(human)
            drawn.append((box, obj))
            hois += [{"human_box": human, "object_box": box, "verb": v, "object": obj} for v in verbs]
        caption = "; ".join(f"{h['verb'].replace('_', ' ')} {h['object'].replace('_', ' ')}" for h in hois)
        _scene(persons, drawn, caption, random.Random(k)).save(folder / name)
        lines.append(json.dumps({"image": name, "hois": hois}))
    path = folder / "gt.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


def write_demo(folder: str | Path) -> dict[str, Path]:
    """Both demo sets: images for the 520 HICO-DET interaction classes (``no_interaction`` has
    no WordNet verb, so a similarity study cannot name it) and 12 CrossHOI scenes."""
    from metrics import hico
    from metrics.core import StagedFolder

    table = hico().classes
    classes = [(v, o) for v, o in zip(table["verb"], table["object"]) if v != "no_interaction"]
    staged = StagedFolder(folder)  # drawn in a temporary folder, moved into place complete
    with staged as temp:
        written = {"images_csv": class_images(temp, classes), "gt": crosshoi_scenes(temp)}
    return {what: staged.path / path.relative_to(temp) for what, path in written.items()}
