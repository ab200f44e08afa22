"""Coverage of the study estimand's intervals when raters are a sample: simulated studies with
crossed rater effects, against the mean over the study's items of the rating a rater drawn from
the rater population would give (:func:`metrics.study.ppi_mean_rater_population`).

A study: ``--items`` items with latent locations ``m_i ~ N(2, 0.9²)``; rater r rates item i
``clip(round(m_i + b_r + e_ir), 0, 4)`` with severity ``b_r ~ N(0, sd_b²)`` (the same for all of
the rater's items) and residual ``e_ir ~ N(0, 0.8²)``. The estimand ``θ = mean_i E[Y_ir]`` is
exact (normal probabilities of each rounded score). The LLM's rating is biased and nonlinear:
``f_i = 0.4 + 4/(1 + exp(−1.2·(m_i − 2))) + N(0, 0.4²)``. A share of the items (a simple random
sample; in the active cells drawn with probabilities ∝ a noisy |LLM error| proxy, floor 0.2)
gets ``k`` ratings each from ``k`` distinct raters chosen at random among the study's ``R``.

Cells cross rater severity sd (0.2, 0.6), raters (3, 12), share of items rated (20%, 60%,
100%) and ratings per item (1, 3, 5; at most R), plus active cells. Per cell: coverage of the
nominal 95% PPI and human-only intervals with its Monte Carlo standard error
``√(c(1 − c)/studies)``, the fixed-rating PPI interval's coverage (:func:`metrics.study.ppi_mean`,
which ignores rater sampling) for contrast, median widths, and the share of human ratings PPI
saves at equal width, measured (not from a formula): the human-only design with more rated items
(same raters, same ratings per item) whose median width matches the PPI's median width, found by
rerunning the human-only estimate on a grid of shares; ``saved = 1 − ratings_PPI / ratings_human``
(0 when every item is rated, as PPI then equals the human-only estimate).

    nice -n 10 .venv/bin/python -m benchmarks.ppi_coverage [--studies 1000] [--items 200] [--quick] [--jobs 2]

``--crossed-bootstrap STUDIES`` measures instead, in the issue's design cell (the first of
``UNBALANCED``: four heavy raters, one dropout, six light ones, ``[active]`` draws 0.05–0.9),
the coverage of the crossed (pigeonhole) bootstrap's percentile interval
(:mod:`benchmarks.crossed_bootstrap`, ``--resamples`` per study) beside the formula's interval.
"""

from __future__ import annotations

import argparse
import itertools
import math
import multiprocessing
import time

import numpy as np
import pandas as pd
from scipy import stats

from benchmarks.rater_designs import unbalanced
from metrics.study import active_probabilities, ppi_mean, ppi_mean_rater_population

RESIDUAL_SD = 0.8
LLM_NOISE = 0.4


def true_mean(location, sd_b) -> float:
    """The rater-population mean rating of each item, averaged: E[clip(round(m + b + e), 0, 4)]."""
    scale = math.hypot(sd_b, RESIDUAL_SD)
    cuts = stats.norm.cdf((np.arange(0.5, 4.0, 1.0)[None, :] - location[:, None]) / scale)
    expected = 4.0 - cuts.sum(axis=1)            # Σ_j P(Y ≥ j) for j = 1..4
    return float(expected.mean())


def simulate(rng, *, items, raters, sd_b, share, k, active=False):
    """One study: (ratings frame, LLM series, probability, selected, θ). ``raters`` a number: the
    balanced design (``k`` of them on each rated item); ``(heavy, dropouts, light)``: the unbalanced
    one of :mod:`benchmarks.rater_designs`."""
    location = rng.normal(2.0, 0.9, items)
    llm = 0.4 + 4 / (1 + np.exp(-1.2 * (location - 2))) + rng.normal(0, LLM_NOISE, items)
    if isinstance(raters, tuple):
        heavy, dropouts, light = raters
        ratings, prob, selected = unbalanced(rng, items=items, location=location, llm=llm, sd_b=sd_b, share=share,
                                             heavy=heavy, dropouts=dropouts, light=light, active=active,
                                             residual_sd=RESIDUAL_SD)
        return ratings, pd.Series(llm), prob, selected, true_mean(location, sd_b)
    if active:
        proxy = np.abs(llm - location - 0.4) + rng.uniform(0, 0.3, items)
        probability = active_probabilities(proxy, budget=share * items, floor=0.2)
        chosen = rng.random(items) < probability
    else:
        probability = None
        chosen = np.zeros(items, bool)
        chosen[rng.choice(items, size=max(2, round(share * items)), replace=False)] = True
    severity = rng.normal(0, sd_b, raters)
    rated = np.flatnonzero(chosen)
    k = min(k, raters)
    who = np.argsort(rng.random((len(rated), raters)), axis=1)[:, :k]
    item = np.repeat(rated, k)
    rater = who.reshape(-1)
    score = np.clip(np.round(location[item] + severity[rater] + rng.normal(0, RESIDUAL_SD, len(item))), 0, 4)
    ratings = pd.DataFrame({"item": item, "rater": rater, "rating": score})
    selected = pd.Series(chosen) if active else None
    prob = pd.Series(probability) if active else None
    return ratings, pd.Series(llm), prob, selected, true_mean(location, sd_b)


