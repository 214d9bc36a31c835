"""tcgen05.mma scale factor A ID probes: which byte of the Tensor Memory word scales which k block.

The spec (9.7.16.10.7.2) maps (thread 0, byte i) of the TMEM word holding a row's scale factors to the
scale factor ``i - SFA_ID`` of that row (the k block it scales), or to none.  The probe runs the real
``tcgen05.mma.cta_group::1.kind::<k>.block_scale.scale_vec::<n>X`` (M = 128, N = 16, A and B in shared
memory, D and the scale factors in Tensor Memory) once per (byte, k block): every scale byte 1.0 in every
lane except that byte, 2.0; A holds 1 on the k of that block only, B all ones.  D is the block's size
times the factor, so it doubles exactly when the hot byte is that block's scale factor.

What the probe assumes (the doc pages at hand do not state the descriptors' bit fields; they follow
CUTLASS's ``UMMA::InstrDescriptorBlockScaled`` and ``UMMA::SmemDescriptor``): the instruction descriptor
(formats, N >> 3, M >> 4, scale format, ``a_sf_id`` = SFA_ID), the shared-memory descriptors (K-major, no
swizzle, the canonical layout also used by ``wgmma``, version 1), and which k a shared-memory byte holds
(that canonical layout).  A wrong assumption shows as scale bytes that scale nothing or the wrong block
(contradicted), never as a silent pass.  The SIMULATED device computes D from the spec's map.
"""
from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Callable, Sequence

from ..layout.model import Layout
from .catalog_probes import CatalogProbe, make_probe
from .grouping import InstructionGroup
from ..layout.model import cell_at

ARCH = "sm_100a"
M, N = 128, 16
# scale vector size -> (kind, A/B type, K, A/B format code in the instruction descriptor)
KINDS = {1: ("mxf8f6f4", "e4m3", 32, 0), 2: ("mxf4", "e2m1", 64, 1), 4: ("mxf4nvf4", "e2m1", 64, 1)}
SCALE = {"ue8m0": (0x7F, 0x80, 1), "ue4m3": (0x38, 0x40, 0)}  # 1.0, 2.0, scale format code


@dataclass(frozen=True)
class Setup:
    blocks: int
    k: int
    ab_type: str
    scale_type: str
    sfa_id: int
    a_words: tuple[int, ...]  # [block][word] the A tile with 1 on that block's k only
    b_words: tuple[int, ...]  # the B tile, all ones

    @property
    def experiments(self) -> int:
        return 4 * self.blocks

    @property
    def block(self) -> int:
        return self.k // self.blocks


def _in_k_block(bs: int, v: int) -> Callable[[int, int], bool]:
    """``on`` of ``_tile``: element (row, k) lies in k block ``v`` of ``bs`` columns."""
    return lambda r, kk: kk // bs == v


