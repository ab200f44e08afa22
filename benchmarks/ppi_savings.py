"""Human ratings saved by prediction-powered inference at equal confidence-interval width, and the
coverage of nominal 95% intervals, in simulated studies calibrated to SHOE's.

The pool: SHOE's 6,269 candidate pairs (``shoe_candidate_pairs.csv``), each with its LLM level;
the LLM ensemble's HOI rating of a pair is SHOE's score with w = ½ — ``2 + level/2`` for
categories 1 and 2 (the unchanged component scores 4), the level itself for category 3. Without
the file a pool of the same cell sizes is generated.

A study: each pair's latent human similarity is its LLM rating plus an error
``δ_i ~ N(0, (τ·h_i)²)`` (``h_i`` log-normal with SD ``--heteroscedasticity``, RMS 1: the LLM is
better on some pairs than others); five simulated raters (``metrics.study._simulation``: neutral,
strict, lenient, mid-scale, neutral; shift ½, noise σ) rate every pair 0–4, so every pair has a
mean human rating ``Y_i`` and the estimand is known. τ and σ are calibrated (``--calibrate``)
so that on SHOE's 500-pair design the Eq. 13 agreement of the LLM rating with the mean human
rating is 85.73% and that between annotators 78.61% (SHOE §4.3). The five LLM members' ratings
scatter around the ensemble with SD ``τ·h_i`` (their disagreement is as informative as the error
scale, not more: an assumption, SHOE's per-member ratings are not published).

Per study, ``--items`` pairs get human ratings (5 ratings each). The estimand is the pool's own
mean (its pairs are fixed, the LLM has rated all of them), so every interval is the
finite-population one (``finite_population=True``):

- classical: a simple random sample, the mean of its human means, CLT interval;
- PPI: the same kind of sample, :func:`metrics.study.ppi_mean` with the LLM ratings of every pair;
- active PPI: pairs drawn independently with :func:`~metrics.study.active_probabilities`
  (∝ the members' disagreement, ``--floor`` of uniform, equal shares of the 15 category × level
  cells as in SHOE's balanced design), :func:`~metrics.study.active_ppi_mean`;
- active PPI (proportional): the same with cell shares proportional to the cells' sizes;
- active PPI (calibrated): a uniform pilot of a fifth of the budget measures the LLM's RMS error
  per cell; the rest is drawn ∝ ``√(RMS_cell² + disagreement²)`` (proportional shares); the
  pilot's ratings count toward the cost and are not reused.

Estimands: the mean human rating over the pool and per category, and the Eq. 13 agreement of the
SHOE score with the mean human rating. Reported: median interval width, coverage (share of
studies whose interval holds the pool's value), and the human ratings each method needs for the
classical method's median width (:func:`items_for_width`: variance ∝ ``1/n − 1/M``) — then
checked by rerunning PPI and active PPI with the pool-level number of items each needs (width
and coverage of the check; a category gets its share of those items). Each estimand's
"ratings" column counts the ratings of its own pairs (a category: its share of the study's).

    nice -n 10 .venv/bin/python -m benchmarks.ppi_savings [--studies 200] [--fast]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from pathlib import Path

import numpy as np
import pandas as pd

from metrics.study import (
    active_ppi_mean,
    active_probabilities,
    eq13_agreement,
    pairwise_agreement_matrix,
    ppi_mean,
    simulate_ratings,
)

POOL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "shoe" / "shoe_candidate_pairs.csv"
STUDY = POOL.with_name("shoe_user_study_items.csv")
RATERS, MEMBERS = 5, 5
SHOE_LLM_AGREEMENT, SHOE_ANNOTATOR_AGREEMENT, SHOE_SPEARMAN = 0.8573, 0.7861, 0.799
# calibrated with --calibrate (median of 8 studies on SHOE's 500-pair design)
TAU, SIGMA, SLOPE = 0.85, 0.88, 1.9
CENTRE = 3.0  # humans' ratings spread around it by SLOPE times the LLM ratings' spread


def llm_rating(category, level) -> np.ndarray:
    """SHOE's HOI score (w = ½) of a pair from its LLM level, 0–4."""
    category, level = np.asarray(category), np.asarray(level, float)
    return np.where(category < 3, 2 + level / 2, level)


