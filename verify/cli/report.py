"""``ptx-verify report PATH... --out DIR``: Markdown + self-contained HTML + SVG pictures.

Exit codes as ``check``: 0 when everything is as expected, 1 otherwise, 2 for bad input
(one line ``file:line:col: error: ...``, printed by ``verify.cli.main``).
"""
from __future__ import annotations

import argparse

from .. import api
from ..checks.fixes import MAX_DELTA, MAX_DELTA_LIMIT
from ..checks.fragment import DEFAULT_TIMEOUT
from ..errors import UsageError
from ..outputs.progress import Progress, checking_label
from . import inputs, options


def cmd_report(args: argparse.Namespace) -> int:
    from ..checks.report_model import build
    from ..outputs.report import OutputError, check_tree, read_references, write_report
    check_tree(args.out)  # an output that cannot be written is refused before any work
    try:
        refs = read_references(args.references) if args.references else None
    except OutputError as e:
        raise UsageError(str(e)) from None
    progress = Progress.for_stream()
    with progress.stage("loading specs"):
        specs, doc_findings = api.load_with_doc_findings(list(args.paths), docs=args.docs)
        if args.pages:
            doc_findings += api.doc_findings(args.pages, args.docs)
    if not api.layouts(specs) and not any(s.unbuilt for s in specs):  # as `check`: an empty report is no answer
        raise UsageError(f"nothing to report: no layouts in {' '.join(args.paths)}")
    jobs = args.jobs or api.default_jobs()
    with progress.stage(checking_label(len(api.layouts(specs)), len(api.map_layouts(specs)), len(specs)), total=api.check_size(specs)) as step:
        report = api.check_all(specs, timeout=args.timeout, jobs=jobs, doc_findings=doc_findings, progress=step)
    try:
        m = build(report, args.timeout, args.max_delta, progress=progress, references=refs)  # every check, then render
        n_svg = write_report(m, args.out)
    except (OutputError, OSError) as e:
        raise UsageError(str(e)) from None
    n_find = sum(len(e.findings) for e in m.entries) + len(m.other_findings)
    unexpected = sum(1 for e in m.entries for f in e.findings if not f.as_expected) + sum(
        1 for f in m.other_findings if not f.as_expected)
    print(f"{args.out}: report.md, report.html, {n_svg} svg; {len(m.results)} layouts, {n_find} findings, "
          f"{unexpected} unexpected" + ("" if report.as_expected else "  -> FAIL"))
    return 0 if report.as_expected else 1


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    r = subparsers.add_parser("report", help="write a Markdown + HTML report with fragment pictures")
    r.add_argument("paths", nargs="+", metavar="PATH", help="spec files, directories of specs, or doc pages")
    r.add_argument("--out", required=True, metavar="DIR",
                   help="output directory (created or replaced; must hold nothing but a previous report)")
    r.add_argument("--pages", action="append", metavar="PAGE", default=None,
                   help="a doc page or directory of pages (repeat for more): add the errata ingest finds in "
                        "their text (their layouts are not checked; use this with curated specs)")
    r.add_argument("--docs", metavar="DIR", action="append", default=[], help=inputs.DOCS_HELP)
    r.add_argument("--references", metavar="FILE", default=None,
                   help="add the section Independent references: the agreement matrix of a `ptx-verify crosscheck "
                        "--matrix --format json` file (e.g. reports/references.json)")
    r.add_argument("--timeout", type=options.seconds, default=DEFAULT_TIMEOUT, help=options.TIMEOUT_HELP)
    r.add_argument("--jobs", type=options.jobs, default=None, help=options.JOBS_HELP)
    r.add_argument("--max-delta", type=options.max_delta, default=MAX_DELTA,
                   help=f"constant-fix search: largest change to one constant (default {MAX_DELTA}, at most "
                        f"{MAX_DELTA_LIMIT}; 0 turns it off); the search also stops when its budget, "
                        "derived from --timeout, is spent, and the report says so")
    r.set_defaults(func=cmd_report)
