"""``ptx-verify check [PATH...] [--format text|json|sarif|junit] [--baseline FILE [--update-baseline]]``.

``register(subparsers)`` adds the subcommand; the work is in ``verify.api`` and the renderers in
``verify.outputs`` (text, json, sarif, junit, baseline).
"""
from __future__ import annotations

import argparse
import dataclasses
import sys

from .. import api
from ..errors import SpecError, UsageError
from ..outputs import baseline as out_baseline
from ..outputs import json as out_json
from ..outputs import reports_text
from ..outputs import text as out_text
from ..outputs.progress import Progress, checking_label
from . import inputs, options

FORMATS = ("text", "json", "sarif", "junit")


def _read_baseline(args: argparse.Namespace) -> dict | None:
    """The baseline document, read before any work (bad input: exit 2, nothing printed)."""
    if args.update_baseline and not args.baseline:
        raise UsageError("--update-baseline needs --baseline FILE (the file to rewrite)")
    if not args.baseline:
        return None
    if args.update_baseline:  # refuse an unwritable target before any work (nothing is printed then)
        out_baseline.check_writable(args.baseline, out_baseline.BASELINE)
    try:
        return out_baseline.read(args.baseline)
    except SpecError:
        if args.update_baseline:  # the file is being replaced: a missing or broken one is no obstacle
            return None
        raise


def cmd_check(args: argparse.Namespace) -> int:
    if any(getattr(args, d, None) is not None for d in getattr(args, "given_flags", ())):
        from .given import cmd_check_given
        return cmd_check_given(args)
    for dest, flag in (("param", "--param"), ("as_id", "--as"), ("tile", "--tile")):  # never ignored: say so
        if getattr(args, dest, None):
            raise UsageError(f"{flag} is for a layout given in a notation (check --formula FILE {flag} ...); "
                             "check of spec files checks every member of every family")
    old = _read_baseline(args)
    if args.observations:  # a missing or empty observations directory is refused before any work
        from ..hardware.observe import observation_files
        observation_files(args.observations)
    paths = inputs.paths_or_bundled(args.paths)
    inputs.require_pages_for_against(args.against, paths)
    progress = Progress.for_stream()
    with progress.stage("loading specs"):
        specs, doc_findings = api.load_with_doc_findings(paths, against=args.against, docs=args.docs,
                                                         release=args.release)
    lays = api.layouts(specs)
    if not lays and not any(s.unbuilt or s.maps or s.covers or s.statements for s in specs) and \
            not any(f.kind == "unread-section" for f in doc_findings):  # a page that could not be read: report it
        raise UsageError(f"nothing to check: no layouts in {' '.join(paths)}{api.why_nothing(paths)}")
    jobs = args.jobs or api.default_jobs()
    with progress.stage(checking_label(len(api.layouts(specs)), len(api.map_layouts(specs)), len(specs)), total=api.check_size(specs)) as step:
        report = api.check_all(specs, timeout=args.timeout, jobs=jobs, doc_findings=doc_findings, progress=step)
    if getattr(args, "observations", None):
        from ..hardware.kinds import check_observations
        obs = check_observations(api.layouts(specs), args.observations, api.map_layouts(specs))
        report = dataclasses.replace(report, findings=report.findings + tuple(obs))
    matrix = None
    if args.references:
        with progress.stage("evaluating the independent references"):
            matrix = api.references(specs, args.timeout)
        report = dataclasses.replace(report, findings=report.findings + tuple(matrix.findings()))
    current = out_json.check_json(report)
    diff = out_baseline.compare(old, current) if old is not None else None
    file = args.baseline or ""
    if args.format == "json":
        doc = out_json.check_json(report, timings=args.timings) if args.timings else current
        if diff is not None:
            doc = {**doc, "baseline": diff.to_json(file)}
        if matrix is not None:
            doc = out_json.with_references(doc, matrix)
        sys.stdout.write(out_json.to_json(doc))
    elif args.format == "sarif":
        from ..outputs.sarif import check_sarif, to_text
        sys.stdout.write(to_text(check_sarif(report, inputs.origins(paths), diff, file)))
    elif args.format == "junit":
        from ..outputs.junit import check_junit
        sys.stdout.write(check_junit(report, inputs.origins(paths), diff, file))
    else:
        sys.stdout.write(out_text.check_text(report))
        if matrix is not None:
            sys.stdout.write("".join(f"{line}\n" for line in reports_text.matrix_note(matrix)))
        if diff is not None:
            sys.stdout.write(f"baseline {file}: {diff.count} difference{'' if diff.count == 1 else 's'}"
                             + ("  -> FAIL" if diff else "") + "\n")
            sys.stdout.write("".join(f"  {line}\n" for line in diff.lines()))
    if args.update_baseline:
        out_baseline.write_atomic(args.baseline, out_json.to_json(current))
        print(f"ptx-verify: wrote the baseline {args.baseline}"
              + (f" ({diff.count} differences from the previous one)" if diff is not None else ""), file=sys.stderr)
        return 0
    if diff is not None:
        return 1 if diff else 0
    return 0 if report.as_expected else 1


def register(subparsers: "argparse._SubParsersAction[options.Parser]", given: bool = True) -> None:
    """Add ``check``; ``given``: with the options of a layout on its own (``--triton FILE``...: ``cli.given``),
    which load the notations (``main`` builds the parser without them for a line that uses none)."""
    c = subparsers.add_parser("check", help="prove or refute every property of every layout")
    c.add_argument("paths", nargs="*", metavar="PATH",
                   help="spec files, directories of specs, or doc pages (" + inputs.default_help() + ")")
    c.add_argument("--format", choices=FORMATS, default="text",
                   help="text (default), json (schema 1), sarif (SARIF 2.1.0, for code scanning) or junit (JUnit XML)")
    c.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    c.add_argument("--timings", action="store_true", help="include seconds in JSON (not byte-stable)")
    c.add_argument("--jobs", type=options.jobs, default=None, help=options.JOBS_HELP)
    c.add_argument("--observations", metavar="DIR", help="compare specs with GPU observation files")
    c.add_argument("--against", action="append", metavar="SPECS", default=None,
                   help="doc pages are judged by these reviewed specs (a spec file or directory; repeat for "
                        "more; default: the bundled specs): their expectations, and their maps compared with "
                        "the pages'. Only with a doc page among the PATHs")
    c.add_argument("--docs", metavar="DIR", action="append", default=[], help=inputs.DOCS_HELP)
    c.add_argument("--release", type=options.release, default=None, metavar="X.Y",
                   help="the PTX ISA release whose facts apply (9.0, 9.1): spec files recorded from a later release "
                        "are left out, pages are judged by that release's reviewed specs (default: every spec file; "
                        "pages by the release they state)")
    c.add_argument("--baseline", metavar="FILE", default=None,
                   help="a committed `check --format json` output: exit 1 only on differences from it "
                        "(new failures, fixed errata, layouts added or removed, changed mappings or "
                        "instruction checks), which are printed")
    c.add_argument("--references", action="store_true",
                   help="also evaluate the independent references that run here (CuTe, Triton, tensor-layouts): "
                        "each layout's agreement in JSON, differences as findings, a note in text")
    c.add_argument("--update-baseline", action="store_true",
                   help="rewrite the --baseline FILE with this run's JSON (atomically) and exit 0")
    if given:
        from .given import add_options
        add_options(c)
    c.set_defaults(func=cmd_check)