def load_pool(path: Path = POOL) -> pd.DataFrame:
    """``category, level, llm`` per pair of SHOE's candidate pool (or a generated one of its cell sizes)."""
    if path.exists():
        table = pd.read_csv(path, usecols=["category", "similarity_level"]).rename(columns={"similarity_level": "level"})
    else:
        sizes = {1: [484, 499, 499, 487, 269], 2: [500, 500, 500, 477, 59], 3: [500, 499, 499, 465, 32]}
        table = pd.DataFrame([(c, lv) for c, counts in sizes.items() for lv, k in enumerate(counts) for _ in range(k)],
                             columns=["category", "level"])
    table["llm"] = llm_rating(table["category"], table["level"])
    return table.reset_index(drop=True)


def load_design() -> pd.DataFrame:
    """SHOE's 500-pair user-study design (12 cells of ~42 pairs: categories 1–3 × levels 1–4)."""
    if STUDY.exists():
        table = pd.read_csv(STUDY, usecols=["category", "similarity_level"]).rename(columns={"similarity_level": "level"})
    else:
        table = pd.DataFrame([(c, lv) for c in (1, 2, 3) for lv in (1, 2, 3, 4) for _ in range(42)],
                             columns=["category", "level"])
    table["llm"] = llm_rating(table["category"], table["level"])
    return table


def simulate(pool: pd.DataFrame, seed: int, *, tau: float = TAU, sigma: float = SIGMA, slope: float = SLOPE,
             heteroscedasticity: float = 0.5) -> dict:
    """One study's truth: latent similarities, every pair's five ratings and mean, the members' SD."""
    rng = np.random.default_rng(seed)
    n = len(pool)
    h = np.exp(rng.normal(0, heteroscedasticity, n))
    h /= np.sqrt(np.mean(h ** 2))
    llm = pool["llm"].to_numpy(float)
    latent = np.clip(CENTRE + slope * (llm - CENTRE) + rng.normal(0, 1, n) * tau * h, 0, 4)
    ratings = simulate_ratings(np.arange(n), latent, k=RATERS, noise=sigma, seed=seed + 1)
    matrix = ratings["rating"].to_numpy(float).reshape(n, RATERS)
    members = llm[:, None] + rng.normal(0, 1, (n, MEMBERS)) * (tau * h)[:, None]
    return {"human": matrix.mean(axis=1), "ratings": matrix, "uncertainty": members.std(axis=1, ddof=1)}


def shoe_statistics(design: pd.DataFrame, seed: int, tau: float = TAU, sigma: float = SIGMA,
                    slope: float = SLOPE) -> tuple[float, float, float]:
    """(LLM–human-mean agreement, mean pairwise annotator agreement, LLM–human Spearman) of one
    simulated SHOE study."""
    from scipy.stats import spearmanr
    study = simulate(design, seed, tau=tau, sigma=sigma, slope=slope)
    llm = design["llm"].to_numpy(float)
    llm_agreement = float(eq13_agreement(llm, study["human"]).mean())
    pairwise = pairwise_agreement_matrix(pd.DataFrame(study["ratings"])).to_numpy()
    return llm_agreement, float(pairwise[~np.eye(RATERS, dtype=bool)].mean()), float(spearmanr(llm, study["human"]).statistic)


def calibrate(design: pd.DataFrame, seeds: int = 6) -> tuple[float, float, float]:
    """τ, σ and the slope on a grid whose simulated study is closest to SHOE's published
    agreements (85.73%, 78.61%) and Spearman ρ (0.799, SHOE supplementary §8)."""
    best = None
    for slope in np.arange(1.0, 2.01, 0.1):
        for sigma in np.arange(0.6, 1.01, 0.04):
            for tau in np.arange(0.3, 1.01, 0.05):
                llm, annot, rho = (statistics.median(x) for x in zip(*(
                    shoe_statistics(design, s, tau, sigma, slope) for s in range(seeds))))
                gap = abs(llm - SHOE_LLM_AGREEMENT) + abs(annot - SHOE_ANNOTATOR_AGREEMENT) + abs(rho - SHOE_SPEARMAN) / 4
                if best is None or gap < best[0]:
                    best = (gap, round(float(tau), 2), round(float(sigma), 2), round(float(slope), 2), llm, annot, rho)
    print(f"calibrated: tau {best[1]}, sigma {best[2]}, slope {best[3]} -> LLM agreement {best[4]:.4f} "
          f"(SHOE {SHOE_LLM_AGREEMENT}), annotators {best[5]:.4f} (SHOE {SHOE_ANNOTATOR_AGREEMENT}), "
          f"Spearman {best[6]:.3f} (SHOE {SHOE_SPEARMAN})")
    return best[1], best[2], best[3]


