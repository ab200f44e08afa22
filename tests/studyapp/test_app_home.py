from projectpaths import ROOT
from streamlit.testing.v1 import AppTest


def test_home_page_shows_vocabulary_and_matrix_sizes():
    at = AppTest.from_file(str(ROOT / "studyapp" / "views" / "app.py"), default_timeout=60).run()
    assert not at.exception
    assert at.title[0].value == "HOI study platform"
    metrics = {m.label: m.value for m in at.metric}
    assert metrics["Verbs"] == "117" and metrics["Objects"] == "80"
    assert metrics["HOI classes"] == "600" and metrics["Rare classes"] == "138"
