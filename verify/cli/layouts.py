"""``ptx-verify conform``, ``handoff`` and ``crosscheck``: the layouts people write, against the spec.

Argument parsing and printing only; the work is in ``verify.api`` (``checks/conform.py``,
``checks/handoff.py``, ``checks/crosscheck.py``).  Bad input is one line on stderr, exit 2:
``FILE:LINE:COL: error: ...`` for files (``<stdin>`` for ``-``), ``argument:LINE:COL: error: ...`` for
text given on the command line; nothing is written to stdout then.
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .. import api
from ..checks.fragment import BoundError
from ..engines.oracle import EvalError
from ..errors import UsageError
from ..files import read_bytes
from ..outputs import json as out_json
from . import inputs, options

CUTLASS_HINT = ("no CuTe headers: give --cute PATH (a CUTLASS checkout, its include/ or include/cute/atom, or an "
                "unzipped nvidia-cutlass wheel), or install them with: pip install 'ptx-layout-verify[cutlass]' "
                "(the nvidia-cutlass wheel ships cute/atom/mma_traits_sm*.hpp)")


class _BadInput(Exception):
    """Already formatted as one line: ``where: error: message``."""


def _spec_layouts(path: str | None) -> list:
    return api.load(inputs.paths_or_bundled([path] if path is not None else None))


def _find(specs: list, layout_id: str) -> api.Layout:
    try:
        return api.layout(specs, layout_id)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def _bad_input(path: str, line: int, col: int, message: str) -> _BadInput:
    return _BadInput(f"{path}:{line}:{col}: error: {message}")


def _read(path: str) -> bytes:
    """A layout file, or stdin for ``-``, by the one safe reader (regular files only, bounded)."""
    return read_bytes(path, error=_bad_input)


def _notation_error(e: api.NotationError) -> str:
    return e.one_line()  # source:LINE:COL, ``argument:LINE:COL`` for text given on the command line


def _given(args: argparse.Namespace, like: api.Layout, params: dict[str, int]) -> api.Layout:
    """The layout given with one of the registered notations' flags (``verify.layout.notations.registry``)."""
    for n in api.notations():
        value = getattr(args, n.dest, None)
        if value is None:
            continue
        text = value if n.inline else _read(value)
        source = "argument" if n.inline else ("<stdin>" if value == "-" else value)
        extra = {o.name: getattr(args, o.flag.lstrip("-").replace("-", "_")) for o in n.options}
        for other in api.notations():  # an option of another notation would be ignored: say so
            for o in other.options if other.name != n.name else ():
                if getattr(args, o.flag.lstrip("-").replace("-", "_"), None) is not None and o not in n.options:
                    raise UsageError(f"{o.flag} goes with {other.flag}, not {n.flag}")
        try:
            return api.given(n.name, text, like, source=source, params=params or None, **extra)
        except api.NotationError as e:
            raise _BadInput(_notation_error(e)) from None
        except api.FamilyError as e:
            raise UsageError(str(e)) from None
    raise UsageError("give the layout with " + ", ".join(n.flag for n in api.notations()))


def _evaluation_guard(where: str, fn):  # type: ignore[no-untyped-def]
    """Run ``fn``; a given layout that cannot be evaluated is bad input at its own position."""
    try:
        return fn()
    except EvalError as e:
        raise _BadInput(f"{where or 'argument'}:{max(1, e.pos.line)}:{max(1, e.pos.col)}: error: {e.message}") from None
    except BoundError as e:
        raise _BadInput(f"{where or 'argument'}:1:1: error: {e}") from None


def _emit(fmt: str, result) -> None:  # type: ignore[no-untyped-def]
    sys.stdout.write(out_json.to_json(result.to_json()) if fmt == "json" else result.render_text())


_MAP_NOTATIONS = {"index": "index", "cute": "cute", "triton": "triton"}  # registered notation -> map notation


