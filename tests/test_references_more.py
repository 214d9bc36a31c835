"""The references added for the CTA rasterisations, the tcgen05 descriptor's swizzle codes, B's scale factors in
Tensor Memory and CUTLASS's blockwise scale-factor storage (``rasters``, ``descriptor``, ``mosaic_sfb``,
``cute_sfb``, ``cute_blockwise``), the sm_100 8-bit ldmatrix FlashInfer relies on (``flashinfer_ldsm``) and the reviewed
explanations of ``reviewed_more``.

The readers are tested on literal files written here (agreeing, one number changed giving ``differ``, a construct
outside the subset refused at its position, never executed), and each reference on the installed files where its
package is installed (skipped with the reason otherwise).
"""
from __future__ import annotations

import ast
import functools
import textwrap
from pathlib import Path

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import descriptor, flashinfer_ldsm, flashinfer_stsm, matrix, rasters, reference
from verify.checks.references.common import conform_rows
from verify.checks.references.pyfunc import Refused


@functools.cache
def _all() -> tuple:
    sp = tuple(api.load(SPECS))
    return tuple(api.layouts(sp)) + tuple(api.map_layouts(sp))


def _need(name: str) -> None:
    why = reference(name).probe()
    if why:
        pytest.skip(f"reference {name} unavailable: {why}")


SWIZZLE2D = '''\
def swizzle2d(i, j, size_i, size_j, size_g):
    """doc"""
    ij = i * size_j + j
    size_gj = size_g * size_j
    group_id = ij // size_gj
    off_i = group_id * size_g
    size_g = core.minimum(size_i - off_i, size_g)
    ij = ij % size_gj
    new_i = off_i + ij % size_g
    new_j = ij // size_g
    return new_i, new_j
'''


def _fn(text: str) -> ast.FunctionDef:
    node = ast.parse(text).body[0]
    assert isinstance(node, ast.FunctionDef)
    return node


def test_straight_line_python_is_evaluated_and_the_rest_refused():
    fn = _fn(SWIZZLE2D)
    # the docstring's example: size 4 x 4, groups of 2 rows: (0, 1) -> (0, 2)... row-major 1 is column-major (1, 0)
    assert rasters.run_python(fn, (0, 1, 4, 4, 2), "s.py") == (1, 0)
    assert rasters.run_python(fn, (2, 0, 4, 4, 2), "s.py") == (2, 0)
    with pytest.raises(Refused) as e:
        rasters.run_python(_fn("def f(a):\n    for x in a:\n        pass\n    return a, a\n"), (1,), "s.py")
    assert (e.value.file, e.value.line) == ("s.py", 2)
    with pytest.raises(Refused):
        rasters.run_python(_fn("def f(a):\n    b = open(a)\n    return b, b\n"), (1,), "s.py")
    with pytest.raises(Refused):
        rasters.run_python(_fn("def f(a):\n    return a // 0, a\n"), (1,), "s.py")


