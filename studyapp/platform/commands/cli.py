"""``python -m studyapp``: serve the app, create studies, invite annotators, sample, export.

Options are checked as they are parsed (:mod:`metrics.core._options`), a command's files land
together or not at all and its database changes are one transaction. Bad input, a file the
system refuses or a database that cannot be used ends as a one-line message on stderr with
exit status 2; any other exception is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from metrics import datasets
from metrics.core import (
    OneLineParser,
    all_or_nothing,
    error_message,
    input_file,
    integer,
    interruptible,
    number,
    one_line,
    output_dir,
    output_file,
    seed,
)

from ...core import config
from .account_commands import cmd_account, cmd_reset_admin_password
from .study_commands import (
    cmd_check_images,
    cmd_create,
    cmd_demo_images,
    cmd_export,
    cmd_invite,
    cmd_list,
    cmd_matrices,
    cmd_owner,
    cmd_prolific_status,
    cmd_recalibrate,
    cmd_report,
    cmd_revoke,
    cmd_sample,
    cmd_share,
    cmd_simulate,
    cmd_status,
)

# commands that read a study: with no database file yet there is nothing to read (and none is made)
NEEDS_DATABASE = ("invite", "owner", "share", "prolific-status", "export", "status", "revoke", "simulate", "report", "recalibrate", "matrices")

#: The views ``serve`` starts, as files of the views folder beside this package: the server script and
#: the entry page it serves (found by path, so no module of a lower layer names a views module).
VIEWS_FOLDER = Path(__file__).resolve().parents[2] / "views"
SERVER = VIEWS_FOLDER / "server.py"
APP = VIEWS_FOLDER / "app.py"
WEB = VIEWS_FOLDER / "web.py"     # the pages and the answer route, served as one application


def http_url(text: str) -> str:
    """An option type: an http(s) address with a host (``http://HOST:PORT``)."""
    from urllib.parse import urlsplit

    parts = urlsplit(text.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc or parts.query or parts.fragment:
        raise argparse.ArgumentTypeError(f"must be an http(s) address such as http://host:8501, got {text!r}")
    return text.strip().rstrip("/")


def _add_setup_parsers(sub) -> None:
    """serve, create, owner, invite: starting a study and handing it out."""
    serve = sub.add_parser("serve", help="seed the demo study and start the Streamlit app")
    serve.add_argument("--port", type=integer(1, 65535), default=config.default_port())
    serve.add_argument("--address", default=os.environ.get("STUDYAPP_ADDRESS", "localhost"))
    serve.add_argument("--no-demo", action="store_true",
                       help="do not create the demo study or print a demo invite link")

    create = sub.add_parser("create", help="create a study from a spec file (studies/*.toml)")
    create.add_argument("spec", type=input_file, help="path of the TOML spec")
    create.add_argument("--owner", metavar="ACCOUNT",
                        help="the owner or researcher account that owns the study (default: the "
                             "platform owner's command line, 'cli', whose studies only owner "
                             "accounts see)")

    owner = sub.add_parser("owner", help="give a study to another account (its researchers see it)")
    owner.add_argument("study", help="study slug")
    owner.add_argument("account", help="an owner or researcher account (see `account list`)")

    share = sub.add_parser("share", help="let another account see and download a study or a matrix version")
    share.add_argument("kind", choices=("study", "version"))
    share.add_argument("name", help="study slug or version name")
    share.add_argument("account", help="the account to share it with (see `account list`)")

    inv = sub.add_parser("invite", help="create invite links for a study")
    inv.add_argument("study", help="study slug")
    inv.add_argument("--n", type=integer(1, 10_000), default=1, help="number of links (default 1)")
    inv.add_argument("--label", action="append", default=[],
                     help="pseudonym for a link (repeatable; one link per label)")
    inv.add_argument("--annotators-of", metavar="STUDY",
                     help="one link per annotator of an earlier study, same pseudonyms "
                          "(the with-image pass of that study)")
    inv.add_argument("--base-url", type=http_url, metavar="URL",
                     help="the address annotators open (default: STUDYAPP_BASE_URL, else the "
                          "address `serve` recorded when it last started)")


def _add_sample_parser(sub) -> None:
    """sample: HOI pairs for the SHOE similarity study."""
    sample = sub.add_parser("sample", help="sample HOI pairs for the SHOE similarity study")
    sample.add_argument("--n", type=integer(1, 100_000), default=500)
    sample.add_argument("--seed", type=seed, default=0)
    sample.add_argument("--out", required=True, type=output_file, help="items CSV to write")
    sample.add_argument("--verb-sim", type=input_file, help="verb similarity matrix (default: WordNet baseline)")
    sample.add_argument("--object-sim", type=input_file, help="object similarity matrix (default: WordNet baseline)")
    sample.add_argument("--class-weights", type=input_file, help="CSV hoi_id,weight (or verb,object,weight)")
    sample.add_argument("--pool", type=input_file, help="sample from a candidate pool with precomputed levels in SHOE's "
                                       "column layout (e.g. SHOE's candidate file) instead of the matrices")
    sample.add_argument("--w", type=number(0, 1), default=0.5, help="verb weight of the HOI similarity")
    sample.add_argument("--strict", action="store_true",
                        help="keep cell shares equal: do not move unfilled shares to other cells")
    sample.add_argument("--categories", type=integer(1, 3), nargs="+", default=[1, 2, 3],
                        help="sample only these categories (2: a verb-similarity study; default 1 2 3)")
    sample.add_argument("--dataset", choices=datasets.names(), default=datasets.DEFAULT,
                        help=f"whose HOI classes, labels and baseline matrices (default {datasets.DEFAULT})")


def _add_running_parsers(sub) -> None:
    """export, status, prolific-status, revoke, simulate, report: a running study."""
    export = sub.add_parser("export", help="write ratings.csv, items.csv, annotators.csv")
    export.add_argument("study", help="study slug")
    export.add_argument("--out", type=output_dir, help="export folder (default exports/ or STUDYAPP_EXPORTS)")

    status = sub.add_parser("status", help="show a study's progress, or change its status")
    status.add_argument("study", help="study slug")
    status.add_argument("--set", choices=["open", "paused", "closed"], help="new status")

    pstatus = sub.add_parser("prolific-status", help="pass in Prolific's submission statuses: returned and "
                                                      "timed-out submissions give their unanswered items back")
    pstatus.add_argument("study", help="study slug")
    pstatus.add_argument("--csv", type=input_file, metavar="FILE",
                         help="Prolific's submissions export (columns 'Participant id' and 'Status')")
    pstatus.add_argument("--pid", metavar="PROLIFIC_PID", help="one participant (with --status)")
    pstatus.add_argument("--status", metavar="STATUS",
                         help="RETURNED, TIMED-OUT, REJECTED, APPROVED, AWAITING REVIEW, ... (with --pid)")

    revoke = sub.add_parser("revoke", help="withdraw an annotator's access (their link is refused)")
    revoke.add_argument("study", help="study slug")
    revoke.add_argument("pseudonym", help="the annotator's pseudonym (see `status`)")

    sim = sub.add_parser("simulate", help="fill a study with simulated annotators (pilots, tests)")
    sim.add_argument("study", help="study slug")
    sim.add_argument("--k", type=integer(1, 1000), default=5, help="number of simulated annotators (default 5)")
    sim.add_argument("--noise", type=number(0, 10), default=0.6, help="rating noise SD on the 0-4 scale")
    sim.add_argument("--seed", type=seed, default=0)
    sim.add_argument("--profiles", help="comma-separated biases, one per annotator: "
                                        "neutral, strict, lenient, mid (default: cycle through them)")

    report = sub.add_parser("report", help="agreement / alignment / w report of a study (HTML)")
    report.add_argument("study", help="study slug")
    report.add_argument("--out", type=output_dir, help="export folder (default exports/ or STUDYAPP_EXPORTS)")
    report.add_argument("--no-cache", action="store_true",
                        help="recompute even when the ratings, items and code are those of a cached report")
    report.add_argument("--include-simulated", action="store_true",
                        help="count the raters added by `simulate` in agreement, PPI and the rater table "
                             "(left out by default)")


def _add_image_parsers(sub) -> None:
    """check-images, demo-images."""
    check = sub.add_parser("check-images", help="check an image study's images before launch "
                                                "(lists missing, unreadable or unsafe files)")
    check.add_argument("target", help="a study spec (.toml) or the slug of a created study")

    demo_img = sub.add_parser("demo-images", help="draw the demo images (Pillow) for the image "
                                                  "and CrossHOI demo studies")
    demo_img.add_argument("--out", type=output_dir, default=str(config.ROOT / ".data" / "demo_images"))


def _add_matrix_parsers(sub) -> None:
    """recalibrate, and matrices list / export / compare: saved matrix versions."""
    recal = sub.add_parser("recalibrate", help="recalibrate the similarity matrices from finished "
                                                "HOI-pair studies and save them as a named version")
    recal.add_argument("studies", nargs="+", help="study slugs whose main ratings are pooled")
    recal.add_argument("--name", required=True, help="name of the new matrix version (never reused)")
    recal.add_argument("--based-on", help="recalibrate this saved version (default: the baseline matrices)")
    recal.add_argument("--w", type=number(0, 1), default=0.5, help="verb weight used to read the ratings")
    recal.add_argument("--prior-strength", type=number(0, 1_000_000), default=5.0,
                       help="ratings needed to move a rated entry halfway to its human evidence")
    recal.add_argument("--folds", type=integer(2, 1000), default=5, help="cross-validation folds (default 5)")
    recal.add_argument("--seed", type=seed, default=0)

    matrices = sub.add_parser("matrices", help="saved matrix versions: list, export, compare")
    msub = matrices.add_subparsers(dest="action", metavar="ACTION", required=True)
    msub.add_parser("list", help="the saved versions with their provenance")
    mexport = msub.add_parser("export", help="write a version as verb/object .csv and .npz")
    mexport.add_argument("name")
    mexport.add_argument("--out", required=True, type=output_dir, help="folder to write into")
    mcompare = msub.add_parser("compare", help="agreement of two versions' matrices")
    mcompare.add_argument("a")
    mcompare.add_argument("b")


def _add_account_parsers(sub) -> None:
    """account add / list / set-password: researcher accounts of the console."""
    account = sub.add_parser("account", help="researcher accounts of the console: add, list, set-password")
    asub = account.add_subparsers(dest="account_command", required=True)
    aadd = asub.add_parser("add", help="create an account (password read from standard input, or "
                                       "asked for on a terminal)")
    aadd.add_argument("name")
    aadd.add_argument("--role", required=True, choices=("owner", "researcher", "viewer"))
    asub.add_parser("list", help="the accounts and their roles")
    aset = asub.add_parser("set-password", help="a new password for an account (read as for add)")
    aset.add_argument("name")


def build_parser() -> argparse.ArgumentParser:
    parser = OneLineParser(
        prog="python -m studyapp",
        description="HOI study platform (Streamlit). Database: DATABASE_URL, else the SQLite "
                    "file STUDYAPP_DB (default .data/studyapp.sqlite).")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    _add_setup_parsers(sub)
    _add_sample_parser(sub)
    _add_running_parsers(sub)
    _add_image_parsers(sub)
    _add_matrix_parsers(sub)

    from . import database_commands
    database_commands.add_parsers(sub)  # health, backup, restore

    _add_account_parsers(sub)
    sub.add_parser("list", help="list the studies")
    sub.add_parser("plugins", help="the installed study types, datasets and error types, and the plugins "
                                   "that failed to load (study views listed, loaded by the app)")
    sub.add_parser("reset-admin-password",
                   help="generate a new console password (printed once)")
    return parser


def cmd_serve(args) -> int:
    from ...core import auth, storage
    from ..launch import demo

    print(f"studyapp: database {storage.describe(config.database_url())}")   # never the password
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    if password:
        print(f"studyapp: researcher console password (shown once, stored hashed): {password}")
    base = config.base_url(args.port)
    from ..records.studies import record_served_url
    record_served_url(base)   # `invite` on the command line links to it
    if not args.no_demo and os.environ.get("STUDYAPP_DEMO", "1") != "0":
        study_id, created, link = demo.seed_demo()
        spec = demo.DEMO_SPEC
        shown = spec.relative_to(config.ROOT) if spec.is_relative_to(config.ROOT) else spec.name
        print(f"studyapp: demo study {'created' if created else 'ready'} (spec {shown})")
        print(f"studyapp: annotator invite link: {link.link(base)}")
    print(f"studyapp: researcher console: {base}/console")
    sys.stdout.flush()
    command = streamlit_command(args.port, args.address)
    os.execv(command[0], command)  # Streamlit replaces this process: signals reach it directly


def streamlit_command(port: int, address: str) -> list[str]:
    """The Streamlit server command. XSRF protection is set on explicitly, so no
    ``.streamlit/config.toml`` or environment variable can turn it off. Streamlit's full
    garbage collection after every script run is off: it held each answer's next item back by
    ~80 ms (measured); Python's own generational collection still runs. Streamlit's
    file watcher is off: it polled every module's file for every open session, which took
    about half the server's CPU per answer with 60 annotators and stalled answers for seconds
    (``benchmarks/load_web.py``). The pages' modules are imported before the server starts
    (the script :data:`SERVER`)."""
    return [sys.executable, str(SERVER), "run", str(WEB), "--server.port", str(port),
            "--server.address", address, "--server.headless", "true",
            "--server.enableXsrfProtection", "true", "--runner.postScriptGC", "false",
            "--server.fileWatcherType", "none",
            "--browser.gatherUsageStats", "false", "--client.toolbarMode", "minimal"]


def cmd_plugins(args) -> int:
    from metrics import ERROR_REGISTRY
    from metrics.core import PLUGIN_GROUPS, PluginGroup, listing_exit_code, plugin_listing

    from ...studytypes import PLUGINS
    views = PluginGroup(PLUGIN_GROUPS["study view"], kind="study view")   # the views layer loads them
    result, text = plugin_listing([PLUGINS, datasets.PLUGINS, ERROR_REGISTRY.plugins, views])
    print(text)
    return listing_exit_code(result)


COMMANDS = {"serve": cmd_serve, "account": cmd_account, "create": cmd_create, "owner": cmd_owner,
            "share": cmd_share,
            "invite": cmd_invite, "sample": cmd_sample,
            "export": cmd_export, "status": cmd_status, "revoke": cmd_revoke,
            "prolific-status": cmd_prolific_status,
            "simulate": cmd_simulate,
            "report": cmd_report, "list": cmd_list, "recalibrate": cmd_recalibrate,
            "matrices": cmd_matrices, "check-images": cmd_check_images,
            "demo-images": cmd_demo_images, "plugins": cmd_plugins,
            "reset-admin-password": cmd_reset_admin_password}


def main(argv: list[str] | None = None) -> int:
    from . import database_commands
    COMMANDS.update(database_commands.COMMANDS)
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # --help, or an option refused (its one line is printed)
        return exc.code
    if args.command is None:
        parser.print_help()
        return 2
    try:
        with interruptible(), all_or_nothing():
            if args.command in NEEDS_DATABASE:
                from ...core.storage import check_sqlite_file
                check_sqlite_file(config.database_url(), must_exist=True)
            return COMMANDS[args.command](args)
    except (Exception, KeyboardInterrupt) as exc:
        if (message := error_message(exc) or _database_message(exc, args)) is None:
            raise
        print(one_line(f"error: {message}"), file=sys.stderr)
        return 2


def _database_message(exc: BaseException, args) -> str | None:
    """The line for a database that cannot be used (unreachable, wrong schema), else None."""
    from ...core.storage import database_error, unusable_database

    if not unusable_database(exc):
        return None
    url = getattr(args, "url", None)
    return database_error(url or config.database_url(), exc, "--url" if url else None)
