"""Re-type the HICO-DET class facts into the project's own vocabulary file.

Reads ``../shared/data/hico/hoi_classes.csv`` (when present) and writes
``metrics/datasets/hico_det/data/hico_hoi_classes.csv``: one row per HOI class with its verb and object
labels, the rare flag (fewer than 10 training instances) and the four zero-shot splits
(1 = unseen in that split). Verb and object labels, in HICO-DET's index order, are in
``metrics/datasets/hico_det/data/hico_verbs.csv`` and ``hico_objects.csv`` together with their synsets.
"""

from pathlib import Path

import pandas as pd

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT.parent / "shared" / "data" / "hico" / "hoi_classes.csv"
TARGET = ROOT / "metrics" / "datasets" / "hico_det" / "data" / "hico_hoi_classes.csv"

if __name__ == "__main__":
    src = pd.read_csv(SOURCE)
    out = pd.DataFrame({
        "hoi_id": src["hoi_id"], "verb": src["verb"], "object": src["object"],
        "rare": src["rare"], "unseen_rf_uc": src["rf_uc_unseen"],
        "unseen_nf_uc": src["nf_uc_unseen"], "unseen_uv": src["uv_unseen"],
        "unseen_uo": src["uo_unseen"],
    })
    out.to_csv(TARGET, index=False)
    print(f"wrote {TARGET.relative_to(ROOT)}: {len(out)} classes")
