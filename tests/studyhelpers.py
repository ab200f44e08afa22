"""Small studies written to tmp_path for the platform tests (items CSV + TOML spec)."""

from __future__ import annotations

import json
import shutil
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from PIL import Image
from projectpaths import ROOT
from sqlmodel import select
from streamlit.testing.v1 import AppTest

from studyapp.core import storage
from studyapp.core.models import Assignment, Item, Rating
from studyapp.core.storage import read_session
from studyapp.platform import assignment
from studyapp.platform.assignment import adaptive
from studyapp.platform.launch.demo_images import class_images, crosshoi_scenes
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

VERBS = ["ride", "push", "hold", "carry", "wash", "repair", "inspect", "park", "drive", "pull",
         "walk", "straddle"]
OBJECTS = ["bicycle", "motorcycle", "car", "truck", "bus", "boat", "horse", "skateboard",
           "airplane", "train", "cup", "bottle"]


def write_items(path: Path, n: int) -> Path:
    """``n`` category-2 pairs (different verb, same object) with distinct keys i01, i02, ..."""
    rows = ["item_id,gt_verb,gt_object,pred_verb,pred_object"]
    for k in range(n):
        verb, other = VERBS[k % len(VERBS)], VERBS[(k + 1) % len(VERBS)]
        obj = OBJECTS[(k // len(VERBS)) % len(OBJECTS)]
        rows.append(f"i{k + 1:02d},{verb},{obj},{other},{obj}")
    path.write_text("\n".join(rows) + "\n")
    return path


def write_spec(folder: Path, n_items: int = 6, raters: int = 2, per_annotator="all",
               extra: str = "", slug: str = "t") -> Path:
    write_items(folder / "items.csv", n_items)
    per = f'"{per_annotator}"' if per_annotator == "all" else per_annotator
    spec = folder / f"{slug}.toml"
    spec.write_text(f'''title = "Test study"
study_type = "hoi_similarity"
instructions = "Rate the pair."
raters_per_item = {raters}
items_per_annotator = {per}
{extra}
[items]
source = "csv"
path = "items.csv"
''')
    return spec


def write_practice(folder: Path, rows) -> str:
    """A practice.csv with ``rows`` in ``folder``, and the spec section that names it."""
    (folder / "practice.csv").write_text(
        "item_id,gt_verb,gt_object,pred_verb,pred_object,expected,explanation\n"
        + "".join(f"{r}\n" for r in rows))
    return '[practice]\npath = "practice.csv"\n'


@contextmanager
def database_in(folder: Path) -> Iterator[Path]:
    """The app's SQLite database, exports and uploads in ``folder``, laid out as the
    ``isolated_database`` fixture lays out a test's ``tmp_path``: for a world built once per
    module and copied into each test with :func:`copy_into`."""
    folder.mkdir(parents=True, exist_ok=True)
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("DATABASE_URL", raising=False)
        patch.setenv("STUDYAPP_DB", str(folder / "studyapp.sqlite"))
        patch.setenv("STUDYAPP_EXPORTS", str(folder / "exports"))
        patch.setenv("STUDYAPP_UPLOADS", str(folder / "uploads"))
        try:
            yield folder
        finally:
            storage.dispose_all()


def copy_into(template: Path, tmp_path: Path) -> Path:
    """The files of ``template`` (built in :func:`database_in`) copied into the test's ``tmp_path``,
    whose database and exports they become."""
    storage.dispose_all()
    shutil.copytree(template, tmp_path, dirs_exist_ok=True)
    return tmp_path


def make_study(folder: Path, **kwargs) -> int:
    return studies.create_study(load_spec(write_spec(folder, **kwargs)))


def make_annotators(study_id: int, count: int) -> list[int]:
    invites = studies.invite(study_id, count)
    with read_session() as session:
        return [assignment.annotator_by_token(session, i.token).id for i in invites]


def ratings_of(annotator_id: int) -> list:
    """The annotator's stored rating rows, oldest first."""
    from sqlmodel import select

    from studyapp.core.models import Rating
    with read_session() as session:
        return list(session.exec(select(Rating).where(Rating.annotator_id == annotator_id)
                                 .order_by(Rating.id)))


def rate_all(annotator_id: int, value: int = 2) -> list[str]:
    """Rate every item handed to the annotator; returns the item keys in order."""
    keys = []
    while (task := assignment.next_item(annotator_id)) is not None:
        assignment.submit(annotator_id, task.assignment_id, value, 1.0)
        keys.append(task.item_key)
    return keys


def console_page(password: str | None = None, *, account: str | None = None, tab: str | None = None,
                 area: str | None = None, **params) -> AppTest:
    """The console page (AppTest) with ``params`` in the URL, signed in with ``password`` (as
    ``account`` when given; the admin otherwise) unless ``password`` is None; ``area``: the
    console's top-level tab open, ``tab``: the study tab open (only the open ones run; default
    Studies and its dashboard)."""
    at = AppTest.from_file(str(ROOT / "studyapp" / "views" / "app.py"), default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.switch_page("console/console.py").run()
    if password is not None:
        if account is not None:
            at.text_input(key="signin-account").input(account)
        at.text_input(key="signin-password").input(password)
        at.button[0].click().run()
    if area is not None:
        open_area(at, area)
    if tab is not None:
        open_tab(at, tab)
    return at


def open_tab(at: AppTest, tab: str) -> AppTest:
    """The console's study tab ``tab`` opened (as a click on it does)."""
    at.session_state["study-view"] = tab
    return at.run()


def open_area(at: AppTest, area: str) -> AppTest:
    """The console's top-level tab ``area`` (Studies, Create, Matrices, Scoring, Accounts) opened."""
    at.session_state["console-area"] = area
    return at.run()


def signed_in(name: str, password: str, *, area: str | None = None) -> AppTest:
    """The console page (AppTest) after signing in as account ``name``, ``area`` open."""
    at = console_page(password, account=name, area=area)
    assert not at.exception and not at.error
    return at


# An adaptive study of 12 items (spec [adaptive]): six easy ones everyone rates 4, six whose
# answers spread by one around a base.
EASY = {f"i{k:02d}" for k in range(1, 7)}            # everyone answers 4
HARD_BASE = {"i07": 1, "i08": 2, "i09": 3, "i10": 1, "i11": 2, "i12": 3}  # answers spread ±1


def write_adaptive_spec(folder, extra="", adaptive_keys="target_se = 0.4\nmin_raters = 2\nmax_raters = 4\n"
                        "refit_every = 3\n"):
    write_items(folder / "items.csv", 12)
    spec = folder / "a.toml"
    spec.write_text(f'''title = "Adaptive"
study_type = "hoi_similarity"
instructions = "Rate the pair."
{extra}
[adaptive]
{adaptive_keys}
[items]
source = "csv"
path = "items.csv"
''')
    return spec


def routing_study(folder, rate) -> tuple[int, int]:
    """A study with ``[routing]`` (``min_ratings`` 8) whose two spread raters have rated every
    item (item k gets k mod 5, and one more capped at 4), each answer given by
    ``rate(annotator, task, value)``, which returns the next task; (study id, the third annotator)."""
    spec = write_adaptive_spec(
        folder, extra='[routing]\nmin_ratings = 8\nmin_consistency = 0.5\n',
        adaptive_keys="target_se = 0.01\nmin_raters = 3\nmax_raters = 3\nrefit_every = 1000\n")
    study_id = studies.create_study(load_spec(spec))
    steady, other, third = make_annotators(study_id, 3)
    for who, shift in ((steady, 0), (other, 1)):
        task = assignment.next_item(who)
        while task is not None:
            task = rate(who, task, min(4, int(task.item_key.lstrip("i")) % 5 + shift))
    return study_id, third


def answer(key: str, annotator_index: int) -> int:
    if key in EASY:
        return 4
    return min(4, max(0, HARD_BASE[key] + (annotator_index + int(key[1:])) % 3 - 1))


def rate_until_done(annotator_id: int, index: int) -> list[str]:
    """Rate every item handed out as annotator ``index`` would; each next item is chosen once
    the refits the last rating asked for are done (the background refit keeps up)."""
    keys = []
    while (task := assignment.next_item(annotator_id)) is not None:
        assignment.submit(annotator_id, task.assignment_id, answer(task.item_key, index), 1.0)
        assert adaptive.wait_for_refits(timeout=60)
        keys.append(task.item_key)
    return keys


def ratings_per_item() -> Counter:
    with storage.read_session() as session:
        rows = session.exec(select(Item.item_key).join(Rating, Rating.item_id == Item.id)
                            .join(Assignment, Assignment.id == Rating.assignment_id)
                            .where(Assignment.phase == "main")).all()
    return Counter(rows)


# an imsitu_correctness study: two models' top-3 verbs for three images, their sense clusters
IMSITU_PRED = {"m1": {"jumping_1.jpg": ["jumping", "leaping", "falling"],
               "riding_2.jpg": ["competing", "riding", "racing"],
               "lying_3.jpg": ["sleeping", "lying", "resting"]},
        "m2": {"jumping_1.jpg": ["falling", "jumping", "sleeping"],
               "riding_2.jpg": ["riding", "driving", "eating"],
               "lying_3.jpg": ["lying", "eating", "sleeping"]}}
IMSITU_CLUSTERS = {"clusters": {"c1": ["jumping", "leaping"], "c2": ["competing", "racing"], "c3": ["riding", "driving"],
                         "c4": ["lying", "resting"]},
            "images": {"jumping_1.jpg": ["c1"], "riding_2.jpg": ["c2", "c3"], "lying_3.jpg": ["c4"]}}
# what every annotator judges correct for each image
IMSITU_TRUTH = {"jumping_1.jpg": {"jumping", "leaping"}, "riding_2.jpg": {"competing", "riding"},
         "lying_3.jpg": {"lying", "resting"}}


def write_imsitu_study(folder, extra=""):
    """An imsitu_correctness study (3 generated images, 2 models, top 3) in ``folder``; its spec path."""
    (folder / "images").mkdir()
    for n, image in enumerate(IMSITU_TRUTH):
        Image.new("RGB", (64, 48), (40 * n, 120, 200)).save(folder / "images" / image)
    (folder / "pred.json").write_text(json.dumps(IMSITU_PRED))
    (folder / "clusters.json").write_text(json.dumps(IMSITU_CLUSTERS))
    spec = folder / "verbs.toml"
    spec.write_text(f'''title = "Verb check"
study_type = "imsitu_correctness"
instructions = "Mark the verbs that describe the image."
raters_per_item = 2
order = "fixed"
{extra}
[items]
source = "sampler"
predictions = "pred.json"
image_root = "images"
clusters = "clusters.json"
k = 3
seed = 1
''')
    return spec


def curation_spec(tmp_path, extra="", n_images=3):
    """A crosshoi_curation study spec over ``n_images`` generated scenes (3 candidates each), loaded."""
    folder = tmp_path / "scenes"
    crosshoi_scenes(folder, n_images=n_images, seed=1)
    spec = tmp_path / "cur.toml"
    spec.write_text(f'''title = "Curate"
study_type = "crosshoi_curation"
instructions = "Mark the candidates."
raters_per_item = 3
order = "fixed"
{extra}
[items]
source = "sampler"
ground_truth = "scenes/gt.jsonl"
image_root = "scenes"
n_candidates = 3
''')
    return load_spec(spec)


def invite_same(study_id: int, labels) -> dict[str, tuple[int, str]]:
    """Invite ``labels`` as pseudonyms (the names an earlier study used): pseudonym ->
    (annotator id, token)."""
    out = {}
    for inv in studies.invite(study_id, 0, list(labels)):
        with read_session() as session:
            out[inv.pseudonym] = (assignment.annotator_by_token(session, inv.token).id, inv.token)
    return out


def earlier_study(tmp_path, n_items=3):
    """The no-image study: 3 (``n_items``) pairs, alice rates 2 each and bob 3 each."""
    study = make_study(tmp_path, n_items=n_items, raters=2, slug="first", extra='order = "fixed"\n')
    ids = {name: person[0] for name, person in invite_same(study, ["alice", "bob"]).items()}
    for name, value in (("alice", 2), ("bob", 3)):
        while (task := assignment.next_item(ids[name])) is not None:
            assignment.submit(ids[name], task.assignment_id, value, 1.0)
    return study


def image_spec(tmp_path, n_items=3, raters=2):
    """A hoi_similarity_image study linked to :func:`earlier_study` (a class image for each of
    its ``n_items`` pairs, ``raters`` per item); its spec path."""
    folder = tmp_path / "imgs"
    class_images(folder, [(VERBS[k % len(VERBS)], OBJECTS[(k // len(VERBS)) % len(OBJECTS)])
                          for k in range(n_items)])
    spec = tmp_path / "second.toml"
    spec.write_text('''title = "With images"
study_type = "hoi_similarity_image"
instructions = "Keep or change your rating."
raters_per_item = {raters}
order = "fixed"
[items]
source = "sampler"
linked_study = "first"
images = "imgs/images.csv"
image_root = "imgs"
'''.replace("{raters}", str(raters)))
    return spec
