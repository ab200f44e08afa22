"""Pickles as untrusted input: a restricted unpickler.

A pickle is a program: unpickling one may import any module and call any function it names
(``__reduce__`` → ``os.system``). Files other people made (a detector's V-COCO detections,
``*.pkl``) are read here with an unpickler whose ``find_class`` — the only way a pickle reaches a
module or a callable — knows a short list of harmless names and refuses every other one *before*
anything is imported or called:

- plain containers: ``list``, ``dict``, ``tuple`` (pickle builds them without names), ``set``,
  ``frozenset``, ``collections.OrderedDict``; numbers and strings, ``bytes``, ``bytearray``,
  ``complex`` (``_codecs.encode`` only as protocols 0–2 spell bytes: ``latin1``);
- numpy arrays, numpy scalars and dtypes under both module names numpy has pickled them with:
  ``numpy.core.multiarray`` (NumPy 1, Python 2) and ``numpy._core.multiarray`` (NumPy 2):
  ``_reconstruct`` and ``scalar``, ``numpy.ndarray``, ``numpy.dtype``, and ``_frombuffer``
  (protocol 5).

A refused pickle ends as one line naming the file and what it would have imported
(:class:`~metrics.core._errors.InputError`); nothing in it has run. Python 2 pickles are read with
``encoding="latin1"`` (numpy's advice: their byte strings hold array data).

>>> import pickle, io
>>> loads_restricted(pickle.dumps({"score": 0.5, "box": [1, 2]}), "f.pkl")
{'score': 0.5, 'box': [1, 2]}
>>> loads_restricted(pickle.dumps(print), "f.pkl")
Traceback (most recent call last):
metrics.core._errors.InputError: f.pkl: refused: the pickle would import builtins.print (only plain containers, numbers, strings and numpy arrays are read from a pickle; nothing in it was run)
"""

from __future__ import annotations

import collections
import contextlib
import gc
import io
import os
import pickle
import sys
from functools import lru_cache
from pathlib import Path

from metrics.core._errors import InputError
from metrics.core._inputs import check_readable


def _latin1_encode(text, encoding="utf-8", errors="strict"):
    """``_codecs.encode`` as pickle protocols 0–2 use it for bytes (``encode(str, 'latin1')``)
    and nothing else: another codec could import a module by its name."""
    if not isinstance(text, str) or encoding not in ("latin1", "latin-1") or errors != "strict":
        raise pickle.UnpicklingError("_codecs.encode is allowed only as encode(text, 'latin1')")
    return text.encode("latin1")


def _sized(kind):
    """``bytes`` / ``bytearray`` as pickles build them (from text, bytes or a list), never from
    a size: ``bytes(10**12)`` would fill the memory."""
    def make(*args):
        if args and not isinstance(args[0], (str, bytes, bytearray, list, tuple)):
            raise pickle.UnpicklingError(f"{kind.__name__}() is allowed from text or bytes, not from a size")
        return kind(*args)
    make.__name__ = kind.__name__
    return make


@lru_cache(maxsize=1)
def allowed_globals() -> dict[tuple[str, str], object]:
    """(module, name) → the object a pickle may name; nothing else is importable."""
    import numpy as np
    from numpy._core import multiarray, numeric

    allowed: dict[tuple[str, str], object] = {}
    for builtins in ("builtins", "__builtin__"):          # Python 3 and Python 2 spellings
        for name, obj in (("set", set), ("frozenset", frozenset), ("bytes", _sized(bytes)),
                          ("bytearray", _sized(bytearray)), ("complex", complex)):
            allowed[builtins, name] = obj
    allowed["_codecs", "encode"] = _latin1_encode
    allowed["collections", "OrderedDict"] = collections.OrderedDict
    allowed["numpy", "ndarray"] = np.ndarray
    allowed["numpy", "dtype"] = np.dtype
    for core in ("numpy.core", "numpy._core"):            # NumPy 1 and NumPy 2 pickles
        allowed[f"{core}.multiarray", "_reconstruct"] = multiarray._reconstruct
        allowed[f"{core}.multiarray", "scalar"] = multiarray.scalar
        allowed[f"{core}.numeric", "_frombuffer"] = vars(numeric)["_frombuffer"]   # not in numpy's stubs
    return allowed


