"""SWIG-HOI (large-vocabulary HOI detection, ``scwangdyd/large_vocabulary_hoi_detection``)."""
