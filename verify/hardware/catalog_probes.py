"""Probe kernels of the data-movement instructions (ldmatrix, stmatrix, movmatrix, tcgen05.ld/st), and the
``CatalogProbe`` form that the wmma, block-scale and tcgen05.mma probes share with them.

Each ``CatalogProbe`` is one CUDA ``__global__`` function running one exact PTX instruction in inline
assembly; ``arch_source(probes, arch)`` puts every kernel of one architecture in one file,
``probe_program(probe)`` wraps one probe with a host ``main`` that prints its raw output as JSON (what
``confirm`` builds, many programs to a translation unit: ``verify.hardware.batch``).

The data-movement instructions are observed directly, with no reconstruction: the source is filled with
codes that name their own position, so every output word decodes to a cell (``decode``), and
``compare`` checks the spec's map against it.

* ldmatrix: shared memory holds the memory image (row r at ``16 r`` bytes, the row lane r addresses),
  each 16-bit element the code ``16 row + col``; 8-bit images run twice (``(row & 15) << 4 | col``, then
  ``row >> 4``); the ``.b6x16_p32`` source twice with 6-bit digits (``six_image``: our reading of the
  packing).  Register element i of lane t decodes to its (row, col).
* stmatrix: register element i of lane t holds the code ``8 t + i`` (8-bit: two runs, ``(t & 15) << 4 | i``
  and ``t >> 4``); the image read back says which (t, i) each cell got.
* movmatrix: a holds ``2 t + e``; d's halves name the source element each came from (read through the
  doc-stated source layout).
* tcgen05.ld: one warp allocates 512 columns, fills lanes 0-31 with ``.32x32b`` stores of the code
  ``lane << 16 | column``, loads with the shape under test; tcgen05.st: the reverse (stores the codes
  ``t << 16 | i`` with the shape under test, reads back with ``.32x32b``).  ``.32x32b`` itself is
  confirmed by the round trip.

Nothing here was run on a GPU (this project had none); the tests assemble every probe and exercise
``decode``/``compare`` on SIMULATED outputs computed from the specs (``simulate``).
"""
from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any, Iterator, Mapping, Sequence

from ..layout.model import Layout, cells_of
from .grouping import InstructionGroup
from ..layout.model import cell_at

ARCHS = ("sm_90a", "sm_100a", "sm_120a")


@dataclass(frozen=True)
class CatalogProbe:
    id: str                     # e.g. "ldmatrix.m8n8.x4.trans.b16"
    arch: str                   # the file it is assembled in (sm_90a, sm_100a, sm_120a)
    text: str                   # the PTX instruction, mnemonic and qualifiers
    layouts: tuple[str, ...]    # the layout ids (@binding) it tests
    kernel: str                 # CUDA source of ``probe_<slug>``
    kind: str                   # "ldmatrix" | "stmatrix" | "movmatrix" | "tcgen05.ld" | "tcgen05.st" | "raw"
    threads: int = 32
    out_words: int = 0          # output words per thread (all runs)
    in_words: int = 0           # input words the host provides
    runs: int = 1               # 8-bit codes need two runs
    binding: tuple[tuple[str, int], ...] = ()
    negative: bool = False      # the doc's literal form, which ptxas must reject
    meta: dict[str, Any] = field(default_factory=dict, compare=False)
    tested: tuple[Layout, ...] = field(default=(), compare=False)  # the concrete layouts (doc and corrected)

    @property
    def name(self) -> str:
        return "probe_" + re.sub(r"[^A-Za-z0-9]+", "_", self.id).strip("_")


def regs_text(n: int, start: int = 0) -> str:
    """``{%start, ..., %start+n-1}``: a vector operand of inline assembly."""
    return "{" + ", ".join(f"%{start + k}" for k in range(n)) + "}"


def _outs(n: int, var: str = "r", c: str = "=r") -> str:
    return ", ".join(f'"{c}"({var}[{k}])' for k in range(n))


def _b(lay: Layout) -> dict[str, int]:
    return dict(lay.params_bound)


