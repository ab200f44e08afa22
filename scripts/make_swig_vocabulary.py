"""Re-type SWIG-HOI's vocabulary facts into the project's own files.

Reads the metadata of ``scwangdyd/large_vocabulary_hoi_detection``
(``choir/data/datasets/swig_v1_meta.py``: SWIG_CATEGORIES, SWIG_ACTIONS, SWIG_INTERACTIONS),
parsed as literals (never executed), and writes into ``metrics/datasets/swig_hoi/data/``:

- ``swig_objects.csv`` (label, synset, note): the 1000 object categories in id order; the
  synset is the WordNet 3.0 noun the metadata's ``noun_id`` names (``n02958343`` → ``car.n.01``);
  a name shared by several categories gets its synset appended to its label;
- ``swig_verbs.csv`` (label, synset, note): the 407 actions in id order. The metadata gives an
  action a definition but no synset: the synset is the sense of the action's base form whose
  WordNet gloss equals that definition (or nearly: same words, ratio ≥ 0.8), else the sense whose
  gloss and lemmas share the most content words with it (at least 2, more than the first
  sense), else WordNet's first sense of the base form; a few are set by hand (:data:`BY_HAND`).
  The definitions themselves are not copied;
- ``swig_hoi_classes.csv``: one row per interaction (hoi_id, verb, object labels, action_id,
  object_id, frequency 0 novel / 1 rare / 2 common, evaluated, rare, novel).

Glosses are never stored: ``metrics.vocab.wordnet.gloss`` gives them from our WordNet.

    git --git-dir=/path/to/large_vocabulary_hoi_detection.git show \\
        HEAD:choir/data/datasets/swig_v1_meta.py > /tmp/swig_v1_meta.py
    .venv/bin/python scripts/make_swig_vocabulary.py /tmp/swig_v1_meta.py
"""

from __future__ import annotations

import ast
import difflib
import re
import sys
from collections import Counter
from pathlib import Path

import pandas as pd

from metrics.vocab import wordnet as wn

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "metrics" / "datasets" / "swig_hoi" / "data"
BY_HAND = {
    "pooing": ("stool.v.04", "set by hand: WordNet 3.0 has no verb 'poo'"),
    "buying": ("buy.v.01", "set by hand: word overlap picked bribe.v.01"),
    "pressing": ("press.v.01", "set by hand: word overlap picked crusade.v.01"),
}
STOP = set("a an the of to or and in on at by for with from into as is be it its one's someone "
           "something that this so".split())


def read_meta(path: Path) -> dict:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {node.targets[0].id: ast.literal_eval(node.value) for node in tree.body
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Name)}


def _words(text: str) -> str:
    return " ".join(re.findall(r"[a-z']+", text.lower()))


def verb_synset(name: str, definition: str) -> tuple[str, str]:
    if name in BY_HAND:
        return BY_HAND[name]
    bases = wn.lemma_candidates(name, "v")
    senses = list(dict.fromkeys(s for base in bases for s in wn.synsets(base, "v")))
    if not senses:
        raise SystemExit(f"no WordNet verb for action {name!r}: add it to BY_HAND")
    wanted = _words(definition)
    scored = [(difflib.SequenceMatcher(None, _words(wn.gloss(s)), wanted).ratio(), s) for s in senses]
    best_ratio, best = max(scored, key=lambda rs: rs[0])      # first sense on ties
    if best_ratio == 1.0:
        return best, "gloss equals SWIG-HOI's definition"
    if best_ratio >= 0.8:
        return best, f"gloss closest to SWIG-HOI's definition (ratio {best_ratio:.2f})"
    first = wn.synsets(bases[0], "v")[0]
    overlap = {s: len(_stems(definition) & _stems(wn.gloss(s) + " " + " ".join(wn.lemma_names(s))))
               for s in senses}
    most = max(senses, key=lambda s: overlap[s])             # first sense on ties
    if overlap[most] >= 2 and overlap[most] > overlap[first]:
        return most, f"gloss shares most words with SWIG-HOI's definition ({overlap[most]})"
    return first, f"WordNet's first sense of '{bases[0]}' (SWIG-HOI gives a definition, no synset)"


def _stems(text: str) -> set[str]:
    """Content words cut to five letters (a crude stem)."""
    return {w[:5] for w in re.findall(r"[a-z]+", text.lower()) if w not in STOP and len(w) > 2}


def main(meta_path: str) -> None:
    meta = read_meta(Path(meta_path))
    categories, actions, interactions = meta["SWIG_CATEGORIES"], meta["SWIG_ACTIONS"], meta["SWIG_INTERACTIONS"]
    for table in (categories, actions, interactions):
        assert [x["id"] for x in table] == list(range(len(table))), "ids are not 0..n-1 in order"
    reader = wn.wordnet()
    def label_of(name: str) -> str:
        return name.strip().lower().replace(" ", "_")

    shared = Counter(label_of(c["name"]) for c in categories)
    objects = []
    for c in categories:
        synset = reader.synset_from_pos_and_offset("n", int(c["noun_id"][1:])).name()
        label = label_of(c["name"])
        note = f"SWIG-HOI noun id {c['noun_id']}"
        if shared[label] > 1:
            note += f"; {shared[label]} categories are named '{label}'"
            label = f"{label}_({synset})"
        objects.append({"label": label, "synset": synset, "note": note})
    verbs = []
    for a in actions:
        synset, note = verb_synset(a["name"], a["def"])
        verbs.append({"label": label_of(a["name"]), "synset": synset, "note": note})
    classes = pd.DataFrame({
        "hoi_id": [x["id"] for x in interactions],
        "verb": [verbs[x["action_id"]]["label"] for x in interactions],
        "object": [objects[x["object_id"]]["label"] for x in interactions],
        "action_id": [x["action_id"] for x in interactions],
        "object_id": [x["object_id"] for x in interactions],
        "frequency": [x["frequency"] for x in interactions],
        "evaluated": [x["evaluation"] for x in interactions],
        "rare": [int(x["frequency"] == 1) for x in interactions],
        "novel": [int(x["frequency"] == 0) for x in interactions],
    })
    TARGET.mkdir(parents=True, exist_ok=True)
    pd.DataFrame(verbs).to_csv(TARGET / "swig_verbs.csv", index=False)
    pd.DataFrame(objects).to_csv(TARGET / "swig_objects.csv", index=False)
    classes.to_csv(TARGET / "swig_hoi_classes.csv", index=False)
    how = Counter(v["note"].split(" (")[0].split(" of '")[0].split(":")[0] for v in verbs)
    print(f"wrote {TARGET.relative_to(ROOT)}: {len(verbs)} verbs ({dict(how)}), {len(objects)} objects, "
          f"{len(classes)} interactions ({int(classes['evaluated'].sum())} evaluated)")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    main(sys.argv[1])