def run_cell(rng, studies, *, items, raters, sd_b, share, k, active=False) -> dict:
    hits = {"PPI": 0, "human-only": 0, "fixed-rating PPI": 0}
    widths, classical_widths, ratings_used, saved = [], [], [], []
    for _ in range(studies):
        ratings, llm, prob, selected, theta = simulate(rng, items=items, raters=raters, sd_b=sd_b, share=share,
                                                       k=k, active=active)
        e = ppi_mean_rater_population(ratings, llm, probability=prob, selected=selected)
        hits["PPI"] += e.interval.low <= theta <= e.interval.high
        hits["human-only"] += e.classical_interval.low <= theta <= e.classical_interval.high
        widths.append(e.interval.high - e.interval.low)
        classical_widths.append(e.classical_interval.high - e.classical_interval.low)
        ratings_used.append(len(ratings))
        saved.append(e.saved)
        if not active:      # the fixed-rating estimand's interval on the same study, for contrast
            counts = np.bincount(ratings["item"], minlength=items)
            rated = counts > 0
            means = np.bincount(ratings["item"], ratings["rating"], minlength=items)[rated] / counts[rated]
            f = llm.to_numpy()
            fixed = ppi_mean(means, f[rated], f[~rated], finite_population=True) if (~rated).any() else None
            interval = fixed.interval if fixed else (means.mean(),) * 2   # all rated: zero width
            hits["fixed-rating PPI"] += interval[0] <= theta <= interval[1]
    unequal = isinstance(raters, tuple)
    row = {"sd_b": sd_b, "raters": "{}+{}d+{}l".format(*raters) if unequal else raters, "rated": share,
           "k": "-" if unequal else min(k, raters), "active": active, "studies": studies}
    for name, hit in hits.items():
        if active and name == "fixed-rating PPI":
            row[name] = float("nan")
            continue
        c = hit / studies
        row[name] = c
        row[f"{name} MC se"] = math.sqrt(max(c * (1 - c), 1e-12) / studies)
    row["PPI width"], row["human-only width"] = float(np.median(widths)), float(np.median(classical_widths))
    row["ratings"] = float(np.mean(ratings_used))
    row["saved (page)"] = float(np.median(saved))    # 1 − n/(n·(human-only width / PPI width)²)
    return row


def saved_at_equal_width(rng, row, *, items, studies) -> float:
    """1 − PPI's ratings / the ratings the human-only design needs for PPI's median width."""
    if row["rated"] >= 1.0 or row["active"] or row["k"] == "-":
        return 0.0 if row["rated"] >= 1.0 else float("nan")
    target = row["PPI width"]
    shares = np.linspace(row["rated"], 1.0, 9)
    prev_share, prev_width = row["rated"], row["human-only width"]
    if prev_width <= target:
        return 0.0
    for share in shares[1:]:
        width = float(np.median([_classical_width(rng, items, row, share) for _ in range(studies)]))
        if width <= target:       # interpolate the share linearly between the two grid points
            needed = prev_share + (share - prev_share) * (prev_width - target) / (prev_width - width)
            return 1 - row["rated"] / needed
        prev_share, prev_width = share, width
    return 1 - row["rated"] / 1.0


def _classical_width(rng, items, row, share) -> float:
    ratings, llm, *_ = simulate(rng, items=items, raters=row["raters"], sd_b=row["sd_b"], share=share, k=row["k"])
    e = ppi_mean_rater_population(ratings, llm)
    return e.classical_interval.high - e.classical_interval.low


def grid(quick: bool):
    if quick:
        return [(0.6, 3, 1.0, 1, False), (0.4, 6, 0.5, 2, False), (0.2, 12, 0.2, 5, False), (0.6, 3, 0.6, 3, True),
                UNBALANCED[0]]
    cells = [(sd_b, raters, share, k, False) for sd_b, raters, share, k in
             itertools.product((0.2, 0.6), (3, 12), (0.2, 0.6, 1.0), (1, 3, 5)) if k <= raters]
    cells += [(sd_b, raters, share, 3, True) for sd_b, raters, share in itertools.product((0.2, 0.6), (3, 12), (0.3,))]
    return cells + UNBALANCED


