"""``python -m metrics match``: show how free text resolves to a WordNet synset."""

from __future__ import annotations

from metrics import datasets
from metrics.core._errors import InputError
from metrics.core._options import input_file
from metrics.vocab import _wordnet as wordnet
from metrics.vocab._baseline import load_default
from metrics.vocab._matching import match_synset
from metrics.vocab._similarity import SimilarityMatrix


def add_arguments(parser) -> None:
    parser.add_argument("--verb", help="predicted verb (free text, label or synset)")
    parser.add_argument("--gt-verb", help="ground-truth verb synset or label")
    parser.add_argument("--object", help="predicted object (free text, label or synset)")
    parser.add_argument("--gt-object", help="ground-truth object synset or label")
    parser.add_argument("--verb-sim", type=input_file, help="verb similarity matrix (.csv/.npz; default: WordNet baseline)")
    parser.add_argument("--object-sim", type=input_file, help="object similarity matrix (default: WordNet baseline)")
    parser.add_argument("--dataset", choices=datasets.names(), default=datasets.DEFAULT,
                        help=f"whose labels and baseline matrices (default {datasets.DEFAULT})")


def _gt_synset(text: str, pos: str, dataset: str | None = None) -> str:
    if wordnet.is_synset_name(text):
        return text
    mapped = datasets.load_vocabulary(dataset).synset(text, pos)
    if mapped is None:
        raise InputError(f"ground truth {text!r} is neither a synset name nor a {datasets.get(dataset).title} label")
    return mapped


def run(args):
    jobs = []
    if args.verb is not None:
        if not args.gt_verb:
            raise InputError("--verb needs --gt-verb")
        jobs.append(("verb", "v", args.verb, args.gt_verb, args.verb_sim))
    if args.object is not None:
        if not args.gt_object:
            raise InputError("--object needs --gt-object")
        jobs.append(("object", "n", args.object, args.gt_object, args.object_sim))
    if not jobs:
        raise InputError("give --verb/--gt-verb and/or --object/--gt-object")
    result, lines = {}, []
    dataset = getattr(args, "dataset", None)
    vocabulary = datasets.load_vocabulary(dataset)
    for role, pos, text, gt, matrix_path in jobs:
        matrix = SimilarityMatrix.load(matrix_path) if matrix_path else load_default(pos, dataset=dataset)
        gt_synset = _gt_synset(gt, pos, dataset)
        m = match_synset(text, gt_synset, pos, matrix, vocabulary=vocabulary)
        result[role] = {"text": text, "gt": gt_synset, "synset": m.synset, "sim": m.sim,
                        "score": m.sim * 4, "kind": m.kind, "n_candidates": m.n_candidates}
        gloss = wordnet.gloss(m.synset) if m.synset else "no WordNet synset"
        lines.append(f"{role:6} {text!r} -> {m.synset or 'unknown'}  sim={m.sim:.3f} "
                     f"(score {m.sim * 4:.2f}/4 vs {gt_synset}; {m.kind}, {m.n_candidates} candidates)")
        lines.append(f"       {gloss}")
    return result, "\n".join(lines)
