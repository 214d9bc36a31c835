"""``ptx-verify descriptor`` and ``ptx-verify banks``: shared-memory layouts against the matrix descriptors
and against the banks.  Argument parsing and printing only; the work is in ``verify.api`` (``shared_layout``,
``descriptor``, ``banks``).  Bad input is one line on stderr, exit 2."""
from __future__ import annotations

import argparse
import re
import sys

from .. import api
from ..catalog import bundled
from ..errors import UsageError
from ..formula import FormulaError
from ..outputs import json as out_json
from . import inputs, options

_EXIT = """
exit codes:
  0  {ok}
  1  {no}
  2  bad input: unreadable file, syntax error, unknown type, access or option value; one line on stderr
     (file:line:col: error: ... or ptx-verify: error: ...), nothing written"""

DESCRIPTOR_EPILOG = """\
examples:
  ptx-verify descriptor --cute "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_64,_64>{})"
  ptx-verify descriptor --triton smem.ttgir --type f16 --shape m64n128k16 --operand B --check 0x4000004000010040
  ptx-verify descriptor --formula swz.txt --tile 64x64 --type f16 --major K --instr tcgen05
""" + _EXIT.format(ok="a descriptor reads the layout (derived, or the --check one reads it exactly)",
                   no="none does (the reasons are printed), or the --check one reads another place (the first cell)")

BANKS_EPILOG = """\
examples:
  ptx-verify banks --cute "tile_to_shape(GMMA::Layout_K_SW128_Atom<half_t>{}, Shape<_128,_128>{})" --access ldmatrix.x4
  ptx-verify banks --formula swz.txt --tile 128x64 --type bf16 --access ld.shared.v4 --addresses lanes.txt
  ptx-verify banks --triton smem.ttgir --registers kernel.ttgir --tensor "#blocked" --access st.shared
""" + _EXIT.format(ok="conflict-free: every lane's cell is placed, every address aligned, no two lanes of a wavefront "
                      "group on one bank", no="a conflict (degree and two lanes with their addresses), or a misaligned or "
                                             "unplaced access")


def _layout(args: argparse.Namespace, params: dict[str, int]):
    """The tile and its side (``layout.params``): a family of the specs (``--id``), index code (``--formula``:
    the names of ``params`` it reads), or a notation that reads no parameter."""
    from ..layout.params import Side, index_side, own, side_of
    base = options.shared_address(args.base)
    tile = options.tile(args.tile)
    try:
        if args.id is not None:
            if tile is not None:
                raise UsageError("--tile is for --formula and --triton (a spec layout has its own extent)")
            specs = api.load(args.specs if args.specs else bundled.resolve().path)
            lay = api.layout(specs, args.id)
            if not isinstance(lay, api.MapLayout) or lay.kind != "shared":
                raise UsageError(f"{lay.id} is not a shared-memory layout")
            side = side_of(lay)
            return api.shared_from_map(lay, args.type, base, **own(params, side)), side
        for r in api.shared_notations():
            value = getattr(args, r.dest, None)
            if value is None:
                continue
            text = value if r.inline else inputs.read_input(value)
            source = "argument" if r.inline else "<stdin>" if value == "-" else value
            if not r.reads_params:
                return api.shared_layout(r.name, text, type=args.type, tile=tile, base=base, unit=args.unit,
                                         source=source), Side("")
            if r.needs_tile and (tile is None or args.type is None):
                raise UsageError(f"{r.flag} needs --tile ROWSxCOLS and --type")
            side, reading = Side(""), params
            if params:
                try:
                    side = index_side(f"{r.flag} {value}", text.decode("utf-8"), params, ("row", "col"))
                    reading = own(params, side)
                except (FormulaError, UnicodeDecodeError):
                    pass  # bad text: the reader says where
            lay = api.shared_layout(r.name, text, type=args.type, tile=tile, base=base, unit=args.unit, source=source,
                                    params=reading)
            return lay, side
        raise UsageError("give the shared-memory layout")
    except api.NotationError as e:
        raise inputs.BadInput(e.one_line()) from None
    except KeyError as e:
        raise UsageError(str(e.args[0])) from None
    except ValueError as e:
        raise UsageError(str(e)) from None


