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

from metrics import InputError, datasets
from metrics.core import (
    OneLineParser,
    all_or_nothing,
    input_file,
    integer,
    interruptible,
    number,
    one_line,
    os_error_message,
    output_dir,
    output_file,
    seed,
)

from ..core import config

# commands that read a study: with no database file yet there is nothing to read (and none is made)
NEEDS_DATABASE = ("invite", "owner", "share", "prolific-status", "export", "status", "revoke", "simulate", "report", "recalibrate", "matrices")

APP = Path(__file__).resolve().parents[1] / "views" / "app.py"


def text_table(frame) -> str:
    """A table as lines of left-aligned columns under their names (two spaces apart)."""
    cells = [list(map(str, frame.columns))] + [["" if v is None else str(v) for v in row]
                                                for row in frame.itertuples(index=False)]
    widths = [max(len(row[k]) for row in cells) for k in range(len(cells[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


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
                                   "that failed to load")
    sub.add_parser("reset-admin-password",
                   help="generate a new console password (printed once)")
    return parser


def cmd_serve(args) -> int:
    from ..core import auth, storage
    from . import demo

    print(f"studyapp: database {storage.describe(config.database_url())}")   # never the password
    with storage.write_session() as session:
        password = auth.ensure_admin_password(session)
    if password:
        print(f"studyapp: researcher console password (shown once, stored hashed): {password}")
    base = config.base_url(args.port)
    from .studies import record_served_url
    record_served_url(base)   # `invite` on the command line links to it
    if not args.no_demo and os.environ.get("STUDYAPP_DEMO", "1") != "0":
        study_id, created, link = demo.seed_demo()
        print(f"studyapp: demo study {'created' if created else 'ready'} "
              f"(spec {demo.DEMO_SPEC.relative_to(config.ROOT)})")
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
    (``studyapp.views.server``)."""
    return [sys.executable, "-m", "studyapp.views.server", "run", str(APP), "--server.port", str(port),
            "--server.address", address, "--server.headless", "true",
            "--server.enableXsrfProtection", "true", "--runner.postScriptGC", "false",
            "--server.fileWatcherType", "none",
            "--browser.gatherUsageStats", "false", "--client.toolbarMode", "minimal"]


def cmd_create(args) -> int:
    from .spec_files import load_spec
    from .studies import create_study

    spec = load_spec(args.spec)
    study_id = create_study(spec, owner=args.owner)   # a refusal comes alone, before any table
    if spec.source_report:
        print(spec.source_report)
    n_main = sum(1 for item in spec.items if item.role == "main")
    print(f"created study {spec.slug!r} (id {study_id}): {n_main} items, "
          f"{spec.raters_per_item} raters per item, owned by {args.owner or 'cli'!r}")
    return 0


def cmd_owner(args) -> int:
    from ..core.storage import read_session
    from .studies import set_owner, study_by_slug

    with read_session() as session:
        study_id = study_by_slug(session, args.study).id
    old = set_owner(study_id, args.account)
    print(f"study {args.study!r} now belongs to {args.account!r} (before: {old or 'nobody'!r})")
    return 0


def cmd_share(args) -> int:
    from ..core.accounts import share

    share(args.kind, args.name, args.account)
    print(f"{args.kind} {args.name!r} is shared with {args.account!r} (it may see and download it)")
    return 0


def cmd_invite(args) -> int:
    from ..core.storage import read_session
    from .studies import invite, invite_base_url, invite_names, raters_of, study_by_slug

    with read_session() as session:
        study_id = study_by_slug(session, args.study).id
    labels = (raters_of(args.annotators_of) if args.annotators_of else []) + args.label
    if labels:
        created, existing = invite_names(study_id, labels)
    else:
        created, existing = invite(study_id, args.n), []
    existing = list(dict.fromkeys(existing))
    if not created:
        raise InputError(f"no invite created: every pseudonym given is already used in {args.study!r} "
                         f"({', '.join(existing)})")
    base, source = invite_base_url(args.base_url)
    for name in existing:
        print(f"not created: the pseudonym {name!r} is already used in {args.study!r}", file=sys.stderr)
    print(f"links use {base} ({source}; --base-url to change)", file=sys.stderr)
    for inv in created:
        print(f"{inv.pseudonym}\t{inv.link(base)}")
    if existing:
        print(f"created {len(created)} invite(s); {len(existing)} pseudonym(s) already used were skipped",
              file=sys.stderr)
    return 0


def cmd_sample(args) -> int:
    from metrics import SimilarityMatrix

    from ..studytypes import get_type

    sampler = get_type("hoi_similarity").sampler

    if args.pool:
        from metrics.study import read_shoe_csv
        if args.verb_sim or args.object_sim or args.class_weights:
            raise InputError("--pool takes its levels from the pool: drop --verb-sim, --object-sim, --class-weights")
        if args.dataset != datasets.DEFAULT:
            raise InputError(f"--pool reads SHOE's HICO-DET candidate layout: drop --dataset {args.dataset}")
        if sorted(args.categories) != [1, 2, 3]:
            raise InputError("--pool draws SHOE's 11 cells: drop --categories")
        items, report = sampler.sample_pool(read_shoe_csv(args.pool), args.n, args.seed, redistribute=not args.strict)
        return _write_sample(items, report, args.out)
    weights = (sampler.load_class_weights(args.class_weights, datasets.load_vocabulary(args.dataset))
               if args.class_weights else None)
    items, report = sampler.sample_pairs(
        args.n, args.seed,
        verb_matrix=SimilarityMatrix.load(args.verb_sim) if args.verb_sim else None,
        object_matrix=SimilarityMatrix.load(args.object_sim) if args.object_sim else None,
        class_weights=weights, w=args.w, redistribute=not args.strict, dataset=args.dataset,
        categories=args.categories)
    return _write_sample(items, report, args.out)


def _write_sample(items, report, out) -> int:
    from metrics.core import write_text_atomic
    write_text_atomic(out, items.to_csv(index=False))
    print(report.text())
    print(f"wrote {len(items)} pairs to {out}")
    return 0


def cmd_export(args) -> int:
    from .exports import export_study

    print(f"wrote {export_study(args.study, args.out)}")
    return 0


def cmd_status(args) -> int:
    from ..core.storage import read_session
    from . import prolific
    from .studies import counts_line, progress, set_status, study_by_slug

    with read_session() as session:
        study_id = study_by_slug(session, args.study).id
    if args.set:
        set_status(study_id, args.set)
    p = progress(study_id)
    if "items_done" in p:
        print(f"{p['study']}: {p['status']}, {p['items_done']} of {p['items']} items done (adaptive: at "
              f"the target SE or at max_raters), {p['ratings_done']} ratings (at most "
              f"{p['ratings_needed']})")
    else:
        print(f"{p['study']}: {p['status']}, {p['ratings_done']} of {p['ratings_needed']} ratings "
              f"({p['items']} items)")
    print(f"annotators: {counts_line(p)}")
    if (prolific_line := prolific.summary_line(study_id)) is not None:
        print(f"Prolific: {prolific_line}")
    for a in p["annotators"]:
        print(f"  {a['annotator']:<24} {a['status']:<12} {a['done']:>4} / {a['target']:<4} "
              f"median {a['median_seconds'] if a['median_seconds'] is not None else '-'} s")
    return 0


def cmd_prolific_status(args) -> int:
    from ..core.storage import read_session
    from .prolific import apply_statuses, check_status, read_statuses
    from .studies import study_by_slug

    if bool(args.csv) == bool(args.pid) or bool(args.pid) != bool(args.status):
        raise InputError("give either --csv FILE (Prolific's submissions export) or --pid PROLIFIC_PID "
                         "with --status STATUS")
    if args.csv:
        statuses, source = [(pid, status) for _line, pid, status in read_statuses(args.csv)], args.csv
    else:
        statuses, source = [(args.pid.strip(), check_status(args.status, "--status"))], "--pid"
    with read_session() as session:
        study_id = study_by_slug(session, args.study).id
    for line in apply_statuses(study_id, statuses, source=source).lines():
        print(line)
    return 0


def cmd_revoke(args) -> int:
    from ..core.storage import read_session
    from .studies import revoke, study_by_slug

    with read_session() as session:
        study_id = study_by_slug(session, args.study).id
    revoke(study_id, args.pseudonym)
    print(f"revoked {args.pseudonym!r} in {args.study!r}: their link is refused from now on")
    return 0


def cmd_simulate(args) -> int:
    from .simulate import simulate_study

    profiles = [p.strip() for p in args.profiles.split(",")] if args.profiles else None
    if profiles is not None and len(profiles) != args.k:
        raise InputError(f"--profiles names {len(profiles)} biases for --k {args.k} annotators")

    def progress(done, total, name, ratings):
        print(f"  {done}/{total} {name}: {ratings} ratings so far", flush=True)

    result = simulate_study(args.study, k=args.k, noise=args.noise, seed=args.seed,
                            profiles=profiles, progress=progress)
    print(f"simulated {len(result.annotators)} annotators, {result.ratings} ratings in {result.study!r}")
    return 0


def cmd_report(args) -> int:
    from .report_cache import study_report

    report = study_report(args.study, args.out, use_cache=not args.no_cache)
    s = report.summary
    print(f"{s['n_items']} items, {s['n_annotators']} annotators: alpha ({s['level']}) {s['alpha']:.4f}, "
          f"mean agreement {s['agreement']:.4f}, mean QWK {s['qwk']:.4f}")
    if report.cached:
        print(f"ratings, items and code unchanged since {report.computed_at}: the report computed then")
    print(f"wrote {report.path}")
    return 0


def cmd_recalibrate(args) -> int:
    from .matrix_versions import recalibrate_studies, save_version

    run = recalibrate_studies(args.studies, based_on=args.based_on, w=args.w,
                              prior_strength=args.prior_strength, folds=args.folds, seed=args.seed)
    r = run.result
    print(f"{r['n_items']} rated items, {r['n_ratings']} ratings from {', '.join(run.studies)}; "
          f"{args.folds}-fold held-out agreement (Eq. 13) {r['before']['agreement']:.4f} -> "
          f"{r['after']['agreement']:.4f}")
    for category, c in r["by_category"].items():
        print(f"  category {category} ({c['n_items']} items): {c['before']['agreement']:.4f} -> "
              f"{c['after']['agreement']:.4f}")
    if (note := run.before_note()) is not None:
        print(f"note: {note}")
    print(run.changed.head(5).to_string(index=False, float_format="{:.3f}".format))
    save_version(args.name, run)
    print(f"saved matrix version {args.name!r} "
          f"(`python -m studyapp matrices export {args.name} --out DIR` writes its files)")
    return 0


def cmd_matrices(args) -> int:
    from . import matrix_versions

    if args.action == "list":
        table = matrix_versions.list_versions()
        print(text_table(table) if len(table) else "no matrix versions yet")
    elif args.action == "export":
        for path in matrix_versions.export_version(args.name, args.out):
            print(path)
    else:
        from metrics.study import compare_lines
        for role, (a, b) in zip(matrix_versions.ROLES, zip(matrix_versions.load_version(args.a)[:2],
                                                          matrix_versions.load_version(args.b)[:2])):
            print(f"{role} matrices, {args.a} vs {args.b}:")
            print(compare_lines(a, b)[1])
    return 0


def cmd_check_images(args) -> int:
    from ..core.images import check_images
    from ..studytypes import get_type

    if args.target.endswith(".toml") or Path(args.target).is_file():
        from .spec_files import load_spec
        spec = load_spec(args.target)
        study_type, fields = get_type(spec.study_type), [item.fields for item in spec.items]
    else:
        from ..core.storage import check_sqlite_file, read_session
        from .studies import study_by_slug, study_items
        check_sqlite_file(config.database_url(), must_exist=True)
        with read_session() as session:
            study = study_by_slug(session, args.target)
        study_type, fields = get_type(study.study_type), [f for _k, _r, f in study_items(study.id)]
    by_root: dict[str, list[str]] = {}
    for f in fields:
        for root, path in study_type.image_paths(f):
            by_root.setdefault(root, []).append(path)
    if not by_root:
        raise InputError(f"{args.target}: study type {study_type.name!r} shows no images")
    bad = 0
    for root, paths in by_root.items():
        result = check_images(root, paths)
        print(result.text())
        bad += len(result.problems)
    return 1 if bad else 0


def cmd_demo_images(args) -> int:
    from .demo_images import write_demo

    for what, path in write_demo(args.out).items():
        print(f"wrote {path} ({what})")
    return 0


def cmd_list(_args) -> int:
    from ..core.storage import check_sqlite_file
    from .studies import list_studies

    check_sqlite_file(config.database_url())
    path = config.sqlite_path(config.database_url())
    # no database file yet: no studies (and none is made by looking)
    found = [] if path is not None and not path.exists() else list_studies()
    if not found:
        print("no studies yet (`python -m studyapp create SPEC` makes one)")
    for s in found:
        print(f"{s.slug}\t{s.status}\t{s.study_type}\t{s.title}")
    return 0


def cmd_reset_admin_password(_args) -> int:
    from ..core import auth, storage
    from ..core.models import Setting

    if os.environ.get("STUDYAPP_ADMIN_PASSWORD"):
        raise InputError("STUDYAPP_ADMIN_PASSWORD is set; it is the console password")
    with storage.write_session() as session:
        old = session.get(Setting, auth.ADMIN_KEY)
        if old is not None:
            session.delete(old)
            session.flush()
        password = auth.ensure_admin_password(session)
    print(f"new researcher console password (shown once, stored hashed): {password}")
    return 0


def read_password() -> str:
    """A password from the terminal (asked twice) or the first line of standard input."""
    if sys.stdin.isatty():
        import getpass
        first, second = getpass.getpass("password: "), getpass.getpass("again: ")
        if first != second:
            raise InputError("the two passwords differ")
        return first
    try:
        return sys.stdin.readline().rstrip("\r\n")
    except OSError:
        raise InputError("the password could not be read from standard input (pipe it in, or run "
                         "the command on a terminal)") from None


def cmd_account(args) -> int:
    from ..core import accounts

    if args.account_command == "list":
        table = accounts.list_accounts()
        print(text_table(table) if len(table) else "no accounts yet (the console password "
              "signs in as the platform owner)")
    elif args.account_command == "add":
        accounts.add_account(args.name, args.role, read_password())
        print(f"created the {args.role} account {args.name!r}")
    else:
        accounts.set_password(args.name, read_password())
        print(f"new password set for {args.name!r}")
    return 0


def cmd_plugins(args) -> int:
    from metrics import ERROR_REGISTRY
    from metrics.core import plugin_listing

    from ..studytypes import PLUGINS
    print(plugin_listing([PLUGINS, datasets.PLUGINS, ERROR_REGISTRY.plugins])[1])
    return 0


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
                from ..core.storage import check_sqlite_file
                check_sqlite_file(config.database_url(), must_exist=True)
            return COMMANDS[args.command](args)
    except (InputError, KeyboardInterrupt) as exc:
        print(one_line(f"error: {str(exc) or 'interrupted'}"), file=sys.stderr)
        return 2
    except OSError as exc:
        print(one_line(f"error: {os_error_message(exc)}"), file=sys.stderr)
        return 2
    except Exception as exc:
        from ..core.storage import database_error, unusable_database
        if not unusable_database(exc):
            raise
        url = getattr(args, "url", None)
        print(f"error: {database_error(url or config.database_url(), exc, '--url' if url else None)}",
              file=sys.stderr)
        return 2
