"""``ptx-verify conform``, ``handoff`` and ``crosscheck``: the layouts people write, against the spec.

Argument parsing and printing only; the work is in ``verify.api`` (``checks/conform.py``,
``checks/handoff.py``, ``checks/crosscheck.py``).  Bad input is one line on stderr, exit 2:
``FILE:LINE:COL: error: ...`` for files (``<stdin>`` for ``-``), ``argument:LINE:COL: error: ...`` for
text given on the command line; nothing is written to stdout then.
"""
from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from .. import api
from ..checks.members import read_values
from ..errors import UsageError
from ..outputs import json as out_json
from . import inputs, options

if TYPE_CHECKING:
    from ..outputs.text_results import Result


def _spec_layouts(path: str | None) -> list:
    return api.load(inputs.paths_or_bundled([path] if path is not None else None))


def _find(specs: list | str | None, layout_id: str) -> api.Layout | api.MapLayout:
    try:  # paths (None: the bundled specs): only the file that defines the id is loaded, where one does
        return api.layout(specs, layout_id) if isinstance(specs, list) else \
            api.find_layout(inputs.paths_or_bundled([specs] if specs is not None else None), layout_id)
    except KeyError as e:
        raise UsageError(e.args[0]) from None


def _read(path: str) -> bytes:
    """A layout file, or stdin for ``-``, by the one safe reader (regular files only, bounded)."""
    return inputs.read_input(path)


def _notation_error(e: api.NotationError) -> str:
    return e.one_line()  # source:LINE:COL, ``argument:LINE:COL`` for text given on the command line


def _opt_dest(flag: str, prefix: str = "") -> str:
    return prefix + flag.lstrip("-").replace("-", "_")


def _given(args: argparse.Namespace, like: api.Layout, params: dict[str, int], prefix: str = "",
           fallback: tuple[str, str] | None = None, strict: bool = True) -> api.Layout:
    """The layout given with one of the registered notations' flags (``verify.layout.notations.registry``).
    ``prefix``: ``to_`` for the flags of ``handoff``'s TO layout (``--to-triton``, ``--to-tensor``);
    ``fallback``: (notation, value) read when no flag of this prefix names the text (TO read from FROM's file)."""
    for n in api.notations():
        value = getattr(args, prefix + n.dest, None)
        if value is None and fallback is not None and fallback[0] == n.name:
            value = fallback[1]
        if value is None:
            continue
        text = value if n.inline else _read(value)
        source = "argument" if n.inline else ("<stdin>" if value == "-" else value)
        extra = {o.name: getattr(args, _opt_dest(o.flag, prefix), None) for o in n.options}
        for other in api.notations():  # an option of another notation would be ignored: say so
            for o in other.options if other.name != n.name else ():
                if getattr(args, _opt_dest(o.flag, prefix), None) is not None and o not in n.options:
                    flag = o.flag.replace("--", "--" + prefix.replace("_", "-"), 1)
                    raise UsageError(f"{flag} goes with {other.flag.replace('--', '--' + prefix.replace('_', '-'), 1)}"
                                     f", not {n.flag.replace('--', '--' + prefix.replace('_', '-'), 1)}")
        try:
            return api.given(n.name, text, like, source=source, params=params or None, strict=strict, **extra)
        except api.NotationError as e:
            raise inputs.BadInput(_notation_error(e)) from None
        except api.FamilyError as e:
            raise UsageError(str(e)) from None
    raise UsageError("give the layout with " + ", ".join(n.flag for n in api.notations()))


def _given_flag(args: argparse.Namespace, prefix: str = "") -> tuple[str, str] | None:
    """(notation, value) of the notation flag given with ``prefix``, or None."""
    for n in api.notations():
        value = getattr(args, prefix + n.dest, None)
        if value is not None:
            return n.name, value
    return None


def _given_options(args: argparse.Namespace, prefix: str = "") -> bool:
    return any(getattr(args, _opt_dest(o.flag, prefix), None) is not None for n in api.notations() for o in n.options)


def _named_given(lay: api.Layout, args: argparse.Namespace, prefix: str, flag: tuple[str, str]) -> api.Layout:
    """A given layout named by what was given (``triton ampere.ttgir #mma``), for handoff's output."""
    import dataclasses
    opts = [str(getattr(args, _opt_dest(o.flag, prefix))) for n in api.notations() if n.name == flag[0]
            for o in n.options if getattr(args, _opt_dest(o.flag, prefix), None) is not None]
    return dataclasses.replace(lay, id=" ".join([flag[0], flag[1], *opts]))


def _emit_result(fmt: str, result: "Result") -> None:
    from ..outputs.text_results import result_text
    sys.stdout.write(out_json.to_json(result.to_json()) if fmt == "json" else result_text(result))


