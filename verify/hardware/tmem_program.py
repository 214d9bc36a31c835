"""The kernel text of a Tensor Memory probe (``tmem_kind``), generated from a ``Plan``.

One block of 128 threads (warp w reaches TMEM lanes 32w..32w+31, so thread t is lane t) allocates ``cols``
Tensor Memory columns, then runs ``experiments`` times:

1. copies the experiment's shared-memory words from the input (``smem_words`` per experiment);
2. fills every allocated column with the sentinel 0xFFFFFFFF (a cell no instruction wrote reads back as it),
   then ``fills`` (first column, columns, word) with their constant word in every lane (a CTA pair too: each CTA
   its own Tensor Memory; the sparse probe's metadata);
3. writes the experiment's Tensor Memory images from the input (``images``: (first column, columns));
4. runs the instruction under test: ``issue_one`` by thread 0 (an MMA or tcgen05.cp), completed through
   ``tcgen05.commit`` and an mbarrier, or ``issue_all`` by every thread (a tcgen05.st);
5. reads ``read`` = (first column, columns) of every lane back with ``tcgen05.ld.32x32b.x1`` into
   ``out[(e * 128 + lane) * columns + column]``.

The input is ``[smem words of experiment 0, 1, ...][image words of experiment 0, 1, ...]``, an image word
``(e, lane, c)`` of segment s at ``image_base(s) + (e * 128 + lane) * columns_s + c``.  Everything else (what the
words mean, how the output decodes) is ``tmem_kind``'s and ``tmem_readback``'s.
"""
from __future__ import annotations

from dataclasses import dataclass

SENTINEL = 0xFFFFFFFF


@dataclass(frozen=True)
class Plan:
    cols: int                              # TMEM columns allocated (a power of two, >= 32)
    experiments: int
    smem_words: int                        # shared-memory words per experiment (0: none)
    images: tuple[tuple[int, int], ...]    # TMEM (first column, columns) written from the input, per experiment
    read: tuple[int, int]                  # TMEM (first column, columns) read back, per experiment
    setup: str = ""                        # C statements after allocation (constants: descriptors)
    issue_one: str = ""                    # C statements thread 0 runs (``e``: the experiment); then commit
    issue_all: str = ""                    # C statements every thread runs (no commit)
    ctas: int = 1                          # 2: a cluster of two CTAs (cta_group::2; CTA 0 issues)
    fills: tuple[tuple[int, int, int], ...] = ()  # TMEM (first column, columns, word) set in every lane

    @property
    def out_words(self) -> int:
        """Output words per thread (of one CTA: every CTA's outputs counted)."""
        return self.ctas * self.experiments * self.read[1]

    def image_base(self, s: int) -> int:
        base = self.ctas * self.experiments * self.smem_words
        for c0, n in self.images[:s]:
            base += self.experiments * 128 * n
        return base

    @property
    def in_words(self) -> int:
        return self.image_base(len(self.images))


def desc(addr: str, lbo: int, sbo: int) -> str:
    """The C expression of a shared-memory matrix descriptor (no swizzle, version 1 at bit 46, as
    ``tcgen05_scale`` assumes; CUTLASS ``UMMA::SmemDescriptor``): start >> 4, LBO >> 4 at bit 16, SBO >> 4 at
    bit 32."""
    return (f"((uint64_t)((({addr}) & 0x3FFFF) >> 4) | ((uint64_t)({lbo}u >> 4) << 16) | "
            f"((uint64_t)({sbo}u >> 4) << 32) | (1ull << 46))")


def _st(addr: str, val: str, qual: str = "") -> str:
    return (f'asm volatile("tcgen05.st.sync.aligned.32x32b.x1{qual}.b32 [%0], {{%1}};" :: "r"({addr}), '
            f'"r"({val}) : "memory");')


def _sync(ctas: int) -> str:
    """Every thread (of the cluster, for two CTAs) past this point, Tensor Memory operations ordered."""
    wait = ("__syncthreads();" if ctas == 1 else
            'asm volatile("barrier.cluster.arrive.release.aligned;\\nbarrier.cluster.wait.acquire.aligned;" ::: "memory");')
    return ('asm volatile("tcgen05.fence::before_thread_sync;" ::: "memory");\n    ' + wait + '\n'
            '    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");')


