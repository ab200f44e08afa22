"""Study specs: every kind of bad spec is refused with its own message and creates nothing."""

import subprocess
import sys

import pytest
from projectpaths import ROOT
from studyhelpers import write_items, write_spec

from metrics import InputError
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies
from studyapp.studytypes.hoi_similarity import SHOE_SCALE

GOOD = '''title = "T"
study_type = "hoi_similarity"
instructions = "Rate."
raters_per_item = 2
[items]
source = "csv"
path = "items.csv"
'''


def test_good_spec_loads_with_the_shoe_scale_verbatim(tmp_path):
    spec = load_spec(write_spec(tmp_path, n_items=3, raters=2, per_annotator=2))
    assert spec.slug == "t" and spec.raters_per_item == 2 and spec.items_per_annotator == 2
    assert [i.key for i in spec.items] == ["i01", "i02", "i03"]
    assert spec.scale.values == (0, 1, 2, 3, 4)
    assert spec.scale.labels == ("completely dissimilar", "somewhat related but clearly distinct",
                                 "related but easily distinguishable",
                                 "very similar with subtle differences", "interchangeable")
    assert spec.scale == SHOE_SCALE
    first = spec.items[0].fields
    assert (first["gt_verb"], first["pred_verb"], first["gt_object"]) == ("ride.v.01", "push.v.01", "bicycle.n.01")
    assert first["category"] == 2
    assert first["display"]["gt_object_gloss"].startswith("a wheeled vehicle that has two wheels")


def test_demo_spec_is_valid():
    spec = load_spec(ROOT / "studies" / "demo.toml")
    assert spec.raters_per_item == 3 and len(spec.items) == 50 and spec.access_code == "demo"
    assert spec.example["rating"] == 1


BAD = [
    ("syntax", GOOD.replace('title = "T"', 'title = "T'), None, r"t\.toml: invalid TOML: .*line 1"),
    ("unknown key", GOOD.replace("[items]", 'colour = "red"\n[items]'), None, r"unknown key 'colour'"),
    ("unknown nested key", GOOD + "[quality]\nretest = 2\n", None, r"unknown key 'quality\.retest'"),
    ("wrong type", GOOD.replace("raters_per_item = 2", 'raters_per_item = "two"'), None,
     r"key 'raters_per_item' must be a whole number ≥ 1, got 'two'"),
    ("too small", GOOD.replace("raters_per_item = 2", "raters_per_item = 0"), None,
     r"key 'raters_per_item' must be a whole number ≥ 1"),
    ("missing key", GOOD.replace('instructions = "Rate."\n', ""), None, r"missing key 'instructions'"),
    ("unknown type", GOOD.replace('"hoi_similarity"', '"ranking"'), None, r"unknown study type 'ranking'"),
    ("missing file", GOOD.replace('"items.csv"', '"nope.csv"'), None,
     r"key 'items\.path' names a file that does not exist: .*nope\.csv"),
    ("bad order", GOOD.replace("[items]", 'order = "shuffled"\n[items]'), None, r"key 'order' must be one of random, fixed, got 'shuffled'"),
    ("scale labels", GOOD + "[scale]\nvalues = [0, 1, 2]\nlabels = [\"a\", \"b\"]\n", None,
     r"key 'scale\.labels' has 2 labels for 3 values"),
    ("bad source", GOOD.replace('source = "csv"', 'source = "web"'), None,
     r"key 'items\.source' must be 'csv' or 'sampler'"),
    ("sampler option type", GOOD.replace('source = "csv"\npath = "items.csv"', 'source = "sampler"\nn = "many"'),
     None, r"key 'items\.n' must be of type int"),
    ("too many checks", GOOD + "[quality]\nattention_checks = 99\n", None,
     r"key 'quality\.attention_checks' asks for 99 checks but only \d+ attention items exist"),
    ("completion url", GOOD + '[prolific]\ncompletion_url = "ftp://x"\n', None,
     r"key 'prolific\.completion_url' must be an http\(s\) URL"),
    ("missing column", GOOD, "item_id,gt_verb,gt_object,pred_verb\ni1,ride,bicycle,push\n",
     r"items\.csv: missing column 'pred_object'"),
    ("duplicate id", GOOD, "item_id,gt_verb,gt_object,pred_verb,pred_object\n"
     "i1,ride,bicycle,push,bicycle\ni1,ride,car,push,car\n", r"items\.csv line 3: duplicate item_id 'i1'"),
    ("unknown synset", GOOD, "item_id,gt_verb,gt_object,pred_verb,pred_object\n"
     "i1,ride,bicycle,push,bicycle\ni2,rdie,bicycle,push,bicycle\n",
     r"items\.csv line 3: gt_verb 'rdie' is neither a WordNet verb synset nor a HICO-DET verb label"),
    ("wrong pos", GOOD, "item_id,gt_verb,gt_object,pred_verb,pred_object\ni1,ride,ride.v.01,push,bicycle\n",
     r"items\.csv line 2: gt_object 'ride\.v\.01' is not a noun synset"),
    ("wrong category", GOOD, "item_id,gt_verb,gt_object,pred_verb,pred_object,category\n"
     "i1,ride,bicycle,push,bicycle,1\n", r"items\.csv line 2: category 1 does not match the pair"),
    ("attention without answer", GOOD, "item_id,gt_verb,gt_object,pred_verb,pred_object,role\n"
     "i1,ride,bicycle,push,bicycle,attention\n", r"items\.csv line 2: an attention item needs an 'expected'"),
    ("expected off scale", GOOD + "[quality]\nattention_checks = 1\n",
     "item_id,gt_verb,gt_object,pred_verb,pred_object,role,expected\n"
     "i1,ride,bicycle,push,bicycle,main,\ni2,ride,bicycle,ride,bicycle,attention,7\n",
     r"attention item 'i2': expected response 7 is not on the scale"),
    ("example rating", GOOD + '[example]\ngt_verb = "ride"\ngt_object = "bicycle"\npred_verb = "push"\n'
     'pred_object = "bicycle"\nrating = 9\n', None, r"key 'example\.rating' response 9 is not on the scale"),
    ("items path is a folder", GOOD.replace('"items.csv"', '"."'), None,
     r"is a folder; give a file"),
    ("answers not boolean", GOOD + '[answers]\ncant_judge = "yes"\n', None,
     r"key 'answers\.cant_judge' must be true or false, got 'yes'"),
    ("answers unknown key", GOOD + "[answers]\nnotes = true\n", None, r"unknown key 'answers\.notes'"),
]


