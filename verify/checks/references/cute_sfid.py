"""CuTe's scale-factor ids of ``tcgen05.mma`` (``tcgen05.mma.m1n4.SFA.*``), compiled host-only as part of ``cute``.

Which byte of a Tensor Memory word an MMA reads for its ``SFA_ID`` is stated by CuTe in three places, all compiled
and run here (never re-typed): the allocator of one 128 x 4 scale-factor tile, ``UMMA::tmem_sf_frg<sf, SFVecSize,
1, true>::make(((128, (SFVecSize, VS)), 1, 4 / VS))`` (``cute/atom/mma_traits_sm100.hpp``: ``4 / VS`` MMAs of ``VS``
factors, the tensor a kernel slices per MMA, ``tCtSFA(_, _, k)``); ``tmem_ptr<T>::operator+``
(``cute/pointer.hpp``), which *rotates* an 8-bit element offset so its byte within the 32-bit column lands in
the address's bits 30-31; and ``UMMA::make_runtime_instr_desc_block_scaled(desc, tsfa_addr, tsfb_addr)``
(``cute/arch/mma_sm100_desc.hpp``, "The first 2-bits of TMEM address includes byte address"), which writes
``(tsfa_addr & 0xC0000000) >> 30`` into the instruction descriptor's ``a_sf_id_``: what the block-scaled traits'
``mma_unpack`` issues with ``raw_pointer_cast(SFA.data())`` of the MMA's slice.

For each ``VS`` (1X e8m0/32, 2X e8m0/32, 4X e4m3/16, as ``cute_tmem.SF_TMEM_KINDS``) the program evaluates, for MMA
``i`` of the tile, the descriptor's ``a_sf_id_`` for the slice ``t(_, _, i)`` and, for each factor ``j`` of row
``r`` of that MMA, CuTe's element address ``raw_pointer_cast(t.data() + t.layout()((r, (0, j)), 0, i))``: its
bits 30-31 (the byte) and the rest (lane and column).  It prints them as the strides of a layout of ``_1``
modes (a layout is what the compiled program prints): per MMA, the id, the number of rows whose factor ``j``
is not in row 0's byte, then (byte, word) per factor of row 0.  The MMA given ``SFA_ID = a_sf_id_`` is compared
with the spec member of that ``SFA_ID``: byte ``b_j`` of the word holds the MMA's factor ``j`` (row 0, column
``j`` of the spec's one-row fragment), the word's other bytes nothing of this MMA.  Factors of one MMA in two
words, a row whose bytes are not row 0's, or an id the spec does not allow are findings about the reference.
"""
from __future__ import annotations

import re
from pathlib import Path

from ...layout.model import Layout
from ...layout.notations import NotationError
from ...layout.notations.cute_compiled import Printed, Request
from .common import Entry, Evaluated

PREFIX = "SFID "     # the request names (cute.evaluate dispatches on it)
HEADER = "cute/atom/mma_traits_sm100.hpp"   # includes cute/arch/mma_sm100_desc.hpp
M1N4 = {1: "tcgen05.mma.m1n4.SFA.ue8m0.1x", 2: "tcgen05.mma.m1n4.SFA.ue8m0.2x",
        4: "tcgen05.mma.m1n4.SFA.ue8m0_ue4m3.4x"}
ROWS = 128
BLOCKS = 4           # the K blocks of one scale-factor tile
WORD_BYTES = 4


def _expr(sf_type: str, sfv: int, vs: int) -> str:
    """The C++ expression (a lambda called in place) whose value is the layout that carries CuTe's numbers."""
    mmas = BLOCKS // vs
    n = mmas * (2 + 2 * vs)
    frg = f"UMMA::tmem_sf_frg<{sf_type}, {sfv}, 1, true>"
    ones = ", ".join(["_1{}"] * n)
    vals = ", ".join(f"int(v[{k}])" for k in range(n))
    return (
        f"[] {{ auto t = {frg}::make(make_shape(make_shape(Int<{ROWS}>{{}}, make_shape(Int<{sfv}>{{}}, "
        f"Int<{vs}>{{}})), Int<1>{{}}, Int<{mmas}>{{}})); "
        f"uint32_t v[{n}] = {{}}; int n = 0; "
        f"for (int i = 0; i < {mmas}; ++i) {{ "
        f"uint32_t a = raw_pointer_cast(t(_, _, i).data()); "
        f"UMMA::InstrDescriptorBlockScaled d{{}}; "
        f"d.desc_ = uint32_t(UMMA::make_runtime_instr_desc_block_scaled<>(UMMA::InstrDescriptorBlockScaled{{}}, a, a) >> 32); "
        f"v[n++] = d.a_sf_id_; int off = n++; "
        f"for (int j = 0; j < {vs}; ++j) {{ "
        f"uint32_t e0 = raw_pointer_cast(t.data() + t.layout()(make_coord(make_coord(0, make_coord(0, j)), 0, i))); "
        f"v[n++] = e0 >> 30; v[n++] = e0 & 0x3FFFFFFFu; "
        f"for (int r = 1; r < {ROWS}; ++r) {{ "
        f"uint32_t e = raw_pointer_cast(t.data() + t.layout()(make_coord(make_coord(r, make_coord(0, j)), 0, i))); "
        f"if ((e >> 30) != (e0 >> 30)) ++v[off]; }} }} }} "
        f"return make_layout(make_shape({ones}), make_stride({vals})); }}()"
    )


