"""Plain transcriptions of the package's fast paths, each checked against its fast form:

| fast path | reference here | checked by |
| --- | --- | --- |
| ``metrics.detection._scoring`` (SHOE mAP, SHOE mF1, miss rates, standard mAP, vectorized) | ``shoe_algorithms.py`` (Algorithms 1 and 2, one image at a time) | ``tests/metrics/test_scoring.py`` |
| ``metrics.detection._class_ap`` (official HICO-DET mAP, vectorized) | ``hico_official.py`` (``VOCevaldet_bboxpair.m``, ``eval_one.m``) | ``tests/metrics/test_hico_official.py`` |
| ``metrics.core._segments`` (radix and linear-time orders, segment sums and maxima) | ``segments.py`` | ``tests/metrics/test_segments.py`` |
| ``metrics.diagnosis._subtasks.unique_pairs`` (64-bit row keys) | ``pairs.py`` | ``tests/metrics/test_diagnosis.py`` |
| ``metrics.datasets.vcoco._evaluation`` (V-COCO agent and role AP, vectorized) | ``vsrl_eval.py`` (``s-gupta/v-coco`` ``vsrl_eval.py``) | ``tests/metrics/test_vcoco.py`` |
| ``metrics.datasets.swig_hoi._evaluation`` (SWIG-HOI per-interaction AP, vectorized) | ``swig_eval.py`` (``choir/evaluation/swig_evaluation.py``: ``calc_ap``) | ``tests/metrics/test_swig.py`` |

Fast paths whose reference is a library call are checked against it directly:
``metrics.study._agreement.alpha_from_counts`` / ``bootstrap_intervals`` (the ``krippendorff`` package),
``metrics.study._reliability.resampled_ranks`` (``scipy.stats.rankdata``), ``metrics.study._tuning.optimal_w``
(the MAE on a grid), ``metrics.vocab._similarity`` lookups (a dense matrix).
"""
