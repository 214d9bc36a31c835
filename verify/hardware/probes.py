"""Probe kernels: CUDA C++ that runs the real ``mma`` / ``mma.sp`` instruction.

The layouts of one spec file are grouped into *instructions* (an A, a B and a
C/D layout whose types go together).  For each instruction ``probe_source``
writes one self-contained ``.cu`` file: the exact PTX instruction in inline asm,
one launch, one experiment per warp, and a host ``main`` that prints the raw D
registers of every experiment as JSON.  The experiments (see ``ExperimentPlan``):

* ``a``  A one-hot (1 at one (lane, i), 0 elsewhere), B all ones, C zero:
  the D elements that become nonzero share a row with that A element;
* ``b``  B one-hot, A all ones, C zero: the D elements sharing its column;
* ``ab`` A one-hot and B one-hot, C zero: D is nonzero iff they meet on one k;
* ``c``  C one-hot, A = B = 0: which D element receives it.

For ``mma.sp`` the ``a``/``b``/``ab`` experiments are repeated for every
metadata word in ``ExperimentPlan.metadata`` (each the same in all lanes, so the
sparsity selector does not matter); together they keep every k position once.

Only nonzero D registers are written (device-side compaction), as
``[experiment, lane, register, raw bits]``; a missing record means zero.
Values are 1 and 0 in the element type's own encoding, so every product and
sum is exact.  Nothing here reads a layout's formula: the probe depends only on
register counts and types, so the same probe tests any formula for that
instruction.
"""
from __future__ import annotations

import re

import hashlib
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

from ..layout.model import Layout
from ..layout.records import Shape
from .batch import batch_program
from .grouping import instruction_groups
from ..layout.types import ELEMENT_BITS, REGISTER_BITS

# "1" in each element type's encoding (raw bits, as stored in a register slot).
ONE_BITS: dict[str, int] = {
    "f16": 0x3C00, "bf16": 0x3F80, "tf32": 0x3F800000, "f32": 0x3F800000,
    "f64": 0x3FF0000000000000, "s32": 1, "s8": 1, "u8": 1, "s4": 1, "u4": 1, "b1": 1,
    "e4m3": 0x38, "e5m2": 0x3C, "e3m2": 0x0C, "e2m3": 0x08, "e2m1": 0x2,
}

# Accumulator (C/D) types each A/B element type can be probed with.
ACCUMULATORS: dict[str, tuple[str, ...]] = {
    "f16": ("f16", "f32"), "bf16": ("f32",), "tf32": ("f32",), "f64": ("f64",),
    "s8": ("s32",), "u8": ("s32",), "s4": ("s32",), "u4": ("s32",), "b1": ("s32",),
    "e4m3": ("f16", "f32"), "e5m2": ("f16", "f32"), "e2m1": ("f32",),
}

# Packed .e2m1 (m16n8k64, sparse m16n8k128) exists only block-scaled (.kind::mxf4): the probe gives every
# lane the scale words 0x7f7f7f7f (.ue8m0 1.0 in every byte), so D = A x B + C as without scaling.
UNIT_SCALE = 0x7F7F7F7F

# Uniform sparse metadata words: nibble 0b0100 keeps chunk positions {0, 1} (1:2: {0}),
# 0b1110 keeps {2, 3} (1:2: {1}); both are valid for ::ordered_metadata.
SPARSE_METADATA: tuple[int, ...] = (0x44444444, 0xEEEEEEEE)

# The oldest target each CUDA toolkit can still assemble for is found at run time;
# this is the architecture the instruction itself needs (PTX ISA "Target ISA notes").
_ARCH: dict[tuple[str, str, str], int] = {}


class ProbeError(ValueError):
    """The layouts cannot be turned into a probe (unsupported type, shape or packing)."""


def arch_number(arch: str) -> int:
    """``sm_120a`` -> 120; an empty arch (a spec that names none) -> 0."""
    if not arch:
        return 0
    m = re.fullmatch(r"sm_(\d+)a?", arch)
    if m is None:
        raise ProbeError(f"bad architecture {arch!r}")
    return int(m.group(1))


