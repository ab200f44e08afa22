"""The generic platform: specs, studies, assignment, exports, analysis, dashboard and the
commands; it reaches a study type only through the registry's hooks."""
