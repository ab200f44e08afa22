"""Writing results: output paths checked first, every file and folder written atomically.

- :func:`check_output_file` / :func:`check_output_dir` refuse, before anything is computed, an
  output path that is a folder (or a device), lies under a file, or cannot be written.
- :func:`atomic_file`, :func:`write_bytes_atomic`, :func:`write_text_atomic` and
  :func:`write_json` write into an unnamed temporary file in the target's folder (Linux
  ``O_TMPFILE``; elsewhere a hidden ``.NAME.PID.XXXX.tmp``) and rename it into place: a reader
  or a crash sees the previous content or the new one, never a part, and a process killed
  mid-write leaves no file behind.
- :class:`StagedFolder` builds a multi-file output (reports, exports) in a hidden temporary
  folder beside the target and moves it into place at the end; ``unique=True`` gives the folder
  a name no other run has taken (exclusive creation).
- :func:`all_or_nothing`: when the block ends with an exception, every output published inside
  it is taken back (a new file or folder removed, a replaced one restored from the hidden copy
  kept until the block ends); the command lines wrap every command in one, so a command whose
  last output fails leaves none of the earlier ones.

Hidden temporaries (and kept copies) of processes that no longer run are removed by the next
write into the same folder.
"""

from __future__ import annotations

import contextvars
import errno
import json
import math
import os
import re
import secrets
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from metrics.core._constraints import OrNone, Whole, validate_params
from metrics.core._errors import InputError

FILE_MODE = 0o644
_TEMP_NAME = re.compile(r"^\..+\.(\d+)(\.[A-Za-z0-9_]+)?\.tmp$")
_NO_TMPFILE = {errno.EOPNOTSUPP, errno.EISDIR, errno.EINVAL, errno.ENOENT}
_undo: contextvars.ContextVar[list | None] = contextvars.ContextVar("published_outputs", default=None)


# ------------------------------------------------------------------ checks before anything runs
def check_output_file(path: str | Path, option: str | None = None) -> Path:
    """``path`` as a file to (over)write: not a folder or device, its folder creatable and
    writable. Raises a one-line :class:`InputError` naming ``option`` (or the path)."""
    target = Path(path)
    name = f"{option} {target}" if option else str(target)
    if target.is_symlink() or target.exists():
        if target.is_dir():
            raise InputError(f"{name}: is a folder; give the path of a file")
        if not target.is_file():
            raise InputError(f"{name}: is not a regular file (a device, pipe or socket); "
                             "give the path of a file")
    _check_writable_folder(target.parent, name)
    return target


def check_output_dir(path: str | Path, option: str | None = None) -> Path:
    """``path`` as an output folder: a folder or not there yet, and writable."""
    target = Path(path)
    name = f"{option} {target}" if option else str(target)
    if (target.is_symlink() or target.exists()) and not target.is_dir():
        raise InputError(f"{name}: exists and is not a folder; give a folder path")
    _check_writable_folder(target, name)
    return target


def _check_writable_folder(folder: Path, name: str) -> None:
    """The nearest existing ancestor of ``folder`` must be a folder where files can be made
    (tried for real with a temporary file that never gets a name)."""
    existing = folder
    try:
        while not existing.exists():
            if existing.is_symlink():
                raise InputError(f"{name}: {existing} is a broken link")
            existing = existing.parent
        if not existing.is_dir():
            raise InputError(f"{name}: {existing} is a file, not a folder")
        os.close(_temp_fd(existing)[0])  # a probe: it has no name, or loses it at once
    except InputError:
        raise
    except OSError as exc:
        raise InputError(f"{name}: cannot write in {existing} ({exc.strerror}); choose a "
                         "writable place") from None


