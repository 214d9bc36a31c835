"""Probes for shared-memory layouts: write a known pattern through the layout, read it back with ``ldmatrix``
through the lane addresses, and with ``wgmma`` through a matrix descriptor.

Every cell (r, c) of the tile holds the 16-bit code ``r x cols + c`` at the element offset the layout gives
it (the host builds the shared-memory image from the model: the probe tests what the hardware reads from
that image, which is the claim).  Then:

* ``ldmatrix``: each lane supplies its row address (the lane pattern through the layout); register element i
  of lane t holds a code, decoded to the cell it came from, and compared with the model's prediction
  (``verify.checks.smem_load.ldmatrix_fragment``: the same composition the proofs use);
* ``wgmma`` (sm_90a, ``m64n16k16.f32.f16.f16``): A is read through the descriptor under test, B is the
  16 x 16 identity (itself in a canonical layout read through its own derived descriptor), so D = A as read:
  each accumulator element (an exact small integer in f32) is the code of the A cell the descriptor made the
  hardware read at (m, k), compared with the descriptor model's reads (``verify.layout.descriptor.reader``).

``source(probe)`` is a standalone CUDA program printing its raw outputs as JSON; ``decode`` and ``compare``
read them back; ``simulate`` gives the outputs a device that follows the model would print (the tests
assemble the programs with nvcc/ptxas and exercise decoding on SIMULATED outputs; running them needs a GPU).
"""
from __future__ import annotations

import struct
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from ..layout.algebra import inverse
from ..layout.descriptor import Descriptor, reader
from ..layout.model import Layout
from ..layout.named import evaluate_all

from ..layout.shared import SharedLayout, concrete
from ..layout.smem_access import Access, Pattern

FORMAT = "ptx-layout-verify/smem-probe/1"


@dataclass(frozen=True)
class SmemProbe:
    id: str
    kind: str                 # "ldmatrix" | "wgmma"
    arch: str
    text: str                 # the PTX instruction
    threads: int
    image: tuple[int, ...]    # 32-bit words of the shared-memory image(s)
    lanes: tuple[int, ...]    # ldmatrix: the byte offset each lane addresses; wgmma: (A descriptor, B descriptor)
    out_words: int            # per thread
    meta: dict[str, Any] = field(default_factory=dict, compare=False)

    @property
    def name(self) -> str:
        return "smem_" + "".join(ch if ch.isalnum() else "_" for ch in self.id)


def _image(lay: SharedLayout, words: int | None = None) -> list[int]:
    """The 16-bit codes r x cols + c at the layout's offsets, as 32-bit words (unplaced elements 0xFFFF)."""
    if lay.element_bits != 16:
        raise ValueError("the shared-memory probes write 16-bit codes: a 16-bit layout")
    v = evaluate_all(lay.map)
    offs = np.asarray(v.out["offset"], np.int64)
    cols = offs.shape[1]
    span = int(lay.map.outputs[0].at())
    half = np.full(span + (span % 2), 0xFFFF, np.int64)
    for (r, c), off in np.ndenumerate(offs):
        if v.ok[r, c]:
            half[off] = r * cols + c
    w = (half[0::2] | (half[1::2] << 16)).tolist()
    return [int(x) for x in w] + [0] * max(0, (words or 0) - len(w))


def ldmatrix_probe(lay: SharedLayout, movement: Layout, pat: Pattern, access: Access) -> SmemProbe:
    """``ldmatrix`` of ``lay`` through ``pat`` (``movement``: the ldmatrix spec layout of one ``.num``)."""
    if access.kind != "ldmatrix" or access.shape != "m8n8":
        raise ValueError("the ldmatrix probe covers ldmatrix.m8n8 (.b16)")
    lanes = []
    pv = pat.map.evaluate({"lane": np.arange(access.lanes)})
    for t in range(32):
        if t < access.lanes and pv.ok[t]:
            off = lay.offset(int(pv.out["row"][t]), int(pv.out["col"][t]))
            lanes.append(off * 2 if off is not None else 0)
        else:
            lanes.append(0)
    regs = access.num
    text = f"ldmatrix.sync.aligned.m8n8.x{regs}{'.trans' if access.trans else ''}.shared.b16"
    return SmemProbe(f"{text}.{lay.notation}", "ldmatrix", "sm_90a", text, 32, tuple(_image(lay)), tuple(lanes), regs,
                     {"cols": concrete(lay.cols), "movement": movement.id})


