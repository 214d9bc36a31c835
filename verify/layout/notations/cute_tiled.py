"""CuTe ``TiledMMA`` as CuTe prints it: an MMA atom tiled over warps (``--tiled-mma FILE``).

``print(tiled_mma)`` (``cute/atom/mma_atom.hpp``) writes::

    TiledMMA
      ThrLayoutVMNK:  (_32,_2,_2,_1):(_1,_32,_64,_0)
      PermutationMNK: (_32,_32,_16)
    MMA_Atom
      ThrID:      _32:_1
      Shape_MNK:  (_16,_8,_16)
      LayoutA_TV: ((_4,_8),(_2,_2,_2)):((_32,_1),(_16,_8,_128))
      LayoutB_TV: ((_4,_8),(_2,_2)):((_16,_1),(_8,_64))
      LayoutC_TV: ((_4,_8),(_2,_2)):((_32,_1),(_16,_8))

This module reads that text (each field's CuTe layout with the CuTe reader, positions kept) and builds the
``TiledMMA``'s C (= D) layout over its tile as CuTe's ``get_layoutC_TV`` defines it: the atom's C fragment
(``LayoutC_TV`` over ``Shape_MNK``'s M x N), held by the units of ``ThrLayoutVMNK`` (thread ``t`` is the atom's
thread ``v`` of unit ``(m, n)`` where ``ThrLayoutVMNK(v, m, n, 0) = t``), repeated ``RestM x RestN`` times over
the tile (``PermutationMNK``'s sizes, or the atom times the units for ``_``), values ``(FrgV, (RestM, RestN))``
with RestM fastest: ``verify.layout.block.block_tile`` with the units where ``ThrLayoutVMNK`` puts them and
CuTe's repeat order.  The result is a block tile of ``size(ThrLayoutVMNK)`` threads; ``conform`` judges it
against the spec's C tile by tile (``tiled``).

Read here: the C/D operand, an atom whose ``ThrID`` is contiguous (``_32:_1``, ``_128:_1``), units along M and
N only (``ThrLayoutVMNK``'s K mode of size 1), and ``PermutationMNK`` entries that are sizes or ``_`` (a
permutation layout, which reorders rows or columns, is an error that says so).
"""
from __future__ import annotations

import re
from typing import Any

from .cute import tv_to_formula
from .cute_layout import CuteLayout
from .cute_parse import TokenStream, _parse_printed, iter_tokens
from .errors import NotationError, Positions, TVImport, decode_source
from .registry import Notation, register

FIELDS = ("ThrLayoutVMNK", "PermutationMNK", "ThrID", "Shape_MNK", "LayoutA_TV", "LayoutB_TV", "LayoutC_TV")
_FIELD = re.compile(r"^[ \t]*(" + "|".join(FIELDS) + r")[ \t]*:[ \t]*(\S[^\n]*?)[ \t]*$", re.MULTILINE)


def read_fields(text: str, source: str) -> dict[str, tuple[str, int, int]]:
    """Each field of the print: (value text, line, col)."""
    pos = Positions(text)
    out: dict[str, tuple[str, int, int]] = {}
    for m in _FIELD.finditer(text):
        if m.group(1) in out:
            line, col = pos.at(m.start(1))
            raise NotationError(f"{m.group(1)} is given twice", line, col, source)
        line, col = pos.at(m.start(2))
        out[m.group(1)] = (m.group(2), line, col)
    if "ThrLayoutVMNK" not in out or "LayoutC_TV" not in out:
        raise NotationError("expected print(tiled_mma) output: TiledMMA with ThrLayoutVMNK, PermutationMNK and its "
                            "MMA_Atom's ThrID, Shape_MNK and LayoutC_TV", 1, 1, source)
    return out


def _layout(fields: dict[str, tuple[str, int, int]], name: str, source: str) -> CuteLayout:
    value, line, col = fields[name]
    return _parse_printed(TokenStream(iter_tokens(value, source, line0=line, col0=col)), source)


def _sizes(fields: dict[str, tuple[str, int, int]], name: str, source: str, n: int) -> tuple[int | None, ...]:
    """``(_32,_32,_16)`` or ``(_,_,_)``: a size per mode, None for ``_``."""
    value, line, col = fields[name]
    inner = value.strip()
    if not (inner.startswith("(") and inner.endswith(")")):
        raise NotationError(f"{name}: expected ({', '.join(['...'] * n)})", line, col, source)
    parts = inner[1:-1].split(",")
    if len(parts) != n or any("(" in p or ":" in p for p in parts):
        raise NotationError(f"{name} {value}: only sizes or '_' per mode are read here (a permutation layout, which "
                            "reorders rows or columns, is not)", line, col, source)
    out: list[int | None] = []
    for p in parts:
        p = p.strip()
        if p == "_":
            out.append(None)
        elif re.fullmatch(r"_?[0-9]{1,5}", p):
            out.append(int(p.lstrip("_")))
        else:
            raise NotationError(f"{name}: {p!r} is neither a size nor '_'", line, col, source)
    return tuple(out)