def build_arch(arch: str, cc: int) -> str:
    """The -arch to build a probe of minimal ``arch`` for a GPU of compute capability ``cc``:
    arch-specific features (``sm_120a``) exist only on that exact family."""
    return f"sm_{cc}a" if arch.endswith("a") and cc == arch_number(arch) else f"sm_{cc}"


def _needs_kind(instruction: str, shape: str, types: set[str]) -> bool:
    """.e4m3/.e5m2 with .f16 accumulators exist only as ``.kind::f8f6f4`` on m16n8k32 and on
    sparse m16n8k64 (sm_120a), per the mma / mma.sp syntax and target notes."""
    return bool(types & {"e4m3", "e5m2"}) and "f16" in types and (
        (instruction == "mma" and shape == "m16n8k32") or (instruction == "mma.sp" and shape == "m16n8k64"))


def _mxf4(instruction: str, shape: str, types: set[str]) -> bool:
    """Packed .e2m1 A and B: ``.kind::mxf4.block_scale`` (mma m16n8k64, mma.sp m16n8k128; sm_120a)."""
    return "e2m1" in types and (instruction, shape) in (("mma", "m16n8k64"), ("mma.sp", "m16n8k128"))


def min_arch(instruction: str, shape: Shape | str, types: Iterable[str]) -> str:
    """The minimal ``sm_XX`` for ``instruction`` with this shape and element types.

    ``types`` are the A/B (and C/D) types of one concrete instruction.
    """
    shp = shape if isinstance(shape, Shape) else Shape.parse(shape)
    if shp is None:
        raise ProbeError(f"bad shape {shape!r}")
    ts = set(types)
    s = str(shp)
    need = 80
    if instruction == "mma":
        if s == "m8n8k4":
            need = 80 if "f64" in ts else 70
        elif s in ("m8n8k16", "m8n8k32"):
            need = 75
        elif s in ("m8n8k128",):
            need = 80  # the probe uses .and.popc (sm_80); .xor.popc alone is sm_75
        elif s == "m16n8k8":
            need = 90 if "f64" in ts else (75 if ts <= {"f16", "f32"} else 80)
        elif s in ("m16n8k4", "m16n8k16") and "f64" in ts:
            need = 90
        else:
            need = 80
    elif instruction == "mma.sp":
        need = 80
    else:
        raise ProbeError(f"no probe for instruction {instruction!r} (mma and mma.sp only)")
    if ts & {"e4m3", "e5m2"}:
        need = max(need, 89)
        if _needs_kind(instruction, s, ts):
            return "sm_120a"
    if _mxf4(instruction, s, ts):
        return "sm_120a"
    if ts & {"e3m2", "e2m3", "e2m1"}:
        raise ProbeError("the .kind::f8f6f4 types (e3m2, e2m3, e2m1) are not probed yet")
    return f"sm_{need}"


@dataclass(frozen=True)
class Operand:
    """The register side of one operand in one concrete instruction."""

    layout: Layout | None  # None: a wgmma's B tile in shared memory (no register layout)
    ptx_type: str
    registers: int
    elements: int
    elements_per_register: int
    register_type: str
    register_bits: int
    element_bits: int

    @property
    def one(self) -> int:
        return ONE_BITS[self.ptx_type]

    @property
    def constraint(self) -> str:
        return {"f32": "f", "f64": "d"}.get(self.register_type, "l" if self.register_bits == 64 else "r")


def _operand(lay: Layout, ptx_type: str) -> Operand:
    rbits = REGISTER_BITS[lay.regs.type]
    epr = lay.regs.elements_per_register
    if lay.register_count * epr != lay.n_elements:
        raise ProbeError(f"{lay.id}: {lay.regs.count} registers x {epr} elements != {lay.n_elements} elements")
    if rbits % epr:
        raise ProbeError(f"{lay.id}: {epr} elements do not fit a .{lay.regs.type} register")
    ebits = rbits // epr
    want = lay.regs.element_bits or ELEMENT_BITS.get(ptx_type, ebits)
    if ptx_type == "tf32":
        want = 32
    if ebits != want:
        raise ProbeError(f"{lay.id}: a .{lay.regs.type} register holds {rbits // want} .{ptx_type}, "
                         f"the layout says {epr}")
    if ptx_type not in ONE_BITS:
        raise ProbeError(f"{lay.id}: no encoding of 1 for .{ptx_type}")
    return Operand(lay, ptx_type, lay.register_count, lay.n_elements, epr, lay.regs.type, rbits, ebits)


