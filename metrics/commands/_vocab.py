"""``python -m metrics vocab``: the synset of every verb and object label of a dataset (HICO-DET by
default; ``--dataset vcoco`` / ``swig-hoi``), with its gloss.

HICO-DET's synsets are SHOE's (the synsets its similarity matrices are keyed by) wherever SHOE has one;
``no_interaction`` has none and ``stop_at`` is this project's choice (see the ``note`` column of
``metrics/datasets/hico_det/data/hico_verbs.csv``). A label whose synset is not the first WordNet sense of its
word is marked ``*``.

``--excluded`` lists instead the senses a study of the dataset never shows (its vocabulary's and
its baseline matrices' synsets that :mod:`metrics.vocab._offensive` excludes), with the reason.
"""

from __future__ import annotations

from metrics import datasets
from metrics.vocab import _wordnet as wordnet


def add_arguments(parser) -> None:
    parser.add_argument("--dataset", choices=datasets.names(), default=datasets.DEFAULT,
                        help=f"whose labels (default {datasets.DEFAULT})")
    parser.add_argument("--pos", choices=("verb", "object", "both"), default="both",
                        help="which labels to list (default both)")
    parser.add_argument("--excluded", action="store_true",
                        help="list the senses studies of the dataset never show (offensive-sense exclusion: "
                             "WordNet usage domains, sex acts or prostitution, slurs and vulgarities), with the reason")


def first_sense(label: str, pos: str) -> str | None:
    """WordNet's first synset of a label's word (the whole collocation, else its first word; a
    V-COCO action-role label ``hit-instr`` is its action's)."""
    action = label.split("-")[0]
    for word in dict.fromkeys((label, action, action.split("_")[0])):
        found = wordnet.synsets(word, pos)
        if found:
            return found[0]
    return None


def _excluded(args):
    from metrics.vocab._offensive import WORDS_FILE, excluded_senses
    from metrics.vocab._similarity import SimilarityMatrix

    dataset = datasets.get(args.dataset)
    vocab = dataset.vocabulary()
    pos_of = {"verb": ("v",), "object": ("n",), "both": ("v", "n")}[args.pos]
    senses = []
    for pos in pos_of:
        table = vocab.verbs if pos == "v" else vocab.objects
        senses += [s for s in table["synset"].tolist() if s]
        senses += list(SimilarityMatrix.load(dataset.baseline_path(pos)).labels)
    excluded = excluded_senses(sorted({s for s in senses if wordnet.is_synset_name(s) and wordnet.pos_of(s) in pos_of}))
    lines = [f"{len(excluded)} senses a {dataset.title} study never shows (word list: {WORDS_FILE}; "
             "a spec adds its own with [items] exclude_senses)"]
    lines += [f"  {synset:28} {reason}" for synset, reason in excluded.items()]
    return {"excluded": excluded}, "\n".join(lines)


def run(args):
    if args.excluded:
        return _excluded(args)
    vocab = datasets.load_vocabulary(args.dataset)
    result: dict[str, dict[str, str | None]] = {"verbs": {}, "objects": {}}
    lines = ["label            synset                       gloss  (* = not WordNet's first sense)"]
    for key, table, pos in (("verbs", vocab.verbs, "v"), ("objects", vocab.objects, "n")):
        if args.pos not in ("both", key[:-1]):
            continue
        lines.append(f"-- {key} ({len(table)})")
        for label, synset, note in zip(table["label"], table["synset"], table["note"]):
            result[key][label] = synset or None
            if not synset:
                lines.append(f"  {label:16} {'(none)':28} {note}")
                continue
            mark = "*" if first_sense(label, pos) != synset else " "
            lines.append(f"{mark} {label:16} {synset:28} {wordnet.gloss(synset)[:70]}")
    return result, "\n".join(lines)
