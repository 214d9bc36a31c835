"""``ptx-verify``: a thin shell over ``verify.api``.  Exit codes: 0 as expected, 1 not, 2 bad input.

Commands: ``check`` (``verify.cli.check``), ``list``, ``table`` (here), ``pictures``, ``ingest``,
``probe``/``confirm``, ``report``, ``conform``/``handoff``/``crosscheck`` (``layouts``) in their own
modules; ``--help`` epilogs in ``verify.cli.epilogs``.
"""
from __future__ import annotations

import argparse
import functools
import gc
import sys
from typing import Callable, Sequence, TypeVar

from .. import __version__, api
from ..checks.fragment import BoundError
from ..engines.oracle import EvalError
from ..errors import SpecError, UsageError
from ..layout.model import MapLayout
from ..outputs import baseline as out_baseline
from ..outputs import json as out_json
from ..outputs import text as out_text
from ..outputs.progress import Progress
from . import check, epilogs, inputs, options


def _load(path: str | None) -> list:
    return api.load(inputs.paths_or_bundled([path] if path else None))


def cmd_list(args: argparse.Namespace) -> int:
    specs = _load(args.specs)
    lays, maps = api.layouts(specs), api.map_layouts(specs)
    if args.format == "json":
        sys.stdout.write(out_json.to_json(out_json.list_json(lays, maps)))
    else:
        sys.stdout.write(out_text.list_text(lays, maps))
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    if args.out and args.format != "svg":
        raise UsageError("--out FILE is for --format svg (text and json go to stdout)")
    if args.full and args.format != "svg":
        raise UsageError("--full is for --format svg")
    params = options.params(args.param)
    if args.out:  # refuse an unwritable picture before any work
        out_baseline.check_writable(args.out, out_baseline.PICTURE)  # never a file table did not draw
    specs = _load(args.specs)
    try:
        whole = api.layout(specs, args.id)
    except KeyError as e:
        raise UsageError(e.args[0]) from None
    from . import layouts
    flag = layouts._given_flag(args)
    if isinstance(whole, MapLayout):  # a map (its members are maps)
        member = _instance(whole, params, given=flag is not None)
        layouts.arch_spec(member, args)  # --arch/--major are for wmma fragments: refused here
        if flag is not None:
            member, whole, params = _given_map(member, whole, args, flag, params)
        elif layouts._given_options(args):
            raise UsageError("give the layout with a notation (--formula FILE ...) for its options")
        return _map_table(member, args, whole, params)
    lay = _instance(whole, params, given=flag is not None)
    if args.arch is not None and args.format == "svg":
        raise UsageError("--arch is for text and json (the label says the map is wmmae's, not the doc's)")
    lay, label = layouts.arch_spec(lay, args)
    if flag is not None:  # a layout as written (a block tile from a TTGIR dump...), drawn like a spec's
        # read against the family with --param naming its member, as conform reads it (the text may read them)
        like = whole if whole.params and lay is not whole and label is None else lay
        lay = layouts._named_given(inputs.evaluation_guard(like.id, lambda: layouts._given(args, like, params)),
                                   args, "", flag)
        if lay.is_family:  # index code over the family's parameters: one member is drawn
            _instance(whole, {k: v for k, v in params.items() if k in {p.name for p in whole.params}})
    elif layouts._given_options(args):
        raise UsageError("give the layout with a notation (--triton FILE ...) for its options")
    metadata = None
    if args.metadata is not None:
        try:
            metadata = int(args.metadata, 0)
        except ValueError:
            raise UsageError(f"--metadata {args.metadata!r} is not a number (e.g. 0x44444444)") from None
        if not 0 <= metadata < 2**32:
            raise UsageError(f"--metadata {args.metadata} does not fit a 32-bit register")
        if not lay.sparse:
            raise UsageError(f"--metadata is for a sparse A (mma.sp); {lay.id} has no metadata")
    if args.format == "svg":
        if metadata is not None:
            raise UsageError("--metadata is for text and json (the picture shows the compressed view)")
        from ..outputs.svg import layout_svg
        text = layout_svg(lay, full=args.full, by_warp=flag is not None and lay.threads > 32)
        if args.out:
            out_baseline.write_atomic(args.out, text)
        else:
            sys.stdout.write(text)
    elif args.format == "json":
        table = out_json.table_json(lay, metadata)
        sys.stdout.write(out_json.to_json(table if label is None else {**table, "reference": label}))
    else:
        sys.stdout.write(("" if label is None else layouts.label_line(label)) + out_text.table_text(lay, metadata))
    return 0