def _tile(rows: int, k: int, bits: int, on: Callable[[int, int], bool]) -> list[int]:
    """A K-major, no-swizzle tile (8-row x 16-byte core matrices, K chunks 128 bytes apart, 8-row groups
    128 x chunks bytes apart), element (row, k) 1 wherever ``on(row, k)``."""
    chunks = k * bits // 8 // 16
    words = [0] * (rows * k * bits // 32)
    one = 0x38 if bits == 8 else 0x2
    for r in range(rows):
        for kk in range(k):
            if on(r, kk):
                kbits = kk * bits
                bit = 8 * ((r // 8) * 128 * chunks + (kbits // 128) * 128 + (r % 8) * 16) + kbits % 128
                words[bit // 32] |= one << (bit % 32)
    return words


def idesc(s: Setup) -> int:
    """The instruction descriptor (CUTLASS ``UMMA::InstrDescriptorBlockScaled``): dense, a/b format, K-major
    A and B, N >> 3 at bit 17, scale format at bit 23, M >> 4 at bit 24, SFA_ID at bit 29 (SFB_ID 0)."""
    fmt = KINDS[s.blocks][3]
    return (fmt << 7) | (fmt << 10) | ((N >> 3) << 17) | (SCALE[s.scale_type][2] << 23) | ((M >> 4) << 24) | (
        s.sfa_id << 29)


def build(group: InstructionGroup) -> list[CatalogProbe]:
    """One probe per SFA layout instance (an SFA_ID) and scale type."""
    out = []
    for lay in group.operand("SFA"):
        blocks = lay.cols
        _kind, ab, k, _fmt = KINDS[blocks]
        bits = 8 if ab == "e4m3" else 4
        bs = k // blocks
        a_words = sum((_tile(M, k, bits, _in_k_block(bs, v)) for v in range(blocks)), [])
        b_words = _tile(N, k, bits, lambda r, kk: True)
        for env, inst in lay.instances():
            for stype in lay.types:
                setup = Setup(blocks, k, ab, stype, next(iter(env.values())), tuple(a_words), tuple(b_words))
                tested = tuple(x.instance(**env) for x in group.tested(lay))
                out.append(_probe(inst, env, setup, tested))
    return out


def _probe(inst: Layout, env: dict[str, int], s: Setup, tested: tuple[Layout, ...]) -> CatalogProbe:
    kind = KINDS[s.blocks][0]
    text = f"tcgen05.mma.cta_group::1.kind::{kind}.block_scale.scale_vec::{s.blocks}X"
    tag = ",".join(f"{n}={v}" for n, v in env.items())
    pid = f"tcgen05.mma.{kind}.{s.blocks}X.{s.scale_type}.{tag}"
    one, two, _ = SCALE[s.scale_type]
    a_len, b_len = len(s.a_words) // s.blocks, len(s.b_words)
    chunks = s.k * (8 if s.ab_type == "e4m3" else 4) // 8 // 16
    body = f"""  __shared__ __align__(128) uint32_t sa[{a_len}];
  __shared__ __align__(128) uint32_t sb[{b_len}];
  __shared__ __align__(8) uint64_t mbar;
  __shared__ uint32_t slot;
  const int t = threadIdx.x, warp = t / 32;
  if (warp == 0) {{
    asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 128;" :: "r"((uint32_t)__cvta_generic_to_shared(&slot)) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  }}
  const uint32_t bar = (uint32_t)__cvta_generic_to_shared(&mbar);
  if (t == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
  for (int k = t; k < {b_len}; k += 128) sb[k] = in[{len(s.a_words)} + k];
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t taddr = slot, tsfa = slot + 32u, tsfb = slot + 64u;  // D: columns 0-15; SFA: 32; SFB: 64-67
  const uint32_t lanes = (uint32_t)(warp * 32) << 16;  // each warp reaches its own 32 TMEM lanes
  const uint32_t ones = {one * 0x01010101:#x}u;
  asm volatile("tcgen05.st.sync.aligned.32x32b.x4.b32 [%0], {{%1, %2, %3, %4}};" :: "r"(tsfb + lanes), "r"(ones), "r"(ones), "r"(ones), "r"(ones) : "memory");
  const uint64_t adesc = (uint64_t)((((uint32_t)__cvta_generic_to_shared(sa)) & 0x3FFFF) >> 4) | ((uint64_t)(128u >> 4) << 16)
                       | ((uint64_t)((128u * {chunks}u) >> 4) << 32) | (1ull << 46);  // K-major, no swizzle, version 1
  const uint64_t bdesc = (uint64_t)((((uint32_t)__cvta_generic_to_shared(sb)) & 0x3FFFF) >> 4) | ((uint64_t)(128u >> 4) << 16)
                       | ((uint64_t)((128u * {chunks}u) >> 4) << 32) | (1ull << 46);
  for (int e = 0; e < {s.experiments}; ++e) {{
    const int j = e / {s.blocks}, v = e % {s.blocks};  // hot scale byte j; A on k block v
    for (int k = t; k < {a_len}; k += 128) sa[k] = in[v * {a_len} + k];
    const uint32_t sfa = (ones & ~(0xffu << (8 * j))) | ({two:#x}u << (8 * j));
    asm volatile("tcgen05.st.sync.aligned.32x32b.x1.b32 [%0], {{%1}};" :: "r"(tsfa + lanes), "r"(sfa) : "memory");
    asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    if (t == 0) {{
      asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %4, 0;\\n"
                   "{text} [%0], %1, %2, %3, [%5], [%6], p;\\n}}"
                   :: "r"(taddr), "l"(adesc), "l"(bdesc), "r"({idesc(s):#x}u), "r"(0), "r"(tsfa), "r"(tsfb) : "memory");
      asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(bar) : "memory");
    }}
    asm volatile("{{\\n.reg .pred P;\\nWAIT:\\nmbarrier.try_wait.parity.shared::cta.b64 P, [%0], %1;\\n@!P bra WAIT;\\n}}"
                 :: "r"(bar), "r"((uint32_t)(e & 1)) : "memory");
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
    uint32_t d[16];
    asm volatile("tcgen05.ld.sync.aligned.32x32b.x16.b32 {{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15}}, [%16];"
                 : "=r"(d[0]), "=r"(d[1]), "=r"(d[2]), "=r"(d[3]), "=r"(d[4]), "=r"(d[5]), "=r"(d[6]), "=r"(d[7]),
                   "=r"(d[8]), "=r"(d[9]), "=r"(d[10]), "=r"(d[11]), "=r"(d[12]), "=r"(d[13]), "=r"(d[14]), "=r"(d[15])
                 : "r"(taddr + lanes) : "memory");
    asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
    for (int c = 0; c < 16; ++c) out[(e * 128 + t) * 16 + c] = d[c];
    asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
    __syncthreads();
  }}
  if (warp == 0) asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 128;" :: "r"(taddr) : "memory");"""
    inputs = s.a_words + s.b_words
    return make_probe(pid, ARCH, text, tuple(x.id + "@" + tag for x in tested), body, "tcgen05_mma", threads=128,
                      out_words=s.experiments * 16, in_words=len(inputs), binding=tuple(sorted(env.items())),
                      tested=tested, meta={"setup": s, "input": inputs})


def setup_of(p: CatalogProbe) -> Setup:
    return p.meta["setup"]


def _f32(w: int) -> float:
    return float(struct.unpack("<f", struct.pack("<I", w & 0xFFFFFFFF))[0])


def decode(p: CatalogProbe, out: Sequence[int]) -> dict[tuple[int, int], tuple[int, int] | None | str]:
    """(0, byte) -> (0, the k block it scales), None where it scales nothing, or a description."""
    s = setup_of(p)
    vals = [[_f32(w) for w in out[e * 128 * 16:(e + 1) * 128 * 16]] for e in range(s.experiments)]
    base = min(min(v) for v in vals)
    res: dict[tuple[int, int], tuple[int, int] | None | str] = {}
    for j in range(4):
        up = [v for v in range(s.blocks) if max(vals[j * s.blocks + v]) > base]
        every = [v for v in up if min(vals[j * s.blocks + v]) > base]
        if not up:
            res[(0, j)] = None
        elif len(up) == 1 and every == up:
            res[(0, j)] = (0, up[0])
        else:
            res[(0, j)] = f"it scales k blocks {up}, {len(every)} of them in every row and column"
    return res


def compare(lay: Layout, observed: dict[tuple[int, int], tuple[int, int] | None | str]) -> list[str]:
    out = []
    for i in range(lay.n_elements):
        want = cell_at(lay, 0, i)
        got = observed.get((0, i))
        if want != got:
            say = got if isinstance(got, str) else ("scales nothing" if got is None else f"scales factor {got[1]}")
            out.append(f"byte {i} of the scale-factor word: the spec gives {want}; on the hardware {say}")
    return out


def simulate(p: CatalogProbe, point: Callable[[int, int], tuple[int, int] | None] | None = None) -> list[int]:
    """What a SIMULATED device whose scale-factor bytes follow ``point`` (default: the spec's) prints."""
    s = setup_of(p)
    pt = point or (lambda t, i: cell_at(p.tested[0], t, i))
    out = [0] * (s.experiments * 128 * 16 + 8192)
    for j in range(4):
        cell = pt(0, j)
        for v in range(s.blocks):
            factor = 2.0 if cell is not None and cell[1] == v else 1.0
            word = struct.unpack("<I", struct.pack("<f", s.block * factor))[0]
            e = j * s.blocks + v
            out[e * 128 * 16:(e + 1) * 128 * 16] = [word] * (128 * 16)
    return out


__all__ = ["ARCH", "Setup", "build", "compare", "decode", "idesc", "simulate"]
