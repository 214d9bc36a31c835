"""Shared-memory matrix descriptors of wgmma (9.7.15.5.1.2.2) and tcgen05: encode, decode, and the layout a
descriptor makes the hardware read.

Pure functions over integers.  The wgmma descriptor is the table of the page (start address in bits 13-0,
leading byte offset 29-16, stride byte offset 45-32, base offset 51-49, swizzle mode 63-62, each 14-bit
field ``(x & 0x3FFFF) >> 4``); ``verify.catalog.shared_pages`` reads that table from the page and the tests
hold these constants to it.  The tcgen05 shared-memory descriptor is its page's (PTX ISA 9.1, 9.7.16.4.1,
Table 40; ``specs/tcgen05.descriptor.toml`` transcribes it, ``check`` holds that page to the spec and the tests
this model to both): start, LBO, SBO as above, the fixed constant 0b001 in bits 48-46, base offset 51-49, the
leading-dimension stride mode bit 52 (0: a relative byte offset, 1: an absolute address, ``sm_103a`` only,
with 128B swizzling, K-major and base offset 0), a fixed constant in bits 60-53 (0: the page's
"0xb00000000" does not fit 8 bits, an erratum; CUTLASS's ``UMMA::SmemDescriptor`` keeps them zero), and a
3-bit swizzle at 63-61 (0 none, 1 128B with 32B atomicity, 2 128B, 4 64B, 6 32B; 3, 5 and 7 invalid).

``reader`` is the hardware's side: the canonical layout of the descriptor's mode and majorness, placed at
its start address with its LBO and SBO, the swizzle applied to address bits, and one start address per
k-block of a tile wider than one instruction's K (``advances``).  The canonical layouts count whole atoms
(``m`` repeats along M or N), so a tile an atom straddles is read by no descriptor (``straddles``): the one
rule ``derive``, ``check`` and every reader of a descriptor's tile share.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Sequence

from ..formula import Case, Compare, Definition, Expr, Formula, Num, Ref, Var
from .dims import Dim
from .named import FormulaMap
from .shared import MODES, Mode, SharedLayout, Swizzle, op, swizzle_expr

INSTRUCTIONS = ("wgmma", "tcgen05")


def encode14(x: int) -> int:
    """``matrix-descriptor-encode(x) = (x & 0x3FFFF) >> 4``."""
    return (x & 0x3FFFF) >> 4


@dataclass(frozen=True)
class Field:
    name: str
    lo: int
    bits: int

    @property
    def hi(self) -> int:
        return self.lo + self.bits - 1

    def get(self, v: int) -> int:
        return (v >> self.lo) & ((1 << self.bits) - 1)

    def put(self, v: int, x: int) -> int:
        if not 0 <= x < (1 << self.bits):
            raise ValueError(f"{self.name} = {x} does not fit its {self.bits} bits")
        return v | (x << self.lo)


WGMMA_FIELDS = (Field("start", 0, 14), Field("lbo", 16, 14), Field("sbo", 32, 14), Field("base_offset", 49, 3),
                Field("swizzle", 62, 2))
TCGEN05_FIELDS = (Field("start", 0, 14), Field("lbo", 16, 14), Field("sbo", 32, 14), Field("version", 46, 3),
                  Field("base_offset", 49, 3), Field("lbo_mode", 52, 1), Field("fixed", 53, 8), Field("swizzle", 61, 3))
FIELDS = {"wgmma": WGMMA_FIELDS, "tcgen05": TCGEN05_FIELDS}
# the tcgen05 fields a descriptor holds at one value only (9.7.16.4.1, Table 40 lines 21 and 24)
FIXED = {"tcgen05": {"version": 1, "fixed": 0}}
# an absolute leading-dimension address (LBO mode 1): 9.7.16.3.1.2.1's restrictions
ABSOLUTE_LBO = "128B swizzling (16B atomicity), K-major, base offset 0, sm_103a"


def mode_code(instr: str, md: Mode) -> int:
    code = md.wgmma if instr == "wgmma" else md.tcgen05
    if code is None:
        raise ValueError(f"{instr} has no {md.name} swizzle mode")
    return code


def mode_of_code(instr: str, code: int) -> Mode:
    for md in MODES.values():
        if (md.wgmma if instr == "wgmma" else md.tcgen05) == code:
            return md
    raise ValueError(f"swizzle field {code} is not a {instr} swizzle mode")


@dataclass(frozen=True)
class Descriptor:
    """A decoded descriptor: byte values (start, lbo, sbo are multiples of 16 below 2^18)."""

    instr: str
    start: int
    lbo: int
    sbo: int
    mode: Mode
    base_offset: int = 0
    version: int = 1
    lbo_mode: int = 0

    def encode(self) -> int:
        fields = {f.name: f for f in FIELDS[self.instr]}
        v = 0
        for name, x in (("start", self.start), ("lbo", self.lbo), ("sbo", self.sbo)):
            if x % 16 or not 0 <= x < (1 << 18):
                raise ValueError(f"{name} = {x:#x} bytes: the descriptor holds multiples of 16 below 2^18")
            v = fields[name].put(v, encode14(x))
        v = fields["base_offset"].put(v, self.base_offset)
        v = fields["swizzle"].put(v, mode_code(self.instr, self.mode))
        if self.instr == "tcgen05":
            v = fields["version"].put(v, self.version)
            v = fields["lbo_mode"].put(v, self.lbo_mode)
        return v

    def fields(self) -> dict[str, int]:
        """The raw field values (the encoded 14-bit ones as the register holds them)."""
        v = self.encode()
        return {f.name: f.get(v) for f in FIELDS[self.instr]}

    def describe(self) -> str:
        extra = f", version {self.version}, LBO mode {self.lbo_mode}" if self.instr == "tcgen05" else ""
        return (f"start {self.start:#x}, LBO {self.lbo} B (field {encode14(self.lbo)}), SBO {self.sbo} B "
                f"(field {encode14(self.sbo)}), base offset {self.base_offset}, swizzle {self.mode.name}{extra}")


def decode(instr: str, value: int) -> Descriptor:
    """A 64-bit descriptor's fields (``ValueError`` for a value with bits the format leaves unused, or a
    swizzle code the instruction does not define)."""
    if instr not in FIELDS:
        raise ValueError(f"instruction {instr!r}: one of {', '.join(INSTRUCTIONS)}")
    if not 0 <= value < (1 << 64):
        raise ValueError(f"{value:#x} is not a 64-bit value")
    fields = FIELDS[instr]
    used = 0
    for f in fields:
        used |= ((1 << f.bits) - 1) << f.lo
    stray = value & ~used
    if stray:
        raise ValueError(f"bits {_bits_text(stray)} of {value:#018x} are not fields of the {instr} descriptor")
    got = {f.name: f.get(value) for f in fields}
    for name, want in FIXED.get(instr, {}).items():
        f = next(x for x in fields if x.name == name)
        if got[name] != want:
            raise ValueError(f"bits {f.hi}-{f.lo} of {value:#018x} are {got[name]:#x}, but the {instr} descriptor fixes "
                             f"them to {want:#x}")
    md = mode_of_code(instr, got["swizzle"])
    if got.get("lbo_mode") and (md.name != "128B" or got["base_offset"]):
        raise ValueError(f"{value:#018x} sets LBO mode 1 (an absolute address) with {md.name} swizzling and base offset "
                         f"{got['base_offset']}: the absolute mode needs {ABSOLUTE_LBO}")
    return Descriptor(instr, got["start"] << 4, got["lbo"] << 4, got["sbo"] << 4, md, got["base_offset"],
                      got.get("version", 1), got.get("lbo_mode", 0))


def fields_formula(ranges: Sequence[tuple[int, int]]) -> str:
    """The formula of a descriptor's fields: input ``bit`` counts the fields' bits in order (the first field's,
    then the next field's ...), ``field`` is the field it is in and ``position`` its place in the 64-bit word;
    ``ranges``: each field's (low bit, width)."""
    firsts, at = [], 0
    for _, bits in ranges:
        firsts.append(at)
        at += bits
    def cases(name: str, values: Sequence[int], cond: Callable[[int], str]) -> str:
        pad = " " * (len(name) + 3)
        return "\n".join(f"{name + ' =' if k == 0 else pad[:-1]} {v} if {cond(k)}" for k, v in enumerate(values))
    field = cases("field", list(range(len(ranges))), lambda k: f"bit < {firsts[k] + ranges[k][1]}")
    first = cases("first", firsts, lambda k: f"field == {k}")
    lo = cases("lo", [r[0] for r in ranges], lambda k: f"field == {k}")
    return f"{field}\n{first}\n{lo}\nposition = lo + bit - first\n"


def fields_map(ranges: Sequence[tuple[int, int]]) -> FormulaMap:
    """``bit -> position`` for fields at ``ranges`` (``fields_formula``): in the word and disjoint exactly when the map
    is in range (position < 64) and injective."""
    from ..formula import parse_formula
    return FormulaMap(parse_formula(fields_formula(ranges), "x", ("bit",), ("position",)),
                      (Dim("bit", max(1, sum(b for _, b in ranges))),), (Dim("position", 64),))


def field_map(instr: str) -> FormulaMap:
    """The fields of ``instr``'s descriptor (``FIELDS[instr]``, in order) as ``fields_map``: the form
    ``specs/tcgen05.descriptor.toml`` states the page's table in, so that both engines hold this model to it."""
    return fields_map([(f.lo, f.bits) for f in FIELDS[instr]])


# the swizzle modes in the order PTX ISA 9.1's Table 40 lists their tcgen05 codes (0, 1, 2, 4, 6)
SWIZZLE_ORDER = ("none", "128B_base32B", "128B", "64B", "32B")


def swizzle_map(instr: str) -> FormulaMap:
    """``mode -> code``: the swizzle code of each mode of ``SWIZZLE_ORDER`` (a mode ``instr`` lacks: no point)."""
    from ..formula import parse_formula
    cases: list[str] = []
    for k, name in enumerate(SWIZZLE_ORDER):
        code = MODES[name].wgmma if instr == "wgmma" else MODES[name].tcgen05
        if code is not None:
            cases.append(f"{'code =' if not cases else '      '} {code} if mode == {k}")
    bits = next(f.bits for f in FIELDS[instr] if f.name == "swizzle")
    return FormulaMap(parse_formula("\n".join(cases) + "\n", "x", ("mode",), ("code",)),
                      (Dim("mode", len(SWIZZLE_ORDER)),), (Dim("code", 1 << bits),))


# the maps of the catalog that state this module's model (``specs/tcgen05.descriptor.toml``): ``check`` proves each
# the same as the model with both engines, so the descriptor command encodes what the page states
MODELS = {"tcgen05.descriptor.fields": lambda: field_map("tcgen05"),
          "tcgen05.descriptor.swizzle": lambda: swizzle_map("tcgen05")}


def _bits_text(mask: int) -> str:
    bits = [b for b in range(64) if mask >> b & 1]
    return ", ".join(str(b) for b in bits[:8]) + (" ..." if len(bits) > 8 else "")


# ----------------------------------------------------------------------------- what the hardware reads

def _address_expr(d: Descriptor, major: str, type_bits: int, start: Expr) -> Expr:
    """The byte address the hardware reads for element (row = M/N index, col = K index inside one k-block),
    before the swizzle.  In bits for sub-byte types: the result is a bit address."""
    md, T = d.mode, 128 // type_bits
    row, col = Var("row"), Var("col")
    eb = type_bits
    start_bits = op(start, "*", 8)
    if major == "MN":
        t, u = op(row, "%", T), op(row, "/", T)
        r, kk = op(col, "%", md.rows), op(col, "/", md.rows)
        if md.name == "none":
            lin = op(op(op(t, "*", eb), "+", op(op(u, "*", d.sbo * 8), "+", op(r, "*", 128))), "+", op(kk, "*", d.lbo * 8))
        else:
            w, mm = op(u, "%", md.units), op(u, "/", md.units)
            lin = op(op(op(t, "*", eb), "+", op(w, "*", 128)),
                     "+", op(op(op(mm, "*", d.lbo * 8), "+", op(r, "*", md.width * 8)), "+", op(kk, "*", d.sbo * 8)))
    else:
        r, mm = op(row, "%", 8), op(row, "/", 8)
        t, j = op(col, "%", T), op(col, "/", T)
        if md.name == "none":
            lin = op(op(op(r, "*", 128), "+", op(mm, "*", d.sbo * 8)), "+", op(op(t, "*", eb), "+", op(j, "*", d.lbo * 8)))
        else:
            lin = op(op(op(r, "*", md.width * 8), "+", op(mm, "*", d.sbo * 8)), "+", op(op(t, "*", eb), "+", op(j, "*", 128)))
    return op(start_bits, "+", lin)


def _hw_swizzle(addr_bits: Expr, d: Descriptor) -> Expr:
    """The swizzle on address bits.  A base offset b (the pattern starts b x 128 bytes past an aligned
    boundary) is modelled as the row phase ``(address >> 7) - b``; PTX states the field's value, not this
    arithmetic (docs/shared-memory.md)."""
    s = d.mode.swizzle
    if s.identity:
        return addr_bits
    sb = Swizzle(s.bits, s.base + 3, s.shift)
    if d.base_offset == 0:
        return swizzle_expr(addr_bits, sb)
    mask = (1 << s.bits) - 1
    phase = op(op(op(op(addr_bits, ">>", sb.base + sb.shift), "-", d.base_offset), "&", mask), "<<", sb.base)
    return op(addr_bits, "^", phase)


def stride_roles(major: str, mode: str) -> dict[str, str | None]:
    """Which way each stride field of a descriptor steps in the canonical layout of ``major`` and ``mode``, as
    ``_address_expr`` reads it: ``"MN"`` (to the next atom, or 16-byte unit, along M or N), ``"K"`` (to the next
    group of K columns), None (not used: LBO of a K-major swizzled layout, "assumed 1").  The role is the
    field's meaning (9.7.15.5.1.2.1.1-2), whatever position a text gives its name."""
    if major == "MN":
        return {"LBO": "K", "SBO": "MN"} if mode == "none" else {"LBO": "MN", "SBO": "K"}
    return {"LBO": "K", "SBO": "MN"} if mode == "none" else {"LBO": None, "SBO": "MN"}


def atom_rows(major: str, mode: Mode, type_bits: int) -> int:
    """Rows (M or N) of one atom of the canonical layout: ``T x units`` along an M/N-major tile's leading
    dimension (``((T,units,m),(8,k))``), 8 down a K-major one (``((8,m),(T,2k))``), ``T = 128 / bits``."""
    return (128 // type_bits) * mode.units if major == "MN" else 8


def straddles(major: str, mode: Mode, type_bits: int, rows: int) -> str | None:
    """Why the canonical layout cannot be a tile of ``rows`` (M or N): its shape counts whole atoms (``m``
    repeats), so a tile whose rows are not whole atoms is no canonical layout of this mode, whatever a
    descriptor's fields say; None when they are."""
    n = atom_rows(major, mode, type_bits)
    if rows % n == 0:
        return None
    return (f"{major}-major {mode.name}: the tile's {rows} rows (M or N) are not whole atoms of {n} ({mode.width}-byte "
            f"rows of {type_bits}-bit elements): an atom straddles the tile")


def reader(d: Descriptor, major: str, type_bits: int, rows: int, cols: int, k_block: int,
           advances: Sequence[int] = (0,), base: int = 0, span: int | None = None) -> SharedLayout:
    """The tile the hardware reads through ``d``: ``(row, col) -> offset`` (elements from ``base``) for a tile
    of ``rows`` (M or N) x ``cols`` (K); k-block ``j`` (columns ``j * k_block ..``) is read with the start
    address advanced by ``advances[j]`` bytes.  ``span``: the output box (default: what the reads reach)."""
    if major not in ("K", "MN"):
        raise ValueError(f"majorness is K or MN, not {major!r}")
    if major not in d.mode.majors:
        raise ValueError(f"{d.instr} {d.mode.name} swizzling has no {major}-major layout")
    if d.lbo_mode:
        raise ValueError("a descriptor with LBO mode 1 (absolute leading-dimension address, sm_103a) is not modelled")
    if 128 % type_bits:
        raise ValueError(f"{type_bits}-bit elements do not pack a 16-byte unit")
    why = straddles(major, d.mode, type_bits, rows)
    if why:
        raise ValueError(why)
    nblocks = -(-cols // k_block)
    if len(advances) < nblocks:
        raise ValueError(f"{nblocks} k-blocks need {nblocks} start advances, got {len(advances)}")
    # the start of each k-block: a piecewise definition over kb = col / k_block
    kb = op(Var("col"), "/", k_block)
    cases = tuple(Case(Num(d.start + advances[j]), Compare(("==",), (kb, Num(j)))) for j in range(nblocks))
    start_def = Definition("start", cases)
    inner = replace(d, start=0)
    col_in = op(Var("col"), "%", k_block)
    addr = _address_expr(inner, major, type_bits, Ref("start"))
    addr = _subst_col(addr, col_in)
    swz = _hw_swizzle(Ref("abits"), d)
    offset = op(op(swz, "-", base * 8), "/", type_bits)
    f = Formula((start_def, Definition("abits", (Case(addr, None),)), Definition("offset", (Case(offset, None),))), "x")
    if span is None:
        span = _reach(d, major, type_bits, rows, cols, k_block, advances, base)
    return SharedLayout(FormulaMap(f, (Dim("row", rows), Dim("col", cols)), (Dim("offset", max(1, span)),),
                                   definitions=(("offset", "offset"),)),
                        type_bits, base, d.mode.swizzle, "address", notation=f"{d.instr} descriptor",
                        text=d.describe())


def _subst_col(e: Expr, new: Expr) -> Expr:
    from ..formula import BinOp
    if isinstance(e, Var) and e.name == "col":
        return new
    if isinstance(e, BinOp):
        return BinOp(e.op, _subst_col(e.left, new), _subst_col(e.right, new))
    return e


def _reach(d: Descriptor, major: str, type_bits: int, rows: int, cols: int, k_block: int,
           advances: Sequence[int], base: int) -> int:
    """One past the largest element offset the reads can reach (a sound box for the output)."""
    hi = d.start + max(advances[: -(-cols // k_block)] or [0]) - base
    md = d.mode
    if major == "MN":
        units = -(-rows * type_bits // 128)
        groups = -(-min(cols, k_block) // md.rows)
        if md.name == "none":
            hi += (units - 1) * d.sbo + (md.rows * 16) + (groups - 1) * d.lbo
        else:
            hi += (-(-units // md.units) - 1) * d.lbo + md.width * md.rows + (groups - 1) * d.sbo
    else:
        units = -(-min(cols, k_block) * type_bits // 128)
        if md.name == "none":
            hi += 128 + (-(-rows // 8) - 1) * d.sbo + (units - 1) * d.lbo + 16
        else:
            hi += md.width * 8 + (-(-rows // 8) - 1) * d.sbo
    period = max(md.period, 16)
    hi = -(-(hi + period) // period) * period
    return max(1, hi * 8 // type_bits)


def instruction_shape(text: str) -> tuple[int, int, int]:
    """``m64n128k16`` -> (64, 128, 16)."""
    import re
    m = re.fullmatch(r"m(\d{1,4})n(\d{1,4})k(\d{1,4})", text.strip())
    if not m:
        raise ValueError(f"shape {text!r}: write mMnNkK, e.g. m64n128k16")
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def k_block_of(type_bits: int) -> int:
    """Elements of K one wgmma/tcgen05 instruction reads from shared memory: 32 bytes of K."""
    return 256 // type_bits


# ----------------------------------------------------------------------------- tcgen05's instruction descriptor

# PTX ISA 9.1, 9.7.16.4.2, Tables 42-44: the 32-bit instruction descriptor of tcgen05.mma, by MMA kind.  Each field is
# (name, low bit, width); the types are the tables' encodings.  CuTe's UMMA::InstrDescriptor and
# InstrDescriptorBlockScaled (include/cute/arch/mma_sm100_desc.hpp) lay out the same bits (tests hold the two).
IDESC_FIELDS = {
    "dense": (("sparsity_selector", 0, 2), ("sparse", 2, 1), ("saturate", 3, 1), ("dtype", 4, 2), ("reserved6", 6, 1),
              ("atype", 7, 3), ("btype", 10, 3), ("negate_a", 13, 1), ("negate_b", 14, 1), ("transpose_a", 15, 1),
              ("transpose_b", 16, 1), ("n", 17, 6), ("reserved23", 23, 1), ("m", 24, 5), ("reserved29", 29, 1),
              ("max_shift", 30, 2)),
    "mxf8f6f4": (("reserved0", 0, 2), ("sparse", 2, 1), ("reserved3", 3, 1), ("sfb_id", 4, 2), ("reserved6", 6, 1),
                 ("atype", 7, 3), ("btype", 10, 3), ("negate_a", 13, 1), ("negate_b", 14, 1), ("transpose_a", 15, 1),
                 ("transpose_b", 16, 1), ("n", 17, 6), ("scale_type", 23, 1), ("reserved24", 24, 3), ("m", 27, 2),
                 ("sfa_id", 29, 2), ("reserved31", 31, 1)),
    "mxf4": (("reserved0", 0, 2), ("sparse", 2, 1), ("reserved3", 3, 1), ("sfb_id", 4, 2), ("reserved6", 6, 1),
             ("atype", 7, 3), ("btype", 10, 2), ("reserved12", 12, 1), ("negate_a", 13, 1), ("negate_b", 14, 1),
             ("transpose_a", 15, 1), ("transpose_b", 16, 1), ("n", 17, 6), ("scale_type", 23, 1),
             ("reserved24", 24, 3), ("m", 27, 2), ("sfa_id", 29, 2), ("k96", 31, 1)),
}
IDESC_LAYOUT = {"f16": "dense", "tf32": "dense", "f8f6f4": "dense", "i8": "dense", "mxf8f6f4": "mxf8f6f4",
                "mxf4": "mxf4", "mxf4nvf4": "mxf4"}
_F8F6F4 = {0: "e4m3", 1: "e5m2", 3: "e2m3", 4: "e3m2", 5: "e2m1"}
IDESC_TYPES = {"f16": {0: "f16", 1: "bf16"}, "tf32": {2: "tf32"}, "f8f6f4": _F8F6F4, "i8": {0: "u8", 1: "s8"},
               "mxf8f6f4": _F8F6F4, "mxf4": {1: "e2m1"}, "mxf4nvf4": {1: "e2m1"}}
IDESC_DTYPES = {"f16": {0: "f16", 1: "f32"}, "tf32": {1: "f32"}, "f8f6f4": {0: "f16", 1: "f32"}, "i8": {2: "s32"}}
# elements of K one tcgen05.mma multiplies, by kind (dense): 32 bytes of K, 64 4-bit elements for .kind::mxf4*
IDESC_K = {"f16": 16, "tf32": 8, "f8f6f4": 32, "i8": 32, "mxf8f6f4": 32, "mxf4": 64, "mxf4nvf4": 64}


@dataclass(frozen=True)
class InstrDescriptor:
    """A decoded tcgen05 instruction descriptor: the MMA's kind, types, shape, majorness and scale-factor ids."""

    kind: str
    dtype: str
    atype: str
    btype: str
    m: int
    n: int
    k: int
    transpose_a: int
    transpose_b: int
    negate_a: int = 0
    negate_b: int = 0
    sparse: int = 0
    sparsity_selector: int = 0
    saturate: int = 0
    max_shift: int = 0
    sfa_id: int = 0
    sfb_id: int = 0
    scale_type: str = ""

    def describe(self) -> str:
        scale = f", scale factors {self.scale_type} ids A {self.sfa_id} B {self.sfb_id}" if self.scale_type else ""
        majors = f"A {'MN' if self.transpose_a else 'K'}-major, B {'MN' if self.transpose_b else 'K'}-major"
        return (f"kind::{self.kind}, D {self.dtype}, A {self.atype}, B {self.btype}, M {self.m}, N {self.n}, "
                f"K {self.k}, {majors}{scale}")


def decode_instruction(kind: str, value: int) -> InstrDescriptor:
    """The fields of a tcgen05.mma instruction descriptor of MMA kind ``kind`` (``f16``, ``tf32``, ``f8f6f4``,
    ``i8``, ``mxf8f6f4``, ``mxf4``, ``mxf4nvf4``): ``ValueError`` for a reserved bit set or an encoding the kind
    does not define."""
    if kind not in IDESC_LAYOUT:
        raise ValueError(f"kind::{kind} is not one of {', '.join(IDESC_LAYOUT)}")
    if not 0 <= value < (1 << 32):
        raise ValueError(f"{value:#x} is not a 32-bit instruction descriptor")
    f = {name: (value >> lo) & ((1 << bits) - 1) for name, lo, bits in IDESC_FIELDS[IDESC_LAYOUT[kind]]}
    for name, v in f.items():
        if name.startswith("reserved") and v:
            lo = next(x[1] for x in IDESC_FIELDS[IDESC_LAYOUT[kind]] if x[0] == name)
            raise ValueError(f"instruction descriptor {value:#010x}: reserved bit {lo} is set (kind::{kind})")
    types = IDESC_TYPES[kind]
    if f["atype"] not in types or f["btype"] not in types:
        raise ValueError(f"instruction descriptor {value:#010x}: A/B type codes {f['atype']}/{f['btype']} are not "
                         f"kind::{kind}'s ({', '.join(f'{k} = {v}' for k, v in types.items())})")
    block = IDESC_LAYOUT[kind] != "dense"
    if block:
        dtype = "f32"
        m = f["m"] << 7
        scale = "ue8m0" if f["scale_type"] else "ue4m3"
        if kind in ("mxf8f6f4", "mxf4") and scale != "ue8m0":
            raise ValueError(f"instruction descriptor {value:#010x}: kind::{kind} scales by UE8M0 (bit 23 = 1)")
        k = 96 if f.get("k96") else IDESC_K[kind]
    else:
        if f["dtype"] not in IDESC_DTYPES[kind]:
            raise ValueError(f"instruction descriptor {value:#010x}: D type code {f['dtype']} is not kind::{kind}'s")
        dtype = IDESC_DTYPES[kind][f["dtype"]]
        m = f["m"] << 4
        scale = ""
        k = IDESC_K[kind]
    n = f["n"] << 3
    if not n:
        raise ValueError(f"instruction descriptor {value:#010x}: N is 0")
    if m not in (32, 64, 128, 256):
        raise ValueError(f"instruction descriptor {value:#010x}: M = {m} (M is 64, 128 or 256; 32 and 64 with .ws)")
    return InstrDescriptor(kind, dtype, types[f["atype"]], types[f["btype"]], m, n, k, f["transpose_a"],
                           f["transpose_b"], f["negate_a"], f["negate_b"], f["sparse"], f.get("sparsity_selector", 0),
                           f.get("saturate", 0), f.get("max_shift", 0), f.get("sfa_id", 0), f.get("sfb_id", 0), scale)


__all__ = ["ABSOLUTE_LBO", "Descriptor", "FIELDS", "FIXED", "Field", "IDESC_FIELDS", "INSTRUCTIONS", "InstrDescriptor", "MODELS",
           "SWIZZLE_ORDER", "decode_instruction",
           "atom_rows", "field_map", "fields_formula", "fields_map", "swizzle_map", "TCGEN05_FIELDS", "WGMMA_FIELDS", "decode",
           "encode14", "instruction_shape", "k_block_of", "mode_code", "mode_of_code", "reader", "straddles", "stride_roles"]
