"""The flat public API survives the regrouping into packages (implementation modules made private):
every name ``metrics.__all__`` had on commit 978bd2c still imports from ``metrics``, is what its
name says, and computes what it computed then.

``RECORDED`` holds, for each public function, the fingerprint of its result on the small fixed
inputs below: a headline number and the SHA-256 (first 16 hex digits) of the whole result as
canonical JSON with floats rounded to 9 significant digits. They were recorded on commit 978bd2c,
before the regrouping, by calling ``fingerprint(name)`` of this file. The hand-checkable ones say
so in a comment."""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import inspect
import json
import math
import pkgutil

import numpy as np
import pandas as pd
import pytest
from projectpaths import ROOT

import metrics

# metrics.__all__ on commit 978bd2c (before the regrouping), in its order
NAMES_ON_978BD2C = [
    "InputError", "ParameterError", "AgreementReport", "CrossHoiScores", "DetectionScores", "Detections",
    "DiagnosisResult", "ERROR_REGISTRY", "ErrorType", "HicoMap", "MissRates", "PPIEstimate", "PPIRecalibration",
    "PairwiseAgreement", "Recalibration", "Result", "SenseAccuracy", "ShoeF1", "ShoeMap", "SimilarityMatrix",
    "Vocabulary", "WTuning", "active_ppi_mean", "active_probabilities", "active_selection", "annotator_agreement",
    "candidate_synsets", "combine", "crosshoi_scores", "diagnose", "ensemble_uncertainty", "hico", "hico_map",
    "krippendorff_alpha", "match_synset", "match_synsets", "miss_rates", "pairwise_agreement", "ppi_agreement",
    "ppi_correlation", "ppi_entries", "ppi_mean", "ppi_mean_by_group", "ppi_weight", "rated_items",
    "read_detections", "read_items", "read_ratings", "recalibrate", "recalibrate_ppi", "register_error_type",
    "resolve", "score_detections", "sense_accuracy", "shoe_f1", "shoe_map", "tune_w",
]

MATRICES = ROOT / "metrics" / "datasets" / "hico_det" / "data"

# three images; the predictions hit, confuse a verb, miss a box and add a duplicate
GT = dict(image=["a", "a", "b", "c", "c"],
          human_box=[[0, 0, 10, 10], [0, 0, 10, 10], [5, 5, 30, 30], [0, 0, 20, 20], [40, 40, 60, 60]],
          object_box=[[10, 10, 20, 20], [10, 10, 20, 20], [20, 20, 50, 50], [20, 0, 40, 20], [60, 40, 80, 60]],
          verb=["ride", "hold", "feed", "ride", "walk"], object=["horse", "horse", "dog", "bicycle", "dog"])
PRED = dict(image=["a", "a", "a", "b", "c", "c", "c"],
            human_box=[[0, 0, 10, 10], [1, 1, 10, 10], [0, 0, 10, 10], [5, 5, 30, 30], [0, 0, 20, 20],
                       [41, 41, 60, 60], [100, 100, 120, 120]],
            object_box=[[10, 10, 20, 20], [10, 10, 20, 20], [10, 10, 20, 20], [20, 20, 50, 50], [20, 0, 40, 20],
                        [60, 40, 80, 60], [120, 100, 140, 120]],
            verb=["ride", "ride", "straddle", "pet", "push", "walk", "ride"],
            object=["horse", "horse", "horse", "dog", "bicycle", "dog", "horse"],
            score=[0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3])

