"""The ``shared`` probe kind: the catalog's shared-memory map layouts (``kind = "shared"``) probed through
``smem_probes`` (ldmatrix through lane addresses, wgmma through a matrix descriptor), and why the other map
layouts cannot be probed.

A family is probed at one member: ``T`` (elements per 16-byte unit) bound to 8, the 16-bit elements the
probes' codes are, every other parameter at its smallest value.  The member is tiled (atom repeats dense,
along M first, then K, as the page's examples place them) and cut to the 64 x 16 A tile that
``wgmma.m64n16k16`` reads; that tile is what both probes write into shared memory:

* ``smem.ldmatrix.<id>``: ``ldmatrix.x4`` of its first 16 x 16 cells through the default lane pattern (an
  MN-major layout, whose 16-byte units run down a column, transposed first), each lane's register element
  decoded to the cell whose code it holds and compared with ``ldmatrix_fragment`` of the layout;
* ``smem.wgmma.<id>``: where a descriptor reads the tile (``checks.descriptor.derive`` finds one), wgmma
  with A through that descriptor and B the identity: each accumulator element is the code of the A cell the
  hardware read, compared with the descriptor model's reads.  A tcgen05 atom is read through the wgmma
  descriptor of the same swizzle mode (the probe runs on sm_90a; tcgen05 needs sm_100a).

Both probes build the shared-memory image from the layout under test, so what they confirm is that the
hardware, addressed as the layout says, reads the cells the layout says: for wgmma, that the descriptor's
swizzle mode reads this layout (the claim of the canonical tables).

A layout of 32-bit elements (the tf32 examples) is probed by ldmatrix only: each element (r, c) is written as
two 16-bit halves, half h at 16-bit offset 2 x offset + h (low half first: shared memory is little-endian),
i.e. as the 16-bit tile of ``rows x 2 cols`` half-cells (r, 2c + h) whose codes are 2 x (r x cols + c) + h;
``ldmatrix.b16`` reads 16-bit pieces, each decoded to (element, half) and judged: both halves of every
element must land where the layout puts the element (a misplaced half is a contradiction naming the
element).  No wgmma probe reads them: the wgmma probe writes f16 codes through ``m64n16k16.f16``, and a tf32
descriptor probe (``.f32.tf32.tf32``, K = 8) is not built.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..layout.dims import Dim
from ..layout.model import MapLayout
from ..layout.named import TableMap, evaluate_all
from ..layout.shared import SharedLayout, canonical, element_bits, from_map
from . import smem_probes as sp

T16 = 8  # T of 16-bit elements: 8 per 16-byte unit
ROWS, COLS = 64, 16  # the A tile of wgmma.m64n16k16


class NotProbed(ValueError):
    """Why a map layout has no shared-memory probe (one line)."""


@dataclass(frozen=True)
class ShProbe:
    """One shared-memory probe of one map layout: the program's description, the tile it writes and the
    cells a device following the layout reads at each (thread, i)."""

    probe: sp.SmemProbe
    layout_id: str
    member: tuple[tuple[str, int], ...]
    tile: SharedLayout
    predicted: Mapping[tuple[int, int], tuple[int, int] | None]
    how: str  # in words: what is read, through what
    bits: int = 16  # the layout's element bits: 32 reads its elements as 16-bit halves (``halves``)


def why_not(lay: MapLayout) -> str | None:
    """Why no probe reads ``lay`` at all (None: try the shared-memory probes)."""
    k = lay.kind
    if k == "storage":
        return ("a host/kernel storage layout (how a program stores scale factors or packed values in memory), "
                "read by no single instruction: nothing to probe")
    if k == "tmem":
        return ("a Tensor Memory layout (tcgen05 data path, packing, scale factors or tcgen05.cp): the tmem kind's "
                "(tmem_kind), not a shared-memory probe's")
    if k != "shared":
        return f"a {k} map layout: no probe kind reads it"
    ins = [d.name for d in lay.inputs]
    if ins != ["row", "col"]:
        return (f"maps ({', '.join(ins)}) -> ({', '.join(d.name for d in lay.outputs)}), not a (row, col) tile: "
                "the shared-memory probes read tiles")
    if lay.unit and lay.unit != "elements":
        return f"offsets in {lay.unit}: the shared-memory probes read element offsets"
    if lay.expect.get("injective") == "refuted":
        return "two cells share an offset (its spec expects injective refuted): no coded image names every cell"
    return None


def member(lay: MapLayout) -> tuple[MapLayout, tuple[tuple[str, int], ...], int]:
    """The member probed (T = 8: 16-bit elements; other parameters smallest), its binding, its element bits."""
    env = {p.name: (T16 if p.name == "T" and T16 in p.values else min(p.values)) for p in lay.params}
    if "T" in env:
        bits = 128 // env["T"]
    else:
        try:
            bits = element_bits(lay.doc_id.rsplit(".", 1)[-1])
        except ValueError:
            bits = 16 if "16-bit" in lay.note else 0
    bound = lay.instance(**env) if env else lay
    return bound, tuple(sorted(env.items())), bits


def tile_of(named: Any, rows: int, cols: int) -> SharedLayout:
    """The ``rows x cols`` layout tiled (dense repeats, M first, then K) or cut to the 64 x 16 A tile."""
    v = evaluate_all(named)
    if not v.ok.all():
        raise NotProbed("the layout leaves cells unplaced: the probes' image needs every cell")
    offs = v.out["offset"]
    span = int(named.outputs[0].at())
    if ROWS % rows:
        raise NotProbed(f"{rows} rows do not tile the {ROWS}-row A tile the probes read")
    if cols < COLS and COLS % cols:
        raise NotProbed(f"{cols} columns do not tile the {COLS}-column A tile the probes read")
    nm, nk = ROWS // rows, max(1, COLS // cols)
    if span * nm * nk > 8192:
        raise NotProbed(f"the tiled layout spans {span * nm * nk} 16-bit elements, past the probes' 16 KiB")
    table = tuple((r, c, int(offs[r % rows, c % cols]) + span * ((r // rows) + nm * (c // cols)))
                  for r in range(ROWS) for c in range(COLS))
    m = TableMap((Dim("row", ROWS), Dim("col", COLS)), (Dim("offset", span * nm * nk),), table)
    return from_map(m, 16, notation="catalog")


def halves(named: Any, rows: int, cols: int) -> Any:
    """A layout of 32-bit elements as its 16-bit halves: the ``rows x 2 cols`` map whose half-cell (r, 2c + h)
    sits at 16-bit offset 2 x offset(r, c) + h (h = 0 the low half, first in little-endian shared memory)."""
    v = evaluate_all(named)
    if not v.ok.all():
        raise NotProbed("the layout leaves cells unplaced: the probes' image needs every cell")
    offs = v.out["offset"]
    span = int(named.outputs[0].at())
    if 2 * span > 0xFFFF or 2 * rows * cols > 0xFFFF:
        raise NotProbed(f"{rows} x {cols} 32-bit elements over {span}: two 16-bit codes per element do not fit "
                        "the codes 0..0xFFFE")
    table = tuple((r, 2 * c + h, 2 * int(offs[r, c]) + h) for r in range(rows) for c in range(cols) for h in (0, 1))
    return TableMap((Dim("row", rows), Dim("col", 2 * cols)), (Dim("offset", 2 * span),), table)


def _transposed(t: SharedLayout) -> SharedLayout:
    v = evaluate_all(t.map)
    rows, cols = v.ok.shape
    table = tuple((c, r, int(v.out["offset"][r, c])) for c in range(cols) for r in range(rows))
    m = TableMap((Dim("row", cols), Dim("col", rows)), t.map.outputs, table)
    return from_map(m, 16, notation="catalog.T")


def build(lay: MapLayout, movement: Any, d_layout: Any) -> tuple[list[ShProbe], list[str]]:
    """The probes of one shared-memory map layout (``movement``: the ldmatrix.m8n8 spec layout, x4 member;
    ``d_layout``: wgmma.m64nNk16.D.f32 at N = 16, the accumulators of the descriptor probe, or None: no
    descriptor probe); ``NotProbed``
    says why none.  Also: why a probe is left out (a layout no descriptor reads has no wgmma probe)."""
    from ..checks.descriptor import derive
    from ..layout.smem_access import default_pattern, parse_access
    why = why_not(lay)
    if why:
        raise NotProbed(why)
    bound, env, bits = member(lay)
    if bits not in (16, 32):
        raise NotProbed(f"{bits or 'unknown'}-bit elements: the probes write 16-bit codes (a 32-bit element as two), "
                        "and no member of this layout holds 16-bit or 32-bit elements")
    rows, cols = bound.inputs[0].size, bound.inputs[1].size
    if not isinstance(rows, int) or not isinstance(cols, int):
        raise NotProbed("the member's extents are not fixed")
    if bits == 32:
        tile = tile_of(halves(bound.map, rows, cols), rows, 2 * cols)
    else:
        tile = tile_of(bound.map, rows, cols)
    tag = "" if not env else " (member " + ", ".join(f"{k}={v}" for k, v in env) + ")"
    out: list[ShProbe] = []
    acc = parse_access("ldmatrix.x4")
    pat = default_pattern(acc, 16)
    orient = [(tile, "")] if bits == 32 else [
        (tile, ""), (_transposed(tile), ", transposed (16-byte units run down a column)")]
    what = ("16 x 8 elements (16 x 16 16-bit halves)", " tiled to 64 x 8") if bits == 32 else ("16 x 16 cells", " tiled to 64 x 16")
    for t, note in orient:
        pred = sp.prediction_ldmatrix(t, movement, pat)
        if all(c is not None for c in pred.values()):
            p = sp.ldmatrix_probe(t, movement, pat, acc)
            p = _renamed(p, f"smem.ldmatrix.{lay.id}")
            out.append(ShProbe(p, lay.id, env, t, pred,
                               f"ldmatrix.x4 of the first {what[0]}{note} of {lay.id}{tag}{what[1]}", bits))
            break
    notes = [] if out else ["no ldmatrix probe: no orientation puts its 16-byte units at whole-unit offsets"]
    if bits == 32:
        notes.append("no wgmma probe: 32-bit elements (the wgmma probe reads f16 codes; no tf32 probe is built)")
        if not out:
            raise NotProbed("; ".join(notes))
        return out, notes
    if d_layout is None:
        notes.append("no wgmma probe: the wgmma.m64nNk16.D.f32 spec its accumulators follow is not loaded")
        if not out:
            raise NotProbed("; ".join(notes))
        return out, notes
    res = derive(tile, "wgmma")
    if res.status != "found":
        notes.append("no wgmma probe: no wgmma descriptor reads it" + (f" ({res.reasons[0]})" if res.reasons else ""))
    if res.status == "found" and res.descriptor is not None and res.descriptor.start == 0:
        b = canonical("K", "none", 16, m=2, k=1, base=16384)
        b_res = derive(b, "wgmma", "K")
        if b_res.descriptor is not None:
            major = res.major or "K"
            p = sp.wgmma_probe(tile, res.descriptor, major, b, b_res.descriptor)
            p = _renamed(p, f"smem.wgmma.{lay.id}")
            out.append(ShProbe(p, lay.id, env, tile, sp.prediction_wgmma(tile, res.descriptor, major, d_layout),
                               f"wgmma A through a {major}-major {res.descriptor.mode.name} descriptor over {lay.id}{tag} "
                               "tiled to 64 x 16"))
    if not out:
        raise NotProbed("; ".join(notes))
    return out, notes


def _renamed(p: sp.SmemProbe, pid: str) -> sp.SmemProbe:
    from dataclasses import replace
    return replace(p, id=pid)


def simulate(sh: ShProbe, source: Any = None) -> list[int]:
    """What a SIMULATED device prints: the predicted cells (``source(t, i)``: whose cell (t, i) holds on a
    deviating device)."""
    pred = dict(sh.predicted)
    if source is not None:
        pred = {(t, i): sh.predicted[source(t, i)] for (t, i) in sh.predicted}
    return sp.simulate(sh.probe, pred)


def _named(sh: ShProbe, cell: tuple[int, int] | None) -> tuple[str, list[int] | None]:
    """A decoded cell in the layout's terms: a 16-bit cell, or (32-bit elements) the element and its half."""
    if cell is None:
        return "None", None
    if sh.bits == 32:
        r, hc = cell
        return f"element ({r}, {hc // 2}) {('low', 'high')[hc % 2]} half", [r, hc // 2, hc % 2]
    return f"cell {cell}", list(cell)


def violations(sh: ShProbe, out: Sequence[int]) -> list[tuple[str, dict[str, Any]]]:
    got = sp.decode(sh.probe, out)
    found = []
    for (t, i), want in sorted(sh.predicted.items()):
        have = got.get((t, i))
        if have != want:
            (hw, hl), (ww, wl) = _named(sh, have), _named(sh, want)
            piece = "16-bit piece" if sh.bits == 32 else "element"
            found.append((f"thread {t}, {piece} {i}: the device read {hw}, the layout says {ww}",
                          {"thread": t, "i": i, "observed": hl, "expected": wl}))
    return found


def decoded(sh: ShProbe, out: Sequence[int]) -> list[list[Any]]:
    got = sp.decode(sh.probe, out)
    return [[t, i, *(_named(sh, c)[1] or (None,))] for (t, i), c in sorted(got.items())]


__all__ = ["NotProbed", "ShProbe", "build", "decoded", "member", "halves", "simulate", "tile_of", "violations", "why_not"]
