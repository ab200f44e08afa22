"""The access table of docs/operations.md, cell by cell: for each role and each kind of object
(study, export, report, matrix version and its comparison, scores, audit entry) one allowed and
one refused case, through the module functions (what the command line and a crafted call
reach), in the console (AppTest) and through the console's address (``?study=`` /
``?version=``); the platform owner's column, where nothing is refused, in the console too.

Alice and Bob are researchers, Vera a viewer; Alice owns study ``sa`` (rated) and matrix version
``va`` saved from it, Bob owns study ``sb``."""

import io
import json
import zipfile

import pytest
from sqlmodel import select
from studyhelpers import console_page, copy_into, database_in, image_spec, open_area, open_tab, write_spec

from metrics import InputError
from metrics.detection._detections import write_jsonl
from studyapp.core import accounts, storage
from studyapp.core.accounts import FIRST_OWNER, Actor, Owned
from studyapp.core.models import Event
from studyapp.platform.launch import spec_uploads
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.operations import matrix_versions, scoring
from studyapp.platform.records import exports, studies
from studyapp.platform.records.simulate import simulate_study

ALICE, BOB, VERA = Actor("alice", "researcher"), Actor("bob", "researcher"), Actor("vera", "viewer")
PASSWORDS = {"alice": "alice-password", "bob": "bob-password", "vera": "vera-password"}
REFUSED_LINK = "No {} of yours has that name"


@pytest.fixture(scope="module")
def world_template(tmp_path_factory):
    """The accounts, studies, matrix version and scoring files of :func:`world`, built once."""
    folder = tmp_path_factory.mktemp("world")
    with database_in(folder):
        accounts.add_account("alice", "researcher", PASSWORDS["alice"])
        accounts.add_account("bob", "researcher", PASSWORDS["bob"])
        accounts.add_account("vera", "viewer", PASSWORDS["vera"])
        for slug, who in (("sa", ALICE), ("sb", BOB)):
            (folder / slug).mkdir()
            studies.create_study(load_spec(write_spec(folder / slug, n_items=12, raters=3, slug=slug)), actor=who)
        simulate_study("sa", k=3, noise=0.5, seed=1)
        matrix_versions.save_version("va", matrix_versions.recalibrate_studies(["sa"], folds=3, actor=ALICE),
                                     actor=ALICE)
    from benchmarks.score_hico_scale import workload
    gt, pred = workload(10, 90, 15, seed=2)
    write_jsonl(gt, folder / "gt.jsonl", with_scores=False)
    write_jsonl(pred, folder / "model.jsonl")
    return folder


@pytest.fixture
def world(world_template, tmp_path, monkeypatch):
    """The test's own copy of the accounts, studies (``sa`` rated), version ``va`` and scoring files."""
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "owner-pw")
    return copy_into(world_template, tmp_path)


def console(name: str | None, **params):
    """The console signed in as ``name`` (None: the platform owner), ``params`` in the address."""
    if name is None:
        at = console_page("owner-pw", **params)
    else:
        at = console_page(PASSWORDS[name], account=name, **params)
    assert not at.exception
    return at


def study_options(at) -> list[str]:
    return [o.split(" — ")[0] for o in at.selectbox(key="study-pick").options]


def warnings(at) -> str:
    return " ".join(w.value for w in at.warning)


# ------------------------------------------------------------------------ the rule itself
def test_the_rule_gives_each_role_its_row_of_the_table(world):
    by_slug = {s.slug: s for s in studies.list_studies()}
    sa, sb = by_slug["sa"], by_slug["sb"]
    va = matrix_versions.version_row("va")
    expected = [   # (actor, action, object, allowed)
        (FIRST_OWNER, "view", sb, True), (FIRST_OWNER, "download", va, True), (FIRST_OWNER, "change", sa, True),
        (ALICE, "view", sa, True), (ALICE, "download", sa, True), (ALICE, "change", va, True),
        (BOB, "view", sa, False), (BOB, "download", sa, False), (BOB, "view", va, False),
        (BOB, "download", va, False), (BOB, "change", sa, False),
        (VERA, "view", sa, True), (VERA, "view", va, True), (VERA, "download", sa, False),
        (VERA, "download", va, False), (VERA, "change", sa, False),
    ]
    vera_scores, alice_scores = (Owned("scores", "scores.json", who) for who in ("vera", "alice"))
    on_sa = accounts.audit_entry(Event(id=1, kind="downloaded", actor="cli"), sa)
    by_vera = accounts.audit_entry(Event(id=2, kind="downloaded", actor="vera"), sb)
    expected += [
        (VERA, "download", vera_scores, True), (VERA, "download", alice_scores, False),
        (ALICE, "download", alice_scores, True), (BOB, "download", alice_scores, False),
        (FIRST_OWNER, "audit", on_sa, True), (ALICE, "audit", on_sa, True), (BOB, "audit", on_sa, False),
        (VERA, "audit", on_sa, False), (VERA, "audit", by_vera, True), (BOB, "audit", by_vera, True),
        (ALICE, "audit", by_vera, False),
    ]
    assert [accounts.may(who, action, obj) for who, action, obj, _ in expected] == [ok for *_, ok in expected]


