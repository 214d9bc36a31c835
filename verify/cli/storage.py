"""``ptx-verify consistent --writer ... --reader ...``: does a consumer read every element where its producer
wrote it (storage layouts, Tensor Memory, scale factors, shared-memory tiles), for every parameter value at once.

Each side is a layout id or ``NOTATION:TEXT`` (``verify.checks.consistency_sides``): ``cute:TEXT``,
``tma:ROWSxCOLS:MODE``, ``descriptor:0x...`` on the command line, ``triton:FILE`` and ``index:FILE`` from files
(``-``: stdin).  Bad text is one line ``argument:LINE:COL: error: ...`` (columns counted in the whole argument)
or ``FILE:LINE:COL: error: ...``, exit 2."""
from __future__ import annotations

import argparse
import re
import sys

from ..errors import UsageError
from ..outputs import reports_text
from ..outputs.json import to_json
from . import inputs, options



def _side(values: list[str], flag: str):
    """Each value: a layout id, or ``NOTATION:TEXT`` (a file for triton and index) as a ``Given``."""
    from ..checks.consistency_sides import Given, inline, notations
    prefix = re.compile("(" + "|".join(map(re.escape, notations())) + "):", re.S)
    out: list[object] = []
    for v in values:
        m = prefix.match(v)
        if m is None:
            out.append(v)
            continue
        kind, rest = m.group(1), v[m.end():]
        if inline(kind):
            out.append(Given(kind, rest, "argument", m.end() + 1))
            continue
        if not rest:
            raise UsageError(f"{flag} {kind}:FILE: give the file (or - for stdin)")
        out.append(Given(kind, inputs.read_input(rest), "<stdin>" if rest == "-" else rest))
    return out


def cmd_consistent(args: argparse.Namespace) -> int:
    from .. import api
    if args.full and not args.svg:
        raise UsageError("--full is for --svg FILE (the picture)")
    if args.svg:  # an output that cannot be written is refused before any work
        from ..outputs.baseline import check_writable
        check_writable(args.svg)
    try:
        writer, reader = _side(args.writer, "--writer"), _side(args.reader, "--reader")
        specs = api.load(inputs.paths_or_bundled(None) + list(args.specs))
        decision = api.consistent(writer, reader, specs, params=options.params(args.param), timeout=args.timeout,
                                  type=args.type, tile=options.tile(args.tile), base=options.shared_address(args.base), major=args.major,
                                  instr=args.instr, unit=args.unit)
    except api.NotationError as e:
        print(e.one_line(), file=sys.stderr)
        return 2
    except KeyError as e:
        raise UsageError(e.args[0]) from None
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.svg:
        from ..outputs.baseline import write_atomic
        from ..outputs.svg_consistent import consistent_svg
        write_atomic(args.svg, consistent_svg(decision, full=args.full))
    if args.format == "json":
        sys.stdout.write(to_json(decision.to_json()))
    else:
        sys.stdout.write("\n".join(reports_text.decision_lines(decision)) + "\n")
    return 0 if decision.consistent else 1


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    c = subparsers.add_parser(
        "consistent", help="writer against reader: is every element read where it was written?",
        description="Decide with both engines, for every parameter value at once, whether READER (a loader, an "
                    "MMA's scale-factor ids, a wgmma descriptor) reads every element where WRITER (a quantization "
                    "kernel, a host packer, tcgen05.cp, a TMA load, a swizzled store) wrote it; else give the first "
                    "element written at one place and read from another, reads out of range, overwrites and padding "
                    "that is read.  Repeat --writer (or --reader) to apply maps in order: a storage layout, then "
                    "shared-memory rows, then tcgen05.cp.  A side is a layout id or NOTATION:TEXT (cute:, tma:, "
                    "descriptor: on the command line; triton:FILE, index:FILE); a notation borrows the element "
                    "coordinates' and locations' names from the other side; with --type the notations are "
                    "shared-memory tiles (row, col) -> offset in elements.",
        epilog="examples:\n"
               "  ptx-verify consistent --writer storage.sf.flat_batch_padding --reader storage.sf.cutlass.128x4.quantizer\n"
               "  ptx-verify consistent --writer storage.sf.cutlass.128x4.tile --writer tcgen05.cp.source.32x128b \\\n"
               "      --writer tcgen05.cp.32x128b.warpx4 --reader tcgen05.sf.A.4x1\n"
               "  ptx-verify consistent --writer tma:64x64:128B --reader descriptor:0x4000004000010000 --type f16 --major K\n"
               "  ptx-verify consistent --writer storage.sf.cutlass.128x4.tile --reader 'cute:((32,4),4):((16,4),1)'\n\n"
               "exit codes: 0 consistent, 1 not (or undecided), 2 bad input (one line on stderr)",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--writer", action="append", required=True, metavar="SIDE",
                   help="a layout id or NOTATION:TEXT (cute:TEXT, tma:ROWSxCOLS:MODE[:col], triton:FILE, index:FILE); "
                        "repeat to apply several in order")
    c.add_argument("--reader", action="append", required=True, metavar="SIDE",
                   help="a layout id or NOTATION:TEXT (as --writer, and descriptor:0x... for what a matrix descriptor "
                        "reads of the writer's tile); repeat to apply several in order")
    c.add_argument("--specs", action="append", default=[], metavar="PATH",
                   help="more spec files or directories, besides the bundled ones (your own [[layout]] entries)")
    c.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter's value on every side that has it (a family's, or a name index code reads), "
                        "e.g. --param VS=4; repeat for several. Without it a family is decided for every member")
    c.add_argument("--type", default=None, help="shared memory: the element type (f16, bf16, tf32, e4m3...): the "
                   "notations are tiles (row, col) -> offset in elements, a shared spec's T is 128 / bits")
    c.add_argument("--tile", default=None, metavar="ROWSxCOLS", help="shared memory: the tile of index code or a "
                   "Triton encoding without a memdesc (default: the other side's)")
    c.add_argument("--base", default="0", metavar="ADDR", help="shared memory: the buffer's address (default 0)")
    c.add_argument("--unit", choices=("bytes", "elements"), default="bytes",
                   help="shared memory: what index code's offset counts (default bytes)")
    c.add_argument("--major", choices=("K", "MN"), default=None, help="descriptor: the operand's majorness")
    c.add_argument("--instr", choices=("wgmma", "tcgen05"), default="wgmma", help="descriptor: whose (default wgmma)")
    c.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    c.add_argument("--svg", default=None, metavar="FILE", help="also draw writer against reader, element by element "
                   "(where each is written and read, the counterexample outlined; a family at its member)")
    c.add_argument("--full", action="store_true", help="--svg: every cell, even of a large grid")
    c.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    c.set_defaults(func=cmd_consistent)
