import json

import numpy as np
import pytest

from metrics import InputError, SimilarityMatrix, combine

LABELS = ["ride.v.01", "straddle.v.01", "drive.v.01", "push.v.01"]


def small(dense=False):
    meta = {"source": "test", "models": ["a", "b"], "study": "s1", "date": "2026-11-21", "method": "mean"}
    if dense:
        s = np.zeros((4, 4))
        s[0, 1] = s[1, 0] = 3.0
        s[0, 2] = s[2, 0] = 1.5
        return SimilarityMatrix(LABELS, s, meta=meta)
    return SimilarityMatrix(LABELS, row=[0, 2], col=[1, 0], val=[3.0, 1.5], meta=meta)


@pytest.mark.parametrize("dense", [False, True])
def test_lookup_is_symmetric_self_one_missing_zero(dense):
    m = small(dense)
    assert m.sim("ride.v.01", "straddle.v.01") == 0.75
    assert m.sim("straddle.v.01", "ride.v.01") == 0.75
    assert m.sim("drive.v.01", "ride.v.01") == 0.375
    assert m.sim("push.v.01", "ride.v.01") == 0.0
    assert m.sim("push.v.01", "push.v.01") == 1.0
    assert m.sim("unknown.v.01", "ride.v.01") == 0.0
    assert m.sim("unknown.v.01", "unknown.v.01") == 1.0
    assert m.n_pairs == 2


@pytest.mark.parametrize("dense", [False, True])
@pytest.mark.parametrize("suffix", [".csv", ".npz"])
def test_round_trip_keeps_values_and_metadata(tmp_path, dense, suffix):
    m = small(dense)
    back = SimilarityMatrix.load(m.save(tmp_path / f"m{suffix}"))
    assert back.meta == m.meta
    a, b = np.meshgrid(LABELS, LABELS)
    np.testing.assert_array_equal(back.scores(a, b), m.scores(a, b))
    if suffix == ".npz":
        assert back.is_dense == dense


def test_vectorized_lookup_matches_a_dense_reference():
    rng = np.random.default_rng(0)
    n = 300
    labels = [f"l{i}" for i in range(n)]
    dense = np.round(rng.uniform(0, 4, (n, n)) * (rng.random((n, n)) < 0.05), 2)
    dense = np.triu(dense, 1)
    dense = dense + dense.T
    i, j = np.nonzero(np.triu(dense, 1))
    sparse = SimilarityMatrix(labels, row=i, col=j, val=dense[i, j])
    qa, qb = rng.integers(0, n + 10, 5000), rng.integers(0, n + 10, 5000)
    names = np.array(labels + [f"x{k}" for k in range(10)], dtype=object)
    expected = np.zeros(5000)
    known = (qa < n) & (qb < n)
    expected[known] = dense[qa[known], qb[known]] / 4
    expected[qa == qb] = 1.0
    np.testing.assert_allclose(sparse.sims(names[qa], names[qb]), expected, atol=1e-6)
    np.testing.assert_allclose(SimilarityMatrix(labels, dense).sims(names[qa], names[qb]), expected, atol=1e-6)


def test_coverage_counts_missing_pairs_and_unknown_labels():
    cov = small().coverage(["ride.v.01", "ride.v.01", "push.v.01", "zz"],
                           ["straddle.v.01", "ride.v.01", "drive.v.01", "ride.v.01"])
    assert (cov.n_pairs, cov.n_found, cov.n_identical, cov.n_missing) == (4, 1, 1, 2)
    assert cov.unknown_labels == ("zz",)
    assert cov.missing_rate == 0.5


def test_combinations_against_hand_computed_values():
    v = np.array([1.0, 0.5, 0.0, 0.8])
    o = np.array([0.5, 0.5, 1.0, 0.2])
    np.testing.assert_allclose(combine(v, o), [0.75, 0.5, 0.5, 0.5])
    np.testing.assert_allclose(combine(v, o, w=0.25), [0.625, 0.5, 0.75, 0.35])
    np.testing.assert_allclose(combine(v, o, method="geometric"), [np.sqrt(0.5), 0.5, 0.0, 0.4])
    np.testing.assert_allclose(combine(v, o, method="min"), [0.5, 0.5, 0.0, 0.2])
    with pytest.raises(InputError):
        combine(v, o, method="median")
    with pytest.raises(InputError):
        combine(v, o, w=1.5)


@pytest.mark.parametrize("content,message", [
    ("x,y,score\na,b,1\n", "header must be 'a,b,score'"),
    ("a,b,score\na,b,1\nb,c,5\n", "line 3: score '5' is not a number in 0–4"),
    ("a,b,score\na,b,1\nb,c,high\n", "line 3: score 'high'"),
    ("a,b,score\na,b,1\nb,a,2\n", "conflicting scores for (a, b)"),
    ("a,b,score\na,a,3\n", "line 2: a label compared with itself must score 4"),
    ("a,b,score\na,,3\n", "line 2: empty 'b'"),
])
def test_bad_csv_gives_one_line_error_naming_the_line(tmp_path, content, message):
    path = tmp_path / "bad.csv"
    path.write_text(content)
    with pytest.raises(InputError) as err:
        SimilarityMatrix.load(path)
    assert message in str(err.value)
    assert str(path) in str(err.value)
    assert "\n" not in str(err.value)


def test_bad_npz_files(tmp_path):
    np.savez(tmp_path / "nolabels.npz", scores=np.zeros((2, 2)))
    np.savez(tmp_path / "asym.npz", labels=np.array(["a", "b"]), scores=np.array([[4, 1], [2, 4]]),
             meta=np.array(json.dumps({})))
    np.savez(tmp_path / "partial.npz", labels=np.array(["a", "b"]), row=np.array([0]))
    (tmp_path / "junk.npz").write_bytes(b"not a zip")
    for name, message in [("nolabels", "missing array 'labels'"), ("asym", "not symmetric"),
                          ("partial", r"missing array\(s\) col, val"), ("junk", "not a readable .npz")]:
        with pytest.raises(InputError, match=message):
            SimilarityMatrix.load(tmp_path / f"{name}.npz")
    with pytest.raises(InputError, match="no such file"):
        SimilarityMatrix.load(tmp_path / "absent.npz")


def test_neighbours_and_long_form():
    m = small()
    assert m.neighbours("ride.v.01").to_dict() == {"straddle.v.01": 3.0, "drive.v.01": 1.5}
    long = m.to_long().sort_values("score").values.tolist()
    assert long == [["ride.v.01", "drive.v.01", 1.5], ["ride.v.01", "straddle.v.01", 3.0]]
