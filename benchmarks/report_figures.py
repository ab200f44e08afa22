"""CPU time of the study report's figures: one ``write_report`` of a 500-item x 11-rater study.

Builds in memory (not timed) what ``studyapp report`` passes to
:func:`metrics.study.write_report` for a study of 500 items, each rated by 5 of 11 simulated
raters (2,500 ratings): agreement (1,000 resamples), agreement over time, the rater model,
reliability, alignment of two metrics and w tuning, so the report draws its eight figures. Then
times, in this process after one warm-up report, --runs reports (CPU time, ``time.process_time``:
less disturbed by other work on the machine than wall time) and each figure's ``png_bytes``
(median of --runs).
Prints every run and the load average (``os.getloadavg()``).

    .venv/bin/python -m benchmarks.report_figures [--runs 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time

import numpy as np
import pandas as pd

from metrics.study import _report_figures as figures
from metrics.study import (
    agreement_report,
    alignment_table,
    fit_rater_model,
    rating_matrix,
    reliability,
    simulate_ratings,
    tune_w_by_category,
    write_report,
)

ITEMS, RATERS, PER_ITEM = 500, 11, 5


def study_sections() -> dict:
    """``write_report``'s sections for the simulated study (what ``studyapp report`` computes)."""
    from studyapp.platform.reporting.analysis import agreement_over_time

    rng = np.random.default_rng(0)
    items = [f"i{k:03d}" for k in range(ITEMS)]
    verb, obj = rng.uniform(0, 1, ITEMS), rng.uniform(0, 1, ITEMS)
    latent = 4 * (0.6 * verb + 0.4 * obj)
    ratings = simulate_ratings(items, latent, k=RATERS, raters_per_item=PER_ITEM, seed=1)
    ratings["created_at"] = pd.Timestamp("2026-01-01") + pd.to_timedelta(np.arange(len(ratings)), unit="s")
    ratings = ratings.sample(frac=1, random_state=0)
    main = ratings[["item_id", "annotator", "rating"]]
    human = main.groupby("item_id")["rating"].mean().loc[items].to_numpy()
    rated = pd.DataFrame({"item_id": items, "verb_sim": verb, "object_sim": obj, "human_mean": human,
                          "category": rng.integers(1, 4, ITEMS), "metric_a": latent + rng.normal(0, 0.5, ITEMS),
                          "metric_b": latent + rng.normal(0, 1.0, ITEMS)})
    return {"agreement": agreement_report(main, n_resamples=1000),
            "over_time": agreement_over_time(ratings[["item_id", "annotator", "rating", "created_at"]], 200),
            "rater_model": fit_rater_model(main), "reliability": reliability(rating_matrix(main), n_resamples=200),
            "tuning": tune_w_by_category(rated),
            "alignment": alignment_table(rated, metrics=["metric_a", "metric_b"], baselines=False, n_resamples=500),
            "title": "Report figures benchmark"}


def report_cpu(sections: dict) -> float:
    with tempfile.TemporaryDirectory() as folder:
        start = time.process_time()
        write_report(folder, **sections)
        return time.process_time() - start


def figure_cpu(sections: dict, runs: int) -> dict[str, float]:
    """Median CPU seconds of each figure over ``runs``: built, laid out, drawn and encoded
    (``png_bytes``)."""
    agreement, model = sections["agreement"], sections["rater_model"]
    makers = {"spearman heat map": lambda: figures.heatmap_figure(agreement.spearman, "Pairwise Spearman ρ"),
              "qwk heat map": lambda: figures.heatmap_figure(agreement.qwk, "Pairwise quadratic weighted κ"),
              "distributions": lambda: figures.distributions_figure(agreement.distributions),
              "votes by majority": lambda: figures.votes_figure(agreement.votes_by_majority),
              "over time": lambda: figures.over_time_figure(sections["over_time"]),
              "model scores": lambda: figures.model_scores_figure(model.items, model.scale),
              "raters": lambda: figures.raters_figure(model.raters),
              "MAE vs w": lambda: figures.mae_curves_figure(sections["tuning"])}
    times: dict[str, list[float]] = {name: [] for name in makers}
    for _ in range(runs):
        for name, make in makers.items():
            start = time.process_time()
            figures.png_bytes(make())
            times[name].append(time.process_time() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    sections = study_sections()
    print(f"study: {ITEMS} items x {RATERS} simulated raters, {PER_ITEM} per item; {os.cpu_count()} cores", flush=True)
    print(f"warm-up report: {report_cpu(sections):.2f} s CPU (load {os.getloadavg()[0]:.2f})", flush=True)
    runs, loads = [], []
    for _ in range(args.runs):
        runs.append(report_cpu(sections))
        loads.append(f"{os.getloadavg()[0]:.2f}")
    print(f"write_report: median {statistics.median(runs):.2f} s CPU, runs {[round(t, 2) for t in runs]} "
          f"(load {', '.join(loads)})")
    per_figure = figure_cpu(sections, args.runs)
    for name, seconds in per_figure.items():
        print(f"  {name:20} {seconds:.3f} s CPU")
    print(f"  {'sum of the medians':20} {sum(per_figure.values()):.3f} s CPU (load {os.getloadavg()[0]:.2f})")


if __name__ == "__main__":
    main()
