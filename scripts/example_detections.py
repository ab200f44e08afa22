"""Write example detection files to try `python -m metrics score` on: a synthetic HICO-DET
ground truth and two models' predictions in the JSON Lines format (docs/metrics.md).

    .venv/bin/python scripts/example_detections.py --out examples
    .venv/bin/python -m metrics score --gt examples/gt.jsonl --pred examples/model_a.jsonl

The HOIs are drawn at random over HICO-DET's 600 classes (the generator of
benchmarks/score_hico_scale.py): the numbers show the command at work, not a real model. Both
models predict the same ground truth, each with its own random draws: 70% of their boxes near a
true HOI, 40% of them with its class, so each scores a SHOE mAP between 10% and 60% and misses
well under half of the ground truth.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks.score_hico_scale import workload
from metrics.detection import write_jsonl


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, type=Path, help="folder for gt.jsonl, model_a.jsonl, model_b.jsonl")
    parser.add_argument("--images", type=int, default=50)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    gt, model_a = workload(args.images, 4 * args.images, 20, seed=1, model_seed=1)
    _, model_b = workload(args.images, 4 * args.images, 20, seed=1, model_seed=2)   # the same ground truth
    write_jsonl(gt, args.out / "gt.jsonl", with_scores=False)
    write_jsonl(model_a, args.out / "model_a.jsonl")
    write_jsonl(model_b, args.out / "model_b.jsonl")
    for name in ("gt.jsonl", "model_a.jsonl", "model_b.jsonl"):
        print(args.out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
