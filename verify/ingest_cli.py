"""``ptx-verify ingest PAGE... [--out DIR]``: documentation pages -> spec files.

``register(subparsers)`` adds the subcommand to the main CLI; ``specs_from_pages``
is what ``ptx-verify check`` uses to accept pages (or directories of pages)
directly.  Writing is all-or-nothing: every spec is rendered first, then written
to a temporary file in the output directory and renamed into place.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Sequence

from .docpage import PageError
from .ingest import IngestResult, ingest_pages
from .spec import SpecError, load_spec_text

PAGE_SUFFIXES = (".md", ".txt", ".html", ".htm")


class IngestError(SpecError):
    """Bad input in a doc page, reported like a bad spec: one line ``file:line:col: error: msg``."""


def expand_pages(paths: Sequence[str | Path]) -> list[str]:
    """Files as given; directories expand to their page files, sorted."""
    out: list[str] = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(str(q) for q in sorted(p.iterdir()) if q.is_file() and q.suffix.lower() in PAGE_SUFFIXES)
        elif p.is_file():
            out.append(str(p))
        else:
            raise IngestError(str(p), 1, 1, "no such file or directory")
    return out


def ingest(paths: Sequence[str | Path]) -> IngestResult:
    try:
        return ingest_pages(expand_pages(paths))
    except PageError as e:
        raise IngestError(e.path, e.line, e.col, e.message) from None


def specs_from_pages(paths: Sequence[str | Path]) -> list[tuple[str, str]]:
    """[(spec file name, TOML text)] for every matrix-fragment section of the pages.

    Every text is checked with ``load_spec_text`` before it is returned, so a caller
    never receives a spec the loader would reject.
    """
    result = ingest(paths)
    out = result.specs()
    for name, text in out:
        load_spec_text(text, name)
    return out


def _write_all(out_dir: Path, specs: list[tuple[str, str]]) -> list[Path]:
    out_dir.mkdir(parents=True, exist_ok=True)
    temps: list[tuple[Path, Path]] = []
    try:
        for name, text in specs:
            fd, tmp = tempfile.mkstemp(prefix=".ingest-", suffix=".toml.tmp", dir=out_dir)
            with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            temps.append((Path(tmp), out_dir / name))
        for tmp, final in temps:
            os.replace(tmp, final)
    except BaseException:
        for tmp, _ in temps:
            try:
                tmp.unlink()
            except OSError:
                pass
        raise
    return [final for _, final in temps]


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
            written = _write_all(Path(args.out), specs)
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


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="ptx-verify")
    sub = parser.add_subparsers(dest="command", required=True)
    register(sub)
    args = parser.parse_args(["ingest", *(argv if argv is not None else sys.argv[1:])])
    return int(args.func(args))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
