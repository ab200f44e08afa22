"""Public names of a package, each imported from its private module on first use (PEP 562).

Every package of :mod:`metrics` declares its public names with :func:`lazy_exports`, so ``import
metrics`` and ``python -m metrics --help`` stay light (no numpy-heavy module, nltk, scikit-learn
or matplotlib until a name is used) and ``dir()`` lists every public name before its first use.
"""

from __future__ import annotations

import importlib
import sys


def lazy_exports(package: str, names: dict[str, str]):
    """``(__all__, __getattr__, __dir__)`` of the package named ``package`` whose public names
    are the keys of ``names``, each defined in the private module named by its value (relative
    to ``package``, e.g. ``"_scoring"``).

    >>> all_, getattr_, dir_ = lazy_exports("metrics.core", {"InputError": "_errors"})
    >>> all_, getattr_("InputError").__name__
    (['InputError'], 'InputError')
    >>> getattr_("nope")
    Traceback (most recent call last):
    AttributeError: module 'metrics.core' has no attribute 'nope'
    """
    def __getattr__(name: str):
        if name in names:
            value = getattr(importlib.import_module(f".{names[name]}", package), name)
            setattr(sys.modules[package], name, value)
            return value
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    def __dir__() -> list[str]:
        return sorted(set(vars(sys.modules[package])) | set(names))

    return sorted(names), __getattr__, __dir__
