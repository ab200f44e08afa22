"""A study spec launched from the console's uploads: the spec and every file it names (items,
LLM ratings, practice items, a sampler's files), or one zip holding them.

The uploads are written to a fresh folder (a zip's entries checked first: no absolute name,
``..``, link, encryption or bomb), and the spec is read by :func:`spec_files.load_spec`, the
function ``studyapp create`` uses, so it is checked exactly as the command checks it. A file
name in the spec that is not beside it in the uploads (``path = "../data/items.csv"``) is
pointed at the uploaded file of the same name; a name outside the uploads never reads the
server's file, and items show images only from the uploads. Errors name the uploaded files,
never the folder they were written to. :func:`launch` creates the study; the uploads are kept
(under ``config.uploads_dir()``) only when its items show images from them (an ``image_root``
inside)."""

from __future__ import annotations

import io
import os
import secrets
import shutil
import stat
import zipfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from metrics import InputError

from ...core import config
from ...core.accounts import CLI, Actor
from ..records import studies
from ..specs.spec_model import StudySpec
from .spec_files import load_spec

# the spec's tables whose text values may name a file relative to the spec
FILE_TABLES = ("items", "practice", "llm")
MAX_EXPANSION = 200          # a zip entry may expand this many times its compressed size
MAX_ZIP_BYTES = 500 * 2**20  # everything a zip may expand to


@dataclass(frozen=True)
class Upload:
    """One uploaded file: its name in the browser and its bytes."""

    name: str
    data: bytes


def _entry_problem(info: zipfile.ZipInfo) -> str | None:
    parts = info.filename.replace("\\", "/").split("/")
    if info.filename.startswith(("/", "\\")) or (len(parts[0]) == 2 and parts[0][1] == ":"):
        return "has an absolute path"
    if ".." in parts:
        return "climbs out of the zip ('..')"
    if stat.S_ISLNK(info.external_attr >> 16):
        return "is a symbolic link"
    if info.flag_bits & 0x1:
        return "is encrypted"
    if info.file_size > MAX_EXPANSION * max(info.compress_size, 1) and info.file_size > 2**20:
        return f"expands {info.file_size} bytes from {info.compress_size} (a zip bomb?)"
    return None