def estimands(pool: pd.DataFrame, study: dict) -> dict:
    """Per estimand: (values Y per pair, model prediction per pair, the pool's true value)."""
    llm, human, category = pool["llm"].to_numpy(float), study["human"], pool["category"].to_numpy()
    out = {"mean rating (pool)": (human, llm, None)}
    for c in (1, 2, 3):
        out[f"mean rating (category {c})"] = (human, llm, category == c)
    out["agreement SHOE vs humans"] = (eq13_agreement(llm, human), np.ones(len(llm)), None)
    return out


def calibrated_uncertainty(y, f, disagreement, cells, rng, n_pilot: int) -> np.ndarray:
    """``√(RMS_cell(Y − ŷ)² + s_i²)``: the root-mean-square error of the LLM in the pair's cell,
    measured on a uniform pilot of ``n_pilot`` human-rated pairs (whose ratings count toward the
    budget and are not reused by the estimate), plus the members' disagreement."""
    pilot = rng.choice(len(y), n_pilot, replace=False)
    squared = pd.Series((y[pilot] - f[pilot]) ** 2).groupby(cells[pilot]).mean()
    per_cell = pd.Series(cells).map(squared).fillna(float(np.mean((y[pilot] - f[pilot]) ** 2))).to_numpy()
    return np.sqrt(per_cell + disagreement ** 2)


