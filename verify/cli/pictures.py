"""``ptx-verify pictures [PATH...] --out DIR [--full]``: one SVG picture per layout of a spec set.

``register(subparsers)`` adds the subcommand; the pictures are drawn by ``verify.outputs.svg`` and
written all at once by ``verify.outputs.report.write_tree`` (temp directory, then rename).
"""
from __future__ import annotations

import argparse

from .. import api
from ..errors import UsageError
from ..outputs.progress import Progress
from . import inputs


def cmd_pictures(args: argparse.Namespace) -> int:
    from ..files import Owns
    from ..outputs.report import SVG_MARK, check_tree, write_tree
    owns = Owns("a picture set", (("*.svg", SVG_MARK),))
    from ..outputs.svg import needs_condensing, picture_files
    check_tree(args.out, owns)  # refused before any work
    paths = inputs.paths_or_bundled(args.paths)
    progress = Progress.for_stream()
    from ..outputs import svg_maps
    with progress.stage("loading specs"):
        specs = api.load(paths)
        lays, maps = api.layouts(specs), api.map_layouts(specs)
    if not lays and not maps:
        raise UsageError(f"nothing to draw: no layouts in {' '.join(paths)}")
    files = picture_files(lays, full=args.full, progress=progress)
    files.update(svg_maps.map_picture_files(maps, full=args.full, progress=progress))
    files = dict(sorted(files.items()))
    write_tree(files, args.out, owns)
    condensed = 0 if args.full else (sum(1 for lay in lays if needs_condensing(lay.representative()))
                                     + sum(1 for m in maps if svg_maps.needs_condensing(m)))
    print(f"{args.out}: {len(files)} svg for {len(lays) + len(maps)} layouts"
          + (f" ({condensed} condensed, each with a .full.svg beside it)" if condensed else ""))
    return 0


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    p = subparsers.add_parser("pictures", help="write an SVG picture of every layout into a directory")
    p.add_argument("paths", nargs="*", metavar="PATH",
                   help="spec files, directories of specs, or doc pages (" + inputs.default_help() + ")")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output directory (created or replaced as a whole; must hold nothing but the .svg pictures "
                        "ptx-verify draws)")
    p.add_argument("--full", action="store_true",
                   help="draw every cell of large layouts too (default: a condensed picture that keeps the "
                        "counterexample cells in sight, plus ID.full.svg beside it)")
    p.set_defaults(func=cmd_pictures)