VERBS, OBJECTS = ["ride", "push", "hold", "walk", "carry"], ["bicycle", "horse", "dog", "car", "cup"]
# 12 items x 3 raters; category 1 = same verb, 2 = same object, 3 = both differ
ITEMS = pd.DataFrame({
    "item_id": [f"i{k}" for k in range(12)],
    "category": [1, 2, 3] * 4,
    "gt_verb": [VERBS[k % 5] for k in range(12)],
    "gt_object": [OBJECTS[(2 * k) % 5] for k in range(12)],
    "pred_verb": [VERBS[k % 5] if k % 3 == 0 else VERBS[(k + 1) % 5] for k in range(12)],
    "pred_object": [OBJECTS[(2 * k) % 5] if k % 3 == 1 else OBJECTS[(2 * k + 1) % 5] for k in range(12)],
    "verb_sim": [1.0, 0.4, 0.2, 1.0, 0.6, 0.1, 1.0, 0.5, 0.3, 1.0, 0.7, 0.0],
    "object_sim": [0.3, 1.0, 0.5, 0.8, 1.0, 0.2, 0.1, 1.0, 0.6, 0.4, 1.0, 0.9],
})
SCORES = [[4, 4, 3], [2, 3, 2], [1, 0, 1], [3, 4, 4], [3, 3, 2], [0, 0, 1],
          [4, 3, 3], [3, 2, 3], [1, 2, 1], [4, 4, 4], [3, 4, 3], [1, 1, 0]]
RATINGS = pd.DataFrame([(f"i{k}", f"r{a}", SCORES[k][a]) for k in range(12) for a in range(3)],
                       columns=["item_id", "annotator", "rating"])

Y, YHAT, YHAT_U = [2.0, 4.0, 1.0, 3.0, 0.0], [1.5, 3.5, 1.0, 2.0, 0.5], [1.0, 2.0, 3.0, 2.5, 0.0, 4.0]
BENCH = {"q1": {"gt_choices": ["ride a/an horse"], "wrong_choices": ["feed a/an horse"]},
         "q2": {"gt_choices": ["hold a/an cup"], "wrong_choices": ["wash a/an cup"]}}
ANSWERS = {"q1": ["ride a/an horse"], "q2": ["wash a/an cup", "nope"]}
GOLD, SENSE_PRED = {"a.jpg": "jumping", "b.jpg": "riding"}, {"a.jpg": ["leaping", "jumping"], "b.jpg": ["driving"]}
CLUSTERS = {"clusters": {"c1": ["jumping", "leaping"], "c2": ["riding", "driving"]},
            "images": {"a.jpg": ["c1"], "b.jpg": ["c2"]}}


def detections(spec):
    return metrics.Detections.from_arrays(**spec)


def matrix(pos):
    return metrics.SimilarityMatrix.load(MATRICES / f"baseline_{'verb' if pos == 'v' else 'object'}.npz")


def written(tmp_path, name, frame):
    path = tmp_path / name
    frame.to_csv(path, index=False)
    return path


def jsonl(tmp_path):
    from metrics.detection._detections import write_jsonl
    write_jsonl(detections(PRED), tmp_path / "pred.jsonl")
    return tmp_path / "pred.jsonl"


def ppi_items():
    return pd.DataFrame({"cell": ["a"] * 5 + ["b"] * 5, "llm": [1.0, 3.0, 1.0, 2.0, 3.0, 0.0, 4.0, 2.0, 1.0, 3.0],
                         "human_mean": [2.0, 4.0, None, None, 3.0, 1.0, None, 2.0, 1.0, None]})


