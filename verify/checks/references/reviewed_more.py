"""Reviewed explanations for the CTA rasterisations, descriptor encodings and blockwise scale-factor storages.

Kept apart from ``matrix.py``'s tables (which add them to ``MODELED``, ``SINGLE`` and their own reading of
``UNSETTLED``) so that each stays reviewable by itself.  An explanation never counts as an origin: it says why a
layout has fewer than two, and what would settle it.

* ``MODELED_MORE``: catalog layouts that model a program's mistake (writers and readers kept for
  ``consistent``), not a library's layout;
* ``SINGLE_MORE``: one reference agrees, with why no second origin installed here states the layout;
* ``KNOWN_MORE``: a reference differs, reviewed (``matrix.KNOWN``'s form: references, trait pattern, why);
* ``UNSETTLED``: no reference here states it, with why and what would settle it.  These are library conventions
  (host-side storage, descriptor bit-fields), not instruction layouts a GPU probe could read back, so the
  settling step is named instead of ``ptx-verify probe``.
"""
from __future__ import annotations

MODELED_MORE = {
    "map.raster.grouped.full_group": "a mutation of Triton's grouped ordering kept as the mistake it is (the short "
                                     "last group given G rows: tiles past NM computed, tiles of the grid never); "
                                     "map.raster.triton.grouped, compared, is the library's",
    "storage.sf.ue8m0.packed.kmajor": "a modelled packer that skips DeepGEMM's transpose (the packed UE8M0 words "
                                      "K-major): a writer for the writer/reader decision against "
                                      "storage.sf.deepgemm.ue8m0.packed",
}

SINGLE_MORE = (
    (r"tcgen05\.cp\.4x256b",
     "CuTe's Copy_Traits<SM100_UTCCP_4dp256bit_1cta> (copy_traits_sm100.hpp:3617) states it; no installed library "
     "issues .4x256b: Mosaic GPU's tcgen05.py issues .128x256b, .128x128b, .32x128b.warpx4 and .64x128b.warpx2::01_23 "
     "only, TileLang's tcgen_05.h .32x128b.warpx4 only, FlashInfer's Python kernels name SHAPE_32X128B and (once) "
     "SHAPE_64X128B, never .4x256b (its copies of CUTLASS and CCCL wrap it with no layout), Triton lowers "
     "tcgen05_copy in C++ "
     "(libtriton), tensor-layouts and tinygrad have no tcgen05.cp"),
    (r"map\.raster\.triton\.grouped",
     "Triton's swizzle2d (triton/language/standard.py) states it; every other grouped ordering installed here is "
     "the persistent variant (FlashInfer's _compute_pid, its cuTile GEMMs and all_gather_matmul: tile_id % "
     "group_size_m without the '% num_pid_in_group' first; compared with map.raster.triton.grouped.persistent), "
     "TileLang's rasterization2DRow/Column (tl_templates/cuda/threadblock_swizzle.h) is a serpentine panel order, "
     "and Mosaic GPU, tinygrad and tensor-layouts have none"),
    (r"map\.raster\.triton\.grouped\.persistent",
     "FlashInfer's _compute_pid (flashinfer/triton/kernels/sm_constraint_gemm.py) states it; Triton's wheel ships "
     "swizzle2d (the tutorial 03 form, compared with map.raster.triton.grouped) but not its tutorials "
     "(09-persistent-matmul.py), and no other installed package has a grouped ordering"),
    (r"map\.raster\.cutlass\.identity",
     "CUTLASS's GemmIdentityThreadblockSwizzle (cutlass/gemm/threadblock/threadblock_swizzle.h) states it; FlashInfer "
     "and TileLang ship copies of the same CUTLASS header (flashinfer/data/cutlass, tilelang/3rdparty/cutlass: CuTe's "
     "origin), TileLang's own rasterization is a serpentine panel order, Triton's swizzle2d a grouped one"),
    (r"tcgen05\.zero_column\.(fields|coverage\.m(128|64|32))",
     "CuTe's MaskAndShiftB and make_column_zero_mask (cute/arch/mma_sm100_desc.hpp:272, :306-308; references/"
     "cute_zcm.py) state it; the only other installed statements of the descriptor are copies of that header "
     "(tilelang/3rdparty/cutlass, byte for byte, and flashinfer/data/cutlass, which differs only in a copyright year and "
     "the instruction descriptor's a_format_/b_format_ comments: CuTe's origin); FlashInfer's CCCL tcgen05_mma_ws.h passes zero_column_mask_desc through "
     "as an opaque uint64_t and its Python tcgen05_mma_ws (attention/prims_ts/kernels/tcgen05_compat.py) passes "
     "col_b_zero_mask=None; TileLang's tcgen05mma.h masks (mask0-mask3) are the disable-output-lane masks, and "
     "Triton 3.9 (gluon), JAX Mosaic GPU, tinygrad and tensor-layouts name no zero-column mask, skip span or "
     "column shift at all"),
)