def cmd_conform(args: argparse.Namespace) -> int:
    spec = _find(args.specs, args.id)
    params = options.params(args.param)
    if isinstance(spec, api.MapLayout):
        from .conform_map import conform_map
        return conform_map(args, spec, params)
    if args.type is not None or args.tile is not None:
        raise UsageError(f"--type and --tile are for shared-memory [[layout]]s; {spec.id} is a register fragment")
    spec, label = arch_spec(spec, args)
    try:
        given = inputs.evaluation_guard(spec.id, lambda: _given(args, spec, params))
        if args.warps is not None:  # against "the instruction tiled as warps W over the block": equal or not
            block = args.block or (given.rows, given.cols)
            spec = api.block_tile(spec, args.warps, block, args.order or "triton", params=params or None)
            params = {}
        elif args.order is not None:
            raise UsageError("--order goes with --warps (the convention of the tiling it states)")
        result = inputs.evaluation_guard(given.provenance.spec_path, lambda: api.conform(spec, given, args.timeout,
                                                                        params=params or None, block=args.block))
    except (api.ConformError, api.FamilyError, api.BlockError) as e:
        raise UsageError(str(e)) from None
    if label is None:
        _emit_result(args.format, result)
    elif args.format == "json":
        sys.stdout.write(out_json.to_json({**result.to_json(), "reference": label}))
    else:
        from ..outputs.text_results import result_text
        sys.stdout.write("against the " + label_line(label) + result_text(result))
    return result.exit_code(args.allow_replication)


def arch_spec(spec: api.Layout | api.MapLayout, args: argparse.Namespace) -> tuple[api.Layout, dict | None]:
    """``--arch``/``--major``: the wmma layout with wmmae's per-architecture map (reference, not doc-stated)
    and the label that says so; without ``--arch``, the spec as it is (``--major`` alone is a usage error)."""
    arch, major = getattr(args, "arch", None), getattr(args, "major", None)
    if arch is None:
        if major is not None:
            raise UsageError("--major goes with --arch (a per-architecture wmma map)")
        return spec, None  # type: ignore[return-value]
    if isinstance(spec, api.MapLayout):
        raise UsageError(f"--arch is for wmma layouts (per-architecture maps from wmmae); {spec.id} is a [[layout]]")
    try:
        entry = api.wmma_arch_entry(spec, arch, major, timeout=getattr(args, "timeout", 10.0))
    except api.ArchError as e:
        raise UsageError(str(e)) from None
    return api.wmma_arch_layout(spec, arch, entry.major), entry.label_json()


def label_line(label: dict) -> str:
    return (f"{label['label']}: {label['arch']} {label['major']}_major, {label['source']} "
            f"(commit {label['commit']}); {label['replication']}\n")


def add_arch_options(p: argparse.ArgumentParser) -> None:
    """``--arch`` and ``--major`` (conform, table): a wmma layout's per-architecture map from wmmae."""
    from ..catalog.wmma_arch import ARCHS, MAJORS
    p.add_argument("--arch", choices=ARCHS, default=None,
                   help="wmma only: use the per-architecture map from wmmae (reference, not doc-stated) for this "
                        "architecture; without it a wmma layout stays unspecified")
    p.add_argument("--major", choices=MAJORS, default=None,
                   help="with --arch: the wmma fragment's row_major or col_major type (needed where their maps "
                        "differ: sm_70)")


def cmd_handoff(args: argparse.Namespace) -> int:
    specs = _spec_layouts(args.specs)
    params = options.params(args.param)
    from_params, to_params = options.params(args.from_param, "--from-param"), options.params(args.to_param, "--to-param")
    from_flag, to_flag = _given_flag(args), _given_flag(args, "to_")
    if args.reduce is not None or args.xor is not None:
        return _reduce(args, specs, params, from_params, to_params, from_flag, to_flag)
    if args.to_id is None and from_flag is None and to_flag is None:
        raise UsageError("give TO_ID, or the layouts with a notation (--triton FILE --tensor A --to-tensor B)")
    source = _find(specs, args.from_id)
    target = _find(specs, args.to_id) if args.to_id is not None else source
    for lay in (source, target):
        if isinstance(lay, api.MapLayout):
            raise UsageError(f"{lay.id} is a {lay.kind} layout, not a register fragment: a writer and a reader of "
                             f"memory are compared with 'ptx-verify consistent --writer {source.id} --reader {target.id}'")
    assert not isinstance(source, api.MapLayout) and not isinstance(target, api.MapLayout)  # (refused just above)
    try:
        if from_flag is not None:
            read = read_values(source, target, params, from_params)
            source = _named_given(inputs.evaluation_guard(source.id, lambda: _given(args, source, read, strict=False)),
                                  args, "", from_flag)
        elif _given_options(args):
            raise UsageError("give FROM's layout with a notation (--triton FILE ...) for its options")
        if to_flag is not None or (from_flag is not None and _given_options(args, "to_")):
            flag = to_flag or from_flag  # --to-tensor alone: another tensor of FROM's file
            like, read_to = target, read_values(target, source, params, to_params)
            target = _named_given(inputs.evaluation_guard(like.id, lambda: _given(
                args, like, read_to, "to_", flag, strict=False)), args, "to_", flag)  # type: ignore[arg-type]
        elif _given_options(args, "to_"):
            raise UsageError("give TO's layout with a notation (--to-triton FILE ...) for its options")
        elif args.to_id is None:
            raise UsageError("give TO_ID, or TO's layout (--to-triton FILE, or --to-tensor for another tensor "
                             "of FROM's file)")
        result = api.handoff(source, target, args.timeout, params=params or None, from_params=from_params or None,
                             to_params=to_params or None)
    except (api.HandoffError, api.FamilyError) as e:
        raise UsageError(str(e)) from None
    _emit_result(args.format, result)
    return result.exit_code()