# ------------------------------------------------------------------------ studies
def test_studies_in_the_console_and_by_address(world):
    assert study_options(console("alice")) == ["sa"]                       # allowed: her own
    assert study_options(console("bob")) == ["sb"]                         # refused: not alice's
    assert study_options(console("vera")) == ["sa", "sb"]                  # a viewer sees every study
    assert study_options(console(None)) == ["sa", "sb"]
    at = console("alice", study="sa")
    assert at.selectbox(key="study-pick").value == "sa" and not at.warning
    at = console("vera", study="sa")
    assert at.selectbox(key="study-pick").value == "sa" and not at.warning
    for slug in ("sa", "no-such-study"):   # refused alike, whether the name exists or not
        at = console("bob", study=slug)
        assert at.selectbox(key="study-pick").value == "sb"
        assert REFUSED_LINK.format("study") in warnings(at) and "study" not in at.query_params
        assert "'sa'" not in json.dumps([e.value for e in [*at.markdown, *at.caption, *at.warning]])


def test_a_shared_study_is_seen_and_downloaded_not_changed(world):
    with pytest.raises(InputError, match="no study named 'sb'"):       # refused: not hers to share
        accounts.share("study", "sb", "alice", actor=ALICE)
    at = open_tab(console("alice", study="sa"), "Progress")               # allowed: her own, by the form
    at.text_input(key="share-study-sa-account").input("bob")
    next(b for b in at.button if b.label == "Share").click().run()
    assert not at.exception and [m.value for m in at.success] == ["Shared with bob: they may see and download it."]
    at = console("bob", study="sa")
    assert study_options(at) == ["sa", "sb"] and at.selectbox(key="study-pick").value == "sa"
    labels = [t.label for t in at.tabs]
    assert "Export" in labels and "Invite" not in labels
    with pytest.raises(InputError, match="bob .* may not change study 'sa'"):
        exports.export_study("sa", world / "out", actor=BOB)
    assert [e.actor for e in events("shared")] == ["alice"]


def test_a_spec_repeats_only_a_study_its_creator_may_download(world):
    """An image pass (``linked_study``) copies the earlier study's items and every annotator's
    ratings: Bob's spec naming Alice's study is refused, from a file and from the console's
    uploads, as a study that does not exist; once she shares it, it is read."""
    spec = image_spec(world, n_items=12).read_text().replace('linked_study = "first"', 'linked_study = "sa"')
    (world / "second.toml").write_text(spec)
    with pytest.raises(InputError, match="no study named 'sa'") as refused:
        load_spec(world / "second.toml", actor=BOB)
    (world / "nowhere.toml").write_text(spec.replace('"sa"', '"nowhere"'))
    with pytest.raises(InputError) as unknown:
        load_spec(world / "nowhere.toml", actor=BOB)
    assert str(refused.value).replace("second", "nowhere").replace("'sa'", "'nowhere'") == str(unknown.value)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.write(world / "second.toml", "second.toml")
        for path in (world / "imgs").rglob("*.*"):
            archive.write(path, str(path.relative_to(world)))
    with pytest.raises(InputError, match="no study named 'sa'"):
        spec_uploads.launch(None, [spec_uploads.Upload("second.zip", buffer.getvalue())], actor=BOB)
    assert len(load_spec(world / "second.toml", actor=ALICE).items) == 12                # allowed: her own
    accounts.share("study", "sa", "bob", actor=ALICE)
    assert len(load_spec(world / "second.toml", actor=BOB).items) == 12                  # allowed: shared


# ------------------------------------------------------------------------ exports and reports
def test_exports_are_for_owners_and_shares_reports_for_viewers_too(world):
    at = open_tab(console("alice", study="sa"), "Export")
    assert "ratings.csv" in [b.label for b in at.get("download_button")]           # allowed
    assert exports.export_study("sa", world / "out", actor=ALICE).exists()
    at = console("vera", study="sa")
    assert "Export" not in [t.label for t in at.tabs]                               # refused: a viewer
    with pytest.raises(InputError, match="vera .* may not change study 'sa'"):
        exports.export_study("sa", world / "out2", actor=VERA)
    assert [b for b in at.get("download_button") if b.label.startswith("Download report.html")]  # allowed
    at = console("bob", study="sa")                                                 # refused: not his
    assert not [b for b in at.get("download_button") if b.label.startswith("Download report.html")]
    with pytest.raises(InputError, match="no study named 'sa'"):
        exports.export_study("sa", world / "out3", actor=BOB)


