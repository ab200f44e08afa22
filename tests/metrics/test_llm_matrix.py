"""``matrix build-llm`` against a real OpenAI-compatible HTTP server on 127.0.0.1 (SHOE §4.1,
§4.2, supplementary §1): exact request plan, resume, hand-computed mean, control disagreement,
retries of malformed replies / timeouts / HTTP 500 / 429, API keys, dry run, batching, ablation."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from metrics.cli import main
from metrics.llm import _prompt as prompt
from metrics.llm._config import load
from metrics.llm._loopback_server import BadBody, Reply, Stall, Status
from metrics.vocab._similarity import SimilarityMatrix
from tests.llm_helpers import PAIRS, SynsetServer, desc_key, write_config, write_pairs

P = PAIRS
# first model: 6 pairs above zero (p0 p1 p3 p4 p6 p9), 4 zeros (p2 p5 p7 p8)
TABLE = {
    "m1": {P[0]: 3, P[1]: 2, P[2]: 0, P[3]: 1, P[4]: 4, P[5]: 0, P[6]: 3, P[7]: 0, P[8]: 0, P[9]: 1},
    "m2": {P[0]: 4, P[1]: 1, P[2]: 1, P[3]: 0, P[4]: 4, P[5]: 0, P[6]: 2, P[7]: 0, P[8]: 0, P[9]: 2},
    "m3": {P[0]: 3, P[1]: 3, P[2]: 0, P[3]: 2, P[4]: 3, P[5]: 2, P[6]: 3, P[7]: 3, P[8]: 0, P[9]: 0},
}
NONZERO = [P[i] for i in (0, 1, 3, 4, 6, 9)]
ZEROS = [P[i] for i in (2, 5, 7, 8)]


@pytest.fixture
def server():
    with SynsetServer(TABLE) as s:
        yield s


def build(tmp_path, server, *extra, plan="control_size = 4", models=("m1", "m2", "m3"), endpoint=""):
    cfg = write_config(tmp_path / "llm.toml", server.base_url, models, plan, endpoint)
    pairs = write_pairs(tmp_path / "pairs.csv")
    out = tmp_path / "out"
    code = main(["matrix", "build-llm", "--config", str(cfg), "--pairs", str(pairs), "--pos", "verb",
                 "--out", str(out), "--quiet", "--json", str(tmp_path / "result.json"), *extra])
    result = json.loads((tmp_path / "result.json").read_text()) if code == 0 else None
    return code, result, out


def test_prompt_shows_lemmas_glosses_and_the_scale_verbatim():
    user = prompt.messages([("ride.v.01", "straddle.v.01")], "v")[1]["content"]
    assert prompt.describe("ride.v.01") in user and "sit and travel on the back of animal" in user
    for k, label in [(0, "completely dissimilar"), (1, "somewhat related but clearly distinct"),
                     (2, "related but easily distinguishable"), (3, "very similar with subtle differences"),
                     (4, "interchangeable")]:
        assert f"{k} = {label}" in user
    # changing the wording without bumping PROMPT_VERSION must fail here
    assert (prompt.PROMPT_VERSION, prompt.PROMPT_SHA) == ("shoe-v1", "328c7616fd14")


@pytest.mark.parametrize("reply,n,expected", [("3", 1, [3]), (" 0\n", 1, [0]), ("**4**", 1, [4]), ("2.", 1, [2]),
                                              ("<think>maybe 2</think>\n1", 1, [1]), ("1: 3\n2: 0", 2, [3, 0]),
                                              ("2: 0\n1: 4", 2, [4, 0])])
def test_strict_parser_accepts_only_the_asked_integers(reply, n, expected):
    assert prompt.parse_reply(reply, n) == expected


@pytest.mark.parametrize("reply,n", [("5", 1), ("-1", 1), ("3/4", 1), ("Score: 3", 1), ("2 or 3", 1), ("", 1),
                                     (None, 1), ("3 - very similar", 1), ("1: 3", 2), ("1: 3\n1: 2", 2),
                                     ("1: 3\n3: 2", 2), ("3\n2", 2)])
def test_strict_parser_rejects_everything_else(reply, n):
    with pytest.raises(prompt.MalformedReply):
        prompt.parse_reply(reply, n)


def test_plan_sends_exactly_the_expected_requests(tmp_path, server):
    code, result, _ = build(tmp_path, server, plan="control_size = 2\ncontrol_seed = 7")
    assert code == 0
    pick = np.sort(np.random.default_rng(7).choice(len(ZEROS), 2, replace=False))
    control = [ZEROS[i] for i in pick]
    expected = {("m1", p): 1 for p in P}
    expected.update({(m, p): 1 for m in ("m2", "m3") for p in NONZERO + control})
    assert server.counts() == expected                 # each pair once, nothing else
    assert server.requests == 10 + 2 * 8
    assert result["verb"]["requests_sent"] == {"m1": 10, "m2": 8, "m3": 8}
    assert result["verb"]["n_control"] == 2 and result["verb"]["n_kept"] == 6


def test_rerun_repeats_nothing_and_no_filter_asks_everyone(tmp_path, server):
    assert build(tmp_path, server)[0] == 0
    first = server.requests
    code, result, _ = build(tmp_path, server)
    assert code == 0 and server.requests == first
    assert result["verb"]["requests_sent"] == {"m1": 0, "m2": 0, "m3": 0}
    code, result, _ = build(tmp_path, server, "--no-filter")
    assert code == 0 and result["verb"]["n_filtered"] == 0
    # only the 0 pairs not in the control set were new for m2 and m3: none (control = every zero)
    assert server.requests == first


def test_mean_and_per_model_matrices_equal_the_hand_computed_ones(tmp_path, server):
    code, result, out = build(tmp_path, server)
    assert code == 0
    mean = SimilarityMatrix.load(out / "llm_verb.npz")
    hand = {P[0]: 10 / 3, P[1]: 2.0, P[3]: 1.0, P[4]: 11 / 3, P[6]: 8 / 3, P[9]: 1.0,
            # filtered pairs keep the filter's 0 even where a control answer was not 0
            P[2]: 0.0, P[5]: 0.0, P[7]: 0.0, P[8]: 0.0}
    for (a, b), value in hand.items():
        assert mean.scores([a], [b])[0] == pytest.approx(value, abs=1e-5)
        assert mean.scores([b], [a])[0] == pytest.approx(value, abs=1e-5)
    assert mean.n_pairs == 6
    assert mean.meta["source"] == "llm" and mean.meta["prompt_sha"] == prompt.PROMPT_SHA
    assert [m["name"] for m in mean.meta["models"]] == ["m1", "m2", "m3"]
    m2 = SimilarityMatrix.load(out / "llm_verb_m2.npz")
    assert [m2.scores([a], [b])[0] for a, b in NONZERO] == [4, 1, 0, 4, 2, 2]
    assert m2.scores([P[2][0]], [P[2][1]])[0] == 0          # control answer 1 not in the matrix
    ratings = (out / "llm_verb_ratings.csv").read_text().splitlines()
    assert ratings[0] == "a,b,role,m1,m2,m3,mean" and len(ratings) == 11
    # inter-model Pearson over the pairs both rated (kept + control)
    x = [TABLE["m1"][p] for p in P]
    y = [TABLE["m2"][p] for p in P]
    assert result["verb"]["pairwise"]["pearson"]["m1|m2"] == pytest.approx(np.corrcoef(x, y)[0, 1])
    assert result["verb"]["pairwise"]["n"]["m1|m2"] == 10
    assert (out / "llm_report.html").read_text().count("data:image/png;base64") >= 2


def test_control_set_disagreement_is_the_share_rated_above_zero(tmp_path, server):
    code, result, out = build(tmp_path, server)
    assert code == 0
    control = result["verb"]["control"]
    assert control["m2"] == {"n_control": 4, "n_answered": 4, "n_disagree": 1, "rate": 0.25}
    assert control["m3"] == {"n_control": 4, "n_answered": 4, "n_disagree": 2, "rate": 0.5}
    meta = SimilarityMatrix.load(out / "llm_verb.npz").meta
    assert meta["control_disagreement"]["m3"]["rate"] == 0.5


def test_malformed_replies_timeouts_and_http_errors_are_retried_then_missing(tmp_path):
    def behaviour(model, pair, attempt):
        if pair == desc_key(*P[0]) and attempt == 0:
            return Reply("3/4")                      # malformed once
        if pair == desc_key(*P[1]):
            return Reply("Score: 2")                 # always malformed -> missing
        if pair == desc_key(*P[2]) and attempt == 0:
            return Status(500)
        if pair == desc_key(*P[3]) and attempt < 2:
            return Status(429, retry_after=0)
        if pair == desc_key(*P[4]) and attempt == 0:
            return Stall(1.2)                        # past the 0.4 s client timeout
        if pair == desc_key(*P[5]) and attempt == 0:
            return BadBody()
        return None

    with SynsetServer(TABLE, behaviour=behaviour) as server:
        code, result, out = build(tmp_path, server, models=("m1",),
                                  endpoint="timeout = 0.4\nretries = 3\nconcurrency = 3")
        assert code == 0
        counts = {p: server.count("m1", *p) for p in P}
        assert counts == {P[0]: 2, P[1]: 4, P[2]: 2, P[3]: 3, P[4]: 2, P[5]: 2,
                          P[6]: 1, P[7]: 1, P[8]: 1, P[9]: 1}
        db = sqlite3.connect(out / "llm_cache.sqlite")
        rows = {(a, b): (score, status, attempts, error) for a, b, score, status, attempts, error in
                db.execute("SELECT a, b, score, status, attempts, error FROM answers")}
        k1 = tuple(sorted(P[1]))
        assert rows[k1] == (None, "missing", 4, "malformed reply")
        for p in P[:1] + P[2:]:
            score, status, _, _ = rows[tuple(sorted(p))]
            assert (score, status) == (TABLE["m1"][p], "ok")     # never a guessed score
        assert result["verb"]["missing"] == {"m1": 1} and result["verb"]["n_missing"] == 1
        before = server.requests
        assert build(tmp_path, server, models=("m1",), endpoint="timeout = 0.4\nretries = 3")[0] == 0
        assert server.requests == before                          # missing is recorded, not re-asked
        assert build(tmp_path, server, "--retry-missing", models=("m1",), endpoint="retries = 1")[0] == 0
        assert server.requests == before + 2


def test_fatal_http_error_stops_with_one_line_and_keeps_answers(tmp_path, capsys):
    def behaviour(model, pair, attempt):
        return Status(401) if pair == desc_key(*P[5]) else None

    with SynsetServer(TABLE, behaviour=behaviour) as server:
        code, _, out = build(tmp_path, server, models=("m1",), endpoint="concurrency = 1")
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "HTTP 401" in err
    n = sqlite3.connect(out / "llm_cache.sqlite").execute("SELECT COUNT(*) FROM answers").fetchone()[0]
    assert 5 <= n < 10


def test_api_key_comes_from_the_environment_and_is_never_written(tmp_path, monkeypatch, server):
    monkeypatch.setenv("LOOP_KEY", "sk-secret-123")
    code, _, out = build(tmp_path, server, models=("m1",), endpoint='api_key_env = "LOOP_KEY"')
    assert code == 0 and server.auth == {"Bearer sk-secret-123"}
    for path in list(out.iterdir()) + [tmp_path / "result.json"]:
        assert b"sk-secret-123" not in path.read_bytes(), path
    bad = tmp_path / "bad.toml"
    bad.write_text('[[endpoints]]\nname = "x"\nbase_url = "http://127.0.0.1:1/v1"\napi_key = "k"\n'
                   '[[models]]\nname = "m"\n')
    assert main(["matrix", "build-llm", "--config", str(bad), "--pairs", str(write_pairs(tmp_path / "p.csv")),
                 "--pos", "verb", "--out", str(tmp_path / "o")]) == 2


def test_dry_run_counts_requests_and_sends_nothing(tmp_path, server):
    code, result, _ = build(tmp_path, server, "--dry-run", plan="control_size = 2\nexpected_nonzero_rate = 0.5")
    assert code == 0 and server.requests == 0
    models = result["verb"]["models"]
    assert models["m1"]["requests"] == 10 and models["m1"]["exact"]
    assert models["m2"]["requests"] == 5 + 2 and not models["m2"]["exact"]
    assert result["total"]["prompt_tokens"] > 0 and result["total"]["seconds"] > 0
    build(tmp_path, server, plan="control_size = 2")
    code, result, _ = build(tmp_path, server, "--dry-run", plan="control_size = 3")
    models = result["verb"]["models"]
    assert models["m1"]["requests"] == 0 and models["m2"]["exact"]
    assert models["m2"]["requests"] == 1                      # one more control pair


def test_batched_requests_give_the_same_scores(tmp_path, server):
    code, result, out = build(tmp_path, server, models=("m1",), endpoint="batch_size = 4")
    assert code == 0 and server.requests == 3                 # 4 + 4 + 2 pairs
    m = SimilarityMatrix.load(out / "llm_verb_m1.npz")
    assert [m.scores([a], [b])[0] for a, b in P] == [TABLE["m1"][p] for p in P]
    assert m.meta["prompt_version"] == {"m1": "shoe-v1-batch"}


def test_ablation_against_a_human_study_matches_hand_computation(tmp_path, server):
    items = tmp_path / "items.csv"
    items.write_text("item_id,category,gt_verb,gt_object,pred_verb,pred_object,object_sim\n"
                     "i1,2,ride.v.01,horse.n.01,straddle.v.01,horse.n.01,1\n"
                     "i2,2,eat.v.01,horse.n.01,devour.v.01,horse.n.01,1\n"
                     "i3,2,ride.v.01,horse.n.01,walk.v.01,horse.n.01,1\n"
                     "i4,2,hold.v.02,horse.n.01,grasp.v.01,horse.n.01,1\n")
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item_id,annotator,rating\n" + "".join(
        f"{i},{a},{r}\n" for i, rs in (("i1", (3, 4)), ("i2", (4, 4)), ("i3", (0, 1)), ("i4", (2, 2)))
        for a, r in zip(("x", "y"), rs)))
    code, result, out = build(tmp_path, server, "--ratings", str(ratings), "--items", str(items))
    assert code == 0
    abl = {tuple(row["models"]): row["agreement"] for row in result["ablation"]["subsets"]}
    assert len(abl) == 7
    # HOI similarity on 0-4 = 4 * (v/2 + 1/2) = score/2 + 2; human means 3.5, 4, 0.5, 2
    assert abl[("m1",)] == pytest.approx(1 - (0 + 0 + 1.5 + 1.5) / 4 / 4)
    assert abl[("m1", "m3")] == pytest.approx(1 - (0 + 0.25 + 1.5 + 1.5) / 4 / 4)
    assert abl[("m1", "m2", "m3")] == pytest.approx(1 - (1 / 6 + 1 / 6 + 1.5 + 4 / 3) / 4 / 4)
    assert result["ablation"]["by_size"]["3"]["n_subsets"] == 1
    assert "ablation" in SimilarityMatrix.load(out / "llm_verb.npz").meta


def test_config_from_base_url_and_models_and_errors(tmp_path, monkeypatch):
    monkeypatch.setenv("HOI_LLM_BASE_URL", "http://127.0.0.1:9/v1")
    config = load(None, models=["a", "b"], overrides={"concurrency": 3, "control_size": 5})
    assert [m.name for m in config.models] == ["a", "b"]
    assert config.endpoints["default"].url == "http://127.0.0.1:9/v1/chat/completions"
    assert config.endpoints["default"].concurrency == 3 and config.plan.control_size == 5
    cfg = tmp_path / "c.json"
    cfg.write_text(json.dumps({"endpoints": [{"name": "e", "base_url": "http://127.0.0.1:9"}],
                               "models": [{"name": "x"}, {"name": "y"}]}))
    assert [m.name for m in load(cfg, models=["y", "x"]).models] == ["y", "x"]
    cfg.write_text(json.dumps({"endpoints": [{"name": "e", "base_url": "http://127.0.0.1:9", "speed": 1}],
                               "models": [{"name": "x"}]}))
    assert main(["matrix", "build-llm", "--config", str(cfg), "--out", str(tmp_path / "o")]) == 2


def test_a_reply_nested_past_pythons_parser_is_a_missing_answer():
    """A 200 reply nested 100,000 arrays deep raised RecursionError out of the client."""
    from metrics.llm._client import ChatClient
    from metrics.llm._config import Endpoint, Model
    from metrics.llm._loopback_server import LoopbackLLM

    with LoopbackLLM(behaviour=lambda model, pair, attempt: BadBody(b"[" * 100_000 + b"]" * 100_000)) as llm:
        client = ChatClient(Endpoint(name="x", base_url=llm.base_url, retries=0, timeout=5))
        outcome = client.rate(Model(name="m", endpoint="x"), [{"role": "user", "content": "A: x\nB: y"}], 1)
    assert outcome.scores == [None] and outcome.error == "bad JSON body"
