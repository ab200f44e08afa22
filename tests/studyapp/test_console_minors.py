"""Console details a researcher met, each through the real page (AppTest):
a study created from a file shows at once; a researcher who owns none of the server's studies is
told why; a viewer gets no recalibration inputs; the rater-model tables are downloadable; the
Preview shows the synset codes only where the study's annotators see them; the Export tab names
the written folder without the server's path."""

from __future__ import annotations

import pytest
from studyhelpers import console_page, make_study, open_area, signed_in, write_spec

from studyapp.core import accounts, config
from studyapp.platform.records.simulate import simulate_study


def texts(at) -> str:
    shown = "\n".join(str(e.value) for kind in ("info", "success", "caption", "markdown") for e in at.get(kind))
    return shown.replace("\\", "").replace("\u2060", "")   # as read, without markdown escapes


def test_a_study_created_from_a_file_is_listed_in_the_same_click(tmp_path, monkeypatch):
    folder = tmp_path / "studies"
    folder.mkdir()
    spec = write_spec(folder, n_items=4, slug="fresh")
    monkeypatch.setattr(config, "STUDIES_DIR", folder)
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw")
    assert "No studies yet." in texts(at)
    open_area(at, "Create")
    at.selectbox[0].select(spec).run()            # the spec file: the only selectbox in this area
    at.button(key="create-file").click().run()
    assert not at.exception and not at.error
    # the same click lands on the new study, under Studies
    assert at.session_state["console-area"] == "Studies"
    assert "No studies yet." not in texts(at)
    assert "Created study 'fresh' with 4 items." in texts(at)
    assert at.selectbox[0].label == "Study" and at.selectbox[0].value == "fresh"
    at.run()                                                   # the confirmation is shown once
    assert "Created study 'fresh'" not in texts(at)


def test_a_researcher_without_studies_is_told_the_others_are_not_theirs(tmp_path):
    make_study(tmp_path, n_items=4, slug="t")                 # owned by the command line
    accounts.add_account("rita", "researcher", "rita-password")
    at = signed_in("rita", "rita-password")
    assert ("None of the studies on this server is yours: researchers see the studies they own; "
            "the platform owner can reassign one to you.") in texts(at)
    assert "No studies yet." not in texts(at)


def test_a_viewer_sees_versions_but_no_recalibration_inputs(tmp_path):
    make_study(tmp_path, n_items=4, slug="t")
    accounts.add_account("vera", "viewer", "vera-password")
    at = signed_in("vera", "vera-password", area="Matrices")
    assert not [w for w in at.number_input if w.label.startswith(("w (verb weight)", "Prior strength"))]
    assert not [m for m in at.multiselect if m.label.startswith("Studies whose ratings")]
    assert "recalibrating needs a researcher account" in texts(at)


def test_the_export_tab_offers_the_rater_model_tables(tmp_path, monkeypatch):
    make_study(tmp_path, n_items=8, raters=3, slug="t")
    simulate_study("t", k=3, seed=2)
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw", tab="Export")   # only the open tab runs
    labels = [b.label for b in at.get("download_button")]
    assert {"items_model.csv", "raters_model.csv", "ratings.csv"} <= set(labels)


@pytest.mark.parametrize("display, shown", [("", True), ("[display]\nsynset_codes = false\n", False)])
def test_the_preview_shows_the_synset_codes_as_the_annotators_see_them(tmp_path, monkeypatch, display, shown):
    """A study whose ``[display] synset_codes`` is false hides the WordNet codes from its
    annotators; the Preview tab, which shows the items as annotators see them, hides them too."""
    from studyapp.platform.records import studies
    study_id = make_study(tmp_path, n_items=3, slug="t", extra=display)
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw", tab="Preview")
    assert not at.exception
    fields = studies.study_items(study_id)[0][2]          # the first item, the one the tab opens on
    shown_text = texts(at)
    words = [fields["display"][f"{side}_{part}"] for side in ("gt", "pred") for part in ("verb", "object")]
    codes = [f"`{fields[f'{side}_{part}']}`" for side in ("gt", "pred") for part in ("verb", "object")]
    assert all(f"**{word}**" in shown_text for word in words), shown_text
    assert [code in shown_text for code in codes] == [shown] * 4, shown_text


def test_the_export_tab_names_the_written_folder_but_not_the_servers_path(tmp_path, monkeypatch):
    make_study(tmp_path, n_items=4, slug="t")
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw", tab="Export")
    at.button(key="export").click().run()
    assert not at.exception
    (folder,) = (tmp_path / "exports" / "t").iterdir()                  # the one export written
    (message,) = [e.value.replace("\\", "") for e in at.success]
    assert message == (f"Wrote the export folder t/{folder.name} in the server's exports folder "
                       "(the files are also downloadable below).")
    assert str(tmp_path / "exports") not in texts(at) and (folder / "ratings.csv").is_file()


def test_the_account_form_empties_after_a_created_account_and_keeps_a_refused_one(tmp_path, monkeypatch):
    """It kept name and password after success, so a second click typed "carlcarl"."""
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw", area="Accounts")
    assert "Audit log" in [h.value for h in at.subheader]   # the owner's audit log is on the page
    at.text_input(key="new-account-name").input("carl")
    at.text_input(key="new-account-password").input("carl-password-1")
    at.button(key="FormSubmitter:new-account-Create account").click().run()
    assert not at.exception and "Created the researcher account carl." in texts(at)
    assert at.text_input(key="new-account-name").value == "" and at.text_input(key="new-account-password").value == ""
    assert "carl" in set(accounts.list_accounts()["name"])
    at.text_input(key="new-account-name").input("carl")             # taken: refused, the fields stay
    at.text_input(key="new-account-password").input("another-password-2")
    at.button(key="FormSubmitter:new-account-Create account").click().run()
    assert len(at.error) == 1 and at.text_input(key="new-account-name").value == "carl"


