"""wgmma / wgmma.sp probes: the relational experiments of ``probes`` (mma), warpgroup-wide.

A and D sit in the registers of the 128 threads of a warpgroup: those are the layouts under test.  B is
a tile in shared memory, read through a matrix descriptor that this probe chooses: K-major, no swizzle,
8-row x 16-byte core matrices, the two (four for sparse) 16-byte K chunks of a row ``LBO`` = 128 bytes
apart, the 8-row groups ``SBO`` = 128 x chunks bytes apart (PTX ISA 9.7.15.5.1.2: the canonical layout
((8,m),(T,2k)):((1T,SBO),(1,LBO)) of a K-major, no-swizzle operand).  B's elements are the tile's
*positions* (element p at bits p x width): nothing here assumes which (k, n) the hardware reads at a
position, the relations need only that each is read once.  (The SIMULATED device reads the tile as that
canonical layout says, ``Tile.cell``.)

Experiments, one per 128-thread block (``probes.ExperimentPlan``): ``a`` (A one-hot, B all ones) gives
the D elements of A's row, ``b`` (one tile position hot, A all ones) the D elements of its column, ``ab``
(both one-hot) which A elements meet which positions on one k.  D accumulates in place (scale-d with
D = 0 before), so there is no C experiment: the D layout is judged by its row and column classes.

Each (A, D, types) is probed at two N: the smallest valid N with every experiment, and the largest N
whose probe writes at most ``RECORD_BUDGET`` records (the ``a`` and ``b`` experiments only: A's k
classes do not depend on N): N = 128 for .tf32, 64-80 for .f16/.bf16, 32-40 for 8-bit types, 16-40 for
sparse ones but the 8-bit, and N = 8 alone for .b1 and the sparse 8-bit types.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Sequence

from ..layout.model import Layout
from ..layout.records import Shape
from ..layout.types import ELEMENT_BITS
from .grouping import InstructionGroup
from .probes import ACCUMULATORS, HOST_MAIN, ONE_BITS, SPARSE_METADATA, Instruction, Operand, ProbeError, _operand

RECORD_BUDGET = 1 << 17  # records of the large-N probe (about 3 MB of observation JSON)
ARCH = "sm_90a"


@dataclass(frozen=True)
class Tile:
    """The B tile as the probe lays it out: K x N elements of ``bits`` bits, K-major, no swizzle."""

    k: int
    n: int
    bits: int

    @property
    def row_bytes(self) -> int:
        return self.k * self.bits // 8

    @property
    def chunks(self) -> int:
        return self.row_bytes // 16

    @property
    def lbo(self) -> int:
        return 128

    @property
    def sbo(self) -> int:
        return 128 * self.chunks

    @property
    def words(self) -> int:
        return self.n * self.row_bytes // 4

    @property
    def elements(self) -> int:
        return self.k * self.n

    def bit_offset(self, k: int, n: int) -> int:
        """Where the canonical K-major, no-swizzle layout puts B[k][n] in the tile."""
        kbits = k * self.bits
        return 8 * ((n // 8) * self.sbo + (kbits // 128) * self.lbo + (n % 8) * 16) + kbits % 128

    def cell(self, p: int) -> tuple[int, int, int] | None:
        """(0, k, n) of tile position ``p`` (what the SIMULATED device reads there)."""
        return _inverse(self).get(p)


@functools.lru_cache(maxsize=64)
def _inverse(tile: Tile) -> dict[int, tuple[int, int, int]]:
    return {tile.bit_offset(k, n) // tile.bits: (0, k, n) for k in range(tile.k) for n in range(tile.n)}


def _records(ta: int, tile: Tile, d_epr: int, metas: int) -> int:
    """About how many records the ``a`` and ``b`` experiments of one probe write."""
    return metas * (ta * tile.n // d_epr + tile.elements * 64)


def _text(sparse: bool, n: int, k: int, dtype: str, atype: str) -> str:
    head = "wgmma.mma_async.sp" if sparse else "wgmma.mma_async"
    return f"{head}.sync.aligned.m64n{n}k{k}.{dtype}.{atype}.{atype}" + (".and.popc" if atype == "b1" else "")


def build(group: InstructionGroup) -> tuple[list[Instruction], list[str]]:
    """The probes of one wgmma / wgmma.sp spec file: every A type with every D that accumulates it."""
    out: list[Instruction] = []
    errors: list[str] = []
    sparse = group.family == "wgmma.sp"
    for a in group.operand("A"):
        for atype in a.types:
            for d in group.operand("D"):
                dtype = d.types[0]
                if dtype not in ACCUMULATORS.get(atype, ()):
                    continue
                try:
                    out += _probes(group, a, d, atype, dtype, sparse)
                except ProbeError as e:
                    errors.append(str(e))
    return out, errors


def _probes(group: InstructionGroup, a: Layout, d: Layout, atype: str, dtype: str, sparse: bool) -> list[Instruction]:
    k = a.shape.k
    assert isinstance(k, int)  # wgmma .m64nNk<K>: only N is the family's parameter
    bits = 32 if atype == "tf32" else ELEMENT_BITS[atype]
    if atype not in ONE_BITS:
        raise ProbeError(f"{a.id}: no encoding of 1 for .{atype}")
    oa = _operand(a, atype)
    values = list(d.domain.params[0].values)
    metas = len(SPARSE_METADATA) if sparse else 1
    small = values[0]
    fits = [n for n in values if _records(128 * oa.elements, Tile(k, n, bits), d.regs.elements_per_register, metas)
            <= RECORD_BUDGET]
    large = fits[-1] if fits else small
    out = []
    for n in sorted({small, large}):
        dn = d.instance(N=n)
        od = _operand(dn, dtype)
        tile = Tile(k, n, bits)
        ob = Operand(None, atype, 0, tile.elements, 1, "smem", bits, bits)
        tested = tuple(x.instance(N=n) if x.is_family else x for x in group.tested(a, d))
        head = "wgmma.sp" if sparse else "wgmma"
        out.append(Instruction(f"{head}.m64n{n}k{k}.{dtype}.{atype}.{atype}", group.family,
                               Shape(64, n, k), oa, ob, od, tested, ARCH, tile,
                               _text(sparse, n, k, dtype, atype), pairs=n == small))
    return out


# ----------------------------------------------------------------------------- CUDA source

_TEMPLATE = r"""// Probe for %(text)s
// Generated by ptx-layout-verify (verify/hardware/wgmma.py). Instruction id: %(id)s
// Layouts tested: %(layouts)s
// B: a %(k)d x %(n)d tile in shared memory, K-major, no swizzle (LBO %(lbo)d, SBO %(sbo)d bytes)
// Build:  nvcc -arch=%(arch)s -o probe %(id)s.cu
// Run:    ./probe > raw.json   (needs an sm_90a GPU; prints raw D registers as JSON)
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