def _temp_fd(folder: Path, stem: str = "probe") -> tuple[int, Path | None]:
    """An open temporary file in ``folder``: unnamed (``O_TMPFILE``) where the file system
    supports it, else a hidden named one (the probe of a check is removed at once)."""
    try:
        fd = os.open(folder, os.O_TMPFILE | os.O_RDWR, FILE_MODE)
        return fd, None
    except (AttributeError, OSError) as exc:
        if isinstance(exc, OSError) and exc.errno not in _NO_TMPFILE:
            raise
    fd, name = tempfile.mkstemp(prefix=f".{stem}.{os.getpid()}.", suffix=".tmp", dir=folder)
    os.fchmod(fd, FILE_MODE)
    if stem == "probe":
        os.unlink(name)
        return fd, None
    return fd, Path(name)


# ------------------------------------------------------------------ temporary files and folders
def _temp_name(target: Path) -> Path:
    return target.with_name(f".{target.name}.{os.getpid()}.{secrets.token_hex(4)}.tmp")


def remove_stale_temporaries(folder: Path) -> None:
    """Remove hidden ``.NAME.PID[.XXXX].tmp`` files and folders left by processes that no
    longer run (a killed write)."""
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return
    for entry in entries:
        match = _TEMP_NAME.match(entry.name)
        if not match or _alive(int(match.group(1))):
            continue
        if entry.is_dir(follow_symlinks=False):
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            Path(entry.path).unlink(missing_ok=True)


def remove_abandoned_subfolders(folder: Path) -> None:
    """In each subfolder of ``folder``, the stale temporaries (:func:`remove_stale_temporaries`);
    a subfolder they leave empty goes too: a run killed before it published anything in a
    folder of its own (``<study>/<timestamp>/.report...tmp``) leaves nothing behind."""
    try:
        subfolders = [Path(e.path) for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return
    for sub in subfolders:
        try:
            stale = any((match := _TEMP_NAME.match(e.name)) and not _alive(int(match.group(1)))
                        for e in os.scandir(sub))
        except OSError:
            continue
        if stale:
            remove_stale_temporaries(sub)
            try:
                sub.rmdir()
            except OSError:  # it holds other files: kept
                pass


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):
        return True
    return True


def _make_folders(folder: Path) -> list[Path]:
    """Create ``folder`` and its missing parents; returns those created (deepest last)."""
    created = []
    for parent in reversed([folder, *folder.parents]):
        if not parent.exists():
            try:
                parent.mkdir()
            except FileExistsError:
                continue
            created.append(parent)
    return created


def _remove_folders(created: list[Path]) -> None:
    for folder in reversed(created):
        try:
            folder.rmdir()
        except OSError:
            break


class _TempFile:
    """A temporary file destined to replace ``target``."""

    def __init__(self, target: Path):
        self.target = target
        remove_stale_temporaries(target.parent)
        self.fd, self.name = _temp_fd(target.parent, target.name)
        self.open = True

    def publish(self, created: list[Path]) -> None:
        try:
            os.fsync(self.fd)
            if self.name is None:  # give the unnamed file a name, then rename it into place
                self.name = _temp_name(self.target)
                _link_unnamed(self.fd, self.name)
            kept = _keep_previous(self.target)
            try:
                os.replace(self.name, self.target)
            except BaseException:
                _drop_kept(self.target, kept)
                raise
            self.name = None
            _fsync_folder(self.target.parent)
            _published(self.target, kept, created)
        finally:
            self.discard()

    def discard(self) -> None:
        if self.open:
            os.close(self.fd)
            self.open = False
        if self.name is not None:
            Path(self.name).unlink(missing_ok=True)
            self.name = None


def _link_unnamed(fd: int, name: Path) -> None:
    """Give the ``O_TMPFILE`` file ``fd`` the name ``name`` (``linkat`` with
    ``AT_SYMLINK_FOLLOW``, which ``os.link`` uses only when given a directory descriptor)."""
    folder = os.open(name.parent, os.O_RDONLY)
    try:
        os.link(f"/proc/self/fd/{fd}", name, src_dir_fd=folder, follow_symlinks=True)
    finally:
        os.close(folder)


