"""wmma fragments per architecture, from a reference: never doc-stated.

The PTX ISA leaves wmma's register layout unspecified ("The distribution of fragments loaded by the
threads in a warp is unspecified and is target architecture dependent", 9.7.14.4.1), so the catalog's
wmma layouts are ``UnspecifiedMap`` and ``check`` says ``n/a`` for them.  This module holds, as
**reference data**, the per-architecture maps that wmmae (the WMMA API Extension,
github.com/enp1s0/wmma_extension) publishes in its ``foreach`` functions: for each fragment type it
computes, per lane and fragment element ``x``, the index of the element in a 16-column (or, for the
row-major tf32 A, 8-column) matrix in the fragment's own memory order.  Each entry below is that
arithmetic rewritten by hand in the project's formula language as ``(lane, i) -> (row, col)`` of the
operand (A: M x K, B: K x N), with ``i`` wmmae's ``frag.x`` index (element ``i`` of the fragment: register
``i / elements_per_register``, the low half first), and its source ``wmmae <path>:<line>`` at
``WMMAE_COMMIT``.  Nothing is evaluated from the reference: the formulas are parsed by the formula grammar.

Every entry is ``reference_only``: the verdicts about it say what wmmae's map is (a valid fragment of the
shape, replicated as stated, related to the doc's mma layouts), never that the doc states it.

**Replication.**  wmma ``.f16`` A and B hold each matrix element twice (the doc's counts imply it: 8
``.f16x2`` registers x 32 lanes = 2 x 256).  wmmae's maps say where the copies are, and the model states
it rather than cutting it down:

* sm_70 (Volta quad pairs): lanes ``l`` and ``l ^ 8`` (A) or ``l ^ 4`` (B) hold the same elements at the
  same ``i``: ``copy = ("lane", 3)`` / ``("lane", 2)``;
* sm_75, sm_80: elements ``i`` and ``i + 8`` of one lane hold the same element (wmmae's
  ``frag_index_list = {x, x + 8}``): ``copy = ("i", 3)``;
* tf32 (sm_80, m16n16k8): no copy (4 elements x 32 lanes = 128 = 16 x 8).

``verify.checks.wmma_arch`` proves, with both engines, that each map is in range and covers the
operand, that its two copies (the map with the copy bit held at 0 and at 1) are the same map, and that one
copy is a bijection onto the operand: exactly two points per element.  Accumulators are not here: wmmae's
accumulator functions at this commit (``foreach_v``) map only one row or column (a vector), not the
fragment.
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from ..layout.dims import Dim
from ..layout.named import FormulaMap, formula_map

WMMAE_REPO = "github.com/enp1s0/wmma_extension"
WMMAE_COMMIT = "3b260b2bf05350363fd1bf403422ca54f1821070"
STATUS = "reference_only"
LABEL = "per-architecture map from wmmae (reference), not doc-stated"
ARCHS = ("sm_70", "sm_75", "sm_80")
MAJORS = ("row", "col")

_D = "include/wmma_extension/detail/"


@dataclass(frozen=True)
class ArchMap:
    """One wmma fragment type of one architecture as wmmae maps it.

    ``layout_id``: the catalog's (unspecified) wmma layout it is a map for; ``major``: the wmma fragment's
    ``row_major``/``col_major`` type parameter (the register map may depend on it: sm_70); ``formula``:
    ``(lane, i) -> (row, col)`` in the formula language; ``copy``: where the second copy of each element
    is (``("lane", b)``: lane bit ``b``; ``("i", b)``: element bit ``b``; ``None``: no copy);
    ``source``: ``wmmae <path>:<line>`` of the ``foreach`` it is read from."""

    arch: str
    layout_id: str
    major: str
    rows: int
    cols: int
    elements: int
    formula: str
    copy: tuple[str, int] | None
    path: str
    line: int

    status: str = STATUS

    @property
    def source(self) -> str:
        return f"wmmae {self.path}:{self.line}"

    @property
    def commit(self) -> str:
        return WMMAE_COMMIT

    @property
    def key(self) -> tuple[str, str, str]:
        return (self.arch, self.layout_id, self.major)

    @property
    def name(self) -> str:
        return f"{self.layout_id} {self.arch} {self.major}_major"

    @property
    def replication(self) -> int:
        return 1 if self.copy is None else 2

    def describe_copy(self) -> str:
        if self.copy is None:
            return "not replicated: each element held once"
        dim, bit = self.copy
        if dim == "lane":
            return f"replicated: lanes l and l ^ {1 << bit} hold the same elements (lane bit {bit})"
        return f"replicated: elements i and i ^ {1 << bit} of a lane hold the same element (element bit {bit})"

    def label_json(self) -> dict[str, str]:
        """What a user sees next to the map: the label, status, arch, major, source, commit, replication."""
        return {"label": LABEL, "status": self.status, "arch": self.arch, "major": self.major,
                "source": self.source, "commit": self.commit, "replication": self.describe_copy()}

    def label_text(self) -> str:
        return (f"{LABEL}: {self.arch} {self.major}_major, {self.source} (commit {self.commit[:12]}); "
                f"{self.describe_copy()}")

    def named(self) -> FormulaMap:
        """The map as a named map ``(lane, i) -> (row, col)`` (parsed by the formula grammar)."""
        return _named(self.formula, self.elements, self.rows, self.cols)


@lru_cache(maxsize=None)
def _named(text: str, elements: int, rows: int, cols: int) -> FormulaMap:
    return formula_map(text, (Dim("lane", 32), Dim("i", elements)), (Dim("row", rows), Dim("col", cols)))


# ----------------------------------------------------------------------------- the maps

# sm_70: A row_major holds a row per lane, A col_major four 4-element column pieces; B the transpose.
_SM70_A_ROW = """\
row = ((lane >> 2) & 1) * 8 + (lane >> 4) * 4 + (lane & 3)
col = i
"""
_SM70_A_COL = """\
row = ((lane >> 2) & 1) * 8 + (lane >> 4) * 4 + (i & 3)
col = (lane & 3) + (i >> 2) * 4
"""
_SM70_B_COL = """\
row = i
col = ((lane >> 3) & 1) * 8 + (lane >> 4) * 4 + (lane & 3)
"""
_SM70_B_ROW = """\
row = (lane & 3) + (i >> 2) * 4
col = ((lane >> 3) & 1) * 8 + (lane >> 4) * 4 + (i & 3)
"""
# sm_75 and sm_80 .f16: elements 0-7 as the mma fragments (groupID = lane >> 2, threadID_in_group =
# lane & 3); element bit 3 is not read: i and i + 8 are copies.
_F16_A = """\
row = (lane >> 2) + ((i >> 1) & 1) * 8
col = (lane & 3) * 2 + (i & 1) + ((i >> 2) & 1) * 8
"""
_F16_B = """\
row = (lane & 3) * 2 + (i & 1) + ((i >> 1) & 1) * 8
col = (lane >> 2) + ((i >> 2) & 1) * 8
"""
# sm_80 .tf32 (m16n16k8): A 16 x 8, B 8 x 16.
_TF32_A = """\
row = (lane >> 2) + (i & 1) * 8
col = (lane & 3) + ((i >> 1) & 1) * 4
"""
_TF32_B = """\
row = (lane & 3) + (i & 1) * 4
col = (lane >> 2) + ((i >> 1) & 1) * 8
"""

A16, B16 = "wmma.m16n16k16.A.f16", "wmma.m16n16k16.B.f16"
A8, B8 = "wmma.m16n16k8.A.tf32", "wmma.m16n16k8.B.tf32"


def _f16(arch: str, header: str, lines: tuple[int, int, int, int],
         texts: tuple[str, str, str, str], copies: tuple[tuple[str, int], tuple[str, int]]) -> tuple[ArchMap, ...]:
    """A col, A row, B col, B row (wmmae's order in each header)."""
    a_col, a_row, b_col, b_row = lines
    ta_col, ta_row, tb_col, tb_row = texts
    ca, cb = copies
    path = _D + header
    return (ArchMap(arch, A16, "row", 16, 16, 16, ta_row, ca, path, a_row),
            ArchMap(arch, A16, "col", 16, 16, 16, ta_col, ca, path, a_col),
            ArchMap(arch, B16, "row", 16, 16, 16, tb_row, cb, path, b_row),
            ArchMap(arch, B16, "col", 16, 16, 16, tb_col, cb, path, b_col))


MAPS: tuple[ArchMap, ...] = (
    _f16("sm_70", "sm_70.hpp", (11, 24, 37, 50), (_SM70_A_COL, _SM70_A_ROW, _SM70_B_COL, _SM70_B_ROW),
         (("lane", 3), ("lane", 2)))
    + _f16("sm_75", "sm_75.hpp", (10, 24, 38, 52), (_F16_A, _F16_A, _F16_B, _F16_B), (("i", 3), ("i", 3)))
    + _f16("sm_80", "sm_80.hpp", (10, 21, 32, 43), (_F16_A, _F16_A, _F16_B, _F16_B), (("i", 3), ("i", 3)))
    + (ArchMap("sm_80", A8, "row", 16, 8, 4, _TF32_A, None, _D + "sm_80_tf32.hpp", 22),
       ArchMap("sm_80", A8, "col", 16, 8, 4, _TF32_A, None, _D + "sm_80_tf32.hpp", 11),
       ArchMap("sm_80", B8, "row", 8, 16, 4, _TF32_B, None, _D + "sm_80_tf32.hpp", 44),
       ArchMap("sm_80", B8, "col", 8, 16, 4, _TF32_B, None, _D + "sm_80_tf32.hpp", 33))
)

_BY_KEY = {m.key: m for m in MAPS}


def covered_ids() -> tuple[str, ...]:
    """The catalog's wmma layout ids wmmae gives a map for (on some architecture), in catalog order."""
    return tuple(dict.fromkeys(m.layout_id for m in MAPS))


def archs_for(layout_id: str) -> tuple[str, ...]:
    return tuple(dict.fromkeys(m.arch for m in MAPS if m.layout_id == layout_id))


def lookup(layout_id: str, arch: str, major: str) -> ArchMap:
    """The entry for (``layout_id``, ``arch``, ``major``); ``KeyError`` with a message naming what is covered."""
    try:
        return _BY_KEY[(arch, layout_id, major)]
    except KeyError:
        pass
    if layout_id not in covered_ids():
        raise KeyError(f"wmmae gives no per-architecture map for {layout_id} (it covers "
                       + ", ".join(covered_ids()) + ")")
    raise KeyError(f"wmmae gives no map for {layout_id} on {arch} (it has "
                   + ", ".join(archs_for(layout_id)) + ")")


def majors(layout_id: str, arch: str) -> tuple[ArchMap, ...]:
    """The row- and col-major entries of one id on one architecture (empty if not covered)."""
    return tuple(m for m in MAPS if m.layout_id == layout_id and m.arch == arch)