@dataclass(frozen=True)
class ExperimentPlan:
    """How warp index ``w`` maps to an experiment (mirrored by the generated kernel)."""

    ta: int  # threads * A elements per thread
    tb: int
    tc: int
    metadata: tuple[int, ...] = (0,)
    pairs: bool = True  # the ``ab`` experiments (a wgmma probe of a large N leaves them to its smallest N)

    @property
    def tab(self) -> int:
        return self.ta * self.tb if self.pairs else 0

    @property
    def per_meta(self) -> int:
        return self.ta + self.tb + self.tab

    @property
    def total(self) -> int:
        return len(self.metadata) * self.per_meta + self.tc

    def decode(self, w: int) -> tuple[str, int, int | None, int | None]:
        """(kind, metadata index, hot A or C element index, hot B element index)."""
        if w < len(self.metadata) * self.per_meta:
            m, e = divmod(w, self.per_meta)
            if e < self.ta:
                return "a", m, e, None
            if e < self.ta + self.tb:
                return "b", m, None, e - self.ta
            x, y = divmod(e - self.ta - self.tb, self.tb)
            return "ab", m, x, y
        return "c", 0, w - len(self.metadata) * self.per_meta, None

    def index(self, kind: str, m: int = 0, x: int = 0, y: int = 0) -> int:
        base = m * self.per_meta
        if kind == "a":
            return base + x
        if kind == "b":
            return base + self.ta + y
        if kind == "ab":
            return base + self.ta + self.tb + x * self.tb + y
        return len(self.metadata) * self.per_meta + x

    def to_json(self) -> dict[str, object]:
        return {"a": self.ta, "b": self.tb, "ab": self.tab, "c": self.tc,
                "metadata": [f"0x{m:08x}" for m in self.metadata], "total": self.total}


@dataclass(frozen=True)
class Instruction:
    """One concrete instruction: the probe's A, B, C/D operands and every layout it tests.

    An mma / mma.sp is warp-wide: A, B and C/D in the registers of 32 lanes.  A wgmma / wgmma.sp
    (``tile`` set) is warpgroup-wide: A and D in the registers of 128 threads, B a shared-memory tile
    whose elements are its positions (``b.layout`` is None: no spec states B's registers), and D
    accumulates in place (no C experiments)."""

    id: str
    name: str
    shape: Shape
    a: Operand
    b: Operand
    c: Operand  # D has the same registers as C (wgmma: the D accumulator)
    layouts: tuple[Layout, ...]  # doc and corrected layouts of A, B, C this instruction tests
    arch: str
    tile: Any = None  # wgmma: the B tile in shared memory (``wgmma.Tile``: position -> (k, n))
    ptx: str = ""  # the instruction text, where ``ptx_instruction_text`` (mma) does not apply
    pairs: bool = True  # the ``ab`` experiments (a wgmma at a large N leaves them to its smallest N)

    @property
    def sparse(self) -> bool:
        return self.name in ("mma.sp", "wgmma.sp")

    @property
    def threads(self) -> int:
        """Threads that hold A and C/D (32: a warp; 128: a warpgroup)."""
        return 32 if self.tile is None else 128

    @property
    def b_lanes(self) -> int:
        """Lanes that hold B (1 where B is a shared-memory tile, whose elements are its positions)."""
        return 32 if self.tile is None else 1

    @property
    def groups(self) -> int:
        lay = self.c.layout
        assert lay is not None  # C/D is held in registers (only a wgmma's B is a shared-memory tile)
        return lay.groups

    @property
    def plan(self) -> ExperimentPlan:
        return ExperimentPlan(self.threads * self.a.elements, self.b_lanes * self.b.elements,
                              0 if self.tile is not None else 32 * self.c.elements,
                              SPARSE_METADATA if self.sparse else (0,), self.pairs)

    @property
    def text(self) -> str:
        return self.ptx or ptx_instruction_text(self)


def _majors(ins_shape: Shape, a: Layout | None, b: Layout | None) -> tuple[str, str]:
    if str(ins_shape) == "m8n8k4" and a is not None and a.variant:  # m8n8k4: A and B are in registers
        return a.variant, ((b.variant if b is not None else None) or "col")
    return "row", "col"


