"""``ptx-verify check --triton FILE`` (``--cute TEXT``, ``--formula FILE``... every notation): a layout on its own,
plain bijectivity and Triton's rule (``api.check_given``).  Argument parsing and printing only.

The text is read as the operand of ``--as ID`` (its M, N, K, threads and element names), or on its own: a
notation that states its tile (Triton's shape, a table, a TileLang Fragment, a TiledMMA, index code with
``--threads``) needs nothing more; one that does not (a CuTe TV layout, index code over a warp) needs
``--tile ROWSxCOLS``, read as a C operand of that tile, a warp's 32 lanes holding ``ROWS x COLS / 32`` elements.
"""
from __future__ import annotations

import argparse
import sys

from .. import api
from ..errors import UsageError
from ..outputs import json as out_json
from . import inputs, options

# The notations whose text states its tile (read alone with no --tile); every other needs --tile or --as.
STATES_ITS_TILE = frozenset({"triton", "table", "tilelang", "tiled_mma"})
MAX_LIKE_ELEMENTS = 1024


def _like(args: argparse.Namespace, notation: str) -> api.Layout:
    from . import layouts
    tile = options.tile(args.tile)
    if args.as_id is not None:
        if tile is not None:
            raise UsageError("--tile is for a layout read on its own; --as ID gives the tile (the spec's operand)")
        lay = layouts._find(layouts._spec_layouts(args.specs), args.as_id)
        if isinstance(lay, api.MapLayout):
            raise UsageError(f"--as {lay.id}: a {lay.kind} [[layout]] is checked by `ptx-verify check` of its spec; "
                             "--as takes a register fragment")
        return lay
    if notation == "index" and getattr(args, "threads", None) is not None and getattr(args, "elements", None) is None:
        raise UsageError("index code with --threads on its own needs --elements N too (the elements each thread holds: "
                         "without a spec layout there is no default)")
    states = notation in STATES_ITS_TILE or (notation == "index" and getattr(args, "threads", None) is not None)
    if tile is None and not states:
        raise UsageError(f"the {notation} text does not state its tile: give --tile ROWSxCOLS (read as a C operand of "
                         "that tile) or --as ID (read as that layout's operand)")
    rows, cols = tile or (1, 1)
    elements = min(MAX_LIKE_ELEMENTS, max(1, rows * cols // 32))
    return api.layout_from_formula("row = 0\ncol = 0", operand="C", rows=rows, cols=cols, elements=elements,
                                   layout_id="given")


def cmd_check_given(args: argparse.Namespace) -> int:
    from . import layouts
    if args.paths:
        raise UsageError(f"give spec PATHs or a layout ({' '.join(args.paths)} and a notation flag): `check PATH` checks "
                         "specs, `check --triton FILE` one layout on its own")
    flag = layouts._given_flag(args)
    assert flag is not None
    params = options.params(args.param)
    like = _like(args, flag[0])
    given = inputs.evaluation_guard(like.id, lambda: layouts._given(args, like, params))
    given = layouts._named_given(given, args, "", flag)
    tile = options.tile(args.tile)
    if tile is not None and (given.rows, given.cols) != tile:
        raise UsageError(f"the {flag[0]} text states a {given.rows} x {given.cols} tile, but --tile says "
                         f"{tile[0]} x {tile[1]}")
    try:
        result = inputs.evaluation_guard(given.provenance.spec_path, lambda: api.check_given(given, args.timeout))
    except ValueError as e:
        raise UsageError(str(e)) from None
    from ..outputs.given_check import given_json, given_text
    if args.format == "json":
        sys.stdout.write(out_json.to_json(given_json(result)))
    elif args.format == "text":
        sys.stdout.write(given_text(result))
    else:
        raise UsageError(f"--format {args.format} is for spec files; a layout on its own is text or json")
    return 0 if result.valid else 1


def add_options(c: argparse.ArgumentParser) -> None:
    """The notation flags (one per registered notation) and what reading a layout on its own takes."""
    src = c.add_mutually_exclusive_group()
    for n in api.notations():
        src.add_argument(n.flag, metavar=n.metavar, default=None,
                         help="check this layout on its own (no PATH): " + n.help + ("" if n.inline else " ('-': stdin)"))
    for n in api.notations():
        for o in n.options:
            c.add_argument(o.flag, metavar=o.metavar, default=None, help=o.help)
    c.add_argument("--as", dest="as_id", metavar="ID", default=None,
                   help="with a notation flag: read the layout as this spec layout's operand (its M, N, K, threads, "
                        "element names)")
    c.add_argument("--tile", default=None, metavar="ROWSxCOLS",
                   help="with a notation flag and no --as: the tile a CuTe or index-code layout covers (a C operand)")
    c.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="with --as: the member of a family; index code reads it by name too")
    c.add_argument("--specs", default=None, metavar="PATH", help="with --as: spec files (default: the bundled specs)")
    c.set_defaults(given_flags=tuple(n.dest for n in api.notations()))


__all__ = ["STATES_ITS_TILE", "add_options", "cmd_check_given"]