def _check_params(params: dict[str, int], *sides) -> None:
    """Every ``--param`` name had by a side (``layout.params``): one line naming the valid ones otherwise."""
    from ..layout.params import check
    try:
        check(params, sides)
    except ValueError as e:
        raise UsageError(str(e)) from None


def cmd_descriptor(args: argparse.Namespace) -> int:
    rows = k = None
    if args.shape is not None:
        m = re.fullmatch(r"m(\d{1,4})n(\d{1,4})k(\d{1,4})", args.shape)
        if not m:
            raise UsageError(f"--shape {args.shape!r}: write mMnNkK, e.g. m64n128k16")
        rows, k = (int(m.group(1)) if args.operand == "A" else int(m.group(2))), int(m.group(3))
    check = None
    if args.check is not None:
        try:
            check = int(args.check, 0)
        except ValueError:
            raise UsageError(f"--check {args.check!r} is not a number (e.g. 0x4000004000010040)") from None
    params = options.params(args.param)
    try:
        lay, side = _layout(args, params)
        _check_params(params, side)
        if k is not None and k * lay.element_bits != 256:
            raise UsageError(f"--shape {args.shape}: k{k} is not 32 bytes of {lay.element_bits}-bit elements "
                             f"(k{256 // lay.element_bits})")
        results = api.descriptor(lay, instr=args.instr, major=args.major, rows=rows, check=check, timeout=args.timeout)
    except ValueError as e:
        raise UsageError(str(e)) from None
    from ..outputs.shared_text import descriptor_json, descriptor_text
    if args.format == "json":
        sys.stdout.write(out_json.to_json(descriptor_json(lay, results)))
    else:
        sys.stdout.write(descriptor_text(lay, results))
    return 0 if all(r.ok for _, r in results) else 1


def cmd_banks(args: argparse.Namespace) -> int:
    if args.registers is not None:
        return _register_banks(args)
    if args.tensor is not None:
        raise UsageError("--tensor picks the tensor type of --registers' TTGIR")
    if args.full and not args.svg:
        raise UsageError("--full is for --svg FILE (the picture)")
    from ..layout.params import Side, index_side, own
    params = options.params(args.param)
    try:
        lay, side = _layout(args, params)
        addresses = None
        if args.addresses is not None:
            addresses = inputs.read_input(args.addresses).decode("utf-8", "strict")
        try:
            lanes = index_side(f"--addresses {args.addresses}", addresses, params, (), ("row", "col"), True) \
                if addresses and params else Side("")
            _check_params(params, side, lanes)
            result = api.banks(lay, args.access, addresses=addresses, timeout=args.timeout, params=own(params, lanes))
        except FormulaError as e:
            raise inputs.BadInput(f"{args.addresses}:{e.line}:{e.col}: error: {e.message}") from None
        except UnicodeDecodeError:
            raise inputs.BadInput(f"{args.addresses}:1:1: error: not UTF-8") from None
    except ValueError as e:
        raise UsageError(str(e)) from None
    from ..outputs.shared_text import banks_json, banks_text
    if args.svg:
        from ..outputs.baseline import PICTURE, check_writable, write_atomic
        from ..outputs.svg_shared import shared_svg
        check_writable(args.svg, PICTURE)
        write_atomic(args.svg, shared_svg(lay, result, full=args.full))
    sys.stdout.write(out_json.to_json(banks_json(lay, result)) if args.format == "json" else banks_text(lay, result))
    return 0 if result.ok else 1


def _register_banks(args: argparse.Namespace) -> int:
    """``banks --registers FILE``: the lane addresses derived from a register layout (``api.register_banks``)."""
    if args.addresses is not None:
        raise UsageError("--addresses and --registers both say where lanes address: give one")
    if args.svg:
        raise UsageError("--svg draws one lane pattern; with --registers each instruction has its own")
    text = inputs.read_input(args.registers)
    source = "<stdin>" if args.registers == "-" else args.registers
    params = options.params(args.param)
    try:
        lay, side = _layout(args, params)
        _check_params(params, side)
        result = api.register_banks(text, lay, args.access, tensor=args.tensor, source=source, timeout=args.timeout)
    except api.NotationError as e:
        raise inputs.BadInput(e.one_line()) from None
    except ValueError as e:
        raise UsageError(str(e)) from None
    from ..outputs.shared_text import banks_json, banks_text
    if args.format == "json":
        sys.stdout.write(out_json.to_json({**banks_json(lay, result.banks), "addresses": result.derivation.to_json()}))
    else:
        sys.stdout.write(result.derivation.text() + "\n" + banks_text(lay, result.banks, "instruction"))
    return 0 if result.ok else 1