def sfid_requests(root: Path, layouts: list, kinds: dict[int, tuple[str, int]]) -> list[Request]:
    """One request per VS whose ``tcgen05.mma.m1n4.SFA`` spec is in ``layouts``, at the line where the first
    block-scaled trait's ``mma_unpack`` builds its descriptor from the SFA address; ``kinds``: VS -> (scale-factor type, SFVecSize)."""
    ids = {lay.id for lay in layouts if isinstance(lay, Layout)}
    try:
        text = (Path(root) / HEADER).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    at = text.find("make_runtime_instr_desc_block_scaled<>(traits.idesc_, traits.tsfa_addr_")
    line = text.count("\n", 0, at) + 1 if at >= 0 else 0
    out = []
    for vs, spec_id in M1N4.items():
        if spec_id not in ids or vs not in kinds:
            continue
        sf_type, sfv = kinds[vs]
        name = (f"{PREFIX}UMMA::make_runtime_instr_desc_block_scaled(tmem_sf_frg<{sf_type}, {sfv}, 1, true> "
                f"NSF={vs} MMAs={BLOCKS // vs}) [{spec_id}]")
        out.append(Request("expr", name, _expr(sf_type, sfv, vs), HEADER, line))
    return out


def sfid_layouts(req: Request, p: Printed, layouts: list) -> list[Evaluated]:
    """One evaluated fragment per MMA of the tile: its bytes against the spec member of its ``SFA_ID``."""
    spec_id = req.name.rsplit("[", 1)[1].rstrip("]")
    spec = next((x for x in layouts if isinstance(x, Layout) and x.id == spec_id), None)
    vs, mmas = (int(x) for x in re.findall(r"NSF=(\d+) MMAs=(\d+)", req.name)[0])
    name = req.name.split(" [")[0].removeprefix(PREFIX)
    text = f"{name} = {p.raw.get('Layout', ('?', 0))[0]}"
    try:
        if spec is None:
            raise KeyError(f"no spec {spec_id}")
        lay = p.layout("Layout")
        leaves = lay.leaves()
        per = 2 + 2 * vs
        if len(leaves) != mmas * per or any(s != 1 for s, _ in leaves):
            raise NotationError(f"{lay} is not {mmas * per} values")
        vals = [d for _, d in leaves]
    except (NotationError, KeyError) as e:
        return [Evaluated(name, "SFA", req.header, req.line, spec, text=text,
                          error=e.message if isinstance(e, NotationError) else str(e.args[0]))]
    pname = next((q.name for q in spec.params), "")
    allowed = next((tuple(q.values) for q in spec.params), ())
    out = []
    for i in range(mmas):
        sid, moved, *cells = vals[i * per:(i + 1) * per]
        bytes_, words = cells[0::2], cells[1::2]
        what = f"{name}, MMA {i}: a_sf_id_ = {sid}"
        error = ""
        if sid not in allowed:
            error = f"MMA {i}'s descriptor has a_sf_id_ {sid}, no valid {pname} ({', '.join(map(str, allowed))})"
        elif len(set(words)) != 1:
            j = next(j for j, w in enumerate(words) if w != words[0])
            error = f"MMA {i}'s factor {j} is in TMEM word {words[j]:#x}, factor 0 in {words[0]:#x}: not one sub-column"
        elif moved:
            error = f"MMA {i}: {moved} (row, factor) pairs of rows 1-{ROWS - 1} are not in row 0's byte"
        elif len(set(bytes_)) != vs or any(not 0 <= b < WORD_BYTES for b in bytes_):
            error = f"MMA {i}'s {vs} factors are at bytes {bytes_}: not {vs} distinct bytes of one word"
        if error:
            out.append(Evaluated(what, "SFA", req.header, req.line, spec, ((pname, sid),), text=text, error=error))
            continue
        held = {b: j for j, b in enumerate(bytes_)}
        entries: tuple[Entry, ...] = tuple((0, b, 0, held[b]) if b in held else (0, b, None, None)
                                           for b in range(spec.n_elements))
        out.append(Evaluated(what, "SFA", req.header, req.line, spec, ((pname, sid),), entries, text))
    return out