KNOWN_MORE: tuple[tuple[tuple[str, ...], str, str], ...] = (
    (("mosaic",), r"async_copy_scales_smem_to_tmem: WARPX2_01_23 .*",
     "an open question only a GPU settles: Mosaic GPU's b_scales_m64_collective_layout() (tcgen05.py:1093) puts the "
     "buffer rows 0-31 that its .64x128b.warpx2::01_23 copy (tcgen05.py:1691) reads in lane quarters 0 and 2, CuTe's "
     "Copy_Traits<SM100_UTCCP_2x64dp128bitlw0123_1cta> (copy_traits_sm100.hpp:3738) in 0 and 1: Mosaic's ::01_23 is, "
     "cell for cell, CuTe's ::02_13.  The page says only that warps 0 and 1 form a pair and each warp of a pair "
     "receives half of the data.  CuTe's reading is the one that fits the MMA: CuTe's 2x2 SFB allocator "
     "(tmem_sf_frg, mma_traits_sm100.hpp:862) and tcgen05.datapath.B (quarters 0 and 1 compute the first N / 2 "
     "columns, four origins) need the first half of B's factors in quarters 0 and 1, which Mosaic's copy gives under "
     "CuTe's reading; FlashInfer's copy_q_fp8_to_tmem issues ::02_13 into Layout E / B, which needs rows 0-31 in "
     "quarters 0 and 2, as CuTe's ::02_13 says (references/flashinfer_cp.py: they agree); Mosaic's layout object is only "
     "compared for equality.  Settled by a GPU run of tcgen05.cp.64x128b.warpx2::01_23 on 64 coded rows read back "
     "from all 128 lanes with tcgen05.ld.32x32b (ptx-verify's probe tmem.cp.tcgen05.cp.64x128b.warpx2.01_23, run "
     "by ptx-verify confirm tcgen05.cp.64x128b.warpx2.01_23 --device cuda; not yet run on a GPU)"),
)

UNSETTLED = (
    (r"tcgen05\.scale_vec\.kinds",
     "Table 55 as a map (which kind takes which .scale_vec/.blockN spelling, and its VS): each library issues only "
     "the spellings it uses, never a refused one.  CuTe's SM100 block-scaled MMAs (cute/arch/mma_sm100_umma.hpp:1388-"
     "1692) issue mxf4nvf4 with .block16 / .scale_vec::4X and .block32 / .scale_vec::2X, mxf4 with .block32 / "
     ".scale_vec::2X, mxf8f6f4 with none; Mosaic GPU's _do_mma (tcgen05.py:649-667) mxf8f6f4 .scale_vec::1X (4 MMAs "
     "per 128 x 4 tile), mxf4 .scale_vec::2X (2), mxf4nvf4 .scale_vec::4X (1); every one is an allowed row of the "
     "table with its VS, none states the refused rows",
     "ptxas over the 18 (kind, qualifier) spellings (legality: which it refuses; no layout truth), and a GPU run of "
     "each allowed spelling whose scale factors name their K block (VS)"),
    (r"tcgen05\.valid\.modes",
     "Table 52's valid (size, major-ness, swizzle) combinations: no reference states validity as data. CuTe's "
     "make_umma_desc (cute/atom/mma_traits_sm100.hpp:282) refuses SWIZZLE_128B_BASE32B for K-major with a "
     "static_assert (\"invalid for Major-K\"), against the page's \"All swizzling modes\" for K-major and with Table "
     "53, which has no K-major atom for it (the erratum ingest reports); its MN-major branch accepts any mode whose "
     "canonical strides match, and Triton's and Mosaic GPU's descriptor code refuses modes by their own limits "
     "(no 128B with 32B atomicity at all), not by the table",
     "a reader of CuTe's make_umma_desc static_asserts per (element size, major-ness, layout type), or a GPU run of "
     "tcgen05.mma over every combination, checking which ones trap (no probe kind of ptx-verify writes "
     "that kernel yet)"),
    (r"tcgen05\.descriptor\.fields",
     "CuTe's UMMA::SmemDescriptor (cute/arch/mma_sm100_desc.hpp:98-112) declares the named fields at the table's "
     "bits (start address 0-13, LBO 16-29, SBO 32-45, base offset 49-51, LBO mode 52, layout type 61-63) but splits "
     "the fixed 0b001 at 46-48 into version_ (46-47) and an unnamed bit, and leaves 53-60 unnamed, so it is no "
     "bit -> position map of the table's eight fields; Mosaic GPU's encode_descriptor sets bits 0-13, 16-29, 32-45, "
     "46 and 62-63 only (no base offset, no LBO mode)",
     "a reader of CuTe's bit-field union that assigns its unnamed bits to the table's fixed fields (version_ = 1 "
     "with bit 48 zero is the table's 0b001), or a GPU run of tcgen05.mma whose descriptor differs from a valid one "
     "in a single field"),
    (r"storage\.sf\.deepgemm\.(1x128\.fp32|ue8m0\.packed)",
     "DeepGEMM's own code (csrc/jit_kernels/impls/smxx_layout.hpp) is not installed here; FlashInfer's port "
     "(flashinfer/deep_gemm.py: get_tma_aligned_size :125, get_col_major_tma_aligned_packed_tensor :132, "
     "check_sf_layout's TMA stride check) states it as torch view, transpose and stride operations, which no "
     "reader here evaluates",
     "a reader of FlashInfer's check_sf_layout stride assertions and its packed tensor's view chain (statements, "
     "not torch), or DeepGEMM's python utilities (sgl-deep-gemm on PyPI) read as text"),
)