def _tag(lay: Layout) -> str:
    return lay.id + ("@" + ",".join(f"{k}={v}" for k, v in lay.params_bound) if lay.params_bound else "")


# ----------------------------------------------------------------------------- ldmatrix / stmatrix / movmatrix

def _ld_text(lay: Layout, num: int) -> str:
    shape = str(lay.shape)
    trans = ".trans" if lay.variant == "trans" else ""
    if shape == "m8n8":
        typ = ".b16"
    elif "b8x16" in lay.types and "b8" not in lay.types:
        typ = ".b8x16.b6x16_p32"
    else:
        typ = ".b8"
    return f"ldmatrix.sync.aligned.{shape}.x{num}{trans}.shared{typ}"


def _ldmatrix(lay: Layout) -> CatalogProbe:
    num, regs, rows = _b(lay)["NUM"], lay.register_count, lay.rows
    eight = lay.shape.m == 16 or str(lay.shape) == "m8n16"  # 8-bit containers: two runs
    runs = 2 if eight else 1
    text = _ld_text(lay, num)
    body = f"""  __shared__ __align__(128) uint32_t img[{rows * 4}];
  const int lane = threadIdx.x % 32;
  uint32_t r[{regs}];
  for (int run = 0; run < {runs}; ++run) {{
    for (int k = lane; k < {rows * 4}; k += 32) img[k] = in[run * {rows * 4} + k];
    __syncwarp();
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(img) + 16u * (uint32_t)(lane % {rows});
    asm volatile("{text} {regs_text(regs)}, [%{regs}];" : {_outs(regs)} : "r"(addr) : "memory");
    for (int j = 0; j < {regs}; ++j) out[(run * 32 + lane) * {regs} + j] = r[j];
    __syncwarp();
  }}"""
    pid = f"ldmatrix.{lay.shape}.x{num}{'.trans' if lay.variant == 'trans' else ''}.{'_'.join(lay.types)}"
    meta: dict[str, Any] = {"rows": rows, "cols": lay.cols, "regs": regs, "epr": lay.regs.elements_per_register,
                            "eight": eight, "six": ".b6x16" in text}
    if meta["six"]:
        meta["input"] = tuple(six_image(rows, 0) + six_image(rows, 1))
    return make_probe(pid, "sm_100a" if eight else "sm_90a", text, (_tag(lay),), body, "ldmatrix",
                      out_words=runs * regs, in_words=runs * rows * 4, runs=runs, binding=lay.params_bound, meta=meta)