# ------------------------------------------------------------------------ matrix versions
def test_matrix_versions_in_the_console_and_by_address(world):
    at = open_area(console("alice", version="va"), "Matrices")
    assert at.selectbox(key="version-pick").value == "va" and not at.warning           # allowed
    assert {"verb.npz", "provenance.json"} <= {b.label for b in at.get("download_button")}
    for name in ("va", "nope"):                                                         # refused alike
        at = open_area(console("bob", version=name), "Matrices")
        assert REFUSED_LINK.format("matrix version") in warnings(at)
        assert "No saved matrix versions yet." in [c.value for c in at.caption]
        assert not at.get("download_button") and "va" not in json.dumps([d.value.to_dict() for d in at.dataframe])
    assert list(matrix_versions.list_versions(actor=BOB)["name"]) == []
    with pytest.raises(InputError, match="no matrix version named 'va'"):
        matrix_versions.export_version("va", world / "bob", actor=BOB)
    with pytest.raises(InputError, match="no matrix version named 'va'"):
        matrix_versions.recalibrate_studies(["sb"], based_on="va", actor=BOB)
    at = open_area(console("vera", version="va"), "Matrices")                           # a viewer: sees,
    assert at.selectbox(key="version-pick").value == "va" and not at.get("download_button")   # no download
    with pytest.raises(InputError, match="vera .* may not download matrix version 'va'"):
        matrix_versions.export_version("va", world / "vera", actor=VERA)
    accounts.share("version", "va", "bob", actor=ALICE)                                 # shared: allowed
    at = open_area(console("bob", version="va"), "Matrices")
    assert at.selectbox(key="version-pick").value == "va" and "verb.npz" in [b.label for b in at.get("download_button")]
    assert {p.name for p in matrix_versions.export_version("va", world / "bob", actor=BOB)} >= {"provenance.json"}


def test_comparisons_offer_only_the_versions_one_may_see(world):
    """Alice saves a second version, Bob one of his own: each compares only among their own, a
    viewer and the platform owner among all of them."""
    run = matrix_versions.recalibrate_studies(["sa"], folds=3, actor=ALICE)
    matrix_versions.save_version("va2", run, actor=ALICE)
    simulate_study("sb", k=3, noise=0.5, seed=2)
    matrix_versions.save_version("vb", matrix_versions.recalibrate_studies(["sb"], folds=3, actor=BOB), actor=BOB)
    at = open_area(console("alice", version="va"), "Matrices")
    assert at.selectbox(key="version-other").options == ["va2"]                        # allowed; vb refused
    at.selectbox(key="version-other").select("va2").run()
    assert not at.exception and [c.value.splitlines()[0] for c in at.code] == ["verb: va vs va2", "object: va vs va2"]
    at = open_area(console("bob", version="vb"), "Matrices")
    assert at.selectbox(key="version-pick").options == ["vb"]                           # refused: va, va2
    assert at.selectbox(key="version-other").options == []
    for who in ("vera", None):                                                         # a viewer, the owner: all
        at = open_area(console(who, version="va"), "Matrices")
        assert at.selectbox(key="version-other").options == ["va2", "vb"]


# ------------------------------------------------------------------------ scores
def test_scores_use_only_versions_the_scorer_may_see(world):
    files = {"model": world / "model.jsonl"}
    scores = scoring.score_models(world / "gt.jsonl", files, ["va"], actor=ALICE)         # allowed
    assert scores.studies == ["sa"] and len(scores.table) == 2
    with pytest.raises(InputError, match="no matrix version named 'va'"):                 # refused
        scoring.score_models(world / "gt.jsonl", files, ["va"], actor=BOB)
    at = open_area(console("bob"), "Scoring")
    assert at.multiselect(key="score-versions").options == []
    at = open_area(console("alice"), "Scoring")
    assert at.multiselect(key="score-versions").options == ["va"]
    assert scoring.score_models(world / "gt.jsonl", files, ["va"], actor=VERA).studies == ["sa"]   # a viewer
    for who in ("vera", None):
        assert open_area(console(who), "Scoring").multiselect(key="score-versions").options == ["va"]


