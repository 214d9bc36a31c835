"""``ptx-verify diff OLD NEW``: which layouts changed meaning between two spec sets or doc releases."""
from __future__ import annotations

import argparse
import sys

from ..outputs import reports_text
from ..outputs.json import to_json
from . import options


def cmd_diff(args: argparse.Namespace) -> int:
    from .. import api
    from ..checks.diff import diff
    (old_release, old_sections), (new_release, new_sections) = api.release([args.old]), api.release([args.new])
    # spec files against the pages of one release: the facts of that release apply (a later one's are left out)
    old, old_f = api.load_with_doc_findings([args.old], release=(new_release or None) if not old_sections else None)
    new, new_f = api.load_with_doc_findings([args.new], release=(old_release or None) if not new_sections else None)
    result = diff(old, new, old_f, new_f, args.timeout, old_sections, new_sections, (old_release, new_release))
    if args.format == "json":
        sys.stdout.write(to_json(result.to_json()))
    else:
        sys.stdout.write("\n".join(reports_text.diff_lines(result)) + "\n")
    return 1 if result.differs else 0


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    d = subparsers.add_parser(
        "diff", help="which layouts changed meaning between two spec sets or two releases of the doc pages",
        description="Pair the layouts of OLD and NEW by their stable id and compare them: the maps with both "
                    "engines (first differing (lane, i)), the register facts, and the errata of the doc text (each "
                    "persisting, new or fixed; the sections of two releases paired by anchor and title, never by "
                    "number, and those renumbered, retitled, added or removed listed).")
    d.add_argument("old", metavar="OLD", help="spec files or doc pages (a file or a directory)")
    d.add_argument("new", metavar="NEW", help="the same, for the other version")
    d.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    d.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    d.set_defaults(func=cmd_diff)