def _map_table(lay: MapLayout, args: argparse.Namespace, whole: MapLayout, params: dict[str, int]) -> int:
    """``table`` of a layout with no register facts (shared memory, Tensor Memory, storage); ``whole`` is the
    family ``lay`` is the member ``params`` of (the picture of a shared tile reads its element width off T)."""
    from ..outputs.map_table import map_table_json, map_table_text
    if args.metadata is not None:
        raise UsageError(f"--metadata is for a sparse A (mma.sp); {lay.id} has no metadata")
    if args.format == "svg":
        from ..outputs.svg_maps import map_svg
        text = map_svg(whole, params, full=args.full)
        if args.out:
            out_baseline.write_atomic(args.out, text)
        else:
            sys.stdout.write(text)
        return 0
    if args.format == "json":
        sys.stdout.write(out_json.to_json(map_table_json(lay)))
    else:
        sys.stdout.write(map_table_text(lay))
    return 0


_L = TypeVar("_L", api.Layout, MapLayout)


def _instance(lay: _L, params: dict[str, int], given: bool = False) -> _L:
    """The member of a family that ``--param`` names (``layout.params``: a family printed as one layout asks
    for its member; a name the layout does not have is an error naming the valid ones, unless a given layout's
    index code may read it: ``given``, checked when the code is read).  A fragment family with a given layout
    is returned whole: the given is read against it (the member its extent fixes, else asked for)."""
    from ..layout.params import FamilyError, check, need_member, own, side_of
    side = side_of(lay)
    chosen = own(params, side)
    try:
        check(chosen if given else params, [side])
        if given and not isinstance(lay, MapLayout) and any(p.name not in chosen for p in side.params):
            return lay  # the given is read against the family: the member its extent fixes, else asked for
        need_member(lay, chosen)
    except FamilyError as e:
        raise UsageError(str(e)) from None
    return lay.instance(**chosen) if lay.is_family else lay


def _given_map(lay: MapLayout, whole: MapLayout, args: argparse.Namespace, flag: tuple[str, str],
               params: dict[str, int]) -> tuple[MapLayout, MapLayout, dict[str, int]]:
    """``table MAP --formula FILE`` (``--table``, ``--cute``, ``--triton``): the map as written, read as the
    ``[[layout]]``'s member (``api.given_map``, as ``conform`` reads it), drawn in its place."""
    import dataclasses
    from . import conform_map, inputs as _inputs
    name, value = flag
    n = next(x for x in api.notations() if x.name == name)
    known = conform_map.map_notations()
    if name not in known:
        raise UsageError(f"{lay.id} is a {lay.kind} layout: give it with " + " or ".join(known.values()))
    source = "argument" if n.inline else ("<stdin>" if value == "-" else value)
    text = value if n.inline else _inputs.read_input(value)
    try:
        m, _ = _inputs.evaluation_guard(source, lambda: api.given_map(whole, name, text, params=params, source=source))
    except api.NotationError as e:
        raise _inputs.BadInput(e.one_line()) from None
    except ValueError as e:
        raise UsageError(str(e)) from None
    given = dataclasses.replace(lay, id=f"{name} {value if n.inline else source} as {lay.id}", map=m)
    return given, given, {}


def _with_progress(label: str, func: Callable[[argparse.Namespace], int]) -> Callable[[argparse.Namespace], int]:
    def run(args: argparse.Namespace) -> int:
        with Progress.for_stream().stage(label):
            return func(args)
    return run


def build_parser(command: str | None = None, words: Sequence[str] = ()) -> argparse.ArgumentParser:
    """The command line's parser.  Built once per text of ``--specs``'s default (which names the specs this
    directory would check, so it is looked up on every call): a proof script or test that calls ``main``
    many times in one process paid 13 ms a call for building the same parser again.  ``command="check"``:
    the parser with only that subcommand, without the options of a layout on its own (``--triton FILE``...),
    which parses a command line that starts with ``check`` and uses none of them exactly as the whole parser
    does (argparse hands everything after the name to the subcommand's parser), without loading the other
    commands' modules and the notations; ``words`` (the line after the command) with any other option, or
    ``--help``, gets the whole parser."""
    specs_help = inputs.default_help()
    if command == "check":
        only = _parser(specs_help, True)
        if _check_only_reads(only, words):
            return only
    return _parser(specs_help, False)


def _check_only_reads(only: argparse.ArgumentParser, words: Sequence[str]) -> bool:
    """Every option of ``words`` is one the check-only parser has (help aside: it lists the layout options)."""
    sub = options.subcommand(only, "check")
    known = set(sub._option_string_actions) - {"-h", "--help"}
    for word in words:
        if word == "--":
            break
        if word.startswith("-") and len(word) > 1 and word.partition("=")[0] not in known:
            return False
    return True