#define NA_REGS %(na_regs)d
#define NA_EL %(na_el)d
#define A_EPR %(a_epr)d
#define A_BITS %(a_bits)d
#define A_ONE %(a_one)su
#define NC_REGS %(nd_regs)d
#define TILE_WORDS %(tile_words)d
#define B_BITS %(b_bits)d
#define B_ONE %(b_one)su
#define B_ONES %(b_ones)su
#define N_META %(n_meta)d
#define PAIRS %(pairs)d
#define TA (128LL * NA_EL)
#define TB (%(b_el)dLL)
#define TC 0LL
#define PER_META (TA + TB + (PAIRS ? TA * TB : 0LL))
#define N_EXP (N_META * PER_META)
#define RECORDS_FULL (N_META * (TA + TB) * NC_REGS * 128 + (PAIRS ? N_META * TA * TB : 0LL))
#define PROBE_BLOCKS (N_EXP < (1LL << 20) ? N_EXP : (1LL << 20))

// uniform metadata words, one per pass over the a/b/ab experiments (dense: unused)
__constant__ unsigned int kMeta[N_META] = {%(meta)s};

// mode 0: all zero; 1: all ones; 2: one-hot at element index hot = thread * NEL + i
__device__ __forceinline__ void fill_a(uint32_t (&r)[NA_REGS], int t, int mode, long long hot) {
#pragma unroll
  for (int j = 0; j < NA_REGS; ++j) r[j] = 0;
#pragma unroll
  for (int i = 0; i < NA_EL; ++i) {
    bool on = mode == 1 || (mode == 2 && hot == (long long)t * NA_EL + i);
    if (on) r[i / A_EPR] |= (uint32_t)A_ONE << ((i %% A_EPR) * A_BITS);
  }
}

// word k of the tile: all ones, or the one-hot position p (bits p * B_BITS ...)
__device__ __forceinline__ uint32_t tile_word(int mode, long long hot, int k) {
  if (mode == 1) return B_ONES;
  if (mode == 2 && (hot * B_BITS) / 32 == k) return (uint32_t)B_ONE << ((hot * B_BITS) %% 32);
  return 0u;
}