def _grouped_rows(text: str) -> list:
    spec = next(x for x in _all() if x.id == "map.raster.triton.grouped")
    fn = _fn(text)
    items = []
    for m in rasters._members(spec):
        rows = tuple((p, *rasters.run_python(fn, (p // m["NN"], p % m["NN"], m["NM"], m["NN"], m["G"]), "s.py"))
                     for p in range(m["NM"] * m["NN"]))
        items.append(rasters.Evaluated("swizzle2d", "", "s.py", 1, spec, tuple(sorted(m.items())), map_rows=rows))
    return conform_rows(items, 30.0)


def test_swizzle2d_is_the_grouped_ordering_and_without_its_minimum_it_differs():
    assert {r.kind for r in _grouped_rows(SWIZZLE2D)} == {"agree"}
    mutated = SWIZZLE2D.replace("    size_g = core.minimum(size_i - off_i, size_g)\n", "")
    kinds = [r.kind for r in _grouped_rows(mutated)]
    assert "differ" in kinds and "agree" in kinds   # wrong only where the last group is short


THREADBLOCK = textwrap.dedent("""\
    struct GemmIdentityThreadblockSwizzle {
      /// Obtains the threadblock offset
      CUTLASS_DEVICE
      static GemmCoord get_tile_offset(int log_tile) {
        int block_idx_x = RematerializeBlockIdxX();
        int block_idx_y = RematerializeBlockIdxY();
        return GemmCoord{(block_idx_x >> log_tile),  //
                         (block_idx_y << log_tile) + ((block_idx_x) & ((1 << (log_tile)) - 1)),
                         block_idx_z};
      }
    };
    """)


def _cutlass(tmp_path: Path, text: str) -> list:
    f = tmp_path / rasters.CUTLASS_FILE
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    return conform_rows(rasters.cutlass_items(_all(), tmp_path), 30.0)


def test_cutlass_identity_swizzle_from_its_header_and_a_changed_shift_differs(tmp_path):
    rows = _cutlass(tmp_path, THREADBLOCK)
    assert rows and {r.kind for r in rows} == {"agree"} and rows[0].line == 7
    rows = _cutlass(tmp_path, THREADBLOCK.replace("(block_idx_x >> log_tile)", "(block_idx_x >> (log_tile + 1))"))
    assert any(r.kind == "differ" for r in rows)
    rows = _cutlass(tmp_path, THREADBLOCK.replace("block_idx_x >> log_tile", "f(block_idx_x)"))
    assert rows and all(r.kind == "malformed" for r in rows)


ENUM = textwrap.dedent("""\
    enum class LayoutType : uint8_t {
      SWIZZLE_NONE = 0,
      SWIZZLE_128B_BASE32B = 1,
      SWIZZLE_128B = 2,
      SWIZZLE_64B = 4,
      SWIZZLE_32B = 6
    };
    """)


def _enum(tmp_path: Path, text: str) -> list:
    f = tmp_path / descriptor.HEADER
    f.parent.mkdir(parents=True, exist_ok=True)
    f.write_text(text)
    return conform_rows(descriptor.swizzle_items(_all(), tmp_path), 30.0)


def test_layout_type_enum_is_the_swizzle_codes_and_a_changed_code_differs(tmp_path):
    assert [r.kind for r in _enum(tmp_path, ENUM)] == ["agree"]
    assert [r.kind for r in _enum(tmp_path, ENUM.replace("SWIZZLE_64B = 4", "SWIZZLE_64B = 3"))] == ["differ"]
    rows = _enum(tmp_path, ENUM.replace("  SWIZZLE_32B = 6\n", ""))
    assert [r.kind for r in rows] == ["malformed"] and "SWIZZLE_32B" in rows[0].detail


def test_reviewed_explanations_say_why_and_what_would_settle_it():
    ids = ("map.raster.grouped.full_group", "storage.sf.ue8m0.packed.kmajor", "tcgen05.descriptor.fields",
           "storage.sf.deepgemm.1x128.fp32", "map.raster.triton.grouped")
    lays = [x for x in _all() if x.id in ids]
    m = matrix.build(lays, {})
    assert m.explained("map.raster.grouped.full_group").startswith("not a hardware or library layout")
    assert m.explained("storage.sf.ue8m0.packed.kmajor").startswith("not a hardware or library layout")
    for lid in ("tcgen05.descriptor.fields", "storage.sf.deepgemm.1x128.fp32"):
        assert "what would settle it" in m.explained(lid) and m._explained_kind(lid) == "unreferenced"
    # a single-origin explanation needs its one agreeing reference: with none it explains nothing
    assert m.explained("map.raster.triton.grouped") == ""
    assert all(m.origins(lid) == [] for lid in ids)   # an explanation never counts as an origin


def _rows(name: str, prefix: str) -> list:
    _need(name)
    rep = reference(name).evaluate(list(_all()), 30.0)
    return [r for r in rep.rows if (r.spec or "").startswith(prefix)]


def test_installed_flashinfer_compute_pid_is_the_persistent_ordering():
    rows = _rows("flashinfer", "map.raster")
    if not rows:
        pytest.skip(f"no {rasters.FLASHINFER_FILE} in the installed FlashInfer")
    assert {r.spec for r in rows} == {"map.raster.triton.grouped.persistent"}
    assert {r.kind for r in rows} == {"agree"} and len(rows) == 48


def test_installed_cutlass_headers_state_the_identity_swizzle_and_the_descriptor_codes():
    rows = _rows("cute-text", "map.raster") + _rows("cute-text", "tcgen05.descriptor")
    assert {r.spec for r in rows} == {"map.raster.cutlass.identity", "tcgen05.descriptor.swizzle"}
    assert {r.kind for r in rows} == {"agree"}


def test_installed_mosaic_states_bs_scale_factors():
    rows = _rows("mosaic", "tcgen05.sf.B")
    assert {r.kind for r in rows} == {"agree"}
    assert {dict(r.params)["VS"] for r in rows} == {1, 2, 4} and {dict(r.params)["N"] for r in rows} == {32, 64, 128, 256}


@pytest.mark.slow
def test_installed_triton_swizzle2d_is_the_grouped_ordering():
    rows = _rows("triton", "map.raster")
    assert {r.spec for r in rows} == {"map.raster.triton.grouped"} and {r.kind for r in rows} == {"agree"}


@pytest.mark.slow
@pytest.mark.xdist_group("compiled-cute")
def test_installed_cute_states_sfb_and_the_blockwise_storages():
    rows = _rows("cute", "tcgen05.sf.B") + _rows("cute", "storage.sf.cutlass.blockwise")
    assert {r.spec for r in rows} == {"tcgen05.sf.B.4x1", "storage.sf.cutlass.blockwise.1x128",
                                      "storage.sf.cutlass.blockwise.128x128"}
    assert {r.kind for r in rows} == {"agree"}


LDSM_MEMORY = textwrap.dedent("""\
    __device__ __forceinline__ void ldmatrix_x2_trans_b8(uint32_t& d0, uint32_t& d1, uint32_t& d2,
                                                         uint32_t& d3, const void* p) {
      uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
      asm volatile("ldmatrix.sync.aligned.m16n16.x2.trans.shared.b8 {%0, %1, %2, %3}, [%4];\\n"
                   : "=r"(d0), "=r"(d1), "=r"(d2), "=r"(d3)
                   : "r"(addr));
    }
    template <int KV_STRIDE_BYTES>
    __device__ __forceinline__ void ldmatrix_load_a_packed_16x32_bytes_trans(uint32_t& a0, uint32_t& a1,
        uint32_t& a2, uint32_t& a3, const uint8_t* smem_base, int k_start, int dim, int lane) {
      ldmatrix_x2_trans_b8(a0, a1, a2, a3,
                           smem_base + (size_t)(k_start + lane) * KV_STRIDE_BYTES + dim);
    }
    """)
LDSM_MMA = textwrap.dedent("""\
    __device__ __forceinline__ R mma_fp8_m16n8k32(uint32_t a0, uint32_t a1, uint32_t a2, uint32_t a3,
                                                  uint32_t b0, uint32_t b1, float c0, float c1, float c2, float c3) {
      R r;
      asm volatile(
          "mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 "
          "{%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%10, %11, %12, %13};\\n"
          : "=f"(r.d0), "=f"(r.d1), "=f"(r.d2), "=f"(r.d3)
          : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1), "f"(c0), "f"(c1), "f"(c2), "f"(c3));
      return r;
    }
    """)
LDSM_KERNEL = textwrap.dedent("""\
    for (int kt = 0; kt < 2; kt++)
      ldmatrix_load_a_packed_16x32_bytes_trans<S>(v[kt][0], v[kt][1], v[kt][2], v[kt][3], kv, kt * 32, 0, lane);
    for (int kt = 0; kt < 2; kt++)
      r = mma_fp8_m16n8k32(v[kt][0], v[kt][1], v[kt][2], v[kt][3], b[0], b[1], x[0], x[1], x[2], x[3]);
    """)


def _ldsm(tmp_path: Path, memory: str = LDSM_MEMORY, kernel: str = LDSM_KERNEL) -> list:
    for rel, text in ((flashinfer_ldsm.MEMORY, memory), (flashinfer_ldsm.MMA, LDSM_MMA),
                      (flashinfer_ldsm.KERNEL, kernel)):
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return conform_rows(flashinfer_ldsm.ldsm_items(list(_all()), tmp_path), 30.0)


def test_flashinfer_ldmatrix_b8_trans_feeding_an_fp8_a_and_a_changed_row_differs(tmp_path):
    rows = _ldsm(tmp_path)
    assert [(r.kind, r.spec, dict(r.params)) for r in rows] == [
        ("agree", "ldmatrix.m16n16.R.b8_b8x16.trans@corrected", {"NUM": 2})]
    assert rows[0].line == 12
    rows = _ldsm(tmp_path, LDSM_MEMORY.replace("(k_start + lane)", "(k_start + (lane ^ 4))"))
    assert [r.kind for r in rows] == ["differ"]
    rows = _ldsm(tmp_path, LDSM_MEMORY.replace('"=r"(d2), "=r"(d3)', '"=r"(d3), "=r"(d2)'))
    assert [r.kind for r in rows] == ["malformed"] and "d0 .. d3" in rows[0].detail
    rows = _ldsm(tmp_path, kernel=LDSM_KERNEL.replace("v[kt][2], v[kt][3], b[0]", "v[kt][3], v[kt][2], b[0]"))
    assert [r.kind for r in rows] == ["malformed"] and "a0 .. a3" in rows[0].detail
    rows = _ldsm(tmp_path, LDSM_MEMORY.replace("(k_start + lane)", "f(lane)"))
    assert [r.kind for r in rows] == ["malformed"]


def test_installed_flashinfer_states_the_sm100_8bit_ldmatrix():
    rows = _rows("flashinfer", "ldmatrix.")
    if not rows:
        pytest.skip(f"no {flashinfer_ldsm.MEMORY} in the installed FlashInfer")
    assert [(r.kind, r.spec) for r in rows] == [("agree", "ldmatrix.m16n16.R.b8_b8x16.trans@corrected")]


STSM_MEMORY = textwrap.dedent("""\
    __device__ __forceinline__ void stmatrix_x4_trans_b8(void* p, uint32_t r0, uint32_t r1, uint32_t r2,
                                                         uint32_t r3) {
      uint32_t addr = static_cast<uint32_t>(__cvta_generic_to_shared(p));
      asm volatile("stmatrix.sync.aligned.m16n8.x4.trans.shared.b8 [%0], {%1, %2, %3, %4};\\n"
                   :
                   : "r"(addr), "r"(r0), "r"(r1), "r"(r2), "r"(r3)
                   : "memory");
    }
    template <int H, int N>
    struct StMatrixTransB8Tile {
      __device__ static __forceinline__ void store(uint8_t* dst, const uint32_t* regs, int lane) {
        stmatrix_x4_trans_b8(dst + 16 * lane, regs[0], regs[1], regs[2], regs[3]);
      }
      __device__ static __forceinline__ void load_b(uint32_t* b, const uint8_t* src, int lane) {
        const int gid = lane >> 2, tid = lane & 3;
        for (int i = 0; i < 4; i++)
          b[i] = *reinterpret_cast<const uint32_t*>(src + 128 * i + 16 * gid + 4 * tid);
      }
    };
    """)
STSM_COMMON = textwrap.dedent("""\
    __device__ __forceinline__ uint32_t cvt_e4m3x4(float a, float b, float c, float d) {
      uint16_t lo, hi;
      asm volatile("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(lo) : "f"(b), "f"(a));
      asm volatile("cvt.rn.satfinite.e4m3x2.f32 %0, %1, %2;" : "=h"(hi) : "f"(d), "f"(c));
      return static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16);
    }
    """)
STSM_KERNEL = textwrap.dedent("""\
    float* o = qk[m0 + mi];
    MmaFp8Result r = mma_fp8_m16n8k32(av[0], av[1], av[2], av[3], q0, q1, o[0], o[1], o[2], o[3]);
    o[0] = r.d0;
    o[1] = r.d1;
    o[2] = r.d2;
    o[3] = r.d3;
    load_a(a, kv_smem + (size_t)((m0 + mi) * 16) * L::KV_STRIDE + 32, lane);
    s[m][0] = v0 ? qk[m][0] * sc : -1e30f;
    s[m][1] = v0 ? qk[m][1] * sc : -1e30f;
    s[m][2] = v1 ? qk[m][2] * sc : -1e30f;
    s[m][3] = v1 ? qk[m][3] * sc : -1e30f;
    const float ws00 = s[m][0] * w, ws10 = s[m][1] * w;
    const float ws01 = s[m][2] * w, ws11 = s[m][3] * w;
    pq[0][m] = cvt_e4m3x4(ws00, ws10, ws01, ws11);
    StMatrixTransB8Tile<HPW, BI>::store(buf, pq[p], lane);
    StMatrixTransB8Tile<HPW, BI>::load_b(pb[p], buf, lane);
    MmaFp8Result r = mma_fp8_m16n8k32(v[mt][kt][0], v[mt][kt][1], v[mt][kt][2], v[mt][kt][3], pb[p][2 * kt],
                                      pb[p][2 * kt + 1], x[0], x[1], x[2], x[3]);
    """)


def _stsm(tmp_path: Path, memory: str = STSM_MEMORY, common: str = STSM_COMMON, kernel: str = STSM_KERNEL) -> list:
    for rel, text in ((flashinfer_ldsm.MEMORY, memory), (flashinfer_stsm.COMMON, common),
                      (flashinfer_ldsm.KERNEL, kernel)):
        f = tmp_path / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(text)
    return conform_rows(flashinfer_stsm.stsm_items(list(_all()), tmp_path), 30.0)


def test_flashinfer_stmatrix_b8_trans_between_an_fp8_accumulator_and_b_and_a_changed_number_differs(tmp_path):
    rows = _stsm(tmp_path)
    assert [(r.kind, r.spec, dict(r.params)) for r in rows] == [("agree", "stmatrix.m16n8.R.b8.trans", {"NUM": 4})]
    assert rows[0].line == 12
    rows = _stsm(tmp_path, STSM_MEMORY.replace("16 * gid + 4 * tid", "16 * tid + 4 * gid"))
    assert [r.kind for r in rows] in (["differ"], ["malformed"])
    rows = _stsm(tmp_path, STSM_MEMORY.replace("128 * i + 16 * gid", "128 * i + 17 * gid"))
    assert [r.kind for r in rows] == ["malformed"] and "no stored row" in rows[0].detail
    rows = _stsm(tmp_path, common=STSM_COMMON.replace('"f"(b), "f"(a)', '"f"(a), "f"(b)'))
    assert [r.kind for r in rows] == ["differ"]
    rows = _stsm(tmp_path, kernel=STSM_KERNEL.replace("cvt_e4m3x4(ws00, ws10, ws01, ws11)",
                                                      "cvt_e4m3x4(ws00, ws01, ws10, ws11)"))
    assert [r.kind for r in rows] == ["differ"]
    rows = _stsm(tmp_path, kernel=STSM_KERNEL.replace("pb[p][2 * kt + 1],", "pb[p][2 * kt + 2],"))
    assert [r.kind for r in rows] == ["malformed"] and "as B" in rows[0].detail


def test_installed_flashinfer_states_the_sm100_8bit_stmatrix():
    rows = _rows("flashinfer", "stmatrix.")
    if not rows:
        pytest.skip(f"no {flashinfer_stsm.COMMON} in the installed FlashInfer")
    assert [(r.kind, r.spec) for r in rows] == [("agree", "stmatrix.m16n8.R.b8.trans")]