def test_the_chosen_study_stays_chosen_across_the_console_areas(tmp_path, monkeypatch):
    """Only the open area runs, so the study picker is not drawn while Matrices is open; back
    under Studies the study chosen before is still the one shown."""
    make_study(tmp_path, n_items=4, slug="t")
    (tmp_path / "u").mkdir()
    make_study(tmp_path / "u", n_items=4, slug="u")
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw")
    assert at.selectbox(key="study-pick").value == "t"          # the first study by default
    at.selectbox(key="study-pick").select("u").run()
    open_area(at, "Matrices")
    assert not [s for s in at.selectbox if s.key == "study-pick"]   # not drawn meanwhile
    open_area(at, "Studies")
    assert at.selectbox(key="study-pick").value == "u"


def test_the_server_refuses_uploads_over_their_limit_that_the_browser_let_through(tmp_path, monkeypatch):
    """The browser enforces the upload limits; the page checks them again (a client need not be
    the browser): a 1.43 MiB spec is refused in one line naming the file, nothing is created, and
    a scoring upload over its limit does not score."""
    from studyapp.core.config import UPLOAD_LIMITS_MB
    from studyapp.platform.records import studies

    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw", area="Create")
    spec = write_spec(tmp_path, n_items=4, slug="big").read_bytes() + b"# padding\n" * 150_000   # 1.43 MiB
    at.file_uploader(key="spec-upload").set_value(("big.toml", spec, "application/toml"))
    at.run()
    at.button(key="create-upload").click().run()
    assert not at.exception
    assert [e.value.replace("\\", "") for e in at.error] == [   # as read, without markdown escapes
        f"big.toml: 1.4 MB, over the {UPLOAD_LIMITS_MB['spec']} MB limit for spec files; nothing was created or changed."]
    assert studies.list_studies() == []

    open_area(at, "Scoring")
    detections = b"x" * (UPLOAD_LIMITS_MB["detections"] * 1024 * 1024 + 1)
    at.file_uploader(key="score-gt").set_value(("gt.jsonl", detections, "application/octet-stream"))
    at.file_uploader(key="score-pred").set_value([("m.jsonl", b"{}\n", "application/octet-stream")])
    at.run()
    at.button(key="score").click().run()
    assert [e.value.replace("\\", "") for e in at.error] == [
        f"gt.jsonl: 200.0 MB, over the {UPLOAD_LIMITS_MB['detections']} MB limit for detections files; "
        "nothing was created or changed."]
    assert "scores" not in at.session_state


def test_list_says_so_on_an_empty_database_and_account_list_is_aligned(tmp_path, capsys):
    from studyapp.core import storage
    from studyapp.platform.commands.cli import main

    assert main(["list"]) == 0                       # no database file yet
    assert main(["account", "list"]) == 0
    storage.get_engine()                            # an empty database
    assert main(["list"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == out[2] == "no studies yet (`python -m studyapp create SPEC` makes one)"
    accounts.add_account("alice", "researcher", "alice-password")
    accounts.add_account("vera-the-viewer", "viewer", "vera-password")
    assert main(["account", "list"]) == 0
    header, *rows = capsys.readouterr().out.splitlines()
    for column in ("role", "created_at"):            # each column starts under its name
        start = header.index(column)
        assert all(row[start - 2:start] == "  " and row[start] != " " for row in rows), (column, header, rows)
    assert [row.split()[:2] for row in rows] == [["alice", "researcher"], ["vera-the-viewer", "viewer"]]


def test_the_invite_tab_names_every_prolific_code(tmp_path, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    make_study(tmp_path, n_items=2, extra='[prolific]\ncompletion_code = "DONE1"\nattention_failed_code = "ATTN1"\n'
               'screened_out_code = "SCR1"\n')
    at = console_page("pw", tab="Invite")
    (hint,) = [c.value for c in at.caption if "as the study URL" in c.value]
    assert hint.endswith("completion code DONE1; attention failed code ATTN1; screened out code SCR1.")


def test_viewing_a_study_is_audited_once_per_signed_in_session(tmp_path):
    # a reload or a second tab of the same sign-in opens a new page session: the log, not the
    # page's memory, says whether this sign-in has viewed the study's data already
    from sqlmodel import select

    from studyapp.core import storage
    from studyapp.core.models import Event
    make_study(tmp_path, n_items=4, slug="t")
    accounts.add_account("rita", "researcher", "rita-password")
    rita = accounts.Actor("rita", "researcher")
    first, second = accounts.open_session(rita), accounts.open_session(rita)
    written = [accounts.record_view_once(rita, "t", token, "dashboard") for token in (first, first, first, second)]
    assert written == [True, False, False, True]
    with storage.read_session() as session:
        views = session.exec(select(Event).where(Event.kind == "data_viewed")).all()
    assert len(views) == 2 and {v.actor for v in views} == {"rita"}
    assert first not in views[0].detail and second not in views[1].detail     # a hash, never the token