def _reduce(args: argparse.Namespace, specs: list, params: dict[str, int], from_params: dict[str, int],
            to_params: dict[str, int], from_flag: tuple[str, str] | None, to_flag: tuple[str, str] | None) -> int:
    """``handoff FROM --reduce row --xor 1,2``: a butterfly reduction inside FROM's fragment."""
    if args.reduce is None or args.xor is None:
        raise UsageError("--reduce and --xor go together: --reduce row --xor 1,2")
    if args.to_id is not None or to_flag is not None or _given_options(args, "to_") or to_params:
        raise UsageError("--reduce is inside FROM's fragment: give no TO")
    source = _find(specs, args.from_id)
    if isinstance(source, api.MapLayout):
        raise UsageError(f"{source.id} is a {source.kind} layout, not a register fragment: --reduce reduces a fragment")
    read = read_values(source, source, params, from_params)
    try:
        if from_flag is not None:
            source = _named_given(inputs.evaluation_guard(source.id, lambda: _given(args, source, read)), args, "",
                                  from_flag)
        elif _given_options(args):
            raise UsageError("give FROM's layout with a notation (--triton FILE ...) for its options")
        result = api.reduction(source, args.reduce, args.xor, args.timeout, params=read or None)
    except (api.FamilyError, api.ReduceError) as e:
        raise UsageError(str(e)) from None
    _emit_result(args.format, result)
    return result.exit_code()


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add ``conform`` and ``handoff`` (and ``crosscheck``, from its own module, after them)."""
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
    add_arch_options(c)
    c.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    c.add_argument("--specs", default=None, help="spec files or directory (default: the bundled specs)")
    c.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    c.set_defaults(func=cmd_conform)

    h = subparsers.add_parser("handoff", help="can one instruction's fragment feed another's operand without a shuffle?")
    h.add_argument("from_id", metavar="FROM_ID", help="the producing fragment (e.g. mma.m16n8k16.float.C.f32)")
    h.add_argument("to_id", metavar="TO_ID", nargs="?", default=None,
                   help="the consuming operand (e.g. mma.m16n8k16.A.f16_bf16); with given layouts, the operand TO's "
                        "layout is read as (default FROM_ID)")
    frm, to = h.add_mutually_exclusive_group(), h.add_mutually_exclusive_group()
    for n in api.notations():  # FROM and TO as written (block layouts of one kernel): --triton A --to-triton B
        frm.add_argument(n.flag, metavar=n.metavar, default=None, help="FROM as a " + n.help)
        to.add_argument(n.flag.replace("--", "--to-", 1), metavar=n.metavar, default=None,
                        help=f"TO in the notation of {n.flag}")
    for n in api.notations():
        for o in n.options:
            h.add_argument(o.flag, metavar=o.metavar, default=None, help="FROM's: " + o.help)
            h.add_argument(o.flag.replace("--", "--to-", 1), metavar=o.metavar, default=None,
                           help=f"TO's {o.flag} (alone: TO is read from FROM's file with it)")
    h.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a parameter's value on every side that has it, e.g. --param N=24; repeat for several. A name "
                        "both sides have and neither binds alone takes one value on both (the member a given "
                        "layout's extent fixes, or every member); other names every value")
    h.add_argument("--from-param", action="append", default=[], metavar="NAME=VALUE",
                   help="FROM's own parameter value (two families that share a name, bound apart: "
                        "--from-param NUM=1 --to-param NUM=2)")
    h.add_argument("--to-param", action="append", default=[], metavar="NAME=VALUE", help="TO's own parameter value")
    h.add_argument("--reduce", choices=("row", "col"), default=None,
                   help="instead of a TO: does a shfl.xor butterfly (--xor) reduce every row (col) of FROM's fragment "
                        "over exactly the lanes that own it? exact (exit 0) or inexact, with the lane pair that breaks it")
    h.add_argument("--xor", type=options.xor_masks, default=None, metavar="MASKS",
                   help="with --reduce: the butterfly's shfl.xor lane masks, e.g. 1,2 (the m16n8 accumulator's rows)")
    h.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    h.add_argument("--specs", default=None, help="spec files or directory (default: the bundled specs)")
    h.add_argument("--timeout", type=options.seconds, default=10.0, help=options.TIMEOUT_HELP)
    h.set_defaults(func=cmd_handoff)

    from .crosscheck import register as register_crosscheck
    register_crosscheck(subparsers)
