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

Glosses are never stored: ``metrics.vocab.gloss`` gives them from our WordNet.

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

from metrics.vocab import _wordnet as wn

ROOT = Path(__file__).resolve().parents[1]
TARGET = ROOT / "metrics" / "datasets" / "swig_hoi" / "data"
BY_HAND = {   # read against WordNet's glosses where the rules above pick a sense of another meaning
    "pooing": ("stool.v.04", "set by hand: WordNet 3.0 has no verb 'poo'"),
    "buying": ("buy.v.01", "set by hand (word overlap picked bribe.v.01)"),
    "pressing": ("press.v.01", "set by hand (word overlap picked crusade.v.01)"),
    "bothering": ("annoy.v.01", "set by hand (first sense: trouble_oneself.v.01)"),
    "butting": ("butt.v.02", "set by hand (first sense: border.v.05)"),
    "calling": ("call.v.03", "set by hand: telephoning (first sense: name.v.01)"),
    "catching": ("catch.v.04", "set by hand (first sense: come upon by chance)"),
    "chiseling": ("chisel.v.03", "set by hand (first sense: cheat.v.03)"),
    "colliding": ("collide.v.03", "set by hand (first sense: clash.v.02)"),
    "crushing": ("squash.v.01", "set by hand (first sense: oppress.v.01)"),
    "deflecting": ("parry.v.01", "set by hand (first sense: debar.v.02)"),
    "drawing": ("draw.v.06", "set by hand: making a drawing (first sense: pull.v.01)"),
    "embracing": ("embrace.v.02", "set by hand: hugging (first sense: include in scope)"),
    "examining": ("examine.v.02", "set by hand (first sense: analyze.v.01)"),
    "exercising": ("exercise.v.04", "set by hand: physical exercise (first sense: exert.v.01)"),
    "extinguishing": ("snuff_out.v.02", "set by hand: putting out fire (first sense: kill)"),
    "flapping": ("beat.v.15", "set by hand (first sense: roll.v.11)"),
    "interrogating": ("interrogate.v.02", "set by hand (first sense: a signal)"),
    "juggling": ("juggle.v.04", "set by hand (first sense: influence by slyness)"),
    "lacing": ("lace.v.04", "set by hand: shoelaces (first sense: intertwine.v.01)"),
    "lathering": ("soap.v.01", "set by hand (first sense: flog.v.01)"),
    "launching": ("launch.v.02", "set by hand (first sense: establish.v.01)"),
    "lighting": ("ignite.v.01", "set by hand: setting alight (first sense: make brighter)"),
    "patting": ("dab.v.02", "set by hand (first sense: chuck.v.03)"),
    "picking": ("pick.v.02", "set by hand: gathering (first sense: select)"),
    "recovering": ("recuperate.v.04", "set by hand: getting better (first sense: get back)"),
    "saluting": ("salute.v.02", "set by hand (first sense: toast.v.02)"),
    "scratching": ("scratch.v.02", "set by hand (first sense: rub.v.02)"),
    "serving": ("serve.v.06", "set by hand: serving food (first sense: serve a purpose)"),
    "slipping": ("skid.v.04", "set by hand: losing footing (first sense: steal.v.02)"),
    "spying": ("spy.v.02", "set by hand (first sense: descry.v.01)"),
    "stacking": ("stack.v.02", "set by hand (first sense: load with stacks)"),
    "stretching": ("stretch.v.02", "set by hand: limbs (first sense: occupy an area)"),
    "tackling": ("tackle.v.03", "set by hand (first sense: undertake.v.02)"),
    "tasting": ("taste.v.02", "set by hand (first sense: have flavor)"),
    "uncorking": ("uncork.v.02", "set by hand (first sense: release)"),
    "unloading": ("unload.v.02", "set by hand (first sense: drop.v.08)"),
    "washing": ("wash.v.03", "set by hand (first sense: a chemical process)"),
    "whisking": ("whisk.v.04", "set by hand (first sense: move quickly)"),
    "writing": ("write.v.07", "set by hand: marking a surface (first sense: literary work)"),
    "signaling": ("sign.v.05", "set by hand (word overlap picked bespeak.v.01)"),
    "bouncing": ("bounce.v.02", "set by hand (word overlap picked bounce.v.04)"),
    "crowning": ("crown.v.01", "set by hand (word overlap picked a dental crown)"),
    "injecting": ("inject.v.01", "set by hand: giving an injection (the definition's sense is figurative)"),
    "reading": ("read.v.01", "set by hand: reading, silently or aloud (word overlap picked read.v.03, 'say out loud')"),
    "riding": ("ride.v.02", "set by hand: its objects are vehicles (bicycle, motorcycle, bus, boat) more often than "
                            "animals; ride.v.02 'travel on or in a vehicle' (first sense ride.v.01: on the back of an animal)"),
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