def _fsync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _keep_previous(target: Path) -> Path | None:
    """Inside :func:`all_or_nothing`, a hidden copy (hard link) of the file or folder
    ``target`` is about to replace, so that it can be put back; None outside or when new."""
    if _undo.get() is None or not (target.exists() or target.is_symlink()):
        return None
    kept = _temp_name(target)
    if target.is_dir() and not target.is_symlink():
        os.rename(target, kept)
        return kept
    try:
        os.link(target, kept, follow_symlinks=False)
    except OSError:
        shutil.copy2(target, kept, follow_symlinks=False)
    return kept


def _drop_kept(target: Path, kept: Path | None) -> None:
    """Undo :func:`_keep_previous` when the replacement did not happen."""
    if kept is None:
        return
    if kept.is_dir() and not kept.is_symlink():
        os.rename(kept, target)  # the folder was moved aside: move it back
    else:
        kept.unlink(missing_ok=True)  # a second name of the file still in place


def _published(target: Path, kept: Path | None, created: list[Path]) -> None:
    """Record an output just put in place (with what it replaced) for :func:`all_or_nothing`."""
    undo = _undo.get()
    if undo is not None:
        undo.append((target, kept, created))


def _take_back(target: Path, kept: Path | None, created: list[Path]) -> None:
    if target.is_dir() and not target.is_symlink():
        shutil.rmtree(target)
    else:
        target.unlink(missing_ok=True)
    if kept is not None:
        os.rename(kept, target)
    _remove_folders(created)


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


@contextmanager
def atomic_file(path: str | Path) -> Iterator:
    """A binary file object whose content replaces ``path`` when the block ends without an
    exception; on an exception (or a kill) ``path`` keeps its previous content."""
    target = check_output_file(path)
    created = _make_folders(target.parent)
    try:
        temp = _TempFile(target)
    except BaseException:
        _remove_folders(created)
        raise
    try:
        with os.fdopen(os.dup(temp.fd), "wb") as handle:
            yield handle
        temp.publish(created)
    except BaseException:
        temp.discard()
        _remove_folders(created)
        raise


def write_bytes_atomic(path: str | Path, data: bytes) -> Path:
    """Write ``data`` to ``path`` atomically (see :func:`atomic_file`)."""
    with atomic_file(path) as handle:
        handle.write(data)
    return Path(path)


def write_text_atomic(path: str | Path, text: str) -> Path:
    """:func:`write_bytes_atomic` of ``text`` in UTF-8."""
    return write_bytes_atomic(path, text.encode("utf-8"))


def to_jsonable(value):
    """``json.dumps`` fallback for numpy scalars (``.item()``) and arrays (``.tolist()``)."""
    if hasattr(value, "item"):
        return value.item()
    if hasattr(value, "tolist"):
        return value.tolist()
    raise TypeError(f"cannot write {type(value).__name__} as JSON")


@validate_params({"indent": OrNone(Whole(0))})
def json_text(value, *, indent: int | None = 2) -> str:
    """Strict JSON of ``value`` (numpy scalars and arrays included): NaN and infinities, which
    JSON cannot hold (and the readers of :mod:`metrics.core._inputs` refuse), are written as null.

    >>> json_text({"a": float("nan"), "b": [1.5, float("inf")]}, indent=None)
    '{"a": null, "b": [1.5, null]}'
    """
    try:
        return json.dumps(value, indent=indent, default=to_jsonable, allow_nan=False)
    except ValueError:
        return json.dumps(_finite(value), indent=indent, default=to_jsonable, allow_nan=False)


def _finite(value):
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    if hasattr(value, "tolist") and not isinstance(value, (str, bytes)):
        return _finite(value.tolist())
    if isinstance(value, float) and not math.isfinite(value):
        return None
    return value


