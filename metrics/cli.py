"""``python -m metrics``: the command line of the metric package.

Every command module in ``metrics.commands`` defines ``add_arguments(parser)`` and
``run(args) -> (result, text)``: ``result`` is the JSON-able dict written by ``--json PATH``,
``text`` the readable table printed to stdout. A command computes its result with the public
functions of :mod:`metrics`, whose parameters are its options: ``delta`` is ``--delta``, and a
command whose option is named otherwise lists it in ``FLAGS`` (``{"fn_mode": "--mf1-fn"}``).
Options are checked as they are parsed (:mod:`metrics.core._options`, with the checks of
:mod:`metrics.core._validation`); a value the function refuses later (a
:class:`~metrics.core._validation.ParameterError`) is reported with its option, as argparse does.
The command's outputs land together or not at all (:func:`metrics.core._jsonio.all_or_nothing`), and
bad input -- :class:`InputError`, or a file the system refuses (``OSError``) -- ends as a
one-line message on stderr with exit status 2. Any other exception is a bug and keeps its
traceback.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from metrics.core._boundary import error_message
from metrics.core._errors import InputError, interruptible, one_line
from metrics.core._jsonio import all_or_nothing, write_json
from metrics.core._options import OneLineParser, output_file

# name -> (one-line help, implementing module)
COMMANDS: dict[str, tuple[str, str]] = {
    "score": ("standard mAP, SHOE mAP, SHOE mF1 and miss rates of HOI detections",
              "metrics.commands._score"),
    "agreement": ("inter-annotator agreement of a rating study", "metrics.commands._agreement"),
    "alignment": ("agreement of metric columns with the mean human rating", "metrics.commands._alignment"),
    "tune-w": ("per-category verb weight w of the HOI similarity", "metrics.commands._tune_w"),
    "recalibrate": ("recalibrate similarity matrices from collected ratings", "metrics.commands._recalibrate"),
    "mcq": ("CrossHOI-Bench multiple-choice scores", "metrics.commands._mcq"),
    "swig": ("SWIG-HOI's official mAP (full, rare, non-rare, novel) as its released evaluator computes it",
             "metrics.commands._swig"),
    "image-update": ("how ratings changed in a with-image pass (SHOE supp. 6.2)",
                     "metrics.commands._image_update"),
    "imsitu": ("imSitu sense-aware verb accuracy", "metrics.commands._imsitu"),
    "imsitu-cluster": ("two-step verb-sense clustering of <image, verb> embeddings",
                       "metrics.commands._imsitu_cluster"),
    "imsitu-align": ("imSitu criteria vs human correctness marks (accuracy gaps, tau, alpha)",
                     "metrics.commands._imsitu_align"),
    "diagnose": ("Diag-HOI error diagnosis and oracle mAP gains", "metrics.commands._diagnose"),
    "match": ("resolve free-text verbs / objects to WordNet synsets", "metrics.commands._match"),
    "matrix": ("similarity matrices: info, baseline, build-llm, import-shoe-pool, compare",
               "metrics.commands._matrix"),
    "rater-model": ("item scores corrected for rater severity and consistency (ordinal model)",
                    "metrics.commands._rater_model"),
    "reliability": ("alpha at every level, Gwet's AC2, ICC and the human ceiling, with intervals",
                    "metrics.commands._reliability"),
    "vocab": ("the WordNet synset and gloss of every verb and object label of a dataset", "metrics.commands._vocab"),
    "vcoco": ("V-COCO's official agent and role AP (vsrl_eval.py), fast", "metrics.commands._vcoco"),
    "plugins": ("the installed datasets, error types and study types, and the plugins that failed to load",
                "metrics.commands._plugins"),
}


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The parser; only ``command``'s module is imported to add its arguments (all of them when
    ``command`` is ``"*"``), so ``--help`` and each command start without the others' imports."""
    parser = OneLineParser(
        prog="python -m metrics",
        description="Semantic evaluation of human-object interaction detectors (SHOE and friends).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (help_text, module) in COMMANDS.items():
        cmd = sub.add_parser(name, help=help_text, description=help_text)
        if command in (name, "*"):
            importlib.import_module(module).add_arguments(cmd)
            cmd.add_argument("--json", metavar="PATH", type=output_file,
                             help="also write the result as JSON to PATH")
    return parser


def _command_of(argv: list[str]) -> str | None:
    """The command named on the command line (its first word that is not an option)."""
    return next((a for a in argv if not a.startswith("-")), None)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        parser = build_parser(_command_of(argv))
    except InputError as exc:   # a required plugin that did not load, while options are listed
        prefix = " ".join(filter(None, ["metrics", _command_of(argv)]))
        print(one_line(f"{prefix}: error: {error_message(exc)}"), file=sys.stderr)
        return 2
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or an option refused (its one line is printed)
        return int(exc.code or 0)
    if args.command is None:
        parser.print_help()
        return 2
    command = importlib.import_module(COMMANDS[args.command][1])
    try:
        with interruptible(), all_or_nothing():
            result, text = command.run(args)
            if getattr(args, "json", None):
                write_json(result, args.json)
    except (Exception, KeyboardInterrupt) as exc:
        if (message := error_message(exc, options=getattr(command, "FLAGS", None) or {})) is None:
            raise
        print(one_line(f"metrics {args.command}: error: {message}"), file=sys.stderr)
        return 2
    if text:
        print(text)
    return command.exit_code(result) if hasattr(command, "exit_code") else 0