def ptx_instruction_text(ins: Instruction) -> str:
    """The PTX mnemonic with every qualifier, e.g. ``mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32``."""
    am, bm = _majors(ins.shape, ins.a.layout, ins.b.layout)
    head = "mma.sp::ordered_metadata" if ins.sparse else "mma"
    types = {ins.a.ptx_type, ins.b.ptx_type, ins.c.ptx_type}
    kind = ".kind::f8f6f4" if _needs_kind(ins.name, str(ins.shape), types) else ""
    if _mxf4(ins.name, str(ins.shape), types):
        kind = ".kind::mxf4.block_scale.scale_vec::2X"
    text = (f"{head}.sync.aligned.{ins.shape}.{am}.{bm}{kind}.{ins.c.ptx_type}.{ins.a.ptx_type}."
            f"{ins.b.ptx_type}.{ins.c.ptx_type}")
    if kind.startswith(".kind::mxf4"):
        text += ".ue8m0"
    if ins.a.ptx_type == "b1":
        text += ".and.popc"
    return text


def instructions(layouts: Iterable[Layout]) -> list[Instruction]:
    """Group layouts (per spec file, instruction and shape) into probe-able instructions.

    Layouts that cannot form an instruction (no matching operand, unsupported
    type, E metadata) are left out; ``_group`` also says why.
    """
    return _group(layouts)[0]


def _group(layouts: Iterable[Layout]) -> tuple[list[Instruction], list[str]]:
    out: dict[str, Instruction] = {}
    errors: list[str] = []
    for grp in instruction_groups(layouts):
        if grp.family not in ("mma", "mma.sp"):
            continue
        name, lays = grp.family, grp.layouts
        ops = {o: grp.operand(o) for o in "ABC"}
        for a in ops["A"]:
            for t in a.types:
                if t == "e2m1" and not _mxf4(name, grp.shape, {t}):
                    continue  # .e2m1 in an 8-bit container (.kind::f8f6f4): not probed (e4m3/e5m2 are)
                for b in ops["B"]:
                    if t not in b.types or (a.variant is None) != (b.variant is None):
                        continue
                    for c in ops["C"]:
                        for ct in c.types:
                            if ct not in ACCUMULATORS.get(t, ()):
                                continue
                            try:
                                ins = _make(name, a, b, c, t, ct, lays)
                            except ProbeError as e:
                                errors.append(str(e))
                                continue
                            if ins.id in out:
                                # two C layouts of one spec for the same accumulator (e.g. C.f32 and
                                # C.f32.f8): keep both by merging the tested layouts
                                old = out[ins.id]
                                merged = tuple(sorted(set(old.layouts) | set(ins.layouts), key=lambda x: x.id))
                                out[ins.id] = Instruction(old.id, old.name, old.shape, old.a, old.b, old.c,
                                                          merged, old.arch)
                            else:
                                out[ins.id] = ins
    return [out[k] for k in sorted(out)], errors


def _make(name: str, a: Layout, b: Layout, c: Layout, t: str, ct: str, lays: Sequence[Layout]) -> Instruction:
    shape = a.shape
    oa, ob, oc = _operand(a, t), _operand(b, t), _operand(c, ct)
    need = min_arch(name, shape, (t, ct))
    arch = need if need.endswith("a") else f"sm_{max(arch_number(need), arch_number(a.provenance.arch))}"
    tested = tuple(sorted((lay for lay in lays if lay.doc_id in {a.doc_id, b.doc_id, c.doc_id}),
                          key=lambda x: x.id))
    am, bm = _majors(shape, a, b)
    head = "mma.sp" if name == "mma.sp" else "mma"
    iid = f"{head}.{shape}.{am}.{bm}.{ct}.{t}.{t}.{ct}"
    return Instruction(iid, name, shape, oa, ob, oc, tested, arch)


