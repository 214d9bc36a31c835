"""The tcgen05 zero-column mask descriptor (PTX ISA 9.1, 9.7.16.4.3, Table 45): which columns of ``B`` a
``tcgen05.mma.ws`` multiplies as zeros, and the column shift of the ``B`` it reads.

Pure functions over integers.  The 64-bit value: four 8-bit start counts ``sc0..sc3`` (bits 0-31), four 1-bit
first spans ``fs0..fs3`` (32-35), reserved 36-38, the non-zero-mask bit 39, an 8-bit skip span (40-47), an 8-bit
use span (48-55) and a 6-bit column shift (56-61).  The mask is N bits, one sub-mask per ``128 / M`` share of N
(M = 128: one of N bits; 64: two of N/2; 32: four of N/4), sub-mask ``i`` covering columns ``i*N/s`` on, its
bit ``j`` (counted from the least significant) column ``i*N/s + j``.  A 1-bit: the column is multiplied as
zeros.  Non-zero mask 0: the mask is all zeros.  Else sub-mask ``i`` is a run of ``fs_i`` followed by runs of
alternating value, the runs of 1s ``skip span + 1`` columns long and the runs of 0s ``use span + 1`` long, with
its first ``sc_i`` bits dropped.

``reading`` says which of the page's two statements of the spans is followed:

* ``"examples"`` (the default): the page's four worked examples, where a run of 1s (columns multiplied as zeros)
  is ``skip span + 1`` long; CUTLASS's ``MaskAndShiftB`` (``cute/arch/mma_sm100_desc.hpp``) says the same
  ("skip_span_: ... consecutive columns where 0 value is used");
* ``"table"``: Table 45's field descriptions, which give the skip span as the count of columns where ``B`` is
  used and the use span as the count where 0s are used: the other way round, which none of the examples shows.

The column shift moves the ``B`` columns read: MMA column ``n`` reads column ``n + shift`` of the ``B`` the
descriptor describes (the page's example: with a shift of 2 and N = 128, columns 2 to 129 are used); at most
16 for M = 32 and 32 otherwise.  Where the mask and the shift meet, the page is silent; this model applies the
mask to the MMA's columns (bit ``n`` zeroes what MMA column ``n`` multiplies), as CUTLASS's convolution kernels
build it (``make_column_zero_mask``: the mask of each filter position's shift covers the CTA's own columns).
"""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Callable

from .descriptor import Field
from .dims import Dim

if TYPE_CHECKING:
    from .named import FormulaMap

FIELDS = (Field("sc0", 0, 8), Field("sc1", 8, 8), Field("sc2", 16, 8), Field("sc3", 24, 8),
          Field("fs0", 32, 1), Field("fs1", 33, 1), Field("fs2", 34, 1), Field("fs3", 35, 1),
          Field("reserved", 36, 3), Field("non_zero_mask", 39, 1), Field("skip_span", 40, 8),
          Field("use_span", 48, 8), Field("shift", 56, 6))
READINGS = ("examples", "table")
SUB_MASKS = {128: 1, 64: 2, 32: 4}


@dataclass(frozen=True)
class ZeroColumnMask:
    """A decoded zero-column mask descriptor."""
    start_counts: tuple[int, int, int, int]
    first_spans: tuple[int, int, int, int]
    non_zero_mask: int
    skip_span: int                     # the field's value (a count minus one)
    use_span: int
    shift: int

    def encode(self) -> int:
        v = 0
        for i in range(4):
            v = FIELDS[i].put(v, self.start_counts[i])
            v = FIELDS[4 + i].put(v, self.first_spans[i])
        for name in ("non_zero_mask", "skip_span", "use_span", "shift"):
            v = _field(name).put(v, getattr(self, name))
        return v


def _field(name: str) -> Field:
    return next(f for f in FIELDS if f.name == name)


def decode(value: int) -> ZeroColumnMask:
    """The fields of a 64-bit value; ``ValueError`` naming the field for reserved bits that are set or bits above
    bit 61."""
    if not 0 <= value < (1 << 64):
        raise ValueError(f"a zero-column mask descriptor is a 64-bit value, not {value:#x}")
    if value >> 62:
        raise ValueError(f"bits 62-63 of zero-column mask descriptor {value:#x} are set (Table 45 ends at bit 61)")
    if _field("reserved").get(value):
        raise ValueError(f"reserved bits 36-38 of zero-column mask descriptor {value:#x} are set")
    g = {f.name: f.get(value) for f in FIELDS}
    return ZeroColumnMask((g["sc0"], g["sc1"], g["sc2"], g["sc3"]), (g["fs0"], g["fs1"], g["fs2"], g["fs3"]),
                          g["non_zero_mask"], g["skip_span"], g["use_span"], g["shift"])


def max_shift(m: int) -> int:
    """The largest column shift the page allows for an M: 16 for M = 32, 32 otherwise."""
    return 16 if m == 32 else 32


def sub_mask_bit(d: ZeroColumnMask, i: int, j: int, reading: str = "examples") -> int:
    """Bit ``j`` of sub-mask ``i`` (1: multiplied as zeros)."""
    if reading not in READINGS:
        raise ValueError(f"reading is one of {', '.join(READINGS)}, not {reading!r}")
    if not d.non_zero_mask:
        return 0
    ones, zeros = (d.skip_span + 1, d.use_span + 1) if reading == "examples" else (d.use_span + 1, d.skip_span + 1)
    first = d.first_spans[i]
    q = (j + d.start_counts[i]) % (ones + zeros)
    return (1 if q < ones else 0) if first else (0 if q < zeros else 1)