def body(p: Plan) -> str:
    """The kernel body (``out``, ``in``: the kernel's arguments)."""
    if p.ctas > 1 and (p.images or p.issue_all):
        raise ValueError("a cluster probe writes no Tensor Memory image and runs no tcgen05.st")
    sync = _sync(p.ctas)
    group = f"cta_group::{p.ctas}"
    smem = max(p.smem_words, 1)
    images = ""
    for s, (c0, n) in enumerate(p.images):
        images += (f"    for (uint32_t c = 0; c < {n}u; ++c)\n"
                   f"      {_st(f'base + lanes + {c0}u + c', f'in[{p.image_base(s)} + (e * 128 + t) * {n} + c]')}\n")
    fills = "".join(f"    for (uint32_t c = 0; c < {n}u; ++c)\n      {_st(f'base + lanes + {c0}u + c', f'{w:#x}u')}\n"
                    for c0, n, w in p.fills)
    issue = ""
    commit = ('asm volatile("tcgen05.commit.cta_group::1.mbarrier::arrive::one.shared::cluster.b64 [%0];" :: "r"(bar) : "memory");'
              if p.ctas == 1 else
              'asm volatile("tcgen05.commit.cta_group::2.mbarrier::arrive::one.shared::cluster.multicast::cluster.b64 [%0], %1;" '
              f':: "r"(bar), "h"((uint16_t){(1 << p.ctas) - 1}) : "memory");')
    if p.issue_one:
        issue = f"""    if (cta == 0 && t == 0) {{
{p.issue_one}
      {commit}
    }}
    for (uint32_t done = 0; !done;)
      asm volatile("{{\\n.reg .pred P;\\nmbarrier.try_wait.parity.shared::cta.b64 P, [%1], %2;\\nselp.b32 %0, 1, 0, P;\\n}}"
                   : "=r"(done) : "r"(bar), "r"((uint32_t)(e & 1)) : "memory");
    asm volatile("tcgen05.fence::after_thread_sync;" ::: "memory");
"""
    if p.issue_all:
        issue += p.issue_all + '\n    asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");\n    ' + sync + "\n"
    r0, rn = p.read
    copy = (f"    for (int k = t; k < {p.smem_words}; k += 128) sm[k] = in[(cta * {p.experiments} + e) * {p.smem_words} + k];\n"
            if p.smem_words else "")
    return f"""  __shared__ __align__(1024) uint32_t sm[{smem}];
  __shared__ __align__(8) uint64_t mbar;
  __shared__ uint32_t slot;
  const int t = threadIdx.x, warp = t / 32, cta = (int)blockIdx.x;  // blockIdx.x: the rank in a cluster of {p.ctas}
  if (warp == 0) {{
    asm volatile("tcgen05.alloc.{group}.sync.aligned.shared::cta.b32 [%0], {p.cols};" :: "r"((uint32_t)__cvta_generic_to_shared(&slot)) : "memory");
    asm volatile("tcgen05.relinquish_alloc_permit.{group}.sync.aligned;" ::: "memory");
  }}
  const uint32_t bar = (uint32_t)__cvta_generic_to_shared(&mbar), sbase = (uint32_t)__cvta_generic_to_shared(sm);
  (void)sbase;
  if (t == 0) asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" :: "r"(bar) : "memory");
{'  if (t == 0) asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");' if p.ctas > 1 else ''}
  {sync}
  const uint32_t base = slot, lanes = (uint32_t)(warp * 32) << 16;
{p.setup}
  for (int e = 0; e < {p.experiments}; ++e) {{
{copy}    for (uint32_t c = 0; c < {p.cols}u; ++c)
      {_st('base + lanes + c', f'{SENTINEL:#x}u')}
{fills}{images}    asm volatile("tcgen05.wait::st.sync.aligned;" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    {sync}
{issue}    for (uint32_t c = 0; c < {rn}u; ++c) {{
      uint32_t v;
      asm volatile("tcgen05.ld.sync.aligned.32x32b.x1.b32 {{%0}}, [%1];" : "=r"(v) : "r"(base + lanes + {r0}u + c) : "memory");
      asm volatile("tcgen05.wait::ld.sync.aligned;" ::: "memory");
      out[((e * {p.ctas} + cta) * 128 + t) * {rn} + c] = v;
    }}
    {sync}
  }}
  if (warp == 0) asm volatile("tcgen05.dealloc.{group}.sync.aligned.b32 %0, {p.cols};" :: "r"(base) : "memory");"""


def mma_issue(text: str, d: str, a: str, a_in_tmem: bool, b: str, idesc: str, scale: tuple[str, str] | None = None,
              meta: str | None = None) -> str:
    """Thread 0's MMA: ``text [d], a|[a], b, [meta]?, idesc, [sfa], [sfb]?, p`` with enable-input-d false
    (D = A x B); ``meta``: the sparsity metadata's Tensor Memory address of ``tcgen05.mma.sp`` (its operand
    ``[sp-meta-tmem]`` between b-desc and idesc, PTX 9.7.16.10.9.2 lines 14-20)."""
    a_op = "[%1]" if a_in_tmem else "%1"
    a_c = f'"r"({a})' if a_in_tmem else f'"l"({a})'
    sf = ", [%5], [%6]" if scale else ""
    sf_c = f', "r"({scale[0]}), "r"({scale[1]})' if scale else ""
    mi = 7 if scale else 5
    sp = f" [%{mi}]," if meta else ""
    sp_c = f', "r"({meta})' if meta else ""
    return (f'      asm volatile("{{\\n.reg .pred p;\\nsetp.ne.b32 p, %4, 0;\\n{text} [%0], {a_op}, %2,{sp} %3{sf}, p;\\n}}"\n'
            f'                   :: "r"({d}), {a_c}, "l"({b}), "r"({idesc}), "r"(0){sf_c}{sp_c} : "memory");')


__all__ = ["Plan", "SENTINEL", "body", "desc", "mma_issue"]