def six_image(rows: int, run: int) -> list[int]:
    """The ``.b6x16_p32`` source of one run: row r is 16 bytes at 16 r, its 16 six-bit values packed from
    bit 0 up (then 32 bits of padding), value c the 6-bit digit ``run`` of the code 16 r + c.  Where the
    values and the padding sit is our reading (the doc does not state it, LDM-5): a probe that decodes
    nonsense would say so as contradictions naming the elements."""
    words = [0] * (rows * 4)
    for r in range(rows):
        for c in range(16):
            bit = 128 * r + 6 * c
            digit = ((16 * r + c) >> (6 * run)) & 63
            words[bit // 32] |= (digit << (bit % 32)) & 0xFFFFFFFF
            if bit % 32 > 26:  # the value crosses into the next word
                words[bit // 32 + 1] |= digit >> (32 - bit % 32)
    return words


def _stmatrix(lay: Layout) -> CatalogProbe:
    num, regs, rows = _b(lay)["NUM"], lay.register_count, lay.rows
    eight = str(lay.shape) == "m16n8"
    runs = 2 if eight else 1
    trans = ".trans" if lay.variant == "trans" else ""
    text = f"stmatrix.sync.aligned.{lay.shape}.x{num}{trans}.shared.{'b8' if eight else 'b16'}"
    body = f"""  __shared__ __align__(128) uint32_t img[{rows * 4}];
  const int lane = threadIdx.x % 32;
  uint32_t r[{regs}];
  for (int run = 0; run < {runs}; ++run) {{
    for (int j = 0; j < {regs}; ++j) r[j] = in[(run * 32 + lane) * {regs} + j];
    uint32_t addr = (uint32_t)__cvta_generic_to_shared(img) + 16u * (uint32_t)(lane % {rows});
    asm volatile("{text} [%0], {regs_text(regs, 1)};" :: "r"(addr), {_outs(regs, c='r')} : "memory");
    __syncwarp();
    for (int k = lane; k < {rows * 4}; k += 32) out[run * {rows * 4} + k] = img[k];
    __syncwarp();
  }}"""
    pid = f"stmatrix.{lay.shape}.x{num}{trans}.{'_'.join(lay.types)}"
    return make_probe(pid, "sm_100a" if eight else "sm_90a", text, (_tag(lay),), body, "stmatrix",
                  out_words=runs * rows * 4 // 32 + 1, in_words=runs * 32 * regs, runs=runs, binding=lay.params_bound,
                  meta={"rows": rows, "cols": lay.cols, "regs": regs, "epr": lay.regs.elements_per_register, "eight": eight,
                        "image_words": rows * 4})


def _movmatrix(a: Layout, d: Layout) -> CatalogProbe:
    text = "movmatrix.sync.aligned.m8n8.trans.b16"
    body = f"""  const int lane = threadIdx.x % 32;
  uint32_t a = in[lane], d;
  asm volatile("{text} %0, %1;" : "=r"(d) : "r"(a));
  out[lane] = d;"""
    return make_probe("movmatrix.m8n8.trans.b16", "sm_90a", text, (a.id, d.id), body, "movmatrix", out_words=1, in_words=32)


# ----------------------------------------------------------------------------- tcgen05.ld / st

_TC_ALLOC = """  __shared__ uint32_t slot;
  const int lane = threadIdx.x % 32;
  asm volatile("tcgen05.alloc.cta_group::1.sync.aligned.shared::cta.b32 [%0], 512;" :: "r"((uint32_t)__cvta_generic_to_shared(&slot)) : "memory");
  asm volatile("tcgen05.relinquish_alloc_permit.cta_group::1.sync.aligned;" ::: "memory");
  asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");
  __syncthreads();
  asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
  const uint32_t taddr = slot;"""
_TC_FREE = """  asm volatile("tcgen05.dealloc.cta_group::1.sync.aligned.b32 %0, 512;" :: "r"(taddr) : "memory");"""


def _tc_ref(op: str, cols: int, var: str) -> str:
    """``.32x32b`` accesses of ``cols`` columns (at most 128 per instruction), lane = %laneid, column = i."""
    out = []
    for base in range(0, cols, 128):
        n = min(128, cols - base)  # the column counts are powers of two: a valid .num
        if op == "st":
            out.append(f'  asm volatile("tcgen05.st.sync.aligned.32x32b.x{n}.b32 [%0], {regs_text(n, 1)};" :: '
                       f'"r"(taddr + {base}u), {_outs(n, var + f"_{base}", "r")} : "memory");')
        else:
            out.append(f'  asm volatile("tcgen05.ld.sync.aligned.32x32b.x{n}.b32 {regs_text(n)}, [%{n}];" : '
                       f'{_outs(n, var + f"_{base}")} : "r"(taddr + {base}u) : "memory");')
    return "\n".join(out)


def _tcgen05(lay: Layout, op: str) -> CatalogProbe:
    num, regs, rows, cols = _b(lay)["NUM"], lay.register_count, lay.rows, lay.cols
    shape = str(lay.shape)
    split = ", %d" % num if shape == "16x32bx2" else ""  # immHalfSplitoff = .num, as the spec takes it
    chunks = list(range(0, cols, 128))
    decl = "\n".join(f"  uint32_t ref_{b}[{min(128, cols - b)}];" for b in chunks)
    if op == "ld":
        text = f"tcgen05.ld.sync.aligned.{shape}.x{num}.b32"
        fill = "\n".join(f"  for (int k = 0; k < {min(128, cols - b)}; ++k) ref_{b}[k] = ((uint32_t)lane << 16) | ({b} + k);"
                         for b in chunks)
        body = f"""{_TC_ALLOC}
{decl}
  uint32_t r[{regs}];
{fill}
{_tc_ref("st", cols, "ref")}
  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
  asm volatile("{text} {regs_text(regs)}, [%{regs}]{split.replace(', ', ', ') if split else ''};" : {_outs(regs)} : "r"(taddr) : "memory");
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
  for (int j = 0; j < {regs}; ++j) out[lane * {regs} + j] = r[j];
{_TC_FREE}"""
        words = regs
    else:
        text = f"tcgen05.st.sync.aligned.{shape}.x{num}.b32"
        imm = f"{num}, " if split else ""
        body = f"""{_TC_ALLOC}
{decl}
  uint32_t r[{regs}];
  for (int j = 0; j < {regs}; ++j) r[j] = ((uint32_t)lane << 16) | (uint32_t)j;
  asm volatile("{text} [%0], {imm}{regs_text(regs, 1)};" :: "r"(taddr), {_outs(regs, c='r')} : "memory");
  asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
{_tc_ref("ld", cols, "ref")}
  asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
""" + "\n".join(f"  for (int k = 0; k < {min(128, cols - b)}; ++k) out[lane * {cols} + {b} + k] = ref_{b}[k];"
                for b in chunks) + f"\n{_TC_FREE}"
        words = cols
    pid = f"tcgen05.{op}.{shape}.x{num}.b32"
    return make_probe(pid, "sm_100a", text, (_tag(lay),), body, f"tcgen05.{op}", out_words=words, in_words=0,
                  binding=lay.params_bound, meta={"rows": rows, "cols": cols, "regs": regs})


# ----------------------------------------------------------------------------- assembling probes

def make_probe(pid: str, arch: str, text: str, layouts: tuple[str, ...], body: str, kind: str, **kw: Any) -> CatalogProbe:
    """A probe whose kernel ``probe_<slug>(uint32_t* out, const uint32_t* in, unsigned long long desc)`` runs
    ``body`` (one block of ``threads``; with ``meta["cluster"] = n``, one cluster of n blocks)."""
    p = CatalogProbe(pid, arch, text, layouts, "", kind, **kw)
    cluster = p.meta.get("cluster", 1)
    dims = f"__cluster_dims__({cluster}, 1, 1) " if cluster > 1 else ""
    kernel = (f"// {pid}: {text}\n// tests: {', '.join(layouts)}\n"
              f"extern \"C\" __global__ void {dims}__launch_bounds__(128) {p.name}(uint32_t* out, const uint32_t* in, "
              f"unsigned long long desc) {{\n  (void)desc;\n{body}\n}}\n")
    return dataclasses.replace(p, kernel=kernel)


_BUILDERS = {"ldmatrix": _ldmatrix, "stmatrix": _stmatrix,
             "tcgen05.ld": lambda lay: _tcgen05(lay, "ld"), "tcgen05.st": lambda lay: _tcgen05(lay, "st")}


def movement_probes(group: InstructionGroup, negatives: bool = False) -> list[CatalogProbe]:
    """The probes of one data-movement instruction (ldmatrix, stmatrix, movmatrix, tcgen05.ld/st): one per
    layout and parameter value, each with the concrete layouts it tests (doc and corrected).  With
    ``negatives``, also the doc's own register count where the spec records a count erratum (ptxas must
    reject it)."""
    out: list[CatalogProbe] = []
    if group.family == "movmatrix":
        a, d = group.operand("A"), group.operand("D")
        if a and d:
            out.append(dataclasses.replace(_movmatrix(a[0], d[0]), tested=group.tested(a[0], d[0])))
        return out
    build = _BUILDERS.get(group.family)
    if build is None:
        return out
    for lay in group.operand("R"):
        for env, inst in lay.instances():
            tested = tuple(x.instance(**env) if x.is_family else x for x in group.tested(lay))
            out.append(dataclasses.replace(build(inst), tested=tested))
    if negatives:
        for doc in (y for y in group.layouts if y.correction is not None):
            if doc.instruction in ("tcgen05.ld", "ldmatrix"):
                inst = doc.instance(NUM=1)
                p = build(inst)
                out.append(dataclasses.replace(p, id=p.id + ".doc", negative=True,
                                               kernel=p.kernel.replace(p.name, p.name + "_doc"), tested=(inst,)))
    return out


_HEADER = """// Probes generated by ptx-layout-verify (verify/hardware/catalog_probes.py)
#include <cstdint>
#include <cuda_runtime.h>
"""


def arch_source(probes: Sequence[CatalogProbe], arch: str) -> str:
    """One translation unit with every probe of ``arch`` (for one ``nvcc -ptx`` + ``ptxas`` run)."""
    return _HEADER + "\n".join(p.kernel for p in probes if p.arch == arch)


def probe_program(p: CatalogProbe) -> str:
    """One probe with a host ``main`` printing ``{"format", "id", "instruction", "device", "out": [...]}`` as
    JSON (the input buffer is filled by ``_host_fill``, whose Python twin is ``host_input``)."""
    table = ""
    if "input" in p.meta:
        words = ", ".join(f"{w:#x}u" for w in p.meta["input"])
        table = f"static const uint32_t kInput[{max(1, len(p.meta['input']))}] = {{{words or '0u'}}};\n"
    return _HEADER + "#include <cstdio>\n#include <vector>\n" + table + p.kernel + f"""
int main() {{
  const int threads = {p.threads}, words = {max(p.out_words, 1)} * {p.threads} + 8192, in_words = {max(p.in_words, 1)} + 8192;
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess || n == 0) {{ fprintf(stderr, "probe: no CUDA device\\n"); return 3; }}
  cudaDeviceProp prop;
  int drv = 0, rt = 0;
  if (cudaGetDeviceProperties(&prop, 0) != cudaSuccess || cudaDriverGetVersion(&drv) != cudaSuccess
      || cudaRuntimeGetVersion(&rt) != cudaSuccess) return 4;
  std::vector<uint32_t> h_in(in_words);
  for (int k = 0; k < in_words; ++k) h_in[k] = {_host_fill(p)};
  uint32_t *d_out = 0, *d_in = 0;
  if (cudaMalloc(&d_out, words * 4) != cudaSuccess || cudaMalloc(&d_in, in_words * 4) != cudaSuccess) return 4;
  cudaMemcpy(d_in, h_in.data(), in_words * 4, cudaMemcpyHostToDevice);
  cudaMemset(d_out, 0, words * 4);
  {p.name}<<<{p.meta.get("cluster", 1)}, threads>>>(d_out, d_in, 0ull);
  cudaError_t err = cudaDeviceSynchronize();
  if (err != cudaSuccess) {{ fprintf(stderr, "probe: {p.id}: %s\\n", cudaGetErrorString(err)); return 4; }}
  std::vector<uint32_t> h(words);
  cudaMemcpy(h.data(), d_out, words * 4, cudaMemcpyDeviceToHost);
  cudaFree(d_out);
  cudaFree(d_in);
  printf("{{\\"format\\": \\"ptx-layout-verify/catalog-probe/1\\", \\"id\\": \\"{p.id}\\", \\"instruction\\": \\"{p.text}\\",\\n");
  printf(" \\"device\\": {{\\"name\\": \\"%s\\", \\"compute_capability\\": \\"%d.%d\\", \\"driver_version\\": %d, \\"runtime_version\\": %d}},\\n",
         prop.name, prop.major, prop.minor, drv, rt);
  printf(" \\"out\\": [");
  for (int k = 0; k < words; ++k) printf("%s%u", k ? ", " : "", h[k]);
  printf("]}}\\n");
  return 0;
}}
"""


def _host_fill(p: CatalogProbe) -> str:
    """The C expression (of ``k``) the host puts in ``in[k]``; ``host_input`` is the same in Python."""
    if "input" in p.meta:
        return f"k < {len(p.meta['input'])} ? kInput[k] : 0u"
    if p.kind == "ldmatrix" or (p.kind == "raw" and "ldmatrix" in p.text):
        rows = p.meta["rows"]
        if p.meta["eight"]:
            n = rows * 4
            return (f"(k < {n}) ? (uint32_t)(((((k / 4) & 15) << 4) | (4 * (k % 4))) | (((((k / 4) & 15) << 4) | (4 * (k % 4) + 1)) << 8) "
                    f"| (((((k / 4) & 15) << 4) | (4 * (k % 4) + 2)) << 16) | (((((k / 4) & 15) << 4) | (4 * (k % 4) + 3)) << 24)) "
                    f": (uint32_t)((((k - {n}) / 4) >> 4) * 0x01010101u)")
        return "(uint32_t)((16 * (k / 4) + 2 * (k % 4)) | ((16 * (k / 4) + 2 * (k % 4) + 1) << 16))"
    if p.kind == "stmatrix":
        regs = p.meta["regs"]
        if p.meta["eight"]:
            n = 32 * regs
            return (f"(k < {n}) ? (uint32_t)((((((k / {regs}) & 15) << 4) | (4 * (k % {regs}))) ) | ((((((k / {regs}) & 15) << 4) | (4 * (k % {regs}) + 1))) << 8) "
                    f"| ((((((k / {regs}) & 15) << 4) | (4 * (k % {regs}) + 2))) << 16) | ((((((k / {regs}) & 15) << 4) | (4 * (k % {regs}) + 3))) << 24)) "
                    f": (uint32_t)((((k - {n}) / {regs}) >> 4) * 0x01010101u)")
        return f"(uint32_t)((8 * (k / {regs}) + 2 * (k % {regs})) | ((8 * (k / {regs}) + 2 * (k % {regs}) + 1) << 16))"
    if p.kind == "movmatrix":
        return "(uint32_t)((2 * k) | ((2 * k + 1) << 16))"
    return "(uint32_t)(k * 2654435761u)"


def host_input(p: CatalogProbe) -> list[int]:
    """What ``probe_program``'s host puts in the input buffer (Python twin of ``_host_fill``)."""
    n = max(p.in_words, 1) + 8192
    if "input" in p.meta:
        table = list(p.meta["input"])
        return table + [0] * (n - len(table))
    out = []
    for k in range(n):
        if p.kind == "ldmatrix" and p.meta["eight"]:
            img = p.meta["rows"] * 4
            if k < img:
                w = 0
                for e in range(4):
                    w |= ((((k // 4) & 15) << 4) | (4 * (k % 4) + e)) << (8 * e)
            else:
                w = (((k - img) // 4) >> 4) * 0x01010101
        elif p.kind == "ldmatrix":
            w = (16 * (k // 4) + 2 * (k % 4)) | ((16 * (k // 4) + 2 * (k % 4) + 1) << 16)
        elif p.kind == "stmatrix" and p.meta["eight"]:
            regs = p.meta["regs"]
            if k < 32 * regs:
                w = 0
                for e in range(4):
                    w |= ((((k // regs) & 15) << 4) | (4 * (k % regs) + e)) << (8 * e)
            else:
                w = (((k - 32 * regs) // regs) >> 4) * 0x01010101
        elif p.kind == "stmatrix":
            regs = p.meta["regs"]
            w = (8 * (k // regs) + 2 * (k % regs)) | ((8 * (k // regs) + 2 * (k % regs) + 1) << 16)
        elif p.kind == "movmatrix":
            w = (2 * k) | ((2 * k + 1) << 16)
        else:
            w = (k * 2654435761) & 0xFFFFFFFF
        out.append(w & 0xFFFFFFFF)
    return out


# ----------------------------------------------------------------------------- decoding observations

def decode(p: CatalogProbe, out: Sequence[int], layouts: dict[str, Layout] | None = None
           ) -> dict[tuple[int, int], tuple[int, int]]:
    """(lane, i) -> the (row, col) the hardware put it at, from a data-movement probe's raw output.
    movmatrix needs the doc-stated source layout (``layouts`` by id) to name the input cell."""
    obs: dict[tuple[int, int], tuple[int, int]] = {}
    if p.kind == "ldmatrix" and p.meta.get("six"):  # 6-bit values in 8-bit containers (low bits)
        regs, epr = p.meta["regs"], p.meta["epr"]
        for lane in range(32):
            for j in range(regs):
                for e in range(epr):
                    lo = (out[lane * regs + j] >> (8 * e)) & 63
                    hi = (out[(32 + lane) * regs + j] >> (8 * e)) & 63
                    obs[(lane, epr * j + e)] = divmod(lo | (hi << 6), 16)
    elif p.kind == "ldmatrix":
        regs, epr, eight = p.meta["regs"], p.meta["epr"], p.meta["eight"]
        for lane in range(32):
            for j in range(regs):
                w0 = out[lane * regs + j]
                w1 = out[(32 + lane) * regs + j] if eight else 0
                for e in range(epr):
                    if eight:
                        lo, hi = (w0 >> (8 * e)) & 0xFF, (w1 >> (8 * e)) & 0xFF
                        obs[(lane, epr * j + e)] = ((hi << 4) | (lo >> 4), lo & 15)
                    else:
                        code = (w0 >> (16 * e)) & 0xFFFF
                        obs[(lane, epr * j + e)] = (code // 16, code % 16)
    elif p.kind == "stmatrix":
        words, eight = p.meta["image_words"], p.meta["eight"]
        for k in range(words):
            for e in range(4 if eight else 2):
                if eight:
                    lo, hi = (out[k] >> (8 * e)) & 0xFF, (out[words + k] >> (8 * e)) & 0xFF
                    lane, i = (hi << 4) | (lo >> 4), lo & 15
                    row, col = k // 4, 4 * (k % 4) + e
                else:
                    code = (out[k] >> (16 * e)) & 0xFFFF
                    lane, i = code // 8, code % 8
                    row, col = k // 4, 2 * (k % 4) + e
                obs[(lane, i)] = (row, col)
    elif p.kind == "movmatrix":
        assert layouts is not None
        src = layouts[p.layouts[0]]
        for lane in range(32):
            for e in range(2):
                code = (out[lane] >> (16 * e)) & 0xFFFF
                cell = cell_at(src, code // 2, code % 2)
                if cell is not None:
                    obs[(lane, e)] = (cell[1], cell[0])  # the result R = A^T: input (r, c) is R's (c, r)
    elif p.kind == "tcgen05.ld":
        regs = p.meta["regs"]
        for lane in range(32):
            for j in range(regs):
                w = out[lane * regs + j]
                obs[(lane, j)] = (w >> 16, w & 0xFFFF)
    elif p.kind == "tcgen05.st":
        cols = p.meta["cols"]
        for row in range(p.meta["rows"]):  # the lanes a 16-lane shape does not write are left out
            for col in range(cols):
                w = out[row * cols + col]
                obs.setdefault((w >> 16, w & 0xFFFF), (row, col))
    else:
        raise ValueError(f"{p.id}: raw probe, no direct decoding")
    return obs


def differences(lay: Layout, observed: Mapping[tuple[int, int], Any]
                ) -> Iterator[tuple[int, int, tuple[int, int] | None, Any]]:
    """(lane, i, the spec's cell, the observed one) of every (lane, i) where they differ, in (lane, i) order; the
    spec's cell is ``None`` where the map is undefined.  Every point of the spec at once, by the enumeration
    engine (the checks' own evaluation, shared with them): what ``compare`` and ``direct.map_violations`` say."""
    c = cells_of(lay)
    for lane, (ok, rows, cols) in enumerate(zip(c.ok.tolist(), c.row.tolist(), c.col.tolist())):
        for i, (k, r, col) in enumerate(zip(ok, rows, cols)):
            want, got = ((r, col) if k else None), observed.get((lane, i))
            if want != got:
                yield lane, i, want, got


def compare(lay: Layout, obs: dict[tuple[int, int], tuple[int, int]]) -> list[str]:
    """Where the spec's map and the observation differ, in the doc's terms (empty: confirmed)."""
    return [f"lane {lane} element {lay.element_name(i)}: spec {want}, observed {got}"
            for lane, i, want, got in differences(lay, obs)]


def _tmem_points(lay: Layout, regs: int) -> list[tuple[int, int, int, int]]:
    """(lane, register, TMEM lane, TMEM column) of one warp's tcgen05 fragment, by the spec's map."""
    return [(lane, j, *cell_at(lay, lane, j)) for lane in range(32) for j in range(regs)]  # type: ignore[misc]


def simulate(p: CatalogProbe, lay: Layout, source: Layout | None = None) -> list[int]:
    """The raw output a device following ``lay`` would print (SIMULATED: for testing ``decode``)."""
    inp = host_input(p)
    if p.kind == "ldmatrix" and p.meta.get("six"):
        regs, epr = p.meta["regs"], p.meta["epr"]
        out = [0] * (2 * 32 * regs)
        for run in range(2):
            for lane in range(32):
                for j in range(regs):
                    for e in range(epr):
                        r, c = cell_at(lay, lane, epr * j + e)  # type: ignore[misc]
                        out[(run * 32 + lane) * regs + j] |= (((16 * r + c) >> (6 * run)) & 63) << (8 * e)
        return out
    if p.kind == "ldmatrix":
        regs, epr, eight, rows = p.meta["regs"], p.meta["epr"], p.meta["eight"], p.meta["rows"]
        img_words = rows * 4
        out = [0] * ((2 if eight else 1) * 32 * regs)
        for run in range(2 if eight else 1):
            for lane in range(32):
                for j in range(regs):
                    w = 0
                    for e in range(epr):
                        r, c = cell_at(lay, lane, epr * j + e)  # type: ignore[misc]
                        bits = 8 if eight else 16
                        word = inp[run * img_words + r * 4 + (c * bits) // 32]
                        w |= ((word >> ((c * bits) % 32)) & ((1 << bits) - 1)) << (bits * e)
                    out[(run * 32 + lane) * regs + j] = w
        return out
    if p.kind == "stmatrix":
        regs, epr, eight, words = p.meta["regs"], p.meta["epr"], p.meta["eight"], p.meta["image_words"]
        out = [0] * ((2 if eight else 1) * words)
        bits = 8 if eight else 16
        for run in range(2 if eight else 1):
            for lane in range(32):
                for j in range(regs):
                    for e in range(epr):
                        r, c = cell_at(lay, lane, epr * j + e)  # type: ignore[misc]
                        val = (inp[(run * 32 + lane) * regs + j] >> (bits * e)) & ((1 << bits) - 1)
                        k = r * 4 + (c * bits) // 32
                        out[run * words + k] |= val << ((c * bits) % 32)
        return out
    if p.kind == "movmatrix":
        assert source is not None
        where = {cell_at(source, ln, e): (ln, e) for ln in range(32) for e in range(2)}
        out = [0] * 32
        for lane in range(32):
            for e in range(2):
                rr, rc = cell_at(lay, lane, e)  # type: ignore[misc]
                sl, se = where[(rc, rr)]  # R[rr][rc] = A[rc][rr]
                out[lane] |= (2 * sl + se) << (16 * e)
        return out
    if p.kind == "tcgen05.ld":  # register j of a lane holds the code of its TMEM (lane, column)
        regs = p.meta["regs"]
        out = [0] * (32 * regs)
        for lane, j, r, c in _tmem_points(lay, regs):
            out[lane * regs + j] = (r << 16) | c
        return out
    if p.kind == "tcgen05.st":  # TMEM (lane, column) holds the code of the (lane, register) stored there
        cols = p.meta["cols"]
        out = [0] * (32 * cols)
        for lane, j, r, c in _tmem_points(lay, p.meta["regs"]):
            out[r * cols + c] = (lane << 16) | j
        return out
    raise ValueError(f"{p.id}: raw probe, nothing to simulate")


__all__ = ["ARCHS", "CatalogProbe", "arch_source", "compare", "decode", "host_input", "make_probe", "movement_probes", "regs_text", "six_image",
           "probe_program", "simulate"]
