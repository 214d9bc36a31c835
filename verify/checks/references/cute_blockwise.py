"""CUTLASS's blockwise scale-factor storage (``storage.sf.cutlass.blockwise.*``), compiled host-only as part of ``cute``.

``cutlass/detail/blockwise_scale_layout.hpp``'s ``Sm1xxBlockwiseScaleConfig`` (``Sm100BlockwiseScaleConfig`` and
``Sm90BlockwiseScaleConfig`` are aliases of it), at its default majorness (MN-major SFA and SFB):

* ``Sm100BlockwiseScaleConfig<1, 128, 128>::tile_atom_to_shape_SFA(make_shape(M, 128, KB * 128, L))``: one fp32
  factor per row and 128-wide K block -> ``storage.sf.cutlass.blockwise.1x128``, read at ``(m, 128 kb, l)``;
* ``Sm100BlockwiseScaleConfig<1, 128, 128>::tile_atom_to_shape_SFB(make_shape(128, NB * 128, KB * 128, L))``: one
  factor per 128 x 128 block of B -> ``storage.sf.cutlass.blockwise.128x128``, read at ``(128 nb, 128 kb, l)``.

Each layout CuTe prints ((m or n, k, l) -> offset in fp32 elements) is evaluated at every point of the spec member
and compared as a map (``maps.same``, both engines).  The 128-wide modes have stride 0 in CUTLASS's layout: every
element of a block reads the one factor, so reading the block's first element is the block's factor.
"""
from __future__ import annotations

import itertools
import re
from pathlib import Path

from ...layout.notations import NotationError
from ...layout.notations.cute_compiled import Printed, Request
from .common import Evaluated

HEADER = "cutlass/detail/blockwise_scale_layout.hpp"
PREFIX = "Blockwise "
BLOCK = 128
CONFIG = f"cutlass::detail::Sm100BlockwiseScaleConfig<1, {BLOCK}, {BLOCK}>"
SPECS = {"storage.sf.cutlass.blockwise.1x128": ("SFA", "M"), "storage.sf.cutlass.blockwise.128x128": ("SFB", "NB")}


def blockwise_requests(root: Path, maps: list) -> list[Request]:
    """One request per member of each ``storage.sf.cutlass.blockwise.*`` spec (see the module docstring)."""
    try:
        text = (Path(root) / HEADER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    by = {m.id: m for m in maps}
    out = []
    for spec_id, (part, mn) in SPECS.items():
        spec = by.get(spec_id)
        if spec is None:
            continue
        at = text.find(f"tile_atom_to_shape_{part}(ProblemShape problem_shape)")
        line = text.count("\n", 0, at) + 1 if at >= 0 else 0
        names = [q.name for q in spec.params]
        for vals in itertools.product(*(q.values for q in spec.params)):
            env = dict(zip(names, vals))
            if part == "SFA":
                shape = f"make_shape({env['M']}, {BLOCK}, {env['KB'] * BLOCK}, {env['L']})"
            else:
                shape = f"make_shape({BLOCK}, {env['NB'] * BLOCK}, {env['KB'] * BLOCK}, {env['L']})"
            members = " ".join(f"{k}={v}" for k, v in sorted(env.items()))
            out.append(Request("expr", f"{PREFIX}{CONFIG}::tile_atom_to_shape_{part} {members} [{spec_id}]",
                               f"{CONFIG}::tile_atom_to_shape_{part}({shape})", HEADER, line))
    return out


def blockwise_layout(req: Request, p: Printed, maps: list) -> Evaluated:
    """CUTLASS's blockwise layout as the spec's map ``(l, m or nb, kb) -> offset``."""
    spec_id = req.name.rsplit("[", 1)[1].rstrip("]")
    spec = next((m for m in maps if m.id == spec_id), None)
    env = {k: int(v) for k, v in re.findall(r"\b(M|NB|KB|L)=(\d+)", req.name)}
    params = tuple(sorted(env.items()))
    name = req.name.split(" [")[0].removeprefix(PREFIX)
    text = f"{name} = {p.raw.get('Layout', ('?', 0))[0]}"
    try:
        if spec is None:
            raise KeyError(f"no spec {spec_id}")
        lay = p.layout("Layout")
        member = spec.instance(**env)
        names = [d.name for d in member.inputs]
        sizes = [int(d.size) for d in member.inputs]
        rows = []
        for point in itertools.product(*(range(n) for n in sizes)):
            at = dict(zip(names, point))
            first = at["m"] if "m" in at else at["nb"] * BLOCK
            coord = (first, at["kb"] * BLOCK) + ((at["l"],) if lay.rank() == 3 else ())
            rows.append((*point, lay(*coord)))
    except (NotationError, KeyError, ValueError) as e:
        return Evaluated(name, "", req.header, req.line, spec, params, text=text,
                         error=getattr(e, "message", str(e)))
    return Evaluated(name, "", req.header, req.line, spec, params, text=text, map_rows=tuple(rows))
