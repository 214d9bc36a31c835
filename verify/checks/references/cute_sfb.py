"""CuTe's scale factors of B in Tensor Memory (``tcgen05.sf.B.4x1``), compiled host-only as part of ``cute``.

``UMMA::tmem_sf_frg<sf_type, SFVecSize, 1, false, UMMA::TmemAllocMode::ScaleFactorDuplicated4by1>`` is the
allocator of the 1SM block-scaled traits' ``FrgTypeSFB`` on the 4x1 data path (``mma_traits_sm100.hpp``: "SFB, 4x1
data path", the branch it shares with SFA).  It is compiled for the MMA-partitioned shape ``((N, (SFVecSize, VS)),
1, 4 / VS)`` of one N x 4 scale-factor tile (4 K blocks: ``4 / VS`` MMAs of ``VS`` factors), for each ``VS`` and
``N`` of the spec, at the scale-factor type and ``SFVecSize`` of the kind that uses ``VS`` (as for A,
``cute_tmem.SF_TMEM_KINDS``).

CuTe's layout is read at every 1-D coordinate of its domain ``((((32, N / 32), REP), (SFVecSize, VS)), 1, MMAs)``
(``REP`` = 4 copies, one per lane quarter): copy ``q`` of row ``n``, element ``v`` of factor ``f`` of MMA ``m`` is
index ``n + N q + 4 N (v + SFVecSize f) + 4 N SFVecSize VS m``; K block ``kb`` of the tile is factor ``kb % VS``
of MMA ``kb / VS``, and its ``SFVecSize`` elements must share one address (else a finding).  The address is in
8-bit elements: lane ``a / 2^18``, 32-bit column ``a % 2^18 / 4``, byte ``a % 4`` (as ``cute_tmem.sf_tmem_layout``).
The map rows are the spec's ``(quarter, row, kb) -> (tmem_lane, tmem_col, byte)``.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from ...layout.corrections import in_use_of
from ...layout.notations import NotationError
from ...layout.notations.cute_compiled import Printed, Request
from .common import Evaluated

SPEC = "tcgen05.sf.B.4x1"
PREFIX = "SFB UMMA::tmem_sf_frg<"   # the request names (cute.evaluate dispatches on it)
HEADER = "cute/atom/mma_traits_sm100.hpp"
REP = 4
BLOCKS = 4   # the K blocks of one scale-factor tile


LANE_SHIFT = 16   # as cute_tmem's _LANE_SHIFT: a TMEM lane is 2^16 32-bit columns
SF_BITS = 8       # both scale-factor types are 8-bit: a 32-bit column holds 4


def _preferred_map(maps: list, spec_id: str) -> Any:
    by = {m.id: m for m in maps}
    return in_use_of(by, spec_id)


def eval_layout(layout: Any, coords: np.ndarray) -> np.ndarray:
    """The CuTe layout at 1-D coordinates (vectorised, int64)."""
    out = np.zeros(coords.shape, dtype=np.int64)
    x = coords.astype(np.int64)
    for s, d in layout.leaves():
        out += (x % s) * d
        x //= s
    return out


def sf_cells(lay: Any, rows: int, blocks: int, copies: int, sfv: int, nsf: int) -> tuple[np.ndarray, ...]:
    """(lane, column, byte) in Tensor Memory of each (row, K block, copy) of a scale-factor fragment laid out as
    ``((rows, copies), (sfv, nsf)), MMAs`` by CuTe: ``lay`` at every 1-D coordinate, the ``sfv`` elements of a
    factor required to be one address (else :class:`NotationError` naming the first that is not)."""
    r = np.arange(rows, dtype=np.int64)[:, None, None, None]
    kb = np.arange(blocks, dtype=np.int64)[None, :, None, None]
    q = np.arange(copies, dtype=np.int64)[None, None, :, None]
    v = np.arange(sfv, dtype=np.int64)[None, None, None, :]
    per_mma = copies * rows * sfv * nsf
    addr = eval_layout(lay, r + rows * q + copies * rows * (v + sfv * (kb % nsf)) + per_mma * (kb // nsf))
    if (addr != addr[..., :1]).any():
        i, j, c, _ = (int(x[0]) for x in np.nonzero(addr != addr[..., :1]))
        raise NotationError(f"row {i} K block {j} copy {c}: its {sfv} elements are not one scale factor")
    a = addr[..., 0]
    per = 32 // SF_BITS
    lane_size = (1 << LANE_SHIFT) * per
    return a // lane_size, (a % lane_size) // per, a % per


def sfb_requests(root: Path, maps: list, kinds: dict[int, tuple[str, int]]) -> list[Request]:
    """One request per (VS, N) of ``tcgen05.sf.B.4x1``, at the header line of the SFB 4x1 branch; ``kinds``: VS ->
    (scale-factor type, SFVecSize) of the kind that uses it (``cute_tmem.SF_TMEM_KINDS``)."""
    spec = _preferred_map(maps, SPEC)
    if spec is None:
        return []
    try:
        text = (Path(root) / HEADER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    at = text.find("struct tmem_sf_frg")
    branch = text.find("SFB,", at) if at >= 0 else -1
    line = text.count("\n", 0, branch if branch >= 0 else max(at, 0)) + 1 if at >= 0 else 0
    values = {q.name: tuple(q.values) for q in spec.params}
    out = []
    for vs in values.get("VS", ()):
        if vs not in kinds or BLOCKS % vs:
            continue
        sf_type, sfv = kinds[vs]
        frg = f"UMMA::tmem_sf_frg<{sf_type}, {sfv}, 1, false, UMMA::TmemAllocMode::ScaleFactorDuplicated4by1>"
        for n in values.get("N", ()):
            if n % 32:
                continue
            expr = (f"{frg}::make(make_shape(make_shape(Int<{n}>{{}}, make_shape(Int<{sfv}>{{}}, Int<{vs}>{{}})), "
                    f"Int<1>{{}}, Int<{BLOCKS // vs}>{{}})).layout()")
            out.append(Request("expr", f"SFB {frg} N={n} NSF={vs} MMAs={BLOCKS // vs} [{spec.id}]", expr, HEADER,
                               line))
    return out


def sfb_layout(req: Request, p: Printed, maps: list) -> Evaluated:
    """CuTe's SFB allocation as the spec's map (see the module docstring)."""
    spec_id = req.name.rsplit("[", 1)[1].rstrip("]")
    spec = _preferred_map(maps, spec_id)
    n_rows, nsf, mmas = (int(x) for x in re.findall(r"N=(\d+) NSF=(\d+) MMAs=(\d+)", req.name)[0])
    sfv = int(re.findall(r"tmem_sf_frg<[^,]+, (\d+),", req.name)[0])
    params = (("N", n_rows), ("VS", nsf))
    name = req.name.split(" [")[0].removeprefix("SFB ")
    text = f"{name} = {p.raw.get('Layout', ('?', 0))[0]}"
    try:
        if spec is None:
            raise KeyError(f"no spec {spec_id}")
        lay = p.layout("Layout")
        size = int(np.prod([s for s, _ in lay.leaves()]))
        if size != REP * n_rows * sfv * nsf * mmas or nsf * mmas != BLOCKS:
            raise NotationError(f"{lay} has {size} elements, not {REP} copies x {n_rows} rows x {sfv} x {nsf} x "
                                f"{mmas}")
        lane, col, byte = sf_cells(lay, n_rows, BLOCKS, REP, sfv, nsf)
        rows = []
        for i in range(n_rows):
            for j in range(BLOCKS):
                for c in range(REP):
                    rows.append((c, i, j, int(lane[i, j, c]), int(col[i, j, c]), int(byte[i, j, c])))
    except (NotationError, KeyError) as e:
        return Evaluated(name, "SFB", req.header, req.line, spec, params, text=text,
                         error=e.message if isinstance(e, NotationError) else str(e.args[0]))
    return Evaluated(name, "SFB", req.header, req.line, spec, params, text=text, map_rows=tuple(sorted(rows)))