# one call of each public function on the inputs above (tmp_path for the readers)
CALLS = {
    "score_detections": lambda t: metrics.score_detections(detections(GT), detections(PRED), delta=0.2, tau=0.3),
    "hico_map": lambda t: metrics.hico_map(detections(GT), detections(PRED)),
    "shoe_map": lambda t: metrics.shoe_map(detections(GT), detections(PRED), delta=0.2),
    "shoe_f1": lambda t: metrics.shoe_f1(detections(GT), detections(PRED), tau=0.3),
    "miss_rates": lambda t: metrics.miss_rates(detections(GT), detections(PRED), tau=0.3),
    "diagnose": lambda t: metrics.diagnose(detections(GT), detections(PRED)),
    "crosshoi_scores": lambda t: metrics.crosshoi_scores(BENCH, ANSWERS),
    "sense_accuracy": lambda t: metrics.sense_accuracy(GOLD, SENSE_PRED, clusters=CLUSTERS),
    "annotator_agreement": lambda t: metrics.annotator_agreement(RATINGS, n_resamples=50, seed=1),
    "krippendorff_alpha": lambda t: metrics.krippendorff_alpha(RATINGS),
    "pairwise_agreement": lambda t: metrics.pairwise_agreement(RATINGS),
    "tune_w": lambda t: metrics.tune_w(RATINGS, ITEMS, step=0.01),
    "recalibrate": lambda t: metrics.recalibrate(RATINGS, ITEMS, matrix("v"), matrix("n"), folds=2),
    "recalibrate_ppi": lambda t: metrics.recalibrate_ppi(RATINGS, ITEMS, matrix("v"), matrix("n")),
    "rated_items": lambda t: metrics.rated_items(RATINGS, ITEMS),
    "ppi_mean": lambda t: metrics.ppi_mean(Y, YHAT, YHAT_U),
    "ppi_mean_by_group": lambda t: metrics.ppi_mean_by_group(ppi_items(), by="cell"),
    "ppi_agreement": lambda t: metrics.ppi_agreement(Y, Y, YHAT, YHAT_U, YHAT_U),
    "ppi_correlation": lambda t: metrics.ppi_correlation(YHAT, Y, YHAT, YHAT_U, [1.0, 2.5, 2.0, 3.0, 0.5, 3.5]),
    "ppi_weight": lambda t: metrics.ppi_weight([1.0, 0.0, 0.5, 0.2, 1.0], [0.0, 1.0, 0.5, 1.0, 0.3], Y, YHAT,
                                               [1.0, 0.2, 0.4, 0.9, 0.0, 1.0], [0.3, 1.0, 0.8, 0.5, 1.0, 0.7],
                                               YHAT_U),
    "ppi_entries": lambda t: metrics.ppi_entries(ppi_items()["llm"], ppi_items()["human_mean"], [0, 1] * 5),
    "active_probabilities": lambda t: metrics.active_probabilities([0.0, 1.0, 3.0, 0.0, 2.0], budget=2),
    "active_selection": lambda t: metrics.active_selection([0.0, 1.0, 3.0, 0.0, 2.0], budget=2, seed=1),
    "active_ppi_mean": lambda t: metrics.active_ppi_mean(Y, YHAT, [0.5, 1.0, 0.5, 0.25, 1.0],
                                                         [True, True, False, True, True]),
    "ensemble_uncertainty": lambda t: metrics.ensemble_uncertainty([[1, 1, 1], [0, 2, 4], [3, None, 4]]),
    "candidate_synsets": lambda t: metrics.candidate_synsets("riding", "v"),
    "match_synset": lambda t: metrics.match_synset("riding", "ride.v.01", "v", matrix("v")),
    "match_synsets": lambda t: metrics.match_synsets(["feeding", "holding"], ["feed.v.01", "hold.v.02"], "v",
                                                     matrix("v")),
    "resolve": lambda t: metrics.resolve("motor bike", "n"),
    "combine": lambda t: metrics.combine([[1.0, 0.5], [0.0, 0.2]], [[0.4, 1.0], [0.6, 0.0]], method="geometric"),
    "hico": lambda t: metrics.hico(),
    "read_detections": lambda t: dataclasses.asdict(metrics.read_detections(jsonl(t))) | {"source": "pred.jsonl"},
    "read_items": lambda t: metrics.read_items(written(t, "items.csv", ITEMS)),
    "read_ratings": lambda t: metrics.read_ratings(written(t, "ratings.csv", RATINGS)),
    "register_error_type": lambda t: [metrics.register_error_type.__self__ is metrics.ERROR_REGISTRY,
                                      [(e.name, type(e).__name__, e.title) for e in metrics.ERROR_REGISTRY.counted]],
}


def canonical(value):
    """A result as plain JSON values, floats rounded to 9 significant digits."""
    if hasattr(value, "to_dict") and not isinstance(value, (pd.DataFrame, pd.Series)):
        value = value.to_dict()
    elif isinstance(value, pd.DataFrame):
        value = {"columns": [str(c) for c in value.columns], "rows": value.astype(object).values.tolist()}
    elif isinstance(value, (pd.Series, np.ndarray)):
        value = np.asarray(value, dtype=object).tolist()
    elif dataclasses.is_dataclass(value):
        value = dataclasses.asdict(value)
    elif isinstance(value, metrics.Vocabulary):
        value = {"verbs": list(value.verbs), "objects": list(value.objects)}
    if isinstance(value, dict):
        return {str(k): canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, (np.generic,)):
        value = value.item()
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.9g}")
    return value