def wgmma_probe(lay: SharedLayout, desc: Descriptor, major: str, b_lay: SharedLayout, b_desc: Descriptor) -> SmemProbe:
    """``wgmma.m64n16k16.f32.f16.f16`` with A through ``desc`` (``lay`` the 64 x 16 tile written) and B the
    identity through ``b_desc`` (``b_lay`` its tile, N x K = 16 x 16)."""
    if (lay.rows, lay.cols) != (64, 16) or lay.element_bits != 16:
        raise ValueError("the wgmma probe reads a 64 x 16 tile of 16-bit elements (m64n16k16)")
    if desc.start or b_desc.start - 16384 < 0:
        raise ValueError("A is placed at the buffer's start, B 16 KiB after it")
    a_img = _image(lay, 4096)[:4096]
    ident = [0] * 4096  # B: (n, k) = 1.0 (f16 0x3C00) where n == k, at b_lay's offsets
    for n in range(16):
        off = b_lay.offset(n, n)
        assert off is not None
        ident[off // 2] |= 0x3C00 << (16 * (off % 2))
    trans_a = 1 if major == "MN" else 0
    text = "wgmma.mma_async.sync.aligned.m64n16k16.f32.f16.f16"
    return SmemProbe(f"wgmma.m64n16k16.{major}.{desc.mode.name}.{lay.notation}", "wgmma", "sm_90a", text, 128,
                     tuple(a_img + ident), (desc.encode(), b_desc.encode()), 8,
                     {"trans_a": trans_a, "cols": 16, "major": major})


def _kernel(p: SmemProbe) -> str:
    if p.kind == "ldmatrix":
        regs = p.out_words
        outs = ", ".join(f'"=r"(r[{j}])' for j in range(regs))
        names = ", ".join(f"%{j}" for j in range(regs))
        return f"""
__global__ void {p.name}(uint32_t* out, const uint32_t* image, const uint32_t* lanes) {{
  __shared__ __align__(1024) uint32_t smem[{len(p.image)}];
  const int lane = threadIdx.x % 32;
  for (int k = lane; k < {len(p.image)}; k += 32) smem[k] = image[k];
  __syncwarp();
  uint32_t r[{regs}];
  uint32_t addr = (uint32_t)__cvta_generic_to_shared(smem) + lanes[lane];
  asm volatile("{p.text} {{{names}}}, [%{regs}];" : {outs} : "r"(addr) : "memory");
  for (int j = 0; j < {regs}; ++j) out[lane * {regs} + j] = r[j];
}}"""
    return f"""
__global__ void {p.name}(uint32_t* out, const uint32_t* image, const unsigned long long* descs) {{
  __shared__ __align__(1024) uint32_t smem[8192];
  const int t = threadIdx.x;
  for (int k = t; k < 8192; k += 128) smem[k] = image[k];
  __syncthreads();
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  const unsigned long long base = (unsigned long long)((uint32_t)__cvta_generic_to_shared(smem) >> 4);
  const unsigned long long da = descs[0] + base, db = descs[1] + base;
  float d[8];
  for (int j = 0; j < 8; ++j) d[j] = 0.0f;
  asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
  asm volatile("{p.text} {{%0, %1, %2, %3, %4, %5, %6, %7}}, %8, %9, 1, 1, 1, {p.meta['trans_a']}, 0;"
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
               : "l"(da), "l"(db) : "memory");
  asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  for (int j = 0; j < 8; ++j) out[t * 8 + j] = __float_as_uint(d[j]);
}}"""


def source(p: SmemProbe) -> str:
    """A standalone CUDA program: the kernel, the image and lane data, a host ``main`` printing JSON."""
    image = ", ".join(f"{w}u" for w in p.image)
    if p.kind == "ldmatrix":
        aux_t, aux = "uint32_t", ", ".join(f"{w}u" for w in p.lanes)
    else:
        aux_t, aux = "unsigned long long", ", ".join(f"{w}ull" for w in p.lanes)
    n_out = p.threads * p.out_words
    return f"""// Shared-memory probe generated by ptx-layout-verify (verify/hardware/smem_probes.py): {p.id}
#include <cstdint>
#include <cstdio>
#include <cuda_runtime.h>
{_kernel(p)}
static const uint32_t h_image[] = {{{image}}};
static const {aux_t} h_aux[] = {{{aux}}};
int main() {{
  uint32_t *d_out = 0, *d_image = 0; {aux_t} *d_aux = 0;
  if (cudaMalloc(&d_out, {n_out} * 4) != cudaSuccess || cudaMalloc(&d_image, sizeof h_image) != cudaSuccess ||
      cudaMalloc(&d_aux, sizeof h_aux) != cudaSuccess) return 3;
  cudaMemcpy(d_image, h_image, sizeof h_image, cudaMemcpyHostToDevice);
  cudaMemcpy(d_aux, h_aux, sizeof h_aux, cudaMemcpyHostToDevice);
  {p.name}<<<1, {p.threads}>>>(d_out, d_image, d_aux);
  if (cudaDeviceSynchronize() != cudaSuccess) return 4;
  static uint32_t h[{n_out}];
  cudaMemcpy(h, d_out, sizeof h, cudaMemcpyDeviceToHost);
  printf("{{\\"format\\": \\"{FORMAT}\\", \\"id\\": \\"{p.id}\\", \\"out\\": [");
  for (int k = 0; k < {n_out}; ++k) printf("%s%u", k ? ", " : "", h[k]);
  printf("]}}\\n");
  return 0;
}}
"""


def build_command(p: SmemProbe, nvcc: str, cu: str, exe: str) -> list[str]:
    """nvcc arguments that build ``source(p)`` (an ``a`` architecture needs its own virtual target: wgmma)."""
    arch = p.arch.removeprefix("sm_")
    return [nvcc, "-gencode", f"arch=compute_{arch},code=sm_{arch}", "-o", exe, cu]


# ----------------------------------------------------------------------------- reading the outputs back

def decode(p: SmemProbe, out: Sequence[int]) -> dict[tuple[int, int], tuple[int, int] | None]:
    """(thread, i) -> the tile cell whose code it holds (None: a code no cell has)."""
    cols = p.meta["cols"]
    res: dict[tuple[int, int], tuple[int, int] | None] = {}
    if p.kind == "ldmatrix":
        for t in range(32):
            for j in range(p.out_words):
                w = int(out[t * p.out_words + j])
                for e in range(2):
                    code = (w >> (16 * e)) & 0xFFFF
                    res[(t, 2 * j + e)] = None if code == 0xFFFF else divmod(code, cols)
        return res
    for t in range(128):
        for j in range(8):
            v = struct.unpack("<f", struct.pack("<I", int(out[t * 8 + j]) & 0xFFFFFFFF))[0]
            res[(t, j)] = divmod(int(v), cols) if v == int(v) and 0 <= v < 65535 else None
    return res


def prediction_ldmatrix(lay: SharedLayout, movement: Layout, pat: Pattern) -> dict[tuple[int, int], tuple[int, int] | None]:
    from ..checks.smem_load import ldmatrix_fragment
    m = ldmatrix_fragment(lay, movement, pat)
    v = evaluate_all(m)
    return {(int(t), int(i)): ((int(v.out["row"][t, i]), int(v.out["col"][t, i])) if v.ok[t, i] else None)
            for t, i in np.ndindex(v.ok.shape)}


def prediction_wgmma(lay: SharedLayout, desc: Descriptor, major: str, d_layout: Layout) -> dict[tuple[int, int], tuple[int, int] | None]:
    """D (thread, i) -> the A cell the descriptor model reads at D's (m, n) (B is the identity: n = k)."""
    hw = reader(desc, major, 16, 64, 16, 16, (0,), lay.base)
    inv = inverse(lay.map)
    dm = d_layout.map
    out: dict[tuple[int, int], tuple[int, int] | None] = {}
    for t in range(128):
        for i in range(8):
            cell = dm.at({"thread": t, "i": i})
            assert cell is not None
            off = hw.offset(cell["row"], cell["col"])
            src = inv.at({"offset": off}) if off is not None else None
            out[(t, i)] = None if src is None else (src["row"], src["col"])
    return out


def compare(observed: dict[tuple[int, int], Any], predicted: dict[tuple[int, int], Any]) -> list[str]:
    """Every (thread, i) where the device differs from the model, in words (empty: it agrees)."""
    return [f"thread {t}, element {i}: the device read cell {observed.get((t, i))}, the model says {want}"
            for (t, i), want in sorted(predicted.items()) if observed.get((t, i)) != want]


def simulate(p: SmemProbe, predicted: dict[tuple[int, int], tuple[int, int] | None]) -> list[int]:
    """The raw outputs of a SIMULATED device that reads exactly what the model predicts."""
    cols = p.meta["cols"]
    if p.kind == "ldmatrix":
        out = [0] * (32 * p.out_words)
        for (t, i), cell in predicted.items():
            code = 0xFFFF if cell is None else cell[0] * cols + cell[1]
            out[t * p.out_words + i // 2] |= code << (16 * (i % 2))
        return out
    out = [0] * (128 * 8)
    for (t, i), cell in predicted.items():
        v = -1.0 if cell is None else float(cell[0] * cols + cell[1])
        out[t * 8 + i] = struct.unpack("<I", struct.pack("<f", v))[0]
    return out


__all__ = ["FORMAT", "SmemProbe", "build_command", "compare", "decode", "ldmatrix_probe", "prediction_ldmatrix", "prediction_wgmma",
           "simulate", "source", "wgmma_probe"]
