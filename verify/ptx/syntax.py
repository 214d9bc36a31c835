"""The PTX syntax tree: immutable nodes, each with the line and column it was read at.

A ``Module`` holds its functions (``.entry`` kernels and ``.func``), its module-level variables (``.shared``
static and ``.extern`` dynamic, ``.global``, ``.const``) and its ``.file`` table.  A ``Function``'s body is one
flat tuple of ``Instr`` and ``Label``; scoped blocks ``{ ... }`` are resolved by the parser (a register declared in
a block is a register of its own, whatever its name), so every ``Reg`` names its declaration by index into
``Function.regs``.  Each instruction carries the ``.loc`` in force where it stands (``SourceLoc``, with the
``inlined_at`` chain), so findings can name the kernel's source line.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

# Register and variable types -> bits.
TYPE_BITS = {"pred": 1, "b8": 8, "u8": 8, "s8": 8, "b16": 16, "u16": 16, "s16": 16, "f16": 16, "bf16": 16,
             "e4m3": 8, "e5m2": 8, "f16x2": 32, "bf16x2": 32, "b32": 32, "u32": 32, "s32": 32, "f32": 32,
             "tf32": 32, "b64": 64, "u64": 64, "s64": 64, "f64": 64, "b128": 128}

SPECIAL_REGISTERS = frozenset(
    [f"%{r}.{c}" for r in ("tid", "ntid", "ctaid", "nctaid", "clusterid", "nclusterid", "cluster_ctaid",
                           "cluster_nctaid") for c in "xyz"]
    + ["%laneid", "%warpid", "%nwarpid", "%smid", "%nsmid", "%gridid", "%clock", "%clock64", "%globaltimer",
       "%lanemask_eq", "%lanemask_le", "%lanemask_lt", "%lanemask_ge", "%lanemask_gt", "%dynamic_smem_size",
       "%total_smem_size", "%cluster_ctarank", "%cluster_nctarank", "%is_explicit_cluster"])


@dataclass(frozen=True)
class SourceLoc:
    """A ``.loc``: file number, line, column, and where it was inlined (Triton and nvcc -lineinfo)."""

    file: int
    line: int
    col: int
    inlined_at: "SourceLoc | None" = None

    def outermost(self) -> "SourceLoc":
        loc = self
        while loc.inlined_at is not None:
            loc = loc.inlined_at
        return loc


# ----------------------------------------------------------------------------- operands

@dataclass(frozen=True)
class Reg:
    """A declared register: ``id`` indexes ``Function.regs``; ``name`` as written."""

    name: str
    id: int
    line: int
    col: int


@dataclass(frozen=True)
class Special:
    """A special register (``%tid.x``, ``%laneid``, ``%ctaid.y``...)."""

    name: str
    line: int
    col: int


@dataclass(frozen=True)
class Imm:
    value: int
    line: int
    col: int


@dataclass(frozen=True)
class FImm:
    """A floating-point literal as its bits (``0f3F800000``: 32 bits; ``0d...`` and decimal: 64)."""

    bits: int
    width: int
    line: int
    col: int


@dataclass(frozen=True)
class Sym:
    """A name that is not a register: a variable, a parameter, a label, a function."""

    name: str
    line: int
    col: int


@dataclass(frozen=True)
class Sink:
    """``_``: a destination (or vector element) that is discarded."""

    line: int
    col: int


@dataclass(frozen=True)
class Addr:
    """``[base + offset]``: ``base`` a register, a symbol or ``None`` (an absolute address)."""

    base: "Reg | Sym | None"
    offset: int
    line: int
    col: int


@dataclass(frozen=True)
class TensorAddr:
    """``[tensorMap, {c0, c1, ...}]``: a TMA operand, the tensor map's address (a register or a parameter) and the
    coordinates of the box (innermost first)."""

    base: "Reg | Sym"
    coords: "Vec"
    line: int
    col: int


@dataclass(frozen=True)
class Vec:
    """``{a, b, ...}``: a vector of registers (or ``_``, or immediates)."""

    items: tuple["Operand", ...]
    line: int
    col: int


@dataclass(frozen=True)
class PredPair:
    """``%p|%q``: the two predicate destinations of ``setp``."""

    first: "Reg | Sink"
    second: "Reg | Sink"
    line: int
    col: int


@dataclass(frozen=True)
class Not:
    """``!%p`` as an operand."""

    operand: Reg
    line: int
    col: int


@dataclass(frozen=True)
class Group:
    """``( ... )``: the argument lists of ``call``."""

    items: tuple["Operand", ...]
    line: int
    col: int


Operand = Union[Reg, Special, Imm, FImm, Sym, Sink, Addr, TensorAddr, Vec, PredPair, Not, Group]


# ----------------------------------------------------------------------------- statements

@dataclass(frozen=True)
class Instr:
    """One instruction: ``opcode`` as written (``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``), its
    operands, its guard (``@%p``: ``guard`` with ``negated`` for ``@!%p``), and the ``.loc`` in force."""

    opcode: str
    operands: tuple[Operand, ...]
    line: int
    col: int
    guard: Reg | None = None
    negated: bool = False
    loc: SourceLoc | None = None

    @property
    def parts(self) -> tuple[str, ...]:
        return tuple(self.opcode.split("."))

    @property
    def base(self) -> str:
        return self.opcode.split(".", 1)[0]


@dataclass(frozen=True)
class Label:
    name: str
    line: int
    col: int


Statement = Union[Instr, Label]


# ----------------------------------------------------------------------------- declarations

@dataclass(frozen=True)
class RegDecl:
    name: str
    type: str
    line: int
    col: int

    @property
    def bits(self) -> int:
        return TYPE_BITS[self.type]


@dataclass(frozen=True)
class Param:
    """An entry parameter: ``type`` (``u64``, ``b8``...), ``count`` elements (an array ``[N]``: N), alignment,
    and ``pointer`` for ``.ptr`` (with its state space)."""

    name: str
    type: str
    count: int
    align: int
    line: int
    col: int
    pointer: bool = False

    @property
    def size(self) -> int:
        return TYPE_BITS[self.type] // 8 * self.count


@dataclass(frozen=True)
class VarDecl:
    """A variable in a state space: ``.shared .align 16 .b8 smem[4096]`` (``count`` 4096), ``.extern .shared
    .b8 dyn[]`` (``count`` None: dynamic), with its initialiser's bytes when it has one."""

    space: str
    name: str
    type: str
    count: int | None
    align: int
    extern: bool
    line: int
    col: int
    init: tuple[int, ...] = ()

    @property
    def size(self) -> int:
        return max(1, TYPE_BITS[self.type] // 8) * (self.count or 0)


@dataclass(frozen=True)
class Function:
    name: str
    entry: bool
    params: tuple[Param, ...]
    regs: tuple[RegDecl, ...]
    body: tuple[Statement, ...]
    variables: tuple[VarDecl, ...]
    line: int
    col: int
    directives: tuple[tuple[str, tuple[int, ...]], ...] = ()  # .reqntid, .maxntid ...
    labels: dict[str, int] = field(default_factory=dict, compare=False, hash=False)  # label -> body index


@dataclass(frozen=True)
class Module:
    path: str
    version: str
    target: tuple[str, ...]
    address_size: int
    functions: tuple[Function, ...]
    variables: tuple[VarDecl, ...]
    files: dict[int, str] = field(default_factory=dict, compare=False, hash=False)

    def entries(self) -> tuple[Function, ...]:
        return tuple(f for f in self.functions if f.entry)

    def source_name(self, file: int) -> str:
        return self.files.get(file, f"file {file}")
