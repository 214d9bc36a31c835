"""``ptx-verify consistent --writer ... --reader ...``: does a consumer read every element where its producer
wrote it (storage layouts, Tensor Memory, scale factors), for every parameter value at once."""
from __future__ import annotations

import argparse
import sys

from ..errors import UsageError
from ..outputs.json import to_json
from . import inputs, options


def _params(items: list[str]) -> dict[str, int]:
    out = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            out[name.strip()] = int(value, 0)
        except ValueError:
            raise UsageError(f"--param {item!r}: expected NAME=INTEGER, e.g. --param VS=4") from None
        if not sep or not name.strip():
            raise UsageError(f"--param {item!r}: expected NAME=INTEGER, e.g. --param VS=4")
    return out


def cmd_consistent(args: argparse.Namespace) -> int:
    from .. import api  # noqa: PLC0415
    specs = api.load(inputs.paths_or_bundled(None) + list(args.specs))
    try:
        decision = api.consistent(args.writer, args.reader, specs, params=_params(args.param), timeout=args.timeout)
    except KeyError as e:
        raise UsageError(e.args[0]) from None
    except ValueError as e:
        raise UsageError(str(e)) from None
    if args.format == "json":
        sys.stdout.write(to_json(decision.to_json()))
    else:
        sys.stdout.write("\n".join(decision.text_lines()) + "\n")
    return 0 if decision.consistent else 1


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    c = subparsers.add_parser(
        "consistent", help="writer against reader: is every element read where it was written?",
        description="Decide with both engines, for every parameter value at once, whether READER (a loader, an "
                    "MMA's scale-factor ids) reads every element where WRITER (a quantization kernel, a host packer, "
                    "tcgen05.cp) wrote it; else give the first element written at one place and read from another, "
                    "reads out of range, overwrites and padding that is read.  Repeat --writer (or --reader) to "
                    "apply maps in order: a storage layout, then shared-memory rows, then tcgen05.cp.",
        epilog="examples:\n"
               "  ptx-verify consistent --writer storage.sf.flat_batch_padding --reader storage.sf.cutlass.128x4.quantizer\n"
               "  ptx-verify consistent --writer storage.sf.cutlass.128x4.tile --writer tcgen05.cp.source.32x128b \\\n"
               "      --writer tcgen05.cp.32x128b.warpx4 --reader tcgen05.sf.A.4x1\n\n"
               "exit codes: 0 consistent, 1 not (or undecided), 2 bad input",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    c.add_argument("--writer", action="append", required=True, metavar="ID",
                   help="a layout id (repeat to apply several in order)")
    c.add_argument("--reader", action="append", required=True, metavar="ID",
                   help="a layout id (repeat to apply several in order)")
    c.add_argument("--specs", action="append", default=[], metavar="PATH",
                   help="more spec files or directories, besides the bundled ones (your own [[layout]] entries)")
    c.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="bind a parameter of either side, e.g. --param VS=4")
    c.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    c.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    c.set_defaults(func=cmd_consistent)
