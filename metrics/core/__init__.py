"""Foundations shared by every room: the error type, option checks, input readers, atomic
writers, intervals, array segments, the plugin loader. The names below are its public face (the
readers, writers and option types the platform builds on); the ``_`` modules behind them are
implementation."""

from metrics._lazy import lazy_exports

__all__, __getattr__, __dir__ = lazy_exports(__name__, {
    **dict.fromkeys(("SCALE", "SCALE_MAX"), "_choices"),   # the rating scale
    **dict.fromkeys(("InputError", "interruptible", "one_line", "os_error_message"), "_errors"),
    **dict.fromkeys(("error_message", "exit_quietly_on_closed_output"), "_boundary"),
    **dict.fromkeys(("ParameterError", "MAX_SEED", "above_problem", "at_least_problem", "boolean_problem",
                     "kind_problem", "range_problem", "text_problem", "whole_problem"), "_validation"),
    **dict.fromkeys(("Boolean", "Count", "Each", "Either", "Interval", "Options", "OrNone", "Text", "Whole",
                     "validate_params", "FRACTION", "OPEN_FRACTION", "POSITIVE", "POSITIVE_FRACTION", "RANDOM_SEED",
                     "RESAMPLES"), "_constraints"),   # constraints as data: a function's options, a spec's keys
    **dict.fromkeys(("check_name", "check_readable", "csv_rows", "line_of", "numbers", "parse_json", "read_csv",
                     "read_json", "read_text", "require_columns"), "_inputs"),
    **dict.fromkeys(("StagedFolder", "all_or_nothing", "atomic_file", "json_text", "remove_abandoned_subfolders",
                     "write_text_atomic"), "_jsonio"),
    **dict.fromkeys(("OneLineParser", "given_once", "input_file", "integer", "number", "output_dir", "output_file",
                     "seed"), "_options"),
    **dict.fromkeys(("PLUGIN_GROUPS", "PluginGroup", "PluginRecord", "describe", "listing_exit_code",
                     "plugin_listing"), "_plugins"),
})
