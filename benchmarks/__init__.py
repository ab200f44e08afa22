"""Reproducible performance measurements, each run from the project folder as a module:
``.venv/bin/python -m benchmarks.NAME [options]`` (see each module's docstring)."""