def resolve_id(layouts: Sequence[Layout], ident: str) -> Layout:
    """One layout by exact id or unique part of an id (as ``table`` resolves them); an unknown or
    ambiguous id is a ``KeyError`` naming the candidates."""
    exact = [lay for lay in layouts if lay.id == ident]
    if exact:
        return exact[0]
    hits = [lay for lay in layouts if ident in lay.id]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise KeyError(f"no layout {ident!r} (see 'ptx-verify list')")
    raise KeyError(f"{ident!r} matches {len(hits)} layouts: " + ", ".join(h.id for h in hits[:6])
                   + (" ..." if len(hits) > 6 else ""))


# ----------------------------------------------------------------------------- CUDA source

# The host side of a relational probe (mma here, wgmma in ``verify.hardware.wgmma``): launch PROBE_BLOCKS
# blocks of 128 threads, keep at most RECORDS_FULL records (1 << 24 at most), print them as raw-d JSON.
HOST_MAIN = r"""static int cmp_rec(const void* x, const void* y) {
  const unsigned int* p = (const unsigned int*)x;
  const unsigned int* q = (const unsigned int*)y;
  for (int t = 0; t < 2; ++t) if (p[t] != q[t]) return p[t] < q[t] ? -1 : 1;
  return 0;
}

#define CHECK(call) do { cudaError_t err_ = (call); if (err_ != cudaSuccess) { \
  fprintf(stderr, "probe: %%s: %%s\n", #call, cudaGetErrorString(err_)); return 4; } } while (0)

int main() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) { fprintf(stderr, "probe: no CUDA device\n"); return 3; }
  cudaDeviceProp p;
  CHECK(cudaGetDeviceProperties(&p, 0));
  int drv = 0, rt = 0;
  CHECK(cudaDriverGetVersion(&drv));
  CHECK(cudaRuntimeGetVersion(&rt));
  long long full = RECORDS_FULL;
  unsigned int cap = (unsigned int)(full < (1LL << 24) ? full : (1LL << 24));
  unsigned int *rec = 0, *count = 0;
  CHECK(cudaMalloc(&rec, (size_t)cap * 16));
  CHECK(cudaMalloc(&count, sizeof(unsigned int)));
  CHECK(cudaMemset(count, 0, sizeof(unsigned int)));
  long long blocks = PROBE_BLOCKS;
  probe_kernel<<<(unsigned int)blocks, 128>>>(rec, count, cap);
  CHECK(cudaGetLastError());
  CHECK(cudaDeviceSynchronize());
  unsigned int got = 0;
  CHECK(cudaMemcpy(&got, count, sizeof(unsigned int), cudaMemcpyDeviceToHost));
  unsigned int kept = got < cap ? got : cap;
  unsigned int* h = (unsigned int*)malloc((size_t)kept * 16 + 16);
  CHECK(cudaMemcpy(h, rec, (size_t)kept * 16, cudaMemcpyDeviceToHost));
  qsort(h, kept, 16, cmp_rec);
  printf("{\"format\": \"ptx-layout-verify/raw-d/1\", \"instruction\": \"%(text)s\", \"id\": \"%(id)s\",\n");
  printf(" \"device\": {\"name\": \"%%s\", \"compute_capability\": \"%%d.%%d\", \"driver_version\": %%d, \"runtime_version\": %%d},\n",
         p.name, p.major, p.minor, drv, rt);
  printf(" \"experiments\": %%lld, \"overflow\": %%s, \"records\": [", (long long)N_EXP, got > cap ? "true" : "false");
  for (unsigned int k = 0; k < kept; ++k) {
    unsigned long long raw = ((unsigned long long)h[4 * k + 3] << 32) | h[4 * k + 2];
    printf("%%s\n  [%%u, %%u, %%u, %%llu]", k ? "," : "", h[4 * k], h[4 * k + 1] & 0xff, h[4 * k + 1] >> 8, raw);
  }
  printf("\n]}\n");
  free(h);
  cudaFree(rec);
  cudaFree(count);
  return got > cap ? 5 : 0;
}
"""