#: Fields a result gained after 978bd2c, left out of its fingerprint (what it computed then is unchanged).
ADDED_SINCE = {"annotator_agreement": ("mean_qwk_by_shared_items", "qwk_pairs")}


def fingerprint(name, tmp_path):
    """(headline, digest) of the recorded call of public function ``name``, without the fields
    it gained later (:data:`ADDED_SINCE`)."""
    data = canonical(CALLS[name](tmp_path))
    if isinstance(data, dict):
        data = {k: v for k, v in data.items() if k not in ADDED_SINCE.get(name, ())}
    text = json.dumps(data, sort_keys=True, default=str)
    return next(leaves(data), None), hashlib.sha256(text.encode()).hexdigest()[:16]


def leaves(data):
    """The numbers of a canonical result, depth first."""
    if isinstance(data, dict):
        data = list(data.values())
    if isinstance(data, list):
        for item in data:
            yield from leaves(item)
    elif isinstance(data, (int, float)) and not isinstance(data, bool):
        yield data


# recorded on commit 978bd2c, before the regrouping (see the module docstring)
RECORDED = {
    'active_ppi_mean': (2.25, 'e9ad456504392e91'),
    'active_probabilities': (0.08, '5ffb9475186ff2f7'),
    'active_selection': (0.08, 'd4691c57b325a560'),
    'annotator_agreement': (12, '50908f13c356474c'),
    'candidate_synsets': (None, '4e930f365317665f'),
    'combine': (0.632455532, '36e73f3c2bed3dde'),
    'crosshoi_scores': (0.333333333, '8402fd6b023e1c85'),
    'diagnose': (0.00384615385, '6ad32a9014af7311'),
    'ensemble_uncertainty': (0.0, '7cd2bb28f7719c18'),
    'hico': (0, 'a82d19df932b788e'),
    'hico_map': (0.00333333333, '656379e96b639496'),
    'krippendorff_alpha': (0.80969915, '49f37de24425ad63'),
    'match_synset': (1.0, '945e74839bd8aefd'),
    'match_synsets': (1.0, '5fd078a5d7f4a62b'),
    'miss_rates': (0.0, '0b9593e28632ea93'),
    'pairwise_agreement': (0.847222222, 'b2ce22f954f18318'),
    'ppi_agreement': (1.0, 'dc9d0a6e01be5d30'),
    'ppi_correlation': (0.933007576, 'eebdbea01ad5a052'),
    'ppi_entries': (0, '86c02666ed143fb7'),
    'ppi_mean': (2.184, '342000e2cc78aa08'),
    'ppi_mean_by_group': (2.77777778, 'e52f57bfcfa994de'),
    'ppi_weight': (0.3125, '792c4a90d53a5a20'),
    'rated_items': (4.0, 'a32aab9465fe002c'),
    'read_detections': (0, '165293380c805af5'),
    'read_items': (1, '67459bd7f55bc39e'),
    'read_ratings': (4.0, 'be5cf51827716bab'),
    'recalibrate': (0.747222222, '3e03913a69fff7ae'),
    'recalibrate_ppi': (0.5, 'fa0f15c09beec846'),
    'register_error_type': (None, '36e3bafd5cea2854'),
    'resolve': (None, '35827f63ad8c07c7'),
    'score_detections': (0.00333333333, '454183bfa1733665'),
    'sense_accuracy': (0.0, '9d32322599f9f9df'),
    'shoe_f1': (0.679999989, '9322442c9bcd8950'),
    'shoe_map': (0.549999989, '821776e8657effbd'),
    'tune_w': (0.814814815, '80e1fcf543b4053a'),
}


def test_the_public_names_are_those_of_before():
    assert metrics.__all__ == NAMES_ON_978BD2C


