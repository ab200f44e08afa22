"""Datasets as plugins: each a package with its vocabulary, splits, ground-truth readers and official evaluator."""
