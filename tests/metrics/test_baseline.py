import numpy as np
import pytest

from metrics import SimilarityMatrix
from metrics.vocab._baseline import build, default_path, distance_to_score, load_default


def test_distance_to_score():
    assert distance_to_score(np.array([0, 1, 2, 3, 4, 5, 9, np.inf])).tolist() == \
        [4.0, 3.2, 2.4, 1.6, 0.8, 0.0, 0.0, 0.0]


def test_shipped_matrices_are_labelled_as_wordnet_baselines():
    for pos in ("v", "n"):
        m = load_default(pos)
        assert m.meta["source"] == "wordnet-baseline"
        assert "not an LLM matrix" in m.meta["kind"]
        assert 1000 < m.n_labels < 10000


def test_shipped_values_follow_wordnet_paths():
    n = load_default("n")
    assert n.sim("bicycle.n.01", "wheeled_vehicle.n.01") == pytest.approx(0.8)   # parent, d = 1
    assert n.sim("bicycle.n.01", "mountain_bike.n.01") == pytest.approx(0.8)     # child
    assert n.sim("cat.n.01", "dog.n.01") == pytest.approx(0.2)                   # d = 4 via carnivore
    assert n.sim("bicycle.n.01", "tricycle.n.01") == pytest.approx(0.6)          # sibling, d = 2
    v = load_default("v")
    assert v.sim("ride.v.01", "gallop.v.03") == pytest.approx(0.8)               # child of SHOE's ride


@pytest.mark.slow
def test_rebuilding_reproduces_the_shipped_matrix():
    for pos in ("v", "n"):
        built, shipped = build(pos), SimilarityMatrix.load(default_path(pos))
        assert list(built.labels) == list(shipped.labels)
        pd_built, pd_shipped = built.to_long(), shipped.to_long()
        assert len(pd_built) == len(pd_shipped)
        np.testing.assert_allclose(pd_built["score"], pd_shipped["score"], atol=1e-6)