# unequal rater shares: (sd_b, (heavy, dropouts, light), share of items drawn, -, active)
UNBALANCED = [(0.6, (4, 1, 6), 0.25, 0, True), (0.6, (3, 0, 3), 0.2, 0, False), (0.2, (3, 0, 10), 0.6, 0, False),
              (0.6, (5, 2, 8), 0.5, 0, True), (0.6, (3, 2, 5), 1.0, 0, False), (0.2, (3, 1, 6), 0.8, 0, True),
              (0.2, (4, 0, 3), 1.0, 0, False), (0.6, (3, 1, 10), 0.2, 0, True)]


def coverage_table(*, studies: int, items: int, seed: int = 0, quick: bool = False, savings_studies: int = 0,
                   jobs: int = 1):
    """One row per cell of :func:`grid`; each cell draws from its own stream (``seed``, cell
    number), so the table is the same whatever ``jobs`` (processes) computes it."""
    cells = [(seed, number, cell, studies, items, savings_studies) for number, cell in enumerate(grid(quick))]
    if jobs > 1:
        with multiprocessing.get_context("spawn").Pool(jobs) as pool:
            rows = pool.map(_cell_row, cells, chunksize=1)
    else:
        rows = [_cell_row(cell) for cell in cells]
    return pd.DataFrame(rows)


def _cell_row(job) -> dict:
    seed, number, (sd_b, raters, share, k, active), studies, items, savings_studies = job
    rng = np.random.default_rng([seed, number])
    row = run_cell(rng, studies, items=items, raters=raters, sd_b=sd_b, share=share, k=k, active=active)
    if savings_studies:
        row["saved"] = saved_at_equal_width(rng, row, items=items, studies=savings_studies)
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--studies", type=int, default=1000, help="simulated studies per cell")
    parser.add_argument("--items", type=int, default=200, help="items per study")
    parser.add_argument("--savings-studies", type=int, default=100,
                        help="studies per grid point when measuring ratings saved at equal width")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="five cells only")
    parser.add_argument("--jobs", type=int, default=1, help="cells computed at once, one process each")
    parser.add_argument("--crossed-bootstrap", type=int, default=0, metavar="STUDIES",
                        help="instead: the crossed bootstrap's coverage in the issue's design cell, in STUDIES studies")
    parser.add_argument("--resamples", type=int, default=200, help="pigeonhole resamples per study")
    args = parser.parse_args(argv)
    started = time.perf_counter()
    if args.crossed_bootstrap:
        print_bootstrap_coverage(studies=args.crossed_bootstrap, resamples=args.resamples, items=args.items,
                                 seed=args.seed)
        print(f"{time.perf_counter() - started:.0f} s")
        return
    table = coverage_table(studies=args.studies, items=args.items, seed=args.seed, quick=args.quick,
                           savings_studies=args.savings_studies, jobs=args.jobs)
    pd.set_option("display.width", 200)
    shown = table.assign(**{c: (100 * table[c]).round(1) for c in ("PPI", "human-only", "fixed-rating PPI")},
                         **{f"{c} MC se": (100 * table[f"{c} MC se"]).round(1) for c in ("PPI", "human-only")},
                         saved=(100 * table.get("saved", pd.Series(np.nan, table.index))).round(0),
                         **{"saved (page)": (100 * table["saved (page)"]).round(0)})
    print(shown.drop(columns=["fixed-rating PPI MC se"]).round(3).to_string(index=False))
    inside = table["PPI"].between(0.93, 0.97) & table["human-only"].between(0.93, 0.97)
    print(f"\n{len(table)} cells x {args.studies} studies, {args.items} items each; nominal 95%; "
          f"coverage in [93%, 97%] for PPI and human-only in {int(inside.sum())} of {len(table)} cells; "
          f"{time.perf_counter() - started:.0f} s")


def print_bootstrap_coverage(*, studies: int, resamples: int, items: int, seed: int) -> None:
    """The crossed bootstrap's coverage in the issue's design cell (module docstring)."""
    from benchmarks.crossed_bootstrap import bootstrap_coverage
    sd_b, raters, share, k, active = UNBALANCED[0]
    result = bootstrap_coverage(
        np.random.default_rng([seed, 1000]), studies, resamples=resamples,
        simulate=lambda rng: simulate(rng, items=items, raters=raters, sd_b=sd_b, share=share, k=k, active=active))
    print(f"sd_b {sd_b}, raters {raters[0]}+{raters[1]}d+{raters[2]}l, {share:.0%} drawn, active; {studies} studies, "
          f"{resamples} pigeonhole resamples each, nominal 95%")
    for interval, row in result.items():
        (ppi, human), (ppi_width, human_width) = row["coverage"], row["median width"]
        se = [math.sqrt(c * (1 - c) / studies) for c in (ppi, human)]
        print(f"{interval:18s} PPI {100 * ppi:.1f} ± {100 * se[0]:.1f}  human-only {100 * human:.1f} ± "
              f"{100 * se[1]:.1f}  median widths {ppi_width:.3f} {human_width:.3f}")


if __name__ == "__main__":
    main()