def test_every_public_name_imports_from_metrics_and_is_what_it_names():
    for name in NAMES_ON_978BD2C:
        value = getattr(metrics, name)
        exec(f"from metrics import {name} as imported", {}, scope := {})
        assert scope["imported"] is value, name
        if inspect.isclass(value) or inspect.isfunction(value):
            assert value.__name__ == name, (name, value.__name__)
        assert (value.__module__ or "").startswith("metrics"), name


def test_every_public_function_has_a_recorded_call():
    functions = {n for n in NAMES_ON_978BD2C if callable(getattr(metrics, n)) and not inspect.isclass(getattr(metrics, n))}
    assert functions == set(CALLS) == set(RECORDED)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_public_function_computes_what_it_did_before(name, tmp_path):
    assert fingerprint(name, tmp_path) == RECORDED[name]


def test_recorded_calls_agree_with_values_worked_out_independently():
    import krippendorff
    # the reference implementation (fast-krippendorff) on the same table, raters as rows
    expected = krippendorff.alpha(reliability_data=np.array(SCORES).T, level_of_measurement="ordinal",
                                  value_domain=[0, 1, 2, 3, 4])
    assert metrics.krippendorff_alpha(RATINGS) == pytest.approx(expected, abs=1e-12)
    # geometric combination sqrt(v * o): sqrt(0.4), sqrt(0.5), 0, 0
    assert np.asarray(CALLS["combine"](None)).ravel().tolist() == pytest.approx([0.4 ** 0.5, 0.5 ** 0.5, 0, 0])
    # population SD of each row, NaN skipped: 0, sqrt(8/3), 0.5
    assert CALLS["ensemble_uncertainty"](None).tolist() == pytest.approx([0.0, (8 / 3) ** 0.5, 0.5])
    assert RECORDED["krippendorff_alpha"][0] == pytest.approx(expected, abs=1e-8)


def metrics_modules() -> list:
    """Every module and package of ``metrics``, imported (``__main__``, which runs the command line, aside)."""
    return [importlib.import_module(m.name) for m in pkgutil.walk_packages(metrics.__path__, "metrics.")
            if not m.name.endswith("__main__")]


def internal_namesakes() -> list[str]:
    """Every function or class defined in a ``metrics`` module under the name of a public one
    (``metrics.__all__``) without being it: a reader of that module would take it for the public one."""
    modules = metrics_modules()
    found = []
    for name in metrics.__all__:
        public = getattr(metrics, name)
        for module in modules:
            value = vars(module).get(name)
            if ((inspect.isfunction(value) or inspect.isclass(value)) and value.__module__ == module.__name__
                    and value is not public):
                found.append(f"{module.__name__}.{name}")
    return found


def test_no_public_name_is_shadowed_by_an_internal_one():
    """14 were (``metrics.detection.scoring.score_detections`` returned a dict, the swig
    reader's ``Detections`` was another class, ...); each was renamed for what it does."""
    assert internal_namesakes() == []


def test_the_namesake_finder_finds_a_planted_one(monkeypatch):
    import metrics.study._tuning as tuning

    def tune_w(rated_items):
        return rated_items
    tune_w.__module__ = tuning.__name__
    monkeypatch.setattr(tuning, "tune_w", tune_w, raising=False)
    assert internal_namesakes() == ["metrics.study._tuning.tune_w"]


def test_every_package_exports_what_its_all_names():
    """Each package of ``metrics`` is a public face: every name of its ``__all__`` resolves (from
    its private module, on first use) and ``dir()`` lists it; no module but a package's
    ``__init__``, ``cli`` and ``__main__`` is public."""
    packages = [metrics] + [m for m in metrics_modules() if hasattr(m, "__path__")]
    assert len(packages) >= 15
    for package in packages:
        assert set(package.__all__) <= set(dir(package)), package.__name__
        for name in package.__all__:
            assert getattr(package, name) is not None, (package.__name__, name)
    public = [m.__name__ for m in metrics_modules()
              if not hasattr(m, "__path__") and not m.__name__.rpartition(".")[2].startswith("_")]
    assert public == ["metrics.cli"], public