_TEMPLATE = r"""// Probe for %(text)s
// Generated by ptx-layout-verify (verify/probes.py). Instruction id: %(id)s
// Layouts tested: %(layouts)s
// Build:  nvcc -arch=%(arch)s -o probe %(id)s.cu     (any newer sm_XX works too)
// Run:    ./probe > raw.json   (needs an NVIDIA GPU; prints raw D registers as JSON)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define NA_REGS %(na_regs)d
#define NA_EL %(na_el)d
#define A_EPR %(a_epr)d
#define A_BITS %(a_bits)d
#define A_ONE %(a_one)sull
#define NB_REGS %(nb_regs)d
#define NB_EL %(nb_el)d
#define B_EPR %(b_epr)d
#define B_BITS %(b_bits)d
#define B_ONE %(b_one)sull
#define NC_REGS %(nc_regs)d
#define NC_EL %(nc_el)d
#define C_EPR %(c_epr)d
#define C_BITS %(c_bits)d
#define C_ONE %(c_one)sull
#define N_META %(n_meta)d
#define SPARSE %(sparse)d
#define TA (32LL * NA_EL)
#define TB (32LL * NB_EL)
#define TC (32LL * NC_EL)
#define PER_META (TA + TB + TA * TB)
#define N_EXP (N_META * PER_META + TC)

#if SPARSE
// uniform metadata words, one per pass over the a/b/ab experiments
__constant__ unsigned int kMeta[N_META] = {%(meta)s};
#endif

// mode 0: all zero; 1: all ones; 2: one-hot at element index hot = lane * NEL + i
template <int NR, int NEL, int EPR, int BITS>
__device__ __forceinline__ void fill(uint64_t (&r)[NR], uint64_t one, int lane, int mode, long long hot) {
#pragma unroll
  for (int j = 0; j < NR; ++j) r[j] = 0;
#pragma unroll
  for (int i = 0; i < NEL; ++i) {
    bool on = mode == 1 || (mode == 2 && hot == (long long)lane * NEL + i);
    if (on) r[i / EPR] |= one << ((i %% EPR) * BITS);
  }
}

__global__ void __launch_bounds__(128) probe_kernel(unsigned int* rec, unsigned int* count, unsigned int cap) {
  const long long w = (long long)blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
  const int lane = threadIdx.x %% 32;
  if (w >= N_EXP) return;  // warp-uniform
  int amode = 0, bmode = 0, cmode = 0;
  long long ahot = -1, bhot = -1, chot = -1;
#if SPARSE
  const unsigned int meta = kMeta[w < N_META * PER_META ? w / PER_META : 0];
#endif
  if (w < N_META * PER_META) {
    long long e = w %% PER_META;
    if (e < TA) { amode = 2; ahot = e; bmode = 1; }
    else if (e < TA + TB) { amode = 1; bmode = 2; bhot = e - TA; }
    else { e -= TA + TB; amode = 2; ahot = e / TB; bmode = 2; bhot = e %% TB; }
  } else {
    cmode = 2; chot = w - N_META * PER_META;
  }
  uint64_t a[NA_REGS], b[NB_REGS], c[NC_REGS];
  fill<NA_REGS, NA_EL, A_EPR, A_BITS>(a, A_ONE, lane, amode, ahot);
  fill<NB_REGS, NB_EL, B_EPR, B_BITS>(b, B_ONE, lane, bmode, bhot);
  fill<NC_REGS, NC_EL, C_EPR, C_BITS>(c, C_ONE, lane, cmode, chot);
%(decls)s
  asm volatile("%(asm)s"
      : %(outs)s
      : %(ins)s);
  uint64_t d[NC_REGS];
%(raw)s
#pragma unroll
  for (int j = 0; j < NC_REGS; ++j) {
    if (d[j] != 0) {
      unsigned int k = atomicAdd(count, 1u);
      if (k < cap) {
        rec[4 * (size_t)k + 0] = (unsigned int)w;
        rec[4 * (size_t)k + 1] = (unsigned int)(lane | (j << 8));
        rec[4 * (size_t)k + 2] = (unsigned int)(d[j] & 0xffffffffu);
        rec[4 * (size_t)k + 3] = (unsigned int)(d[j] >> 32);
      }
    }
  }
}

#define RECORDS_FULL (N_META * (TA + TB) * NC_REGS * 32 + TC * NC_REGS + N_META * TA * TB)
#define PROBE_BLOCKS ((N_EXP + 3) / 4)

"""  + HOST_MAIN



