"""A whole spec launched from the console's uploads: the spec and every file it names (items,
LLM ratings, practice items), or one zip holding them, checked by the same function as
``studyapp create``; errors name the uploaded file, never the server's folder."""

import io
import json
import zipfile

import pytest
from sqlmodel import select
from studyhelpers import console_page, write_items, write_practice

from metrics import InputError
from studyapp.core import storage
from studyapp.core.models import Item
from studyapp.platform.launch import spec_uploads
from studyapp.platform.launch.spec_files import load_spec
from studyapp.platform.records import studies

LLM = "item_id,gpt,claude\n" + "".join(f"i{k:02d},{k % 5},{(3 * k) % 5}\n" for k in range(1, 9))
SPEC = '''title = "Uploaded"
study_type = "hoi_similarity"
instructions = "Rate the pair."
raters_per_item = 2
slug = "up"
{practice}
[llm]
ratings = "../elsewhere/llm.csv"
[active]
budget = 4
seed = 0
[prolific]
completion_code = "DONE1"
screened_out_code = "SCR1"
[items]
source = "csv"
path = "/srv/data/items.csv"
'''


@pytest.fixture
def files(tmp_path):
    """The spec (naming its files by paths of the researcher's machine) and the files."""
    write_items(tmp_path / "items.csv", 8)
    (tmp_path / "llm.csv").write_text(LLM)
    practice = write_practice(tmp_path, ["p1,ride,horse,walk,horse,2,close"])
    (tmp_path / "up.toml").write_text(SPEC.format(practice=practice))
    return tmp_path


def uploads(folder, *names):
    return [spec_uploads.Upload(name, (folder / name).read_bytes()) for name in names]


def zipped(folder, *names, extra=()) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name in names:
            archive.writestr(f"study/{name}", (folder / name).read_bytes())
        for name, data in extra:
            archive.writestr(name, data)
    return buffer.getvalue()


def the_same_spec_from_files(folder):
    """The spec as ``studyapp create`` reads it, with its file names pointing at ``folder``."""
    text = (folder / "up.toml").read_text().replace("../elsewhere/llm.csv", "llm.csv").replace(
        "/srv/data/items.csv", "items.csv")
    (folder / "local").mkdir(exist_ok=True)
    for name in ("items.csv", "llm.csv", "practice.csv"):
        (folder / "local" / name).write_bytes((folder / name).read_bytes())
    (folder / "local" / "up.toml").write_text(text)
    return load_spec(folder / "local" / "up.toml")


def test_the_uploads_give_the_spec_studyapp_create_reads(files, tmp_path):
    expected = json.loads(the_same_spec_from_files(files).to_json())
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    apart = spec_uploads.spec_from_uploads(uploads(files, "up.toml")[0],
                                           uploads(files, "items.csv", "llm.csv", "practice.csv"), tmp_path / "a")
    one_zip = spec_uploads.spec_from_uploads(None, [spec_uploads.Upload("study.zip", zipped(
        files, "up.toml", "items.csv", "llm.csv", "practice.csv"))], tmp_path / "b")
    for spec in (apart, one_zip):
        got = json.loads(spec.to_json())
        assert got == expected
        assert [i.llm_rating for i in spec.items if i.role == "main"][:3] == [2.0, 1.5, 3.5]   # the models' mean
        assert sum(1 for i in spec.items if i.role == "practice") == 1


def test_errors_name_the_uploaded_file_and_nothing_is_created(files, tmp_path):
    folder = tmp_path / "work"
    folder.mkdir()
    with pytest.raises(InputError) as missing:
        spec_uploads.spec_from_uploads(uploads(files, "up.toml")[0], uploads(files, "items.csv", "practice.csv"), folder)
    message = str(missing.value)
    assert "llm.csv" in message and str(folder) not in message and str(tmp_path) not in message
    (files / "bad_llm.csv").write_text("item_id,gpt,claude\ni01,9,2\n")
    bad = [spec_uploads.Upload("llm.csv", (files / "bad_llm.csv").read_bytes())]
    (tmp_path / "work2").mkdir()
    with pytest.raises(InputError, match=r"^llm\.csv") as wrong:
        spec_uploads.spec_from_uploads(uploads(files, "up.toml")[0], uploads(files, "items.csv", "practice.csv") + bad,
                                       tmp_path / "work2")
    assert str(tmp_path) not in str(wrong.value)
    for entry, problem in (("../evil.csv", "climbs out"), ("/etc/evil.csv", "absolute path")):
        archive = zipped(files, "up.toml", "items.csv", extra=[(entry, b"x")])
        (tmp_path / "z").mkdir(exist_ok=True)
        with pytest.raises(InputError, match=rf"^study\.zip: entry .* {problem}"):
            spec_uploads.spec_from_uploads(None, [spec_uploads.Upload("study.zip", archive)], tmp_path / "z")
    assert studies.list_studies() == []


