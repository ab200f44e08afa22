"""The study commands of ``python -m studyapp``: create, hand out (owner, share, invite), sample,
export, follow (status, prolific-status, revoke, simulate, report, list), the matrix versions
(recalibrate, matrices) and the image checks (check-images, demo-images)."""

from __future__ import annotations

import sys
from pathlib import Path

from metrics import InputError, datasets

from ...core import config


def text_table(frame) -> str:
    """A table as lines of left-aligned columns under their names (two spaces apart)."""
    cells = [list(map(str, frame.columns))] + [["" if v is None else str(v) for v in row]
                                                for row in frame.itertuples(index=False)]
    widths = [max(len(row[k]) for row in cells) for k in range(len(cells[0]))]
    return "\n".join("  ".join(c.ljust(w) for c, w in zip(row, widths)).rstrip() for row in cells)


def cmd_create(args) -> int:
    from ...core.storage import no_database_yet
    from ..launch.spec_files import load_spec, spec_slug
    from ..records.studies import create_study, refuse_new_study

    if not no_database_yet():   # before sampling the items, which may take seconds
        refuse_new_study(spec_slug(args.spec), owner=args.owner)
    spec = load_spec(args.spec)
    study_id = create_study(spec, owner=args.owner)   # a refusal comes alone, before any table
    if spec.source_report:
        print(spec.source_report)
    n_main = sum(1 for item in spec.items if item.role == "main")
    print(f"created study {spec.slug!r} (id {study_id}): {n_main} items, "
          f"{spec.raters_per_item} raters per item, owned by {args.owner or 'cli'!r}")
    return 0


def cmd_owner(args) -> int:
    from ...core.storage import read_session
    from ..records.studies import set_owner, study_by_slug

    with read_session() as session:
        study_id = study_by_slug(session, args.study).id
    old = set_owner(study_id, args.account)
    print(f"study {args.study!r} now belongs to {args.account!r} (before: {old or 'nobody'!r})")
    return 0


def cmd_share(args) -> int:
    from ...core.accounts import share

    share(args.kind, args.name, args.account)
    print(f"{args.kind} {args.name!r} is shared with {args.account!r} (it may see and download it)")
    return 0


def cmd_invite(args) -> int:
    from ...core.storage import read_session
    from ..records.studies import invite, invite_base_url, invite_names, raters_of, study_by_slug

    with read_session() as session:
        study_id = study_by_slug(session, args.study).id
    _check_labels(args.label)
    earlier = raters_of(args.annotators_of) if args.annotators_of else []
    both = sorted(set(earlier) & {label.strip() for label in args.label})
    if both:
        raise InputError(f"--label {both[0]!r} is also an annotator of --annotators-of {args.annotators_of!r}: "
                         "give each pseudonym once")
    labels = earlier + args.label
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


def _check_labels(labels: list[str]) -> None:
    """Each ``--label`` of one command: not blank, and given once (nothing is created otherwise)."""
    from metrics.core import given_once

    for label in labels:
        if not label.strip():
            raise InputError(f"--label {label!r} is blank: a pseudonym needs 1-64 characters")
    given_once(labels, "--label")


def cmd_sample(args) -> int:
    from metrics import SimilarityMatrix

    from ...studytypes import get_type

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
    from ..records.exports import export_study

    print(f"wrote {export_study(args.study, args.out)}")
    return 0


def cmd_status(args) -> int:
    from ...core.storage import read_session
    from ..assignment import prolific
    from ..records.studies import counts_line, progress, set_status, study_by_slug

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
    from ...core.storage import read_session
    from ..assignment.prolific import apply_statuses, check_status, read_statuses
    from ..records.studies import study_by_slug

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
    from ...core.storage import read_session
    from ..records.studies import revoke, study_by_slug

    with read_session() as session:
        study_id = study_by_slug(session, args.study).id
    revoke(study_id, args.pseudonym)
    print(f"revoked {args.pseudonym!r} in {args.study!r}: their link is refused from now on")
    return 0


def cmd_simulate(args) -> int:
    from ..records.simulate import simulate_study

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
    from ..reporting.report_cache import study_report

    report = study_report(args.study, args.out, use_cache=not args.no_cache,
                          include_simulated=args.include_simulated)
    s = report.summary
    print(f"{s['n_items']} items, {s['n_annotators']} annotators: alpha ({s['level']}) {s['alpha']:.4f}, "
          f"mean agreement {s['agreement']:.4f}, mean QWK {s['qwk']:.4f}")
    if s.get("simulated_left_out"):
        print(f"{s['simulated_left_out']} simulated raters left out (--include-simulated counts them)")
    if report.cached:
        print(f"ratings, items and code unchanged since {report.computed_at}: the report computed then")
    print(f"wrote {report.path}")
    return 0


def cmd_recalibrate(args) -> int:
    from ..operations.matrix_versions import recalibrate_studies, save_version

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
    from ..operations import matrix_versions

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
    from ...core.images import check_images
    from ...studytypes import get_type

    if args.target.endswith(".toml") or Path(args.target).is_file():
        from ..launch.spec_files import load_spec
        spec = load_spec(args.target)
        study_type, fields = get_type(spec.study_type), [item.fields for item in spec.items]
    else:
        from ...core.storage import check_sqlite_file, read_session
        from ..records.studies import study_by_slug, study_items
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
    from ..launch.demo_images import write_demo

    for what, path in write_demo(args.out).items():
        print(f"wrote {path} ({what})")
    return 0


def cmd_list(_args) -> int:
    from ...core.storage import check_sqlite_file, no_database_yet
    from ..records.studies import list_studies

    check_sqlite_file(config.database_url())
    found = [] if no_database_yet() else list_studies()
    if not found:
        print("no studies yet (`python -m studyapp create SPEC` makes one)")
    for s in found:
        print(f"{s.slug}\t{s.status}\t{s.study_type}\t{s.title}")
    return 0
