"""Kernels compiled on this machine, then verified (integration tests: marked slow, skipped with the reason where
the toolchain is absent): Triton's matmul for sm_80 in every form the issue names (fp16 and bf16 with m16n8k16,
int8 with m16n8k32, tf32 with m16n8k8; two tile shapes; 4 and 8 warps; 2 and 3 stages; A row-major and transposed),
CuTe's sgemm_sm80.cu HGEMM path from the nvidia-cutlass wheel, and the hand-written mma_inline.cu (and the
mma.sp, m8n8k4 and packed .s4 kernels), each proved with both engines agreeing; and a change planted in the CuTe kernel's PTX caught."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kernel_plants import KERNELS, ptx_code
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

pytestmark = pytest.mark.slow


def _agree(r) -> None:
    sym, num = r.engines["symbolic"], r.engines["numeric"]
    assert r.status != "error", kernel_text(r)
    assert sym["verdict"] == num["verdict"] and sym["wrong_elements"] == num["wrong_elements"]


def _triton() -> None:
    if importlib.util.find_spec("triton") is None:
        pytest.skip("Triton is not installed (pip install -e '.[refs]' gives triton==3.9.0)")


# name: (input type, INT, BM, BN, BK, warps, stages, A transposed)
TRITON = {
    "fp16 128x128x64 4 warps 3 stages": ("f16", 0, 128, 128, 64, 4, 3, False),
    "fp16 64x64x32 4 warps 2 stages": ("f16", 0, 64, 64, 32, 4, 2, False),
    "fp16 128x128x32 8 warps 2 stages": ("f16", 0, 128, 128, 32, 8, 2, False),
    "fp16 128x64x64 8 warps 3 stages": ("f16", 0, 128, 64, 64, 8, 3, False),
    "fp16 A transposed": ("f16", 0, 64, 64, 32, 4, 3, True),
    "bf16 64x64x32 4 warps 3 stages": ("bf16", 0, 64, 64, 32, 4, 3, False),
    "bf16 A transposed 8 warps": ("bf16", 0, 128, 64, 32, 8, 2, True),
    "int8 m16n8k32": ("s8", 1, 64, 64, 64, 4, 3, False),
    "tf32 m16n8k8": ("tf32", 0, 64, 64, 32, 4, 3, False),
}


@pytest.mark.parametrize("name", list(TRITON))
def test_triton_matmul_for_sm80_is_proved(name, monkeypatch):
    _triton()
    dt, int_, bm, bn, bk, warps, stages, trans = TRITON[name]
    M, N, K = 2 * bm, bn, 4 * bk
    out = "s32" if int_ else "f32"
    a = {"tensor": "A", "type": dt, "shape": [M, K]}
    if trans:
        a["strides"] = [1, M]
    stride_am, stride_ak = (1, M) if trans else (K, 1)
    monkeypatch.chdir(KERNELS)
    r = verify(triton="matmul.py:matmul_kernel", constexprs={"BM": bm, "BN": bn, "BK": bk, "INT": int_},
               target="sm_80", num_warps=warps, num_stages=stages, grid=[(M // bm) * (N // bn)],
               computes="C[m, n] = A[m, k] * B[k, n]",
               args=[a, {"tensor": "B", "type": dt, "shape": [K, N]}, {"tensor": "C", "type": out, "shape": [M, N]},
                     M, N, K, stride_am, stride_ak, N, 1, N, 1])
    assert r.status == "proved", kernel_text(r)
    _agree(r)
    assert r.block == (32 * warps, 1, 1)


def _triton_run(kernel: str, constexprs: dict, target: str, grid: int, types: tuple[str, str, str],
                shape: tuple[int, int, int], monkeypatch) -> None:
    M, N, K = shape
    monkeypatch.chdir(KERNELS)
    r = verify(triton=f"matmul.py:{kernel}", constexprs=constexprs, target=target, grid=[grid],
               computes="C[m, n] = A[m, k] * B[k, n]",
               args=[{"tensor": "A", "type": types[0], "shape": [M, K]}, {"tensor": "B", "type": types[1], "shape": [K, N]},
                     {"tensor": "C", "type": types[2], "shape": [M, N]}, M, N, K, K, 1, N, 1, N, 1])
    assert r.status == "proved", kernel_text(r)
    _agree(r)


def test_masked_loads_and_stores_of_a_shape_no_tile_divides(monkeypatch):
    """M, N, K = 100, 72, 70 with 64 x 64 x 32 tiles: element-wise masked loads (0 outside), masked stores."""
    _triton()
    _triton_run("matmul_masked", {"BM": 64, "BN": 64, "BK": 32}, "sm_80", 4, ("f16", "f16", "f32"), (100, 72, 70),
                monkeypatch)


def test_an_f16_output_packs_the_accumulators_with_cvt(monkeypatch):
    _triton()
    _triton_run("matmul_kernel", {"BM": 64, "BN": 64, "BK": 32, "INT": 0}, "sm_80", 4, ("f16", "f16", "f16"),
                (128, 128, 128), monkeypatch)


def test_fp8_e4m3_for_sm89(monkeypatch):
    _triton()
    _triton_run("matmul_kernel", {"BM": 64, "BN": 64, "BK": 64, "INT": 0}, "sm_89", 4, ("e4m3", "e4m3", "f32"),
                (128, 128, 128), monkeypatch)


def test_the_triton_fixture_is_what_triton_makes_today(tmp_path, monkeypatch):
    """triton_fp16.ptx (committed) is Triton 3.9's output for its configuration, apart from the header line and the
    relative .file paths make_fixtures.py writes and the DWARF sections, which name the folder compiled in."""
    _triton()
    from verify.kernel.launch import Scalar, Tensor
    from verify.kernel.load import compile_triton
    monkeypatch.chdir(KERNELS)
    args = (Tensor("A", "f16", (256, 256), (256, 1)), Tensor("B", "f16", (256, 256), (256, 1)),
            Tensor("C", "f32", (256, 256), (256, 1)), *[Scalar(x) for x in (256, 256, 256, 256, 1, 256, 1, 256, 1)])
    k = compile_triton("matmul.py:matmul_kernel", {"BM": 128, "BN": 128, "BK": 64, "INT": 0}, args, "sm_80", 4, 3)
    assert ptx_code(k.ptx) == ptx_code((KERNELS / "triton_fp16.ptx").read_text(encoding="utf-8"))


def _nvcc() -> str:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    return nvcc


def test_the_hand_written_kernel_compiles_and_is_proved(tmp_path):
    _nvcc()
    src = tmp_path / "mma_inline.cu"
    shutil.copy(KERNELS / "mma_inline.cu", src)
    toml = (KERNELS / "mma_inline.toml").read_text(encoding="utf-8").replace('ptx = "mma_inline.ptx"',
                                                                             'cu = "mma_inline.cu"\narch = "sm_80"')
    (tmp_path / "k.toml").write_text(toml, encoding="utf-8")
    r = verify(str(tmp_path / "k.toml"))
    assert r.status == "proved", kernel_text(r)
    _agree(r)



@pytest.mark.parametrize("name,source", [("mma_sparse", "mma_sparse.cu"), ("mma_sparse_s4", "mma_sparse_s4.cu"),
                                         ("mma_m8n8k4", "mma_m8n8k4.cu"), ("mma_m8n8k4_f64", "mma_m8n8k4_f64.cu"),
                                         ("mma_s4", "mma_subbyte.cu")])
def test_the_hand_written_sparse_quad_pair_and_packed_kernels_compile_and_are_proved(tmp_path, name, source):
    """The kernels of mma.sp, m8n8k4 and packed .s4 compiled here by nvcc (their committed PTX is its output)."""
    _nvcc()
    shutil.copy(KERNELS / source, tmp_path / source)
    toml = (KERNELS / f"{name}.toml").read_text(encoding="utf-8").replace(f'ptx = "{name}.ptx"',
                                                                         f'cu = "{source}"\narch = "sm_80"')
    (tmp_path / "k.toml").write_text(toml, encoding="utf-8")
    r = verify(str(tmp_path / "k.toml"))
    assert r.status == "proved", kernel_text(r)
    assert r.engines["symbolic"]["verdict"] == r.engines["numeric"]["verdict"] == "proved"


CUTE = """\
# CuTe's tutorial sgemm_sm80.cu, HGEMM TN: 128 x 128 x 64 tiles, 3 stages of cp.async, swizzled shared memory,
# ldmatrix.x4, mma.m16n8k16 f16 with an f16 accumulator; C = alpha * A B^T + beta * C (alpha 1, beta 0).
ptx = "sgemm_sm80.ptx"
grid = [2, 1, 1]
block = [128, 1, 1]
shared = 98304
computes = "C[m, n] = A[m, k] * B[n, k]"
args = [
  { type = "s32", values = [256, 128, 256] },          # shape_MNK
  {},                                                  # cta_tiler (static)
  { tensor = "A", type = "f16", shape = [256, 256] },  # A, K-major
  { type = "s32", values = [256] },                    # dA = (ldA, 1)
  {}, {}, {},                                          # sA, copyA, s2r_atom_A (static)
  { tensor = "B", type = "f16", shape = [128, 256] },  # B (N x K), K-major
  { type = "s32", values = [256] },                    # dB = (ldB, 1)
  {}, {}, {},
  { tensor = "C", type = "f16", shape = [256, 128], strides = [1, 256] },  # C, M-major
  { type = "s32", values = [256] },                    # dC = (1, ldC)
  {}, {},                                              # sC, mmaC
  { type = "f16", value = 1.0 },                       # alpha
  { type = "f16", value = 0.0 },                       # beta
]
"""


def _cute_ptx(tmp_path: Path) -> Path:
    nvcc = _nvcc()
    try:
        import cutlass_library
    except ImportError:
        pytest.skip("the nvidia-cutlass wheel is not installed (pip install -e '.[refs]')")
    src = Path(cutlass_library.__file__).parent / "source"
    cu = src / "examples" / "cute" / "tutorial" / "sgemm_sm80.cu"
    if not cu.is_file():
        pytest.skip(f"{cu} is not in the nvidia-cutlass wheel")
    out = tmp_path / "sgemm_sm80.ptx"
    subprocess.run([nvcc, "-ptx", "-arch=sm_80", "-lineinfo", "-std=c++17", "--expt-relaxed-constexpr",
                    f"-I{src / 'include'}", f"-I{src / 'tools' / 'util' / 'include'}", str(cu), "-o", str(out)],
                   check=True, capture_output=True, timeout=900)
    (tmp_path / "sgemm.toml").write_text(CUTE, encoding="utf-8")
    return out


def test_cute_sgemm_sm80_hgemm_is_proved_and_a_planted_swap_is_caught(tmp_path):
    ptx = _cute_ptx(tmp_path)
    r = verify(str(tmp_path / "sgemm.toml"))
    assert r.status == "proved", kernel_text(r)
    _agree(r)
    lines = ptx.read_text(encoding="utf-8").split("\n")
    k = next(n for n, s in enumerate(lines) if "mma.sync.aligned.m16n8k16" in s)
    lists = re.findall(r"\{[^}]*\}", lines[k])  # D, A, B, C
    a = [x.strip() for x in lists[1][1:-1].split(",")]
    a[1], a[2] = a[2], a[1]  # a1 and a2 trade places
    lines[k] = lines[k].replace(lists[1], "{" + ", ".join(a) + "}", 1)
    ptx.write_text("\n".join(lines), encoding="utf-8")
    r = verify(str(tmp_path / "sgemm.toml"))
    _agree(r)
    (f,) = r.findings
    assert f.kind == "wrong_element" and f.chain[1].line == k + 1 and f.chain[1].opcode == "mma.m16n8k16"
