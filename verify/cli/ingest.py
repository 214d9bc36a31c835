"""``ptx-verify ingest PAGE... [--out DIR]``: documentation pages -> spec files.

``register(subparsers)`` adds the subcommand to the main CLI; the work is in
``verify.catalog.ingest`` and ``verify.catalog.pages``.

Streams: stdout carries one kind of document only: the spec texts (no ``--out``; each after a
``# ---- NAME`` comment line, so one section is one valid spec file), or the findings as JSON
(``--findings json``), or the ``wrote PATH`` lines (``--out``).  Findings as text and the verdict
go to stderr.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from ..catalog.pages import ingest, page_spec, write_all
from ..errors import SpecError
from ..files import check_writable_dir, output_error
from ..outputs.json import to_json
from . import inputs


def cmd_ingest(args: argparse.Namespace) -> int:
    if args.out:
        check_writable_dir(args.out)  # refused before any work
    try:
        result = ingest(args.pages, args.docs)
        buildable = [(sec, name, text) for sec, (name, text) in zip(result.sections, result.specs())
                     if any(fr.formula for fr in sec.fragments)]
        for sec, name, text in buildable:
            page_spec(sec, name)  # never write a spec the reader would reject (errors at page positions)
    except SpecError as e:
        print(e.one_line(), file=sys.stderr)
        return 2
    if not result.sections:
        first = args.pages[0] if args.pages else "-"
        print(f"{first}:1:1: error: no 'Matrix Fragments for mma...' section with a fragment table found",
              file=sys.stderr)
        return 2
    if args.findings == "json":
        sys.stdout.write(to_json([f.to_json() for f in result.findings]))
    elif args.findings == "text":
        for f in result.findings:
            if f.severity != "info" or args.verbose:
                print(f.one_line(), file=sys.stderr)
    specs = [(name, text) for _, name, text in buildable]
    if args.out:
        try:
            written = write_all(Path(args.out), specs)
        except OSError as e:
            raise output_error(args.out, e) from None
        if args.findings != "json":
            for p in written:
                print(f"wrote {p}")
    elif args.findings != "json":
        for name, text in specs:
            sys.stdout.write(f"# ---- {name}\n{text}")
    if args.no_check:
        return 0
    # the verdict on the pages is the one ``check`` gives them: against the reviewed specs
    from .. import api  # noqa: PLC0415
    try:
        specs_, doc_findings = api.load_with_doc_findings(list(args.pages), against=args.against, docs=args.docs)
        report = api.check_all(specs_, doc_findings=doc_findings)
    except SpecError as e:
        print(e.one_line(), file=sys.stderr)
        return 2
    bad = [f for f in report.findings if not f.as_expected]
    print(f"ingest: {len(result.sections)} sections; against the reviewed specs: {len(bad)} unexpected finding(s)"
          + (" (see `ptx-verify check " + " ".join(args.pages) + "`)" if bad else ""), file=sys.stderr)
    return 0 if report.as_expected else 1


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    p = subparsers.add_parser(
        "ingest", help="turn documentation pages into spec files (one per section)",
        description="Read PTX ISA pages, write one spec per 'Matrix Fragments for ...' section, report the errata "
                    "of the text, and judge the pages as `check` does: against the reviewed specs.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("pages", nargs="+", help="doc pages (.md, flattened .txt, .html) or directories of pages")
    p.add_argument("--out", metavar="DIR",
                   help="write one spec per section into DIR (default: print them on stdout, each after a "
                        "'# ---- NAME' comment line)")
    p.add_argument("--findings", choices=("text", "json", "none"), default="text",
                   help="report errata found in the text: text (default: errors and warnings, on stderr), json "
                        "(the findings on stdout, in place of the specs) or none")
    p.add_argument("-v", "--verbose", action="store_true", help="also print notes")
    p.add_argument("--against", action="append", metavar="SPECS", default=None,
                   help="the reviewed specs the pages are judged by (a spec file or directory; repeat for more; "
                        "default: the bundled specs)")
    p.add_argument("--docs", metavar="DIR", action="append", default=[], help=inputs.DOCS_HELP)
    p.add_argument("--no-check", action="store_true", help="only write the specs; exit 0 unless the input is bad")
    p.set_defaults(func=cmd_ingest)
    return p