__global__ void __launch_bounds__(128) probe_kernel(unsigned int* rec, unsigned int* count, unsigned int cap) {
  __shared__ __align__(128) uint32_t tile[TILE_WORDS];
  const int t = threadIdx.x;
  const uint32_t base = (uint32_t)__cvta_generic_to_shared(tile);
  const uint64_t desc = (uint64_t)((base & 0x3FFFF) >> 4) | ((uint64_t)((%(lbo)du & 0x3FFFF) >> 4) << 16)
                      | ((uint64_t)((%(sbo)du & 0x3FFFF) >> 4) << 32);  // no swizzle, base offset 0
  for (long long w = blockIdx.x; w < N_EXP; w += gridDim.x) {
    const unsigned int meta = kMeta[w / PER_META];
    (void)meta;
    int amode = 0, bmode = 0;
    long long ahot = -1, bhot = -1;
    long long e = w %% PER_META;
    if (e < TA) { amode = 2; ahot = e; bmode = 1; }
    else if (e < TA + TB) { amode = 1; bmode = 2; bhot = e - TA; }
    else { e -= TA + TB; amode = 2; ahot = e / TB; bmode = 2; bhot = e %% TB; }
    uint32_t a[NA_REGS];
    fill_a(a, t, amode, ahot);
    for (int k = t; k < TILE_WORDS; k += 128) tile[k] = tile_word(bmode, bhot, k);
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    __syncthreads();
    %(dtype_c)s d[NC_REGS];
#pragma unroll
    for (int j = 0; j < NC_REGS; ++j) d[j] = 0;
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
    asm volatile("%(asm)s"
        : %(outs)s
        : %(ins)s
        : "memory");
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
#pragma unroll
    for (int j = 0; j < NC_REGS; ++j) {
      const uint32_t bits = %(d_bits)s;
      if (bits != 0u) {
        unsigned int k = atomicAdd(count, 1u);
        if (k < cap) {
          rec[4 * (size_t)k + 0] = (unsigned int)w;
          rec[4 * (size_t)k + 1] = (unsigned int)(t | (j << 8));
          rec[4 * (size_t)k + 2] = bits;
          rec[4 * (size_t)k + 3] = 0u;
        }
      }
    }
    __syncthreads();  // the tile is rewritten by the next experiment
  }
}

""" + HOST_MAIN


def _imms(atype: str) -> str:
    """scale-d, then imm-scale-a, imm-scale-b (floating types) and imm-trans-b (.f16/.bf16: 0, K-major B)."""
    if atype in ("f16", "bf16"):
        return "1, 1, 1, 0"
    if atype in ("tf32", "e4m3", "e5m2"):
        return "1, 1, 1"
    return "1"


def probe_source(ins: Instruction) -> str:
    """The self-contained ``.cu`` probe of one wgmma / wgmma.sp instruction."""
    tile: Tile = ins.tile
    nd, na = ins.c.registers, ins.a.registers
    fd = ins.c.register_type == "f32"
    d_regs = "{" + ", ".join(f"%{j}" for j in range(nd)) + "}"
    a_regs = "{" + ", ".join(f"%{nd + j}" for j in range(na)) + "}"
    operands = [d_regs, a_regs, f"%{nd + na}"]
    if ins.sparse:
        sel = "0" if ins.a.ptx_type in ("u8", "s8", "e4m3", "e5m2") else "1"
        operands += [f"%{nd + na + 1}", sel]
    asm = f"{ins.text} " + ", ".join(operands) + f", {_imms(ins.a.ptx_type)};"
    outs = ", ".join(f"\"+{'f' if fd else 'r'}\"(d[{j}])" for j in range(nd))
    ins_list = [f"\"r\"(a[{j}])" for j in range(na)] + ["\"l\"(desc)"] + (["\"r\"(meta)"] if ins.sparse else [])
    ones = ONE_BITS[ins.b.ptx_type]
    b_ones = 0
    for s in range(32 // tile.bits):
        b_ones |= ones << (s * tile.bits)
    plan = ins.plan
    return _TEMPLATE % {
        "text": ins.text, "id": ins.id, "arch": ins.arch, "layouts": ", ".join(_tag(x) for x in ins.layouts),
        "k": tile.k, "n": tile.n, "lbo": tile.lbo, "sbo": tile.sbo, "tile_words": tile.words,
        "na_regs": na, "na_el": ins.a.elements, "a_epr": ins.a.elements_per_register, "a_bits": ins.a.element_bits,
        "a_one": hex(ins.a.one), "nd_regs": nd, "b_bits": tile.bits, "b_one": hex(ones), "b_ones": hex(b_ones),
        "b_el": tile.elements, "n_meta": len(plan.metadata), "pairs": int(ins.pairs),
        "meta": ", ".join(f"0x{m:08x}u" for m in plan.metadata),
        "dtype_c": "float" if fd else "uint32_t", "asm": asm, "outs": outs, "ins": ", ".join(ins_list),
        "d_bits": "__float_as_uint(d[j])" if fd else "d[j]",
    }


def _tag(lay: Layout) -> str:
    return lay.id + ("@" + ",".join(f"{k}={v}" for k, v in lay.params_bound) if lay.params_bound else "")


def instructions(groups: Sequence[InstructionGroup]) -> list[Instruction]:
    """Every wgmma / wgmma.sp probe of ``groups``, in id order."""
    out: list[Instruction] = []
    for g in groups:
        if g.family in ("wgmma", "wgmma.sp"):
            out += build(g)[0]
    return sorted(out, key=lambda i: i.id)