class _Refused(Exception):
    def __init__(self, module: str, name: str):
        super().__init__(f"{module}.{name}")
        self.module, self.name = module, name


class RestrictedUnpickler(pickle.Unpickler):
    """``pickle.Unpickler`` that resolves only :func:`allowed_globals` (see the module's text)."""

    def find_class(self, module: str, name: str):
        try:
            return allowed_globals()[module, name]
        except (KeyError, TypeError):
            raise _Refused(str(module), str(name)) from None

    def persistent_load(self, pid):
        raise pickle.UnpicklingError("persistent ids are not allowed")


# CPython's unpickler, refused a huge BYTEARRAY8 (MemoryError), writes this to stderr itself; the
# refusal must stay one line, so it is held back (anything else written while loading passes)
_CPYTHON_NOTICE = "SystemError: deallocated bytearray object has exported buffers\n"


MEMORY_BUDGET = 2**30   # bytes a pickle may take beyond 50 times its size while it is read


@contextlib.contextmanager
def _memory_budget(size: int):
    """Cap the process's address space while a pickle of ``size`` bytes is read: a damaged
    pickle can ask the unpickler for a memo slot in the billions (LONG_BINPUT), which CPython
    zero-fills -- tens of GB, the machine's memory -- long before any check could see it. Over
    the cap the allocation fails (MemoryError: refused in one line). Unix only; a no-op elsewhere."""
    try:
        import resource
        pages = int(Path("/proc/self/statm").read_text().split()[0])
    except (ImportError, OSError, ValueError, IndexError):
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_AS)
    cap = pages * os.sysconf("SC_PAGE_SIZE") + MEMORY_BUDGET + 50 * size
    for limit in (soft, hard):
        if limit != resource.RLIM_INFINITY:
            cap = min(cap, limit)
    resource.setrlimit(resource.RLIMIT_AS, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_AS, (soft, hard))


@contextlib.contextmanager
def collector_paused():
    """Pause the cyclic garbage collector while millions of small containers are built from a
    pickle: each collection would rescan all of them (unpickling is about 3x slower with it)."""
    collecting = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if collecting:
            gc.enable()


def _load(stream, where: str, size: int):
    held = io.StringIO()
    try:
        with collector_paused(), contextlib.redirect_stderr(held), _memory_budget(size):
            return RestrictedUnpickler(stream, encoding="latin1").load()
    except _Refused as exc:
        raise InputError(f"{where}: refused: the pickle would import {exc.module}.{exc.name} (only plain "
                         "containers, numbers, strings and numpy arrays are read from a pickle; nothing in "
                         "it was run)") from None
    except RecursionError:
        raise InputError(f"{where}: not a readable pickle (nested too deeply)") from None
    except MemoryError:
        raise InputError(f"{where}: not a readable pickle (it asks for more memory than there is)") from None
    except OSError:
        raise
    except Exception as exc:   # a damaged or truncated pickle: UnpicklingError, EOFError, ValueError, ...
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise InputError(f"{where}: not a readable pickle ({reason[:200]})") from None
    finally:
        rest = held.getvalue().replace(_CPYTHON_NOTICE, "")
        if rest:
            sys.stderr.write(rest)


def loads_restricted(data: bytes, where: str):
    """The object pickled in ``data`` if it names only allowed globals; else a one-line
    :class:`InputError` naming ``where`` (nothing in the pickle has run)."""
    return _load(io.BytesIO(data), where, len(data))


def load_restricted(path: str | Path):
    """The object pickled in the file ``path`` (see :func:`loads_restricted`), read as a stream."""
    check_readable(path)
    try:
        with open(path, "rb") as f:
            return _load(f, str(path), os.fstat(f.fileno()).st_size)
    except OSError as exc:
        raise InputError(f"{path}: cannot be read ({exc.strerror or type(exc).__name__})") from None
