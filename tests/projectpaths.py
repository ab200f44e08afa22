"""Where the project and the read-only shared data are, for tests in any folder under tests/."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED_DATA = ROOT.parent / "shared" / "data"