def extract_zip(upload: Upload, folder: Path) -> list[Path]:
    """The files of an uploaded zip written under ``folder``, once every entry is safe."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(upload.data))
    except zipfile.BadZipFile:
        raise InputError(f"{upload.name}: not a zip file") from None
    with archive:
        infos = [info for info in archive.infolist() if not info.is_dir()]
        for info in infos:
            if (problem := _entry_problem(info)) is not None:
                raise InputError(f"{upload.name}: entry {info.filename!r} {problem}; nothing was created")
        if sum(info.file_size for info in infos) > MAX_ZIP_BYTES:
            raise InputError(f"{upload.name}: expands to more than {MAX_ZIP_BYTES // 2**20} MB; nothing was created")
        written = []
        for info in infos:
            target = folder / PurePosixPath(info.filename.replace("\\", "/"))
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(archive.read(info))
            written.append(target)
    return written


def _write_uploads(spec: Upload | None, files: list[Upload], folder: Path) -> tuple[Path, dict[str, Path]]:
    """(the spec's path, {file name: path}) of the uploads written under ``folder``."""
    written: list[Path] = []
    for upload in files:
        if upload.name.lower().endswith(".zip"):
            written += extract_zip(upload, folder)
        else:
            target = folder / Path(upload.name).name
            target.write_bytes(upload.data)
            written.append(target)
    if spec is not None:
        spec_path = folder / Path(spec.name).name
        spec_path.write_bytes(spec.data)
    else:
        specs = [path for path in written if path.suffix == ".toml"]
        if len(specs) != 1:
            raise InputError("upload the spec (.toml), or one zip holding it: "
                             + (f"no spec among the files (the upload box refuses a spec over "
                                f"{config.UPLOAD_LIMITS_MB['spec']} MB)" if not specs else
                                f"{len(specs)} specs among the files ({', '.join(p.name for p in specs)})"))
        spec_path = specs[0]
    return spec_path, {path.name: path for path in written}


def _inside(path: Path, folder: Path) -> bool:
    """Whether ``path`` (resolved) is ``folder`` or under it; False for a name no file can have."""
    try:
        return path.resolve().is_relative_to(folder)
    except (OSError, ValueError):
        return False


def _point_at_uploads(data: dict, spec_path: Path, folder: Path, by_name: dict[str, Path]) -> None:
    """Each file name of the spec's file tables means a file of the uploads: the one it names
    beside the spec, else the uploaded file of the same name. A name that reaches outside the
    uploads (``/srv/data/items.csv``, ``../../shared/data/items.csv``) never reads the server's
    file: without an upload of its name it is refused, whether or not the server has one."""
    for table in FILE_TABLES:
        section = data.get(table)
        if not isinstance(section, dict):
            continue
        for key, value in section.items():
            if not isinstance(value, str) or not value:
                continue
            named = spec_path.parent / value
            if _inside(named, folder) and named.exists():
                continue
            uploaded = by_name.get(PurePosixPath(value.replace("\\", "/")).name)
            if uploaded is not None and uploaded.is_file():
                section[key] = os.path.relpath(uploaded, spec_path.parent)
            elif not _inside(named, folder):
                raise InputError(f"{spec_path.name}: key '{table}.{key}' names a file that is not among the "
                                 f"uploads: {value} (upload it with the spec; {_FILE_LIMIT})")


def _refuse_images_outside(spec: StudySpec, spec_path: Path, folder: Path) -> None:
    """Items from uploads show images only from the uploads (an items file's ``image_root``
    column may not point at a folder of the server)."""
    for item in spec.items:
        root = item.fields.get("image_root")
        if root and not _inside(Path(str(root)), folder):
            raise InputError(f"{spec_path.name}: item {item.key!r}: image_root {root} is not among the uploads "
                             "(upload the images as a zip of the image_root folder)")


_FILE_LIMIT = f"the upload box refuses a file over {config.UPLOAD_LIMITS_MB['items']} MB"


def _without_folder(text: str, folder: Path) -> str:
    return text.replace(f"{folder}/", "").replace(str(folder), "the uploads")


def spec_from_uploads(spec: Upload | None, files: list[Upload], folder: Path, *, actor: Actor = CLI) -> StudySpec:
    """The validated spec of the uploads (``folder``: an empty folder of the caller's, removed
    by it afterwards), read as ``actor`` (items drawn from an earlier study need its download
    right) and from the uploads alone; errors and the items report name the uploaded files, not
    ``folder``."""
    folder = Path(folder).resolve()
    try:
        spec_path, by_name = _write_uploads(spec, files, folder)
        read = load_spec(spec_path, files=lambda data: _point_at_uploads(data, spec_path, folder, by_name),
                         actor=actor)
        _refuse_images_outside(read, spec_path, folder)
    except InputError as exc:
        message = _without_folder(str(exc), folder)
        if "names a file that does not exist" in message:   # not uploaded: perhaps refused for its size
            message += f" (not among the uploads; {_FILE_LIMIT})"
        raise InputError(message) from None
    read.source_report = _without_folder(read.source_report, folder)
    return read


def shows_uploaded_images(spec: StudySpec, folder: Path) -> bool:
    """Whether an item of ``spec`` shows images from inside ``folder`` (its ``image_root``)."""
    inside = str(folder.resolve())
    return any(str(item.fields.get("image_root", "")).startswith(inside) for item in spec.items)


def launch(spec: Upload | None, files: list[Upload], *, actor: Actor = CLI) -> StudySpec:
    """Create the study of the uploads (as ``studyapp create`` creates one from files); its
    uploaded images stay under ``config.uploads_dir()``, everything else is removed."""
    folder = config.uploads_dir() / secrets.token_hex(8)
    folder.mkdir(parents=True)
    try:
        read = spec_from_uploads(spec, files, folder, actor=actor)
        studies.create_study(read, actor=actor)
    except BaseException:
        shutil.rmtree(folder, ignore_errors=True)
        raise
    if not shows_uploaded_images(read, folder):
        shutil.rmtree(folder, ignore_errors=True)
    return read
