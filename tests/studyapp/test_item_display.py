"""The pair types' item screen without synset codes (spec ``[display] synset_codes = false``):
every gloss and word stays, no WordNet code is shown."""

from studyapp.studytypes import get_type
from studyapp.views.studytypes import hoi_similarity as view


def texts(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    return [t for child in node[2:] for t in texts(child)]


def codes(node) -> list[str]:
    if isinstance(node, str):
        return []
    own = texts(node) if node[0] == "code" else []
    return own + [c for child in node[2:] for c in codes(child)]


def test_hiding_synset_codes_keeps_the_words_and_glosses():
    fields = get_type("hoi_similarity").normalize_item(
        {"gt_verb": "hold", "gt_object": "cup", "pred_verb": "carry", "pred_object": "cup"}, "test")
    shown = view.item_content(fields)
    hidden = view.item_content(fields, synset_codes=False)
    assert sorted(codes(shown[0])) == sorted([fields[k] for k in ("gt_verb", "gt_object",
                                                                  "pred_verb", "pred_object")])
    assert codes(hidden[0]) == []
    glosses = [view.gloss(fields["display"][f"{side}_{part}_gloss"])
               for side in ("gt", "pred") for part in ("verb", "object")]
    assert all(g in texts(hidden[0]) for g in glosses)
    assert [t for t in texts(shown[0]) if t not in codes(shown[0]) and t != " "] == \
        [t for t in texts(hidden[0]) if t != " "]