def test_a_spec_from_uploads_reads_no_file_of_the_server(files, tmp_path):
    """A name that reaches outside the uploads is never the server's file, though the server has
    one there: refused in the same words whether it exists or not; an items file whose
    image_root points at a server folder is refused; nothing is created."""
    secret = tmp_path / "server"
    secret.mkdir()
    write_items(secret / "items.csv", 3)
    refusals = []
    for path in (str(secret / "items.csv"), "../../server/items.csv", str(secret / "absent.csv")):
        text = (files / "up.toml").read_text().replace("/srv/data/items.csv", path)
        work = tmp_path / f"work{len(refusals)}"
        (work / "study").mkdir(parents=True)
        with pytest.raises(InputError) as refused:
            spec_uploads.spec_from_uploads(None, [spec_uploads.Upload("study.zip", zipped(
                files, "llm.csv", "practice.csv", extra=[("study/up.toml", text)]))], work)
        refusals.append(str(refused.value).replace(path, "PATH"))
    assert refusals == ["up.toml: key 'items.path' names a file that is not among the uploads: PATH "
                        "(upload it with the spec; the upload box refuses a file over 50 MB)"] * 3
    (secret / "images").mkdir()
    (files / "image_items.csv").write_text(
        "item_id,image,image_root,model,predictions\n"
        f"q1,a.jpg,{secret / 'images'},m,riding;jumping\n")
    spec = ('title = "Verb check"\nstudy_type = "imsitu_correctness"\ninstructions = "Mark."\n'
            'raters_per_item = 1\n[items]\nsource = "csv"\npath = "image_items.csv"\n')
    (tmp_path / "work-images").mkdir()
    with pytest.raises(InputError, match=r"^verbs\.toml: item 'q1': image_root .* is not among the uploads"):
        spec_uploads.spec_from_uploads(spec_uploads.Upload("verbs.toml", spec.encode()),
                                       uploads(files, "image_items.csv"), tmp_path / "work-images")
    assert studies.list_studies() == []


def test_the_console_creates_the_study_from_one_zip_and_names_a_missing_file(files, monkeypatch):
    monkeypatch.setenv("STUDYAPP_ADMIN_PASSWORD", "pw")
    at = console_page("pw", area="Create")
    at.file_uploader(key="items-upload").set_value([("study.zip", zipped(files, "up.toml", "items.csv", "practice.csv"),
                                                     "application/zip")])
    at.run()
    at.button(key="create-upload").click().run()
    assert not at.exception and len(at.error) == 1
    shown = at.error[0].value.replace("\\", "")
    assert "llm.csv" in shown and "/tmp" not in shown and "does not exist" in shown
    assert studies.list_studies() == []
    at.file_uploader(key="items-upload").set_value([("study.zip", zipped(
        files, "up.toml", "items.csv", "llm.csv", "practice.csv"), "application/zip")])
    at.run()
    at.button(key="create-upload").click().run()
    assert not at.exception and not at.error
    assert [s.slug for s in studies.list_studies()] == ["up"]
    with storage.read_session() as session:
        drawn = session.exec(select(Item.item_key).where(Item.active_priority > 0)).all()
        rated = session.exec(select(Item.llm_rating).where(Item.role == "main")).all()
    assert 1 <= len(drawn) <= 8 and len(rated) == 8 and None not in rated


def test_an_image_study_launches_from_one_zip_and_keeps_its_images(tmp_path, files):
    """An imsitu_correctness study (spec, predictions, clusters and its images folder in one
    zip): its images are kept under the uploads folder and load from the stored items; a study
    without images leaves no folder behind."""
    from studyhelpers import write_imsitu_study

    from studyapp.core import config, images

    source = tmp_path / "imsitu"
    source.mkdir()
    write_imsitu_study(source)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for path in sorted(source.rglob("*")):
            if path.is_file():
                archive.write(path, str(path.relative_to(source)))
    spec = spec_uploads.launch(None, [spec_uploads.Upload("verbs.zip", buffer.getvalue())])
    (kept,) = list(config.uploads_dir().iterdir())
    assert str(kept.resolve()) not in spec.source_report
    roots = {item.fields["image_root"] for item in spec.items}
    assert roots == {str((kept / "images").resolve())}
    assert all(images.load_image(i.fields["image_root"], i.fields["image"]) is not None for i in spec.items)
    spec_uploads.launch(uploads(files, "up.toml")[0], uploads(files, "items.csv", "llm.csv", "practice.csv"))
    assert list(config.uploads_dir().iterdir()) == [kept]           # no images: nothing kept
    with pytest.raises(InputError):                                  # a refusal keeps nothing either
        spec_uploads.launch(uploads(files, "up.toml")[0], uploads(files, "items.csv"))
    assert list(config.uploads_dir().iterdir()) == [kept]
    assert sorted(s.slug for s in studies.list_studies()) == ["up", "verbs"]


# uploads the browser's upload box refused for their size never reach the server: the messages
# about what is missing say the limits (config.UPLOAD_LIMITS_MB)
@pytest.mark.parametrize("spec_name,names,expect", [
    (None, ("items.csv", "practice.csv"), ["no spec among the files", "refuses a spec over 1 MB"]),
    ("up.toml", ("practice.csv", "llm.csv"), ["items.path", "items.csv", "not among the uploads",
                                              "refuses a file over 50 MB"]),
])
def test_a_missing_upload_names_the_size_limit(files, tmp_path, spec_name, names, expect):
    (tmp_path / "work").mkdir()
    spec = uploads(files, spec_name)[0] if spec_name else None
    with pytest.raises(InputError) as refused:
        spec_uploads.spec_from_uploads(spec, uploads(files, *names), tmp_path / "work")
    message = str(refused.value)
    assert all(piece in message for piece in expect), message
    assert len(message.splitlines()) == 1 and str(tmp_path) not in message
    assert studies.list_studies() == []