def _conform_map(args: argparse.Namespace, spec: api.MapLayout, params: dict[str, int]) -> int:
    """``conform`` of a ``[[layout]]``: index code over its inputs, or a shared-memory tile in CuTe/Triton."""
    from ..checks.map_conform import MapConformError  # noqa: PLC0415
    from ..outputs.map_conform import render_map_conform  # noqa: PLC0415
    for flag in ("warps", "order", "block", "tensor", "thr_id", "threads", "elements"):
        if getattr(args, flag, None) is not None:
            raise UsageError(f"--{flag.replace('_', '-')} is for register fragments; {spec.id} is a {spec.kind} layout")
    used = [n for n in api.notations() if getattr(args, n.dest, None) is not None]
    if not used or used[0].name not in _MAP_NOTATIONS:
        flags = {"index": "--formula", "cute": "--cute", "triton": "--triton"}
        raise UsageError(f"{spec.id} is a {spec.kind} layout: give it with "
                         + (" or ".join(flags.values()) if spec.kind == "shared" else "--formula (index code over "
                            + ", ".join(d.name for d in spec.map.inputs) + ")"))
    n = used[0]
    value = getattr(args, n.dest)
    text = value if n.inline else _read(value)
    source = "argument" if n.inline else ("<stdin>" if value == "-" else value)
    try:
        result = _evaluation_guard(source, lambda: api.conform_map(spec, _MAP_NOTATIONS[n.name], text, type=args.type,
                                                                   tile=args.tile, params=params or None,
                                                                   source=source, timeout=args.timeout))
    except _BadInput as e:
        print(str(e), file=sys.stderr)
        return 2
    except api.NotationError as e:
        print(_notation_error(e), file=sys.stderr)
        return 2
    except (MapConformError, ValueError) as e:
        raise UsageError(str(e)) from None
    sys.stdout.write(out_json.to_json(result.to_json()) if args.format == "json" else render_map_conform(result))
    return result.exit_code()


def cmd_conform(args: argparse.Namespace) -> int:
    spec = _find(_spec_layouts(args.specs), args.id)
    params = options.params(args.param)
    if isinstance(spec, api.MapLayout):
        return _conform_map(args, spec, params)
    if args.type is not None or args.tile is not None:
        raise UsageError(f"--type and --tile are for shared-memory [[layout]]s; {spec.id} is a register fragment")
    try:
        given = _evaluation_guard(spec.id, lambda: _given(args, spec, params))
        if args.warps is not None:  # against "the instruction tiled as warps W over the block": equal or not
            block = args.block or (given.rows, given.cols)
            spec = api.block_tile(spec, args.warps, block, args.order or "triton", params=params or None)
            params = {}
        elif args.order is not None:
            raise UsageError("--order goes with --warps (the convention of the tiling it states)")
        result = _evaluation_guard(given.spec_path, lambda: api.conform(spec, given, args.timeout,
                                                                        params=params or None, block=args.block))
    except _BadInput as e:
        print(str(e), file=sys.stderr)
        return 2
    except (api.ConformError, api.FamilyError, api.BlockError) as e:
        raise UsageError(str(e)) from None
    _emit(args.format, result)
    return result.exit_code(args.allow_replication)


def cmd_handoff(args: argparse.Namespace) -> int:
    specs = _spec_layouts(args.specs)
    source, target = _find(specs, args.from_id), _find(specs, args.to_id)
    for lay in (source, target):
        if isinstance(lay, api.MapLayout):
            raise UsageError(f"{lay.id} is a {lay.kind} layout, not a register fragment: a writer and a reader of "
                             f"memory are compared with 'ptx-verify consistent --writer {source.id} --reader {target.id}'")
    try:
        result = api.handoff(source, target, args.timeout, params=options.params(args.param) or None)
    except (api.HandoffError, api.FamilyError) as e:
        raise UsageError(str(e)) from None
    _emit(args.format, result)
    return result.exit_code()