@pytest.mark.parametrize("kind,spec_text,items_text,message", BAD, ids=[b[0] for b in BAD])
def test_bad_spec_gives_its_message_and_creates_nothing(tmp_path, kind, spec_text, items_text, message):
    if items_text is None:
        write_items(tmp_path / "items.csv", 3)
    else:
        (tmp_path / "items.csv").write_text(items_text)
    path = tmp_path / "t.toml"
    path.write_text(spec_text)
    with pytest.raises(InputError, match=message) as info:
        load_spec(path)
    assert "\n" not in str(info.value)
    assert studies.list_studies() == []


def test_cli_create_reports_a_bad_spec_on_one_line_and_creates_nothing(tmp_path):
    write_items(tmp_path / "items.csv", 3)
    path = tmp_path / "t.toml"
    path.write_text(GOOD.replace("[items]", "colour = 1\n[items]"))
    res = subprocess.run([sys.executable, "-m", "studyapp", "create", str(path)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert res.returncode == 2
    assert res.stderr.strip().count("\n") == 0 and "unknown key 'colour'" in res.stderr
    assert "Traceback" not in res.stderr
    assert studies.list_studies() == []


def test_a_second_study_with_the_same_slug_is_refused(tmp_path):
    spec = load_spec(write_spec(tmp_path, n_items=2))
    studies.create_study(spec)
    with pytest.raises(InputError, match="a study named 't' already exists"):
        studies.create_study(spec)
    assert len(studies.list_studies()) == 1


def test_display_synset_codes_default_off_for_crowd_studies_and_set_explicitly(tmp_path):
    """``[display] synset_codes``: hidden by default when participants come from Prolific
    (``[prolific]``), shown otherwise; either way the spec may say; a non-boolean names the key."""
    plain = load_spec(write_spec(tmp_path))
    crowd = load_spec(write_spec(tmp_path, extra='[prolific]\ncompletion_code = "C1"\n'))
    shown = load_spec(write_spec(tmp_path, extra='[prolific]\ncompletion_code = "C1"\n'
                                                  "[display]\nsynset_codes = true\n"))
    assert (plain.synset_codes, crowd.synset_codes, shown.synset_codes) == (True, False, True)
    assert plain.seconds_per_item == 20.0
    with pytest.raises(InputError, match="display.synset_codes' must be true or false"):
        load_spec(write_spec(tmp_path, extra="[display]\nsynset_codes = 1\n"))
    with pytest.raises(InputError, match="display.seconds_per_item' must be a number > 0"):
        load_spec(write_spec(tmp_path, extra="[display]\nseconds_per_item = 0\n"))