@functools.lru_cache(maxsize=8)
def _parser(specs_help: str, check_only: bool = False) -> argparse.ArgumentParser:
    """The parser whose ``--specs`` options say ``specs_help`` (every ``register`` asks ``default_help`` for
    it, in this same directory, while this builds).  argparse never changes a parser while parsing."""
    p = options.Parser(prog="ptx-verify", description="Verify PTX warp-level matrix fragment layouts.")
    p.add_argument("--version", action="version", version=f"ptx-verify {__version__}")
    sub = p.add_subparsers(dest="command", required=True, parser_class=options.Parser)

    check.register(sub, given=not check_only)
    if check_only:
        epilogs.add_epilogs(p, sub)
        return p
    lst = sub.add_parser("list", help="list the known layouts")
    lst.add_argument("--specs", default=None, metavar="PATH", help=specs_help)
    lst.add_argument("--format", choices=("text", "json"), default="text", help="text (default) or json")
    lst.set_defaults(func=cmd_list)

    t = sub.add_parser("table", help="the full mapping of one layout (text grid, JSON or an SVG picture)")
    t.add_argument("id", metavar="ID", help="a layout id from `list`, or a unique part of one")
    t.add_argument("--specs", default=None, metavar="PATH", help=specs_help)
    t.add_argument("--format", choices=("text", "json", "svg"), default="text",
                   help="text (default: a grid), json (entry by entry) or svg (a picture)")
    t.add_argument("--out", default=None, metavar="FILE",
                   help="svg: write the picture to FILE (atomically), not stdout")
    t.add_argument("--full", action="store_true",
                   help="svg: every cell, even of a large layout (default: condensed around its counterexamples)")
    t.add_argument("--metadata", default=None,
                   help="sparse A: the 32-bit metadata register (default: the spec's canonical value)")
    t.add_argument("--param", action="append", default=[], metavar="NAME=VALUE",
                   help="a family's parameter value, e.g. --param N=24 (wgmma D for N = 24); a family needs "
                        "one for each of its parameters, a layout that is not a family takes none")
    given = t.add_mutually_exclusive_group()
    for n in api.notations():  # the layout as written, read as ID's operand: a block tile is drawn by warp
        given.add_argument(n.flag, metavar=n.metavar, default=None,
                           help="draw this layout instead, read as ID's operand: " + n.help)
    for n in api.notations():
        for o in n.options:
            t.add_argument(o.flag, metavar=o.metavar, default=None, help=o.help)
    t.set_defaults(func=cmd_table)

    from . import confirm, diff, ingest, kernel, layouts, pictures, report, shared, storage
    layouts.add_arch_options(t)
    for module in (pictures, ingest, confirm, report, layouts, diff, storage, shared, kernel):
        module.register(sub)
    sub.choices["confirm"].set_defaults(func=_with_progress("confirm: building and running probes",
                                                            sub.choices["confirm"].get_default("func")))
    epilogs.add_epilogs(p, sub)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:  # a command-line run owns the process
        options.quiet_sigpipe()
        options.handle_signals()
        # Checks allocate millions of short-lived objects (Z3 term wrappers) and few cycles: collect
        # the young generation less often, and never trace what the imports left behind.
        gc.freeze()
        gc.set_threshold(20_000, 20, 20)
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        parser = build_parser(words[0] if words else None, words[1:])
        args = parser.parse_args(words)
        return int(args.func(args))
    except SpecError as e:
        print(e.one_line(), file=sys.stderr)
    except inputs.BadInput as e:
        print(str(e), file=sys.stderr)
    except (UsageError, BoundError) as e:
        print(f"ptx-verify: error: {e}", file=sys.stderr)
    except EvalError as e:
        print(f"ptx-verify: error: formula line {e.pos.line}, column {e.pos.col}: {e.message}", file=sys.stderr)
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:  # Ctrl-C: workers are stopped and partial outputs removed on the way here
        print("ptx-verify: interrupted", file=sys.stderr)
        return 130
    except options.Terminated as e:
        print(f"ptx-verify: terminated by signal {e.signum}", file=sys.stderr)
        return 128 + e.signum
    except OSError as e:  # a file operation no reader or writer anticipated: still one line, exit 2
        reason = (e.strerror or str(e)).lower()
        print(f"ptx-verify: error: {e.filename}: {reason}" if e.filename else f"ptx-verify: error: {reason}",
              file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