def write_json(result: dict, path: str | Path) -> Path:
    return write_text_atomic(path, json_text(result) + "\n")


class StagedFolder:
    """Build a multi-file output in a hidden temporary folder beside ``out`` and move it into
    place when the block ends without an exception::

        staged = StagedFolder(out)
        with staged as folder:
            (folder / "report.html").write_text(page)
        staged.path  # the published folder

    ``out`` may exist: its other files stay, the new ones replace theirs by name. With
    ``unique=True`` the output gets a name nobody has taken (``out``, else ``out-2``, ...: the
    rename itself claims it, as a folder cannot be renamed onto a folder that holds files)."""

    def __init__(self, out: str | Path, unique: bool = False):
        self.out = check_output_dir(out)
        self.unique = unique
        self._path: Path | None = None
        self._temp: Path | None = None
        self._created: list[Path] = []

    @property
    def path(self) -> Path:
        """The published folder, once the block has ended without an exception."""
        if self._path is None:
            raise RuntimeError(f"{self.out} is not published")
        return self._path

    def __enter__(self) -> Path:
        self._created = _make_folders(self.out.parent)
        try:
            remove_stale_temporaries(self.out.parent)
            self._temp = Path(tempfile.mkdtemp(prefix=f".{self.out.name}.{os.getpid()}.",
                                               suffix=".tmp", dir=self.out.parent))
        except BaseException:
            _remove_folders(self._created)
            raise
        return self._temp

    def __exit__(self, exc_type, exc, tb) -> None:
        if exc_type is not None:
            self._discard()
            return
        try:
            self._publish()
        except BaseException:
            self._discard()
            raise

    def _discard(self) -> None:
        if self._temp is not None:
            shutil.rmtree(self._temp, ignore_errors=True)
        _remove_folders(self._created)

    def _publish(self) -> None:
        temp = self._temp
        if temp is None:
            raise RuntimeError("StagedFolder published outside its with-block")
        if self.unique:
            self._path = _rename_unique(temp, self.out)
            _published(self._path, None, self._created)
        else:
            self._path = self.out
            try:
                os.rename(temp, self.out)  # absent or empty: the whole folder at once
                _published(self.out, None, self._created)
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                    raise
                for entry in sorted(temp.iterdir()):  # into an existing folder: entry by entry
                    target = self.out / entry.name
                    kept = _keep_previous(target)
                    try:
                        if kept is None and target.is_dir() and not target.is_symlink():
                            shutil.rmtree(target)
                        os.replace(entry, target)
                    except BaseException:
                        _drop_kept(target, kept)
                        raise
                    _published(target, kept, [])
                temp.rmdir()
        self._temp = None
        _fsync_folder(self.path.parent)


def _rename_unique(temp: Path, out: Path) -> Path:
    """Rename the (non-empty) folder ``temp`` to the first of ``out``, ``out-2``, ... that is
    free: a rename onto a folder holding files fails, so two runs never share a name."""
    for k in range(1, 10_000):
        candidate = out if k == 1 else out.with_name(f"{out.name}-{k}")
        try:
            os.rename(temp, candidate)
            return candidate
        except OSError as exc:
            if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST):
                raise
    raise InputError(f"{out}: 10,000 folders of that name already exist")


@contextmanager
def all_or_nothing() -> Iterator[None]:
    """Outputs published inside the block (by the functions above) are taken back when it ends
    with an exception: new ones removed, replaced ones restored, folders made for them removed.
    Without an exception the kept copies of replaced outputs are dropped."""
    if _undo.get() is not None:  # nested: the outer block decides
        yield
        return
    published: list = []
    token = _undo.set(published)
    try:
        yield
    except BaseException:
        _undo.reset(token)
        for target, kept, created in reversed(published):
            _take_back(target, kept, created)
        raise
    _undo.reset(token)
    for _target, kept, _created in published:
        if kept is not None:
            _remove(kept)
