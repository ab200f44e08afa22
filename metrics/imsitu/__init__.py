"""imSitu sense-aware verb accuracy and the two-step verb-sense clustering."""