def mask(d: ZeroColumnMask, m: int, n: int, reading: str = "examples") -> tuple[int, ...]:
    """The N-bit mask of an M x N MMA, bit ``c`` for column ``c`` (1: column ``c`` multiplied as zeros).
    ``ValueError`` for an M with no zero-column mask (32, 64 and 128 have one), an N the sub-masks do not divide,
    or a shift beyond the page's maximum for M."""
    if m not in SUB_MASKS:
        raise ValueError(f"a zero-column mask is stated for M = 32, 64 and 128, not M = {m}")
    s = SUB_MASKS[m]
    if n <= 0 or n % s:
        raise ValueError(f"N = {n} is not split into {s} sub-masks of whole columns (M = {m})")
    if d.shift > max_shift(m):
        raise ValueError(f"a column shift of {d.shift} is more than the {max_shift(m)} the page allows for M = {m}")
    w = n // s
    return tuple(sub_mask_bit(d, c // w, c % w, reading) for c in range(n))


def sub_mask_text(d: ZeroColumnMask, m: int, n: int, i: int, reading: str = "examples") -> str:
    """Sub-mask ``i`` written as the page writes it: ``0b`` and its bits, most significant first."""
    w = n // SUB_MASKS[m]
    return "0b" + "".join(str(b) for b in reversed(mask(d, m, n, reading)[i * w:(i + 1) * w]))


# ----------------------------------------------------------------------------- the forms the catalog states

# the N of the coverage families (``specs/tcgen05.zero_column.toml``): every N the four sub-masks split evenly
COVERAGE_N = (16, 32, 64, 128, 256)


def field_map() -> "FormulaMap":
    """The fields (``FIELDS``, the reserved bits included) as ``descriptor.fields_map``: ``bit -> position``, the
    form ``specs/tcgen05.zero_column.toml`` states Table 45 in, so both engines hold this model to the page."""
    from .descriptor import fields_map
    return fields_map([(f.lo, f.bits) for f in FIELDS])


def coverage_formula(m: int) -> str:
    """``(sub, bit) -> column``: bit ``bit`` of sub-mask ``sub`` is column ``sub * N / s + bit`` (s sub-masks)."""
    s = SUB_MASKS[m]
    return "column = bit\n" if s == 1 else f"column = sub * (N / {s}) + bit\n"


def coverage_map(m: int) -> "FormulaMap":
    """The sub-masks' coverage of N for an M (the page's coverage table), a family over ``COVERAGE_N``."""
    from ..formula.index import parse_index
    from ..formula.parser import parse_expression
    from .family import Param
    from .named import FormulaMap
    s = SUB_MASKS[m]
    width = parse_expression("N" if s == 1 else f"N / {s}", ("N",))
    return FormulaMap(parse_index(coverage_formula(m), "x", ("sub", "bit"), ("column",), ("N",)),
                      (Dim("sub", s), Dim("bit", width)), (Dim("column", parse_expression("N", ("N",))),),
                      params=(Param("N", COVERAGE_N),))


# the catalog's maps that state this model: ``check`` proves each the same as it with both engines
# (``checks.maps.MODELS`` holds them with the shared-memory descriptor's)
MODELS: dict[str, Callable[[], "FormulaMap"]] = {
    "tcgen05.zero_column.fields": field_map, **{f"tcgen05.zero_column.coverage.m{m}": partial(coverage_map, m)
                                                for m in SUB_MASKS}}


# ----------------------------------------------------------------------------- a shown sub-mask against a reading

def sub_mask_map(d: ZeroColumnMask, i: int, width: int, reading: str = "examples") -> "FormulaMap":
    """Bits 0 to ``width - 1`` of sub-mask ``i`` of ``d`` in ``reading`` as a named map ``j -> bit``: the rule of
    ``sub_mask_bit`` written as formula text (the position in the run ``(j + sc_i) mod (ones + zeros)``, the first
    span choosing which run comes first), for the one decider (``checks.maps.same``) to hold a page's bits to."""
    from .named import formula_map
    if reading not in READINGS:
        raise ValueError(f"reading is one of {', '.join(READINGS)}, not {reading!r}")
    ones, zeros = (d.skip_span + 1, d.use_span + 1) if reading == "examples" else (d.use_span + 1, d.skip_span + 1)
    first = d.first_spans[i]
    text = ("bit = 0" if not d.non_zero_mask else
            f"q = (j + {d.start_counts[i]}) % {ones + zeros}\n"
            f"bit = {first} if q < {ones if first else zeros}\n"
            f"      {1 - first} otherwise")
    return formula_map(text, (Dim("j", width),), (Dim("bit", 2),))


def shown_map(shown: tuple[int, ...]) -> "FormulaMap":
    """The bits a page shows of a sub-mask (bit ``j`` is ``shown[j]``; its elided high bits left out) as a named
    map ``j -> bit``."""
    from .named import formula_map
    value = sum(b << k for k, b in enumerate(shown))
    return formula_map(f"bit = ({value} >> j) % 2", (Dim("j", len(shown)),), (Dim("bit", 2),))
