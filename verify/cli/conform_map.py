"""``ptx-verify conform`` of a ``[[layout]]`` (shared memory, Tensor Memory, storage): the map someone wrote,
as index code over the layout's inputs or a shared-memory tile in CuTe or Triton, against the spec's map.

Argument checking and printing only; the work is ``verify.api.conform_map``.  Bad input is one line on
stderr, exit 2 (``FILE:LINE:COL: error: ...``, ``argument:LINE:COL`` for text on the command line).
"""
from __future__ import annotations

import argparse
import sys

from .. import api
from ..errors import UsageError
from ..outputs import json as out_json
from . import inputs



def map_notations() -> dict[str, str]:
    """The notations ``conform`` reads a ``[[layout]]`` in, each with its option: those with a map reader, then
    those that read a shared-memory tile (the registry's readers that are ``conform`` options)."""
    flags = {n.name: n.flag for n in api.notations()}
    names = [r.name for r in api.map_notations()]
    names += [r.name for r in api.shared_notations() if r.name not in names]
    return {name: flags[name] for name in names if name in flags}

_FRAGMENT_ONLY = ("warps", "order", "block", "tensor", "thr_id", "threads", "elements")


def conform_map(args: argparse.Namespace, spec: api.MapLayout, params: dict[str, int]) -> int:
    from ..checks.map_conform import MapConformError
    from ..outputs.map_conform import render_map_conform
    for flag in _FRAGMENT_ONLY:
        if getattr(args, flag, None) is not None:
            raise UsageError(f"--{flag.replace('_', '-')} is for register fragments; {spec.id} is a {spec.kind} layout")
    used = [n for n in api.notations() if getattr(args, n.dest, None) is not None]
    known = map_notations()
    if not used or used[0].name not in known:
        raise UsageError(f"{spec.id} is a {spec.kind} layout: give it with "
                         + (" or ".join(known.values()) if spec.kind == "shared" else
                            "--formula (index code over " + ", ".join(d.name for d in spec.map.inputs) + ") or --table"))
    n = used[0]
    value = getattr(args, n.dest)
    source = "argument" if n.inline else ("<stdin>" if value == "-" else value)
    try:
        text = value if n.inline else inputs.read_input(value)
        result = inputs.evaluation_guard(source, lambda: api.conform_map(
            spec, n.name, text, type=args.type, tile=args.tile, params=params or None, source=source,
            timeout=args.timeout))
    except api.NotationError as e:
        print(e.one_line(), file=sys.stderr)
        return 2
    except (MapConformError, ValueError) as e:
        raise UsageError(str(e)) from None
    sys.stdout.write(out_json.to_json(result.to_json()) if args.format == "json" else render_map_conform(result))
    return result.exit_code()
