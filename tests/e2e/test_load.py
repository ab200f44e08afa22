"""A smaller version of benchmarks/load_annotators.py on both backends: 12 annotators in 3 app
instances (processes, one thread per annotator), 20 items each with back-and-change and
resume, against one database; nothing acknowledged may be lost or doubled, and no item may
get more than raters_per_item raters."""

import pytest

from benchmarks.load_annotators import run_load


@pytest.mark.slow
def test_concurrent_annotators_lose_nothing_and_keep_raters_per_item(db_backend, tmp_path, monkeypatch):
    from studyapp.core import config
    url = config.database_url()  # the test's SQLite file or PostgreSQL schema
    monkeypatch.setenv("DATABASE_URL", url)  # run_load sets it too; restored afterwards
    result = run_load(url, tmp_path, annotators=12, ratings=20, instances=3, raters=2,
                      back_every=4, resume_every=5)
    # 12 x 20 first answers + one changed answer every 4th item (5 per annotator)
    assert result["submits"] == 12 * 20 + 12 * 5
    assert result["ratings_per_s"] > 0 and result["submit_p95_ms"] > 0
