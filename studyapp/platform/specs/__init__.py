"""The study spec: its model (``spec_model``) and the checker that reads a spec table (``spec_checker``)."""