# ------------------------------------------------------------------------ downloads and audit entries
def test_every_download_is_audited_with_its_study_and_entries_are_read_by_their_owners(world):
    accounts.record_access(ALICE, "downloaded", ["sa"], file="va-verb.npz")
    accounts.record_access(ALICE, "downloaded", ["sa", "sb"], file="scores.json")
    accounts.record_access(BOB, "downloaded", ["sb"], file="ratings.csv")
    log = accounts.audit_log(FIRST_OWNER)                                                 # the owner: all
    assert [(r["who"], r["study"]) for r in log.to_dict("records")][:3] == [
        ("bob", "sb"), ("alice", "sa, sb"), ("alice", "sa")]
    alice = accounts.audit_log(ALICE)                                                     # her own
    assert "bob" not in set(alice["who"]) and "sb" not in set(alice["study"])   # bob's alone
    assert set(accounts.audit_log(VERA)["who"]) <= {"vera"}                               # refused: others'
    at = open_area(console("bob"), "Audit log")
    shown = next(d.value for d in at.dataframe if "action" in d.value.columns)
    assert set(shown["who"]) == {"bob"} and "sa" not in set(shown["study"])
    at = open_area(console(None), "Accounts")
    shown = next(d.value for d in at.dataframe if "action" in d.value.columns)
    assert {"alice", "bob"} <= set(shown["who"])
    accounts.record_access(VERA, "downloaded", ["sa"], file="report.html")
    at = open_area(console("vera"), "Audit log")                                          # her own only
    shown = next(d.value for d in at.dataframe if "action" in d.value.columns)
    assert set(shown["who"]) == {"vera"} and ("downloaded", "sa") in set(zip(shown["action"], shown["study"]))
    assert ("vera", "sa") in set(zip(accounts.audit_log(ALICE)["who"], accounts.audit_log(ALICE)["study"]))
    assert "vera" not in set(accounts.audit_log(BOB)["who"])                               # not on his study


def test_the_platform_owner_sees_downloads_and_changes_everything_in_the_console(world):
    at = console(None, study="sb")
    assert at.selectbox(key="study-pick").value == "sb" and {"Invite", "Export"} <= {t.label for t in at.tabs}
    at = console(None, study="sa")
    assert [b for b in at.get("download_button") if b.label.startswith("Download report.html")]
    at = open_area(console(None, version="va"), "Matrices")
    assert at.selectbox(key="version-pick").value == "va"
    assert {"verb.npz", "provenance.json"} <= {b.label for b in at.get("download_button")}
    assert {p.name for p in matrix_versions.export_version("va", world / "owner", actor=FIRST_OWNER)} >= {
        "provenance.json"}


def events(kind: str) -> list[Event]:
    with storage.read_session() as session:
        return list(session.exec(select(Event).where(Event.kind == kind)))


# ------------------------------------------------------------------------ two researchers, both databases
def page_text(at) -> str:
    """Every value and table the console page drew (a data frame as its JSON)."""
    parts = []
    for kind in ("title", "subheader", "markdown", "caption", "info", "warning", "success", "error", "code"):
        parts += [str(e.value) for e in at.get(kind)]
    parts += [d.value.to_json(date_format="iso") for d in at.dataframe]
    parts += [json.dumps(list(s.options)) for s in at.selectbox] + [json.dumps(list(m.options)) for m in at.multiselect]
    parts += [b.label for b in at.get("download_button")]
    return "\n".join(parts)


def test_two_researchers_find_nothing_of_each_other_in_their_consoles(db_backend, tmp_path, monkeypatch):
    """The walk-through on SQLite and PostgreSQL: each researcher owns a rated study and a matrix
    version saved from it; in every area of one's console (each study tab, the matrices, the
    scoring, the audit log), and through the address, no name of the other's objects appears."""
    accounts.add_account("alice", "researcher", PASSWORDS["alice"])
    accounts.add_account("bob", "researcher", PASSWORDS["bob"])
    names = {"alice": ("alices-study", "alices-version"), "bob": ("bobs-study", "bobs-version")}
    for who, (slug, version) in names.items():
        (tmp_path / slug).mkdir()
        actor = Actor(who, "researcher")
        studies.create_study(load_spec(write_spec(tmp_path / slug, n_items=12, raters=3, slug=slug)), actor=actor)
        simulate_study(slug, k=3, noise=0.5, seed=1)
        matrix_versions.save_version(version, matrix_versions.recalibrate_studies([slug], folds=3, actor=actor),
                                     actor=actor)
    for who, other in (("alice", "bob"), ("bob", "alice")):
        own, foreign = names[who], names[other]
        at = console(who)                            # one sign-in, then a click on each tab and area
        seen = [page_text(open_tab(at, tab)) for tab in ("Dashboard", "Details", "Progress", "Preview", "Invite",
                                                         "Export")]
        seen += [page_text(open_area(at, area)) for area in ("Matrices", "Scoring", "Audit log")]
        seen.append(page_text(open_area(console(who, study=foreign[0], version=foreign[1]), "Matrices")))
        text = "\n".join(seen)
        assert own[0] in text and own[1] in text
        assert foreign[0] not in text and foreign[1] not in text, (who, other)
