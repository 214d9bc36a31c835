"""The command that made the PTX fixtures of this folder (run from the repository root):

    python examples/kernels/make_fixtures.py

* ``triton_fp16.ptx``: ``matmul.py`` for sm_80, BM = BN = 128, BK = 64, f16 inputs, f32 accumulator, 4 warps,
  3 stages (Triton 3.9.0; the benchmark's kernel);
* ``triton_fp16_64.ptx``: the same with BM = BN = 64, BK = 32, 2 stages (small: the tests' mutants);
* ``triton_sm90.ptx``: ``matmul_kernel`` for sm_90 (wgmma with shared-memory descriptors, cp.async), 128 x 128 x 64,
  4 warps, 3 stages (the Hopper benchmark's kernel); ``triton_sm90_64.ptx``: 64 x 64 x 32, 2 stages (the mutants);
* ``triton_sm90_tma.ptx``: ``matmul_tma`` for sm_90 (TMA through tensor descriptors, mbarriers, wgmma), 128 x 128 x 64;
* ``triton_sm100.ptx``: ``matmul_kernel`` for sm_100 (tcgen05.mma into Tensor Memory), 128 x 128 x 64, 4 warps,
  3 stages (the Blackwell benchmark's kernel);
* ``triton_sm100_mxfp8.ptx``: ``matmul_scaled`` for sm_100 (``tl.dot_scaled`` mxfp8: block-scaled tcgen05.mma with
  the scale factors in Tensor Memory), 128 x 128 x 128; ``triton_sm100_mxfp4.ptx``: ``matmul_scaled_fp4`` the same
  way (``tl.dot_scaled`` on e2m1 operands packed two to a byte: ``kind::mxf4.block_scale.block32``),
  ``triton_sm100_mixed.ptx``: ``matmul_scaled_mixed`` (e2m1 A x e4m3 B: ``kind::mxf8f6f4``, A in 8-bit containers), and
  ``triton_sm100_nvfp4.ptx``: ``matmul_scaled_nvfp4`` (e4m3 scale factors, one per 16: ``kind::mxf4nvf4...block16``);
* ``triton_splitk.ptx``: ``splitk.py``'s ``matmul_splitk`` for sm_80 (split-K: two CTAs per tile, each adding its
  half of K onto C with ``atom.global.add.f32``), 64 x 64 x 32, 4 warps, 2 stages; ``triton_splitk_red.ptx`` the same
  with ``sem="relaxed"`` (``red.global.add.f32``), ``triton_splitk_sm90.ptx`` that for sm_90 (wgmma, and
  ``red.global.add.v4.f32``), and ``triton_splitk_swap.ptx`` with SWAP=1 (a planted bug: row and column swapped);
* two planted bugs, for the docs' counterexamples: ``triton_sm90_64_lbo_sbo.ptx`` (B's wgmma descriptor with its LBO
  and SBO swapped) and ``triton_sm100_mxfp8_sf_id.ptx`` (the second MMA's instruction descriptor naming the first K
  block's scale factors of A), each ``triton_sm90_64.ptx`` / ``triton_sm100_mxfp8.ptx`` with one constant changed;
* ``mma_inline.ptx``, ``mma_inline_swizzled.ptx``, ``mma_inline_read_swizzled.ptx``: ``mma_inline.cu`` by
  ``nvcc -ptx -arch=sm_80 -lineinfo`` (CUDA 13.0), without and with ``-DSWIZZLE`` / ``-DSWIZZLE_READ_ONLY``;
* ``mma_sparse.ptx``: ``mma_sparse.cu`` (inline ``mma.sp::ordered_metadata`` m16n8k16, 2:4 sparse A) the same way,
  and ``mma_sparse_s4.ptx`` (``mma_sparse_s4.cu``: m16n8k64 on packed .s4), ``mma_sparse_s8.ptx`` and
  ``mma_sparse_tf32.ptx`` (``mma_sparse_more.cu``, without and with ``-DTF32``);
* ``mma_m8n8k4.ptx``: ``mma_m8n8k4.cu`` (inline ``mma.m8n8k4``, the quad-pair form) the same way, and
  ``mma_m8n8k4_f64.ptx``: ``mma_m8n8k4_f64.cu`` (inline ``mma.m8n8k4`` ``.f64``);
* ``mma_s4.ptx`` and ``mma_b1.ptx``: ``mma_subbyte.cu`` (inline ``mma`` on packed ``.s4``, and with ``-DB1`` on
  ``.b1`` with ``.and.popc``) the same way; ``mma_s4_m8n8k32.ptx``, ``mma_b1_m8n8k128.ptx``, ``mma_s4_m16n8k64.ptx``,
  ``mma_b1_m16n8k256.ptx``: ``mma_subbyte_shapes.cu`` with ``-DB1`` / ``-DWIDE`` as their names say;
* ``mma_sparse_metadata.ptx``: ``mma_sparse.ptx`` with one metadata constant changed (a planted bug, for the docs);
* ``wgmma_sparse.ptx``: ``wgmma_sparse.cu`` (inline ``wgmma.mma_async.sp`` m64n16k32, 2:4 sparse A from registers
  and from shared memory) by ``nvcc -ptx -arch=sm_90a -lineinfo``, and ``wgmma_sparse_s8.ptx``
  (``wgmma_sparse_s8.cu``: m64n16k64 on .s8, every thread's metadata) and ``wgmma_sparse_e4m3.ptx`` (the same
  with ``-DE4M3``) the same way; ``wgmma_sparse_selector.ptx``: ``wgmma_sparse.ptx`` with the sparsity selector 0
  made 1 (a planted bug, for the docs); ``wgmma_b1.ptx``: ``wgmma_b1.cu`` (inline ``wgmma.mma_async`` m64n8k256 on
  packed ``.b1`` with ``.and.popc``, A from registers and from shared memory) the same way;
* ``tcgen05_pair.ptx``: ``tcgen05_pair.cu`` (inline ``tcgen05.mma.cta_group::2``, a CTA pair's MMA in a cluster of
  2 CTAs) by ``nvcc -ptx -arch=sm_100a -lineinfo``, and ``tcgen05_pair_one_cta_a.ptx`` the same with
  ``-DONE_CTA_A`` (the odd CTA never copies its half of A: a planted bug);
* ``cluster_multicast.ptx``: ``cluster_multicast.cu`` (inline ``cp.async.bulk.tensor...multicast::cluster``, a TMA
  multicast in a cluster of 2 CTAs) by ``nvcc -ptx -arch=sm_90a -lineinfo``, and ``cluster_multicast_mask.ptx`` the
  same with ``-DMASK=1`` (the CTA mask leaves CTA 1 out: a planted bug);
* ``cluster_dsmem.ptx``: ``cluster_dsmem.cu`` (``st.shared::cluster``/``ld.shared::cluster`` through ``mapa``, in a
  cluster of 2 CTAs) the same way, ``cluster_dsmem_mbarrier.ptx`` with ``-DMBARRIER`` (ordered by mbarriers), and
  ``cluster_dsmem_early_load.ptx`` with ``-DEARLY_LOAD`` (the remote loads before the cluster barrier: a planted bug);
* ``cluster_st_async.ptx``: ``cluster_st_async.cu`` (``st.async...mbarrier::complete_tx::bytes`` into the other CTA's
  shared memory, in a cluster of 2 CTAs) the same way, and ``cluster_red_async.ptx`` with ``-DRED`` (the other CTA's half
  added onto zeros by ``red.async...add.u32``);
* ``cluster_race.ptx``: ``cluster_race.cu`` (CTA 0 stores each k-block of A into CTA 1's shared memory,
  ``st.shared::cluster``, a barrier.cluster between CTA 1's reads of a block and the next block's stores) by
  ``nvcc -ptx -arch=sm_90a -lineinfo``, ``cluster_race_no_sync.ptx`` with ``-DNO_SYNC`` (that barrier removed: a
  planted write-after-read race across CTAs) and ``cluster_race_double.ptx`` with ``-DDOUBLE`` (two buffers, no
  barrier needed);
* ``tcgen05_a_tmem.ptx``: ``tcgen05_a_tmem.cu`` (inline ``tcgen05.mma.cta_group::1.kind::f16`` with A in Tensor
  Memory, written by ``tcgen05.st``) by ``nvcc -ptx -arch=sm_100a -lineinfo``, and the planted
  ``tcgen05_a_tmem_col_off.ptx`` (``-DA_COL_OFF``: A's Tensor Memory column one k-block on) and
  ``tcgen05_a_tmem_half.ptx`` (``-DHALF_A``: A written for half the lanes);
* ``tcgen05_a_tmem_<kind>[_m64].ptx``: ``tcgen05_a_tmem_kinds.cu`` (the same GEMM with A in Tensor Memory for
  ``kind::tf32``, ``kind::f8f6f4`` on E4M3 and ``kind::i8`` on s8: ``-DKIND_TF32``/``-DKIND_E4M3``/``-DKIND_S8``;
  ``-DM64``: M = 64, Layout F) the same way, and the planted ``..._col_off.ptx`` (``-DA_COL_OFF``: A's Tensor Memory
  column one 32-bit column on) and ``tcgen05_a_tmem_tf32_m64_quarter.ptx`` (``-DQUARTER_SWAP``: warps write each
  other's rows of A);
* ``tcgen05_cp.ptx``: ``tcgen05_cp.cu`` (the same GEMM with A copied from shared memory into Tensor Memory by
  ``tcgen05.cp.cta_group::1.128x256b`` and two ``.128x128b``) by ``nvcc -ptx -arch=sm_100a -lineinfo``, and the
  planted ``tcgen05_cp_shape.ptx`` (``-DCP_SHAPE``: the second copy made ``.64x128b.warpx2::01_23``);
* ``tcgen05_cp_pair.ptx``: ``tcgen05_cp_pair.cu`` (a CTA pair's ``tcgen05.cp.cta_group::2.128x256b`` into both CTAs'
  Tensor Memory, read back as the pair MMA's A) by ``nvcc -ptx -arch=sm_100a -lineinfo``, the planted
  ``tcgen05_cp_pair_column.ptx`` (``-DCP_COLUMN``: the last copy one column on), ``tcgen05_cp_pair_order.ptx``
  (``-DCP_ORDER``: the copies in the other order, the same meaning) and ``tcgen05_cp_pair_own_half.ptx``
  (``-DOWN_HALF``: the peer's staged bytes not the issuer's: refused);
* ``tcgen05_ws.ptx``: ``tcgen05_ws.cu`` (two weight-stationary ``tcgen05.mma.ws`` M = 64 sharing B through collector
  buffer b0) by ``nvcc -ptx -arch=sm_100a -lineinfo``, and ``tcgen05_fp4.ptx``: ``tcgen05_fp4.cu``
  (``tcgen05.mma.kind::f8f6f4`` on e2m1 x e4m3, A's e2m1 in 8-bit containers of shared memory) the same way;
* ``tcgen05_ws_zero_column.ptx``: ``tcgen05_ws_zero_column.cu`` (two ``tcgen05.mma.ws`` M = 64 with complementary
  zero-column masks, both shifting B by 2 columns) by ``nvcc -ptx -arch=sm_100a -lineinfo``;
* ``tcgen05_pack.ptx``: ``tcgen05_pack.cu`` (an f16 accumulator read by ``tcgen05.ld...pack::16b``, stored back by
  ``tcgen05.st...unpack::16b`` and read again) by ``nvcc -ptx -arch=sm_100a -lineinfo``.

Each file starts with one comment line that says how it was made; the rest is the compiler's output as it was,
except the paths of its ``.file`` directives, made relative (to the repository, or to Python's site-packages) so the
fixtures name no machine's folders.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
import sysconfig
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent


def relative_files(ptx: str) -> str:
    """``.file`` paths relative to the repository (or to site-packages)."""
    site = sysconfig.get_paths()["purelib"]

    def fix(m: re.Match) -> str:  # type: ignore[type-arg]
        path = m.group(2)
        for base, shown in ((str(ROOT) + "/", ""), (site + "/", "site-packages/")):
            if path.startswith(base):
                path = shown + path[len(base):]
        return m.group(1) + '"' + path + '"'
    return re.sub(r'(\.file\s+\d+\s+)"([^"]*)"', fix, ptx)


def triton(name: str, bm: int, bn: int, bk: int, warps: int, stages: int, target: str = "sm_80",
           kernel: str = "matmul_kernel", extra: dict[str, int] | None = None) -> None:
    sys.path.insert(0, str(ROOT))
    from verify.kernel.launch import Scalar, Tensor, TensorMap
    from verify.kernel.load import compile_triton
    M, N, K = 2 * bm, 2 * bn, 4 * bk
    if kernel == "matmul_kernel":
        args: tuple = (Tensor("A", "f16", (M, K), (K, 1)), Tensor("B", "f16", (K, N), (N, 1)),
                       Tensor("C", "f32", (M, N), (N, 1)), *[Scalar(x) for x in (M, N, K, K, 1, N, 1, N, 1)])
        consts = {"BM": bm, "BN": bn, "BK": bk, "INT": 0}
    elif kernel == "matmul_splitk":  # M = N = 2 tiles, K = 2 slices of 4 steps (``extra``: SPLIT, RELAXED, SWAP)
        args = (Tensor("A", "f16", (M, 2 * K), (2 * K, 1)), Tensor("B", "f16", (2 * K, N), (N, 1)),
                Tensor("C", "f32", (M, N), (N, 1)), *[Scalar(x) for x in (M, N, 2 * K, 2 * K, 1, N, 1, N, 1)])
        consts = {"BM": bm, "BN": bn, "BK": bk}
    elif kernel == "matmul_tma":
        args = (TensorMap("A", Tensor("A", "f16", (M, K), (K, 1)), (bm, bk)),
                TensorMap("B", Tensor("B", "f16", (K, N), (N, 1)), (bk, bn)),
                Tensor("C", "f32", (M, N), (N, 1)), *[Scalar(x) for x in (M, N, K, N)])
        consts = {"BM": bm, "BN": bn, "BK": bk}
    elif kernel in ("matmul_scaled_fp4", "matmul_scaled_nvfp4"):
        g, st = (32, "u8") if kernel == "matmul_scaled_fp4" else (16, "e4m3")
        args = (Tensor("A", "e2m1", (M, K), (K, 1)), Tensor("B", "e2m1", (N, K), (K, 1)),
                Tensor("SA", st, (M, K // g), (K // g, 1)), Tensor("SB", st, (N, K // g), (K // g, 1)),
                Tensor("C", "f32", (M, N), (N, 1)), *[Scalar(x) for x in (M, N, K)])
        consts = {"BM": bm, "BN": bn, "BK": bk}
    elif kernel == "matmul_scaled_mixed":  # A e2m1 (packed two to a byte), B e4m3
        args = (Tensor("A", "e2m1", (M, K), (K, 1)), Tensor("B", "e4m3", (K, N), (N, 1)),
                Tensor("SA", "u8", (M, K // 32), (K // 32, 1)), Tensor("SB", "u8", (N, K // 32), (K // 32, 1)),
                Tensor("C", "f32", (M, N), (N, 1)), *[Scalar(x) for x in (M, N, K)])
        consts = {"BM": bm, "BN": bn, "BK": bk}
    else:
        args = (Tensor("A", "e4m3", (M, K), (K, 1)), Tensor("B", "e4m3", (K, N), (N, 1)),
                Tensor("SA", "u8", (M, K // 32), (K // 32, 1)), Tensor("SB", "u8", (N, K // 32), (K // 32, 1)),
                Tensor("C", "f32", (M, N), (N, 1)), *[Scalar(x) for x in (M, N, K)])
        consts = {"BM": bm, "BN": bn, "BK": bk}
    consts.update(extra or {})
    source = "splitk.py" if kernel == "matmul_splitk" else "matmul.py"
    cwd = os.getcwd()
    os.chdir(HERE)
    try:
        k = compile_triton(f"{source}:{kernel}", consts, args, target, warps, stages)
    finally:
        os.chdir(cwd)
    maps = "".join(f"; tensor map {n}: box {'x'.join(map(str, box))}, swizzle {swz}"
                   for n, (swz, box) in zip("AB", k.tensordesc))
    more = "".join(f" {n}={v}" for n, v in (extra or {}).items())
    head = (f"// made by examples/kernels/make_fixtures.py: Triton {k.version} {source}:{kernel} BM={bm} BN={bn} "
            f"BK={bk}{more}{' INT=0, f16' if kernel == 'matmul_kernel' else ''}, {target}, num_warps={warps}, "
            f"num_stages={stages}; shared {k.shared} bytes{maps}\n")
    (HERE / name).write_text(head + relative_files(k.ptx), encoding="utf-8")


def planted(name: str, base: str, old: str, new: str, what: str) -> None:
    """``base`` with every ``old`` replaced by ``new`` (a bug planted for the docs), its header saying so."""
    text = (HERE / base).read_text(encoding="utf-8")
    assert old in text, old
    head, body = text.split("\n", 1)
    (HERE / name).write_text(f"// made by examples/kernels/make_fixtures.py: {base} with {what} ('{old}' -> '{new}')\n"
                             + body.replace(old, new), encoding="utf-8")


def nvcc(name: str, *defines: str, source: str = "mma_inline.cu", arch: str = "sm_80") -> None:
    cmd = ["nvcc", "-ptx", f"-arch={arch}", "-lineinfo", *defines, source, "-o", name]
    subprocess.run(cmd, cwd=HERE, check=True)
    text = (HERE / name).read_text(encoding="utf-8")
    (HERE / name).write_text(f"// made by examples/kernels/make_fixtures.py: {' '.join(cmd)}\n" + relative_files(text),
                             encoding="utf-8")


if __name__ == "__main__":
    triton("triton_fp16.ptx", 128, 128, 64, 4, 3)
    triton("triton_fp16_64.ptx", 64, 64, 32, 4, 2)
    triton("triton_sm90.ptx", 128, 128, 64, 4, 3, "sm_90")
    triton("triton_sm90_64.ptx", 64, 64, 32, 4, 2, "sm_90")
    triton("triton_sm90_tma.ptx", 128, 128, 64, 4, 3, "sm_90", "matmul_tma")
    triton("triton_sm100.ptx", 128, 128, 64, 4, 3, "sm_100")
    triton("triton_sm100_mxfp8.ptx", 128, 128, 128, 4, 3, "sm_100", "matmul_scaled")
    triton("triton_sm100_mxfp4.ptx", 128, 128, 128, 4, 3, "sm_100", "matmul_scaled_fp4")
    triton("triton_sm100_mixed.ptx", 128, 128, 128, 4, 3, "sm_100", "matmul_scaled_mixed")
    triton("triton_sm100_nvfp4.ptx", 128, 128, 128, 4, 3, "sm_100", "matmul_scaled_nvfp4")
    triton("triton_splitk.ptx", 64, 64, 32, 4, 2, "sm_80", "matmul_splitk", {"SPLIT": 2, "RELAXED": 0, "SWAP": 0})
    triton("triton_splitk_red.ptx", 64, 64, 32, 4, 2, "sm_80", "matmul_splitk", {"SPLIT": 2, "RELAXED": 1, "SWAP": 0})
    triton("triton_splitk_sm90.ptx", 64, 64, 32, 4, 2, "sm_90", "matmul_splitk", {"SPLIT": 2, "RELAXED": 1, "SWAP": 0})
    triton("triton_splitk_swap.ptx", 64, 64, 32, 4, 2, "sm_80", "matmul_splitk", {"SPLIT": 2, "RELAXED": 0, "SWAP": 1})
    planted("triton_sm90_64_lbo_sbo.ptx", "triton_sm90_64.ptx", "4611686293305294848", str(0x4000000000400000),
            "B's descriptor's LBO and SBO swapped")
    planted("triton_sm100_mxfp8_sf_id.ptx", "triton_sm100_mxfp8.ptx", "%r208, 681639952;",
            f"%r208, {681639952 & ~(3 << 29)};", "the second MMA's scale-factor A id 1 made 0")
    nvcc("mma_inline.ptx")
    nvcc("mma_inline_swizzled.ptx", "-DSWIZZLE")
    nvcc("mma_inline_read_swizzled.ptx", "-DSWIZZLE_READ_ONLY")
    nvcc("tcgen05_pair.ptx", source="tcgen05_pair.cu", arch="sm_100a")
    nvcc("tcgen05_pair_one_cta_a.ptx", "-DONE_CTA_A", source="tcgen05_pair.cu", arch="sm_100a")
    nvcc("cluster_multicast.ptx", source="cluster_multicast.cu", arch="sm_90a")
    nvcc("cluster_multicast_mask.ptx", "-DMASK=1", source="cluster_multicast.cu", arch="sm_90a")
    nvcc("cluster_dsmem.ptx", source="cluster_dsmem.cu", arch="sm_90a")
    nvcc("cluster_dsmem_mbarrier.ptx", "-DMBARRIER", source="cluster_dsmem.cu", arch="sm_90a")
    nvcc("cluster_dsmem_early_load.ptx", "-DEARLY_LOAD", source="cluster_dsmem.cu", arch="sm_90a")
    nvcc("cluster_st_async.ptx", source="cluster_st_async.cu", arch="sm_90a")
    nvcc("cluster_red_async.ptx", "-DRED", source="cluster_st_async.cu", arch="sm_90a")
    nvcc("cluster_race.ptx", source="cluster_race.cu", arch="sm_90a")
    nvcc("cluster_race_no_sync.ptx", "-DNO_SYNC", source="cluster_race.cu", arch="sm_90a")
    nvcc("cluster_race_double.ptx", "-DDOUBLE", source="cluster_race.cu", arch="sm_90a")
    nvcc("tcgen05_a_tmem.ptx", source="tcgen05_a_tmem.cu", arch="sm_100a")
    nvcc("tcgen05_a_tmem_col_off.ptx", "-DA_COL_OFF", source="tcgen05_a_tmem.cu", arch="sm_100a")
    nvcc("tcgen05_a_tmem_half.ptx", "-DHALF_A", source="tcgen05_a_tmem.cu", arch="sm_100a")
    for name, defines in (("tf32", ["-DKIND_TF32"]), ("tf32_col_off", ["-DKIND_TF32", "-DA_COL_OFF"]),
                          ("e4m3", ["-DKIND_E4M3"]), ("s8", ["-DKIND_S8"]), ("s8_col_off", ["-DKIND_S8", "-DA_COL_OFF"]),
                          ("tf32_m64", ["-DKIND_TF32", "-DM64"]), ("tf32_m64_quarter", ["-DKIND_TF32", "-DM64", "-DQUARTER_SWAP"]),
                          ("e4m3_m64", ["-DKIND_E4M3", "-DM64"]), ("s8_m64", ["-DKIND_S8", "-DM64"])):
        nvcc(f"tcgen05_a_tmem_{name}.ptx", *defines, source="tcgen05_a_tmem_kinds.cu", arch="sm_100a")
    nvcc("tcgen05_cp.ptx", source="tcgen05_cp.cu", arch="sm_100a")
    nvcc("tcgen05_cp_shape.ptx", "-DCP_SHAPE", source="tcgen05_cp.cu", arch="sm_100a")
    nvcc("tcgen05_cp_pair.ptx", source="tcgen05_cp_pair.cu", arch="sm_100a")
    nvcc("tcgen05_cp_pair_column.ptx", "-DCP_COLUMN", source="tcgen05_cp_pair.cu", arch="sm_100a")
    nvcc("tcgen05_cp_pair_order.ptx", "-DCP_ORDER", source="tcgen05_cp_pair.cu", arch="sm_100a")
    nvcc("tcgen05_cp_pair_own_half.ptx", "-DOWN_HALF", source="tcgen05_cp_pair.cu", arch="sm_100a")
    nvcc("tcgen05_ws.ptx", source="tcgen05_ws.cu", arch="sm_100a")
    nvcc("tcgen05_ws_zero_column.ptx", source="tcgen05_ws_zero_column.cu", arch="sm_100a")
    nvcc("tcgen05_pack.ptx", source="tcgen05_pack.cu", arch="sm_100a")
    nvcc("tcgen05_fp4.ptx", source="tcgen05_fp4.cu", arch="sm_100a")
    nvcc("mma_sparse.ptx", source="mma_sparse.cu")
    nvcc("mma_sparse_s4.ptx", source="mma_sparse_s4.cu")
    nvcc("mma_sparse_s8.ptx", source="mma_sparse_more.cu")
    nvcc("mma_sparse_tf32.ptx", "-DTF32", source="mma_sparse_more.cu")
    nvcc("mma_m8n8k4.ptx", source="mma_m8n8k4.cu")
    nvcc("mma_m8n8k4_f64.ptx", source="mma_m8n8k4_f64.cu")
    nvcc("mma_s4.ptx", source="mma_subbyte.cu")
    nvcc("mma_b1.ptx", "-DB1", source="mma_subbyte.cu")
    nvcc("mma_s4_m8n8k32.ptx", source="mma_subbyte_shapes.cu")
    nvcc("mma_b1_m8n8k128.ptx", "-DB1", source="mma_subbyte_shapes.cu")
    nvcc("mma_s4_m16n8k64.ptx", "-DWIDE", source="mma_subbyte_shapes.cu")
    nvcc("mma_b1_m16n8k256.ptx", "-DWIDE", "-DB1", source="mma_subbyte_shapes.cu")
    nvcc("wgmma_sparse.ptx", source="wgmma_sparse.cu", arch="sm_90a")
    nvcc("wgmma_sparse_s8.ptx", source="wgmma_sparse_s8.cu", arch="sm_90a")
    nvcc("wgmma_sparse_e4m3.ptx", "-DE4M3", source="wgmma_sparse_s8.cu", arch="sm_90a")
    nvcc("wgmma_b1.ptx", source="wgmma_b1.cu", arch="sm_90a")
    planted("wgmma_sparse_selector.ptx", "wgmma_sparse.ptx", "%r365, 0, p", "%r365, 1, p",
            "the sparsity selector 0 made 1 in both wgmma.mma_async.sp")
    planted("mma_sparse_metadata.ptx", "mma_sparse.ptx", "%r40, 1145324612,", f"%r40, {0x44444484},",
            "the even rows' sparse metadata 0x44444444 made 0x44444484")
