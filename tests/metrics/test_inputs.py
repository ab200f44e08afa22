"""The readers of the metric package refuse a missing file, a missing column and a bad row in
the same words (metrics.core._inputs: check_readable, require_columns, refuse_first_row)."""

from __future__ import annotations

import pytest

from metrics import InputError


def readers():
    from metrics.crosshoi._mcq import read_bench
    from metrics.imsitu._cluster_files import read_clusters
    from metrics.imsitu._readers import read_gold, read_predictions
    from metrics.study._agreement import read_ratings
    from metrics.study._shoe_pool import read_shoe_csv
    from metrics.study._study_items import read_items
    from metrics.vocab._similarity import SimilarityMatrix
    return [read_ratings, read_items, SimilarityMatrix.load, read_bench, read_gold, read_predictions, read_clusters,
            read_shoe_csv]


@pytest.mark.parametrize("suffix", [".csv", ".npz", ".json"])
def test_a_missing_file_is_refused_in_one_wording(tmp_path, suffix):
    path = tmp_path / f"nope{suffix}"
    for read in readers():
        with pytest.raises(InputError) as info:
            read(path)
        assert str(info.value) == f"{path}: no such file", read


def test_a_folder_is_refused_in_one_wording(tmp_path):
    from metrics.core._inputs import check_readable
    from metrics.vocab._similarity import SimilarityMatrix
    for call in (lambda: check_readable(tmp_path), lambda: SimilarityMatrix.load(tmp_path)):
        with pytest.raises(InputError, match="is a folder; give a file"):
            call()
    assert check_readable(tmp_path, folder_ok=True) == tmp_path


def test_missing_columns_and_bad_rows_name_the_table_and_the_line(tmp_path):
    import pandas as pd

    from metrics.study._agreement import read_ratings
    from metrics.study._study_items import read_items, validate_items
    from metrics.study._tuning import tune_w_by_category
    ratings = tmp_path / "ratings.csv"
    ratings.write_text("item_id,annotator\ni1,a\n")
    with pytest.raises(InputError, match=r"ratings\.csv: missing column 'rating'"):
        read_ratings(ratings)
    with pytest.raises(InputError, match=r"^rated items: missing column 'verb_sim', 'object_sim', 'human_mean'$"):
        tune_w_by_category(pd.DataFrame({"item_id": ["a"]}))
    items = tmp_path / "items.csv"
    items.write_text("item_id,category\ni1,1\n\ni2,7\n")
    with pytest.raises(InputError, match=r"items\.csv: line 4: category '7' is not 1, 2 or 3"):
        read_items(items)
    with pytest.raises(InputError, match=r"^items: line 3: duplicate item_id 'a'$"):
        validate_items(pd.DataFrame({"item_id": ["a", "a"]}))