def read_tiled_mma(text: str | bytes, like: Any, source: str = "argument") -> TVImport:
    """``print(tiled_mma)`` text -> the TiledMMA's C layout, built (``TVImport.built``) as a block tile."""
    from ..block import BlockError, block_tile
    from .build import to_layout
    raw = decode_source(text, source, limit=1 << 20)
    fields = read_fields(raw, source)
    if like.operand not in ("C", "D"):
        raise NotationError(f"the TiledMMA's {like.operand} operand is not read here: only C/D (LayoutC_TV), against "
                            "an accumulator spec", 1, 1, source)
    thr = _layout(fields, "ThrLayoutVMNK", source)
    where = fields["ThrLayoutVMNK"][1:]
    if thr.rank() != 4:
        raise NotationError(f"ThrLayoutVMNK {thr} has {thr.rank()} modes, not (V, M, N, K)", *where, source)
    nv, wm, wn, wk = (thr.mode(j).size() for j in range(4))
    if wk != 1:
        raise NotationError(f"ThrLayoutVMNK splits K over {wk} units: the C operand of such a TiledMMA is a sum "
                            "of partial tiles, not read here", *where, source)
    thr_id = _layout(fields, "ThrID", source) if "ThrID" in fields else None
    if thr_id is not None and (thr_id.size() != nv or any(thr_id(t) != t for t in range(nv))):
        raise NotationError(f"ThrID {thr_id}: only an atom over contiguous threads (_{nv}:_1) is read here",
                            *fields["ThrID"][1:], source)
    if "Shape_MNK" not in fields:
        raise NotationError("the print has no Shape_MNK (the atom's M x N x K): print it with a CUTLASS that writes "
                            "it, or add the line 'Shape_MNK: (_16,_8,_16)'", 1, 1, source)
    am, an, ak = (x or 0 for x in _sizes(fields, "Shape_MNK", source, 3))
    atom_tv = _layout(fields, "LayoutC_TV", source)
    if atom_tv.mode(0).size() != nv:
        raise NotationError(f"LayoutC_TV has {atom_tv.mode(0).size()} threads; ThrLayoutVMNK's V mode has {nv}",
                            *fields["LayoutC_TV"][1:], source)
    atom = to_layout(tv_to_formula(atom_tv, "C", am, an, max(1, ak), like.prefix, text=str(atom_tv), source=source),
                     like, source=source, layout_id=f"the atom's LayoutC_TV {atom_tv}")
    # unit (m, n) at ThrLayoutVMNK(0, m, n, 0) / V: which unit index each grid position is
    units: dict[int, tuple[int, int]] = {}
    for m in range(wm):
        for n in range(wn):
            t = thr(0, m, n, 0)
            if t % nv or t // nv in units or any(thr(v, m, n, 0) != t + v for v in range(nv)):
                raise NotationError(f"ThrLayoutVMNK {thr}: each (M, N) unit must be {nv} contiguous threads from a "
                                    f"multiple of {nv}", *where, source)
            units[t // nv] = (m, n)
    if sorted(units) != list(range(wm * wn)):
        raise NotationError(f"ThrLayoutVMNK {thr} does not number its units 0..{wm * wn - 1}", *where, source)
    perm = _sizes(fields, "PermutationMNK", source, 3) if "PermutationMNK" in fields else (None, None, None)
    tm = perm[0] or am * wm
    tn = perm[1] or an * wn
    try:
        built = block_tile(atom, (wm, wn), (tm, tn), "cute", warp_at=[units[u] for u in range(wm * wn)])
    except BlockError as e:
        raise NotationError(f"PermutationMNK: {e}", *fields.get("PermutationMNK", ("", 1, 1))[1:], source) from None
    return TVImport(atom.formula, built.threads, built.n_elements, raw.strip(), "tiled_mma", (tm, tn), "C",
                    built=built)


def _read(text: str | bytes, like: Any, *, source: str = "argument") -> TVImport:
    return read_tiled_mma(text, like, source)


register(Notation(
    "tiled_mma", "--tiled-mma", "FILE", False, "CuTe TiledMMA as print(tiled_mma) writes it (its C layout)", _read,
    order=4, api_doc="A CuTe ``TiledMMA`` as ``print(tiled_mma)`` writes it (``ThrLayoutVMNK``, ``PermutationMNK`` "
                     "and the atom's ``Shape_MNK`` and ``LayoutC_TV``): its C layout over the tile, a block tile."))
