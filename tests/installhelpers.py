"""Building wheels and installing into fresh virtual environments, for the tests that install
the project as a user would: through the project's uv (``scripts/setup.sh`` installs it beside
the interpreter), which takes the build tools and the wheels from the cache set-up filled."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

UV = str(Path(sys.executable).with_name("uv"))


def build_wheel(source: Path, out: Path) -> Path:
    """The wheel of the project at ``source``, built in an isolated build environment into ``out``."""
    built = subprocess.run([UV, "build", "--quiet", "--wheel", "--python", sys.executable, "--out-dir", str(out),
                            str(source)], capture_output=True, text=True)
    assert built.returncode == 0, built.stderr[-2000:]
    (wheel,) = out.glob("*.whl")
    return wheel


def pip(python: str, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """``pip ARGS`` (``install``, ``list``...) on the environment of the interpreter ``python``."""
    return subprocess.run([UV, "pip", args[0], "--quiet", "--python", python, *args[1:]], capture_output=True,
                          text=True, env=env, timeout=3600)