def _inputs(p: argparse.ArgumentParser) -> None:
    src = p.add_mutually_exclusive_group(required=True)
    for r in api.shared_notations():
        src.add_argument(r.flag, metavar=r.metavar, help=r.help)
    src.add_argument("--id", metavar="ID", help="a shared-memory [[layout]] of the specs (a family: every member, or "
                     "the one --param names)")
    p.add_argument("--type", default=None, help="element type: f16, bf16, tf32, e4m3, s8, e2m1... (where the text "
                   "does not say it)")
    p.add_argument("--tile", default=None, metavar="ROWSxCOLS", help="the tile's rows x cols (--formula; --triton "
                   "without a memdesc)")
    p.add_argument("--unit", choices=("bytes", "elements"), default="bytes", help="--formula: what its offset counts")
    p.add_argument("--base", default="0", metavar="ADDR", help="the buffer's shared-memory address (default 0)")
    p.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=options.PARAM_HELP)
    p.add_argument("--specs", default=None, metavar="PATH", help="--id: spec files (default: the bundled specs)")
    p.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    p.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``descriptor`` and ``banks``."""
    d = subparsers.add_parser("descriptor", help="the wgmma/tcgen05 descriptor that reads a shared-memory layout "
                              "(or why none does); --check: does this one?", epilog=DESCRIPTOR_EPILOG,
                              formatter_class=argparse.RawDescriptionHelpFormatter)
    _inputs(d)
    d.add_argument("--instr", choices=("wgmma", "tcgen05"), default="wgmma",
                   help="whose descriptor: wgmma (64-bit, default) or tcgen05 (shared-memory descriptor)")
    d.add_argument("--major", choices=("K", "MN"), default=None, help="the operand's majorness (default: try both)")
    d.add_argument("--shape", default=None, help="the instruction shape, e.g. m64n128k16 (the tile's rows: M or N)")
    d.add_argument("--operand", choices=("A", "B"), default="A", help="with --shape: A (rows = M) or B (rows = N)")
    d.add_argument("--check", default=None, metavar="0x...", help="a 64-bit descriptor to decide")
    d.set_defaults(func=cmd_descriptor)

    b = subparsers.add_parser("banks", help="is a warp's shared-memory access to a layout free of bank conflicts?",
                              epilog=BANKS_EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    _inputs(b)
    b.add_argument("--access", required=True, help="ldmatrix.x4, ldmatrix.x4.trans, ldmatrix.m16n16.x2.trans, "
                   "stmatrix.x4, ld.shared.v4, st.shared.v2, ld.shared.b32...")
    b.add_argument("--addresses", default=None, metavar="FILE", help="index code, row = ... and col = ... over "
                   "lane: the cell each lane addresses (default: the mma-operand pattern)")
    b.add_argument("--registers", default=None, metavar="FILE",
                   help="a Triton register layout (#blocked, #mma, #ttg.linear, bases JSON, TTGIR) stored into or "
                        "loaded from the tile: the lane addresses and the vector width are derived as Triton lowers a "
                        "local_store/local_load, every instruction checked (--access st.shared or ld.shared)")
    b.add_argument("--tensor", default=None, metavar="TEXT",
                   help="with --registers: the tensor type of a TTGIR dump to read ('#blocked', '128x64')")
    b.add_argument("--svg", default=None, metavar="FILE", help="also draw the tile, cells coloured by bank (a tile "
                   "of more than 32 columns or 128 rows condensed around the conflict)")
    b.add_argument("--full", action="store_true", help="--svg: every cell, even of a large tile")
    b.set_defaults(func=cmd_banks)