def one_study(pool: pd.DataFrame, cells: np.ndarray, seed: int, n_items: dict, floor: float,
              heteroscedasticity: float) -> dict:
    """Widths and coverage of each method and estimand in one simulated study."""
    study = simulate(pool, seed, heteroscedasticity=heteroscedasticity)
    rng = np.random.default_rng(seed + 7)
    out = {}
    for name, (y, f, subset) in estimands(pool, study).items():
        keep = np.ones(len(y), bool) if subset is None else subset
        y, f, u, c = y[keep], f[keep], study["uncertainty"][keep], cells[keep]
        truth, N = float(y.mean()), len(y)
        for method, n in n_items.items():
            n = int(round(n * N / len(pool)))  # a category gets its share of the study's items
            if method.startswith("active PPI"):
                allocation = "equal" if method == "active PPI" else "proportional"
                budget = n
                if method == "active PPI (calibrated)":
                    u, budget = calibrated_uncertainty(y, f, u, c, rng, n // 5), n - n // 5
                pi = active_probabilities(u, budget=budget, cells=c, floor=floor, allocation=allocation)
                xi = rng.random(N) < pi
                e = active_ppi_mean(np.where(xi, y, np.nan), f, pi, xi, finite_population=True)
                interval = e.interval
            else:
                sample = np.zeros(N, bool)
                sample[rng.choice(N, n, replace=False)] = True
                e = ppi_mean(y[sample], f[sample], f[~sample], finite_population=True)
                interval = e.classical_interval if method == "classical" else e.interval
            out[(name, method)] = (interval.high - interval.low, interval.low <= truth <= interval.high, n, N)
    return out


def run(pool, studies: int, n_items: dict, floor: float, heteroscedasticity: float) -> dict:
    cells = (pool["category"] * 10 + pool["level"]).to_numpy()
    results: dict = {}
    for seed in range(studies):
        for key, value in one_study(pool, cells, 1000 + seed, n_items, floor, heteroscedasticity).items():
            results.setdefault(key, []).append(value)
    return {key: (statistics.median(r[0] for r in v), float(np.mean([r[1] for r in v])), v[0][2], v[0][3])
            for key, v in results.items()}


def items_for_width(width: float, n: int, target: float, population: int) -> float:
    """Human-rated items for an interval of width ``target`` when ``n`` of ``population`` gave
    ``width``: the variance goes as ``1/n − 1/M`` (finite-population correction), so
    ``1/n' − 1/M = (target/width)²·(1/n − 1/M)``.

    >>> round(items_for_width(0.1, 100, 0.05, 10**9))   # half the width: four times the items
    400
    """
    return 1 / ((target / width) ** 2 * (1 / n - 1 / population) + 1 / population)


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=200, help="simulated studies (default 200)")
    parser.add_argument("--items", type=int, default=500, help="human-rated pairs per study (SHOE: 500)")
    parser.add_argument("--floor", type=float, default=0.3, help="active sampling's share of uniform sampling")
    parser.add_argument("--heteroscedasticity", type=float, default=0.5,
                        help="log-SD of the LLM's per-pair error scale (0: equally good everywhere)")
    parser.add_argument("--calibrate", action="store_true", help="refit tau and sigma to SHOE's agreements first")
    parser.add_argument("--fast", action="store_true", help="a quick run for CI: 40 studies, no check rerun")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.calibrate:
        global TAU, SIGMA, SLOPE
        TAU, SIGMA, SLOPE = calibrate(load_design())
    studies = 40 if args.fast else args.studies
    pool = load_pool()
    design = load_design()
    llm_agr, annot_agr, rho = (statistics.median(x) for x in zip(*(shoe_statistics(design, s, TAU, SIGMA, SLOPE)
                                                                    for s in range(8))))
    methods = ("classical", "PPI", "active PPI", "active PPI (proportional)", "active PPI (calibrated)")
    first = run(pool, studies, dict.fromkeys(methods, args.items), args.floor, args.heteroscedasticity)
    names = list(dict.fromkeys(name for name, _ in first))
    needed = {(name, m): RATERS * items_for_width(first[(name, m)][0], first[(name, m)][2],
                                                  first[(name, "classical")][0], first[(name, m)][3])
              for name in names for m in methods}
    check = {}
    if not args.fast:  # rerun PPI and active PPI with the pool-level number of items they need
        for m in methods[1:]:
            n = needed[(names[0], m)] / RATERS
            check.update({k: v for k, v in run(pool, studies, {m: n}, args.floor, args.heteroscedasticity).items()
                          if k[1] == m})
    print(f"PPI savings: {studies} simulated studies, pool of {len(pool)} SHOE candidate pairs, {args.items} pairs "
          f"rated by {RATERS} raters (classical: {RATERS * args.items} ratings); tau {TAU}, sigma {SIGMA}, slope {SLOPE} "
          f"-> LLM-human agreement {llm_agr:.4f} (SHOE 0.8573), annotators {annot_agr:.4f} (SHOE 0.7861), "
          f"Spearman {rho:.3f} (SHOE 0.799); "
          f"floor {args.floor}, heteroscedasticity {args.heteroscedasticity}; load average {os.getloadavg()[0]:.2f}")
    print(f"{'estimand':<28} {'method':<26} {'width':>7} {'coverage':>8} {'ratings for equal width':>24} "
          f"{'saved':>6} | {'check: width':>12} {'coverage':>8}")
    table = {}
    for name in names:
        for m in methods:
            width, coverage, n_rated, _ = first[(name, m)]
            saved = 1 - needed[(name, m)] / (RATERS * n_rated)
            row = {"width": width, "coverage": coverage, "ratings": needed[(name, m)], "saved": saved}
            line = (f"{name:<28} {m:<26} {width:7.4f} {100 * coverage:7.1f}% {needed[(name, m)]:24.0f} "
                    f"{100 * saved:5.1f}%")
            if (name, m) in check:
                row["check"] = check[(name, m)][:2]
                line += f" | {check[(name, m)][0]:12.4f} {100 * check[(name, m)][1]:7.1f}%"
            table[(name, m)] = row
            print(line)
    print(f"({time.perf_counter() - started:.0f} s)")
    return table


if __name__ == "__main__":
    main()