def cmd_crosscheck(args: argparse.Namespace) -> int:
    if args.matrix:
        matrix = api.references(_spec_layouts(args.specs), args.timeout, cute=args.cute)
        _emit(args.format, matrix)
        return matrix.exit_code()
    if args.reference != "cute-text":
        return _crosscheck_reference(args)
    root = args.cute if args.cute is not None else api.cutlass_headers()
    if root is None:
        raise UsageError(CUTLASS_HINT)
    if not Path(root).exists():
        raise UsageError(f"--cute {root}: no such file or directory")
    if not api.mma_headers(root):
        raise UsageError(f"no mma_traits_sm*.hpp under {root}; {CUTLASS_HINT}")
    specs = _spec_layouts(args.specs)
    try:
        report = api.crosscheck(root, specs, args.timeout)
    except api.NotationError as e:
        print(e.one_line(), file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{e.filename or root}:1:1: error: {e.strerror or 'cannot read'}", file=sys.stderr)
        return 2
    _emit(args.format, report)
    return report.exit_code()


def _crosscheck_reference(args: argparse.Namespace) -> int:
    """``crosscheck --reference NAME``: one independent reference against the spec (exit 2 with the reason
    when it cannot run here)."""
    if args.cute is not None and not Path(args.cute).exists():
        raise UsageError(f"--cute {args.cute}: no such file or directory")
    path = args.cute if args.reference == "cute" else None
    if path is None:
        why = api.reference_reasons()[args.reference]
        if why:
            raise UsageError(f"reference {args.reference} is unavailable: {why}")
    try:
        report = api.reference(args.reference, _spec_layouts(args.specs), args.timeout, path)
    except (FileNotFoundError, RuntimeError) as e:
        raise UsageError(f"reference {args.reference} is unavailable: {e}") from None
    _emit(args.format, report)
    return report.exit_code()


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``conform``, ``handoff`` and ``crosscheck``."""
    c = subparsers.add_parser("conform", help="is a layout you wrote (CuTe, Triton, index code, table) the spec's?")
    c.add_argument("id", help="the spec layout (an id from 'list', or a unique part of one)")
    src = c.add_mutually_exclusive_group(required=True)
    for n in api.notations():  # one flag per registered notation (verify/layout/notations/registry.py)
        src.add_argument(n.flag, metavar=n.metavar, help=n.help + ("" if n.inline else " ('-': stdin)"))
    for n in api.notations():
        for o in n.options:
            c.add_argument(o.flag, metavar=o.metavar, default=None, help=o.help)
    c.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=options.PARAM_HELP)
    c.add_argument("--block", type=options.block, default=None, metavar="MxN",
                   help="the block a block tile must cover, e.g. 128x256 (default: its own extent); exit 1 with the "
                        "first cell held by no thread or by two")
    c.add_argument("--warps", type=options.block, default=None, metavar="WMxWN",
                   help="compare with the spec tiled as WM x WN warps (warpgroups for a warpgroup's fragment) over "
                        "--block (default: the given's extent): equal or differs")
    c.add_argument("--order", choices=("triton", "triton-hopper", "cute"), default=None,
                   help="with --warps: which warp and which register repeat sit where (default triton: along N "
                        "first; triton-hopper: warps along M; cute: both along M)")
    c.add_argument("--type", default=None, metavar="TYPE",
                   help="against a shared-memory [[layout]]: the element type (f16, tf32, e4m3...) where the text "
                        "does not say it")
    c.add_argument("--tile", type=options.block, default=None, metavar="ROWSxCOLS",
                   help="against a shared-memory [[layout]]: the tile of a Triton shared encoding without a memdesc")
    c.add_argument("--allow-replication", action="store_true", help="exit 0 for a replicated layout too")
    c.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    c.add_argument("--specs", default=None, help="spec files or directory (default: the bundled specs)")
    c.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    c.set_defaults(func=cmd_conform)

    h = subparsers.add_parser("handoff", help="can one instruction's fragment feed another's operand without a shuffle?")
    h.add_argument("from_id", metavar="FROM_ID", help="the producing fragment (e.g. mma.m16n8k16.float.C.f32)")
    h.add_argument("to_id", metavar="TO_ID", help="the consuming operand (e.g. mma.m16n8k16.A.f16_bf16)")
    h.add_argument("--param", action="append", default=[], metavar="NAME=VALUE", help=options.PARAM_HELP)
    h.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    h.add_argument("--specs", default=None, help="spec files or directory (default: the bundled specs)")
    h.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    h.set_defaults(func=cmd_handoff)

    x = subparsers.add_parser("crosscheck", help="an independent reference (CuTe, Triton, tensor-layouts) against "
                                                 "the spec, layout by layout")
    x.add_argument("--reference", choices=("cute", "cute-text", "triton", "tensor-layouts"), default="cute-text",
                   help="cute: CuTe's traits compiled host-only (g++ and the CUDA headers); cute-text (default): "
                        "mma_traits_sm*.hpp read as text; triton: Gluon linear layouts; tensor-layouts: its atoms")
    x.add_argument("--matrix", action="store_true",
                   help="every reference that runs here: the agreement matrix of the catalog (exit 1 on a "
                        "difference not reviewed)")
    x.add_argument("--cute", metavar="PATH", default=None,
                   help="a CUTLASS checkout or include dir, or an unzipped nvidia-cutlass wheel "
                        "(default: the installed nvidia-cutlass)")
    x.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    x.add_argument("--specs", default=None, help="spec files or directory (default: the bundled specs)")
    x.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    x.set_defaults(func=cmd_crosscheck)