def _ctype(op: Operand) -> tuple[str, str, str]:
    """(C type of the asm variable, register -> variable, variable -> raw bits)."""
    if op.register_type == "f32":
        return "float", "__uint_as_float((unsigned int){x})", "(uint64_t)__float_as_uint({x})"
    if op.register_type == "f64":
        return "double", "__longlong_as_double((long long){x})", "(uint64_t)__double_as_longlong({x})"
    return "unsigned int", "(unsigned int){x}", "(uint64_t){x}"


def _asm_parts(ins: Instruction) -> tuple[str, str, str, str, str]:
    n = 0

    def group(count: int) -> str:
        nonlocal n
        s = "{" + ", ".join(f"%{n + j}" for j in range(count)) + "}"
        n += count
        return s

    d = group(ins.c.registers)
    a = group(ins.a.registers)
    b = group(ins.b.registers)
    c = group(ins.c.registers)
    operands = [d, a, b, c]
    if ins.sparse:
        operands += [f"%{n}", "0x0"]
        n += 1
    scaled = _mxf4(ins.name, str(ins.shape), {ins.a.ptx_type})
    if scaled:  # scale-a-data, {byte-id-a, thread-id-a}, scale-b-data, {byte-id-b, thread-id-b}
        operands += [f"%{n}", "{0, 0}", f"%{n + 1}", "{0, 0}"]
    asm = f"{ins.text} " + ", ".join(operands) + ";"
    dt, _, d_raw = _ctype(ins.c)
    decls = f"  {dt} " + ", ".join(f"d{j}" for j in range(ins.c.registers)) + ";"
    outs = ", ".join(f"\"={ins.c.constraint}\"(d{j})" for j in range(ins.c.registers))
    ins_list = []
    for name, op in (("a", ins.a), ("b", ins.b), ("c", ins.c)):
        _, conv, _ = _ctype(op)
        ins_list += [f"\"{op.constraint}\"({conv.format(x=f'{name}[{j}]')})" for j in range(op.registers)]
    if ins.sparse:
        ins_list.append("\"r\"(meta)")
    if scaled:
        ins_list += [f"\"r\"({UNIT_SCALE:#x}u)"] * 2
    raw = "\n".join(f"  d[{j}] = {d_raw.format(x=f'd{j}')};" for j in range(ins.c.registers))
    return asm, decls, outs, ",\n        ".join(ins_list), raw


def probe_source(ins: Instruction | Sequence[Layout]) -> str:
    """The self-contained ``.cu`` probe for one instruction (or the layouts of one)."""
    if not isinstance(ins, Instruction):
        found, errors = _group(ins)
        if not found:
            raise ProbeError("these layouts do not form an A/B/C instruction: "
                             + ("; ".join(errors) if errors else "no A, B and C of matching types"))
        ins = found[0]
    asm, decls, outs, ins_text, raw = _asm_parts(ins)
    plan = ins.plan
    return _TEMPLATE % {
        "text": ins.text, "id": ins.id, "arch": ins.arch,
        "layouts": ", ".join(lay.id for lay in ins.layouts),
        "na_regs": ins.a.registers, "na_el": ins.a.elements, "a_epr": ins.a.elements_per_register,
        "a_bits": ins.a.element_bits, "a_one": hex(ins.a.one),
        "nb_regs": ins.b.registers, "nb_el": ins.b.elements, "b_epr": ins.b.elements_per_register,
        "b_bits": ins.b.element_bits, "b_one": hex(ins.b.one),
        "nc_regs": ins.c.registers, "nc_el": ins.c.elements, "c_epr": ins.c.elements_per_register,
        "c_bits": ins.c.element_bits, "c_one": hex(ins.c.one),
        "n_meta": len(plan.metadata), "sparse": int(ins.sparse), "meta": ", ".join(f"0x{m:08x}u" for m in plan.metadata),
        "decls": decls, "asm": asm, "outs": outs, "ins": ins_text, "raw": raw,
    }


def batch_source(inss: Sequence[Instruction]) -> str:
    """Every probe of ``inss`` in one translation unit (``batch.batch_program``), for assembly checks and
    for one build on a GPU."""
    return batch_program([(ins.id, probe_source(ins)) for ins in inss])


def source_sha256(source: str) -> str:
    return hashlib.sha256(source.encode("utf-8")).hexdigest()
