"""``ptx-verify ingest PAGE... [--out DIR]``: documentation pages -> spec files.

``register(subparsers)`` adds the subcommand to the main CLI; the work is in
``verify.catalog.ingest`` and ``verify.catalog.pages``.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ..catalog.pages import IngestError, ingest, write_all
from ..catalog.spec import load_spec_text
from ..errors import SpecError

def cmd_ingest(args: argparse.Namespace) -> int:
    try:
        result = ingest(args.pages)
        specs = result.specs()
        for name, text in specs:
            load_spec_text(text, name)  # never write a spec the loader would reject
    except IngestError as e:
        print(e.one_line(), file=sys.stderr)
        return 2
    except SpecError as e:  # pragma: no cover - an ingest bug, reported as bad input
        print(e.one_line(), file=sys.stderr)
        return 2
    if not specs:
        first = args.pages[0] if args.pages else "-"
        print(f"{first}:1:1: error: no 'Matrix Fragments for mma...' section with a fragment table found",
              file=sys.stderr)
        return 2
    if args.findings == "json":
        sys.stdout.write(json.dumps([f.to_json() for f in result.findings], indent=2, sort_keys=True) + "\n")
    elif args.findings == "text":
        for f in result.findings:
            if f.severity != "info" or args.verbose:
                print(f.one_line())
    if args.out:
        try:
            written = write_all(Path(args.out), specs)
        except OSError as e:
            print(f"{args.out}:1:1: error: cannot write: {e.strerror or e}", file=sys.stderr)
            return 2
        if args.findings != "json":
            for p in written:
                print(f"wrote {p}")
    elif args.findings != "json":
        for name, text in specs:
            sys.stdout.write(f"# ---- {name}\n{text}")
    return 0


def register(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:  # type: ignore[type-arg]
    p = subparsers.add_parser("ingest", help="turn documentation pages into spec files (one per section)")
    p.add_argument("pages", nargs="+", help="doc pages (.md, flattened .txt, .html) or directories of pages")
    p.add_argument("--out", metavar="DIR", help="write one spec per section into DIR (default: print them)")
    p.add_argument("--findings", choices=("text", "json", "none"), default="text",
                   help="report errata found in the text (default: text, warnings and errors)")
    p.add_argument("-v", "--verbose", action="store_true", help="also print info findings")
    p.set_defaults(func=cmd_ingest)
    return p
