"""Hopper and Blackwell kernels compiled on this machine, then verified (integration tests: marked slow, skipped with
the reason where the toolchain is absent): Triton's matmul for sm_90 (fp16 and fp8 e4m3; 4 and 8 warps; with cp.async
and with tensor descriptors, TMA; tf32 and int8) and for sm_100 (fp16 and fp8, tcgen05; with and without TMA; tf32
and int8), the block-scaled
mxfp8 matmul (tl.dot_scaled), through the Triton front door; CuTe's Hopper tutorials wgmma_sm90.cu (its NT and TN
kernels) and wgmma_tma_sm90.cu, and the Blackwell tutorial 02_mma_tma_sm100.cu, each proved with both engines
agreeing; the Blackwell tutorial 01_mma_sm100.cu, which stores its operands to shared memory with generic stores and
reads them with tcgen05.mma with no fence.proxy.async between (PTX ISA 9.1, 9.7.16.6: a cross-proxy fence is needed),
reported as such; and a proxy fence removed from Triton's fp8 kernel caught."""
from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from conftest import ROOT
from kernel_plants import KERNELS, ptx_code
from test_kernel_compiled import _agree, _triton
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

pytestmark = pytest.mark.slow


def _matmul(target: str, dtype: str, warps: int, tma: bool, monkeypatch) -> object:
    """Triton's matmul.py (matmul_kernel, or matmul_tma through tensor descriptors) 128 x 128 x 64, K = 256, one CTA,
    through the front door."""
    monkeypatch.chdir(KERNELS)
    M = N = 128
    K = 256
    if tma:
        args = [{"tensor_map": "A", "type": dtype, "shape": [M, K], "box": [128, 64]},
                {"tensor_map": "B", "type": dtype, "shape": [K, N], "box": [64, 128]},
                {"tensor": "C", "type": "f32", "shape": [M, N]}, M, N, K, N]
        return verify(triton="matmul.py:matmul_tma", constexprs={"BM": 128, "BN": 128, "BK": 64}, target=target,
                      num_warps=warps, num_stages=3, grid=[1], computes="C[m, n] = A[m, k] * B[k, n]", args=args)
    integer = dtype == "s8"
    args = [{"tensor": "A", "type": dtype, "shape": [M, K]}, {"tensor": "B", "type": dtype, "shape": [K, N]},
            {"tensor": "C", "type": "s32" if integer else "f32", "shape": [M, N]}, M, N, K, K, 1, N, 1, N, 1]
    return verify(triton="matmul.py:matmul_kernel", constexprs={"BM": 128, "BN": 128, "BK": 64, "INT": int(integer)},
                  target=target, num_warps=warps, num_stages=3, grid=[1], computes="C[m, n] = A[m, k] * B[k, n]",
                  args=args)


FORMS = [(target, dtype, warps, tma) for target in ("sm_90", "sm_100") for dtype in ("f16", "e4m3")
         for warps in (4, 8) for tma in (False, True)] + \
    [(target, dtype, 4, False) for target in ("sm_90", "sm_100") for dtype in ("tf32", "s8")]  # wgmma k8 / k32 s8,
# tcgen05 kind::tf32 / kind::i8


@pytest.mark.parametrize("target,dtype,warps,tma", FORMS,
                         ids=[f"{t} {d} {w} warps{' TMA' if m else ''}" for t, d, w, m in FORMS])
def test_triton_matmul_for_hopper_and_blackwell_is_proved(target, dtype, warps, tma, monkeypatch):
    _triton()
    r = _matmul(target, dtype, warps, tma, monkeypatch)
    assert r.status == "proved", kernel_text(r)
    _agree(r)


def test_tritons_block_scaled_mxfp8_matmul_is_proved(monkeypatch):
    _triton()
    monkeypatch.chdir(KERNELS)
    M = N = 128
    K = 256
    args = [{"tensor": "A", "type": "e4m3", "shape": [M, K]}, {"tensor": "B", "type": "e4m3", "shape": [K, N]},
            {"tensor": "SA", "type": "u8", "shape": [M, K // 32]}, {"tensor": "SB", "type": "u8", "shape": [N, K // 32]},
            {"tensor": "C", "type": "f32", "shape": [M, N]}, M, N, K]
    r = verify(triton="matmul.py:matmul_scaled", constexprs={"BM": 128, "BN": 128, "BK": 128}, target="sm_100",
               grid=[1], computes="C[m, n] = A[m, k] * B[k, n] * SA[m, k / 32] * SB[n, k / 32]", args=args)
    assert r.status == "proved", kernel_text(r)
    _agree(r)


def test_the_hopper_and_blackwell_fixtures_are_what_triton_makes_today(tmp_path, monkeypatch):
    """make_fixtures.py's Hopper and Blackwell fixtures, made again into a scratch folder, are the committed ones
    (apart from the .file paths and the DWARF sections, which name the folder)."""
    _triton()
    monkeypatch.syspath_prepend(str(KERNELS))
    import make_fixtures
    monkeypatch.setattr(make_fixtures, "HERE", tmp_path)
    (tmp_path / "matmul.py").write_text((KERNELS / "matmul.py").read_text(encoding="utf-8"), encoding="utf-8")
    for args in (("triton_sm90.ptx", 128, 128, 64, 4, 3, "sm_90"), ("triton_sm90_64.ptx", 64, 64, 32, 4, 2, "sm_90"),
                 ("triton_sm90_tma.ptx", 128, 128, 64, 4, 3, "sm_90", "matmul_tma"),
                 ("triton_sm100.ptx", 128, 128, 64, 4, 3, "sm_100"),
                 ("triton_sm100_mxfp8.ptx", 128, 128, 128, 4, 3, "sm_100", "matmul_scaled"),
                 ("triton_sm100_mixed.ptx", 128, 128, 128, 4, 3, "sm_100", "matmul_scaled_mixed")):
        make_fixtures.triton(*args)
        assert ptx_code((tmp_path / args[0]).read_text(encoding="utf-8")) == \
            ptx_code((KERNELS / args[0]).read_text(encoding="utf-8")), args[0]


def test_a_missing_proxy_fence_before_a_wgmma_read_of_generic_stores(monkeypatch, tmp_path):
    """Triton's fp8 kernel for sm_90 transposes B through shared memory with st.shared, then fences
    (fence.proxy.async) before wgmma reads it; without the fence the read is reported."""
    _triton()
    from verify.kernel.launch import Scalar, Tensor
    from verify.kernel.load import compile_triton
    monkeypatch.chdir(KERNELS)
    M = N = 128
    K = 256
    args = (Tensor("A", "e4m3", (M, K), (K, 1)), Tensor("B", "e4m3", (K, N), (N, 1)), Tensor("C", "f32", (M, N), (N, 1)),
            *[Scalar(x) for x in (M, N, K, K, 1, N, 1, N, 1)])
    k = compile_triton("matmul.py:matmul_kernel", {"BM": 128, "BN": 128, "BK": 64, "INT": 0}, args, "sm_90", 4, 3)
    lines = k.ptx.split("\n")
    fences = [n for n, s in enumerate(lines) if "fence.proxy.async" in s]
    assert fences
    del lines[fences[0]]
    (tmp_path / "k.ptx").write_text("\n".join(lines), encoding="utf-8")
    r = verify(ptx=str(tmp_path / "k.ptx"), grid=[1], block=[128], shared=k.shared,
               computes="C[m, n] = A[m, k] * B[k, n]",
               args=[{"tensor": "A", "type": "e4m3", "shape": [M, K]}, {"tensor": "B", "type": "e4m3", "shape": [K, N]},
                     {"tensor": "C", "type": "f32", "shape": [M, N]}, M, N, K, K, N, N])
    _agree(r)
    assert r.findings[0].kind == "proxy_fence_missing", kernel_text(r)
    assert "wrote through the generic proxy with no fence.proxy.async between them" in r.findings[0].words


# ----------------------------------------------------------------------------- CuTe's tutorials

def _cutlass() -> Path:
    nvcc = shutil.which("nvcc") or ("/usr/local/bin/nvcc" if Path("/usr/local/bin/nvcc").exists() else None)
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    spec = importlib.util.find_spec("cutlass_library")
    if spec is None or spec.origin is None:
        pytest.skip("the nvidia-cutlass wheel is not installed (pip install -e '.[refs]')")
    return Path(spec.origin).parent / "source"


def _compile(tmp_path: Path, tutorial: str, arch: str) -> Path:
    src = _cutlass()
    cu = src / "examples" / "cute" / "tutorial" / tutorial
    out = tmp_path / (cu.stem + ".ptx")
    nvcc = shutil.which("nvcc") or "/usr/local/bin/nvcc"
    subprocess.run([nvcc, "-ptx", f"-arch={arch}", "-lineinfo", "-std=c++17", "--expt-relaxed-constexpr",
                    f"-I{src / 'include'}", f"-I{src / 'tools' / 'util' / 'include'}", f"-I{cu.parent}", str(cu),
                    "-o", str(out)], check=True, capture_output=True, timeout=900)
    return out


def _entries(ptx: Path) -> list[str]:
    return re.findall(r"^\.(?:visible )?\.?entry (_Z11gemm_device\w+)\(", ptx.read_text(encoding="utf-8"), re.M)


def _launch(tmp_path: Path, ptx: Path, entry: str, body: str) -> str:
    (tmp_path / "l.toml").write_text(f'ptx = "{ptx.name}"\nentry = "{entry}"\n' + body, encoding="utf-8")
    return str(tmp_path / "l.toml")


HALF_ONE_ZERO = '  { type = "f16", value = 1.0 },\n  { type = "f16", value = 0.0 },\n]\n'


def test_cute_wgmma_sm90_nt_and_tn_are_proved(tmp_path):
    """wgmma_sm90.cu: 128 x 128 x 64 tiles, 3 cp.async stages into Layout_MN_SW128 (NT) or Layout_K_SW128 (TN)
    shared memory, wgmma m64n64k16 with an f16 accumulator; the MMA atom's accumulate flag (ScaleOut::One) is the
    TiledMMA's by-value field."""
    ptx = _compile(tmp_path, "hopper/wgmma_sm90.cu", "sm_90a")
    nt, tn = _entries(ptx)
    common = ('grid = [1, 1, 1]\nblock = [128, 1, 1]\nshared = 98304\n')
    r = verify(_launch(tmp_path, ptx, nt, common + 'computes = "C[m, n] = A[m, k] * B[n, k]"\nargs = [\n'
                       '  { type = "s32", values = [128, 128, 256] }, {},\n'
                       '  { tensor = "A", type = "f16", shape = [128, 256], strides = [1, 128] },\n'
                       '  { type = "s32", values = [128] }, {}, {},\n'
                       '  { tensor = "B", type = "f16", shape = [128, 256], strides = [1, 128] },\n'
                       '  { type = "s32", values = [128] }, {}, {},\n'
                       '  { tensor = "C", type = "f16", shape = [128, 128], strides = [1, 128] },\n'
                       '  { type = "s32", values = [128] },\n  { type = "s32", values = [1, 0] },\n' + HALF_ONE_ZERO))
    assert r.status == "proved", kernel_text(r)
    _agree(r)
    r = verify(_launch(tmp_path, ptx, tn, common + 'computes = "C[m, n] = A[m, k] * B[n, k]"\nargs = [\n'
                       '  { type = "s32", values = [128, 128, 256] }, {},\n'
                       '  { tensor = "A", type = "f16", shape = [128, 256] },\n'
                       '  { type = "s32", values = [256] }, {}, {},\n'
                       '  { tensor = "B", type = "f16", shape = [128, 256] },\n'
                       '  { type = "s32", values = [256] }, {}, {},\n'
                       '  { tensor = "C", type = "f16", shape = [128, 128], strides = [1, 128] },\n'
                       '  { type = "s32", values = [128] },\n  { type = "s32", values = [1, 0] },\n' + HALF_ONE_ZERO))
    assert r.status == "proved", kernel_text(r)
    _agree(r)


def test_cute_wgmma_tma_sm90_is_proved(tmp_path):
    """wgmma_tma_sm90.cu (NT): TMA boxes of 64 (M) x 8 (K) in the map's order (K, M): CuTe's make_tma_atom cut the
    128 x 64 tile into swizzle atoms; a cluster of 2 CTAs (barrier.cluster), producer and consumer mbarriers."""
    ptx = _compile(tmp_path, "hopper/wgmma_tma_sm90.cu", "sm_90a")
    nt = _entries(ptx)[0]
    r = verify(_launch(tmp_path, ptx, nt, 'grid = [2, 1, 1]\ncluster = [2, 1, 1]\nblock = [128, 1, 1]\nshared = 98352\n'
                       'computes = "C[m, n] = A[m, k] * B[n, k]"\nargs = [\n'
                       '  { type = "s32", values = [256, 128, 256] }, {},\n'
                       '  { tensor = "A", type = "f16", shape = [256, 256], strides = [1, 256] },\n'
                       '  { tensor_map = "A", box = [8, 64], swizzle = "128B" },\n'
                       '  { tensor = "B", type = "f16", shape = [128, 256], strides = [1, 128] },\n'
                       '  { tensor_map = "B", box = [8, 64], swizzle = "128B" },\n'
                       '  { tensor = "C", type = "f16", shape = [256, 128], strides = [1, 256] },\n'
                       '  { type = "s32", values = [256] },\n  { type = "s32", values = [1, 0] },\n' + HALF_ONE_ZERO))
    assert r.status == "proved", kernel_text(r)
    _agree(r)


# the MMA atom of SM100_MMA_F16BF16_SS<half, half, float, 128, 256, K, K> passes its instruction descriptor by value:
# D f32 (bit 4), N >> 3 = 32 at bit 17, M >> 4 = 8 at bit 24 (what UMMA::make_instr_desc computes on the host)
IDESC_F16_128x256 = (1 << 4) | (32 << 17) | (8 << 24)


def test_cute_blackwell_tma_tutorial_is_proved(tmp_path):
    """02_mma_tma_sm100.cu: TMA loads (128 x 64 and 256 x 64 boxes, 128B swizzle) into shared memory, tcgen05.mma
    M = 128, N = 256 into Tensor Memory, tcgen05.commit on an mbarrier, tcgen05.ld of the accumulator;
    D = alpha A B^T + beta C with alpha = 1, beta = 0."""
    ptx = _compile(tmp_path, "blackwell/02_mma_tma_sm100.cu", "sm_100a")
    (entry,) = _entries(ptx)
    r = verify(_launch(tmp_path, ptx, entry, 'grid = [1, 1, 1]\nblock = [128, 1, 1]\nshared = 99000\n'
                       'computes = "D[m, n] = A[m, k] * B[n, k]"\nargs = [\n'
                       '  { type = "s32", values = [128, 128, 0] },\n  { type = "s32", values = [256, 128, 0] },\n'
                       '  { type = "s32", values = [128, 256, 256], pointer = { tensor = "C", type = "f32", '
                       'shape = [128, 256] }, at = 16 },\n'
                       '  { type = "s32", values = [128, 256, 256], pointer = { tensor = "D", type = "f32", '
                       'shape = [128, 256] }, at = 16 },\n'
                       f'  {{}},\n  {{ type = "s32", values = [{IDESC_F16_128x256}, 1] }},\n  {{}},\n'
                       '  { tensor_map = "A", type = "f16", shape = [128, 128], box = [128, 64], swizzle = "128B" },\n'
                       '  { tensor_map = "B", type = "f16", shape = [256, 128], box = [256, 64], swizzle = "128B" },\n'
                       '  { type = "f32", value = 1.0 },\n  { type = "f32", value = 0.0 },\n]\n'))
    assert r.status == "proved", kernel_text(r)
    _agree(r)


def test_cute_blackwell_first_tutorial_reads_generic_stores_without_a_proxy_fence(tmp_path):
    """01_mma_sm100.cu copies A and B to shared memory with generic stores, synchronises the CTA, and has
    tcgen05.mma read them: the async proxy's reads need a fence.proxy.async after the generic writes (PTX ISA 9.1,
    9.7.16.6); the kernel has none, which is reported (the products themselves are all right)."""
    ptx = _compile(tmp_path, "blackwell/01_mma_sm100.cu", "sm_100a")
    (entry,) = _entries(ptx)
    tensors = "".join(f'  {{ type = "s32", values = [{r}, {c}, {c}], pointer = {{ tensor = "{n}", type = "{t}", '
                      f'shape = [{r}, {c}] }}, at = 16 }},\n'
                      for n, t, r, c in (("A", "f16", 128, 128), ("B", "f16", 256, 128), ("C", "f32", 128, 256),
                                         ("D", "f32", 128, 256)))
    r = verify(_launch(tmp_path, ptx, entry, 'grid = [1, 1, 1]\nblock = [128, 1, 1]\nshared = 99000\n'
                       'computes = "D[m, n] = A[m, k] * B[n, k]"\nargs = [\n' + tensors +
                       f'  {{}},\n  {{ type = "s32", values = [{IDESC_F16_128x256}, 1] }},\n  {{}},\n'
                       '  { type = "f32", value = 1.0 },\n  { type = "f32", value = 0.0 },\n]\n'))
    _agree(r)
    assert [f.kind for f in r.findings] == ["proxy_fence_missing"], kernel_text(r)
    assert r.engines["symbolic"]["wrong_elements"] == 0


def test_the_triton_front_door_takes_tensor_descriptors_on_the_command_line(monkeypatch, capsys):
    """--arg NAME:TYPE:SHAPE:tma=BLOCK: the descriptor's block; the box and swizzle of the compiled kernel's
    tensordesc_meta and the shape and strides Triton's launcher adds are the front door's."""
    _triton()
    from verify.cli.main import main
    monkeypatch.chdir(ROOT)
    rc = main(["kernel", "--triton", "examples/kernels/matmul.py:matmul_tma", "--constexpr", "BM=128", "--constexpr",
               "BN=128", "--constexpr", "BK=64", "--target", "sm_90", "--grid", "1",
               "--computes", "C[m, n] = A[m, k] * B[k, n]", "--arg", "A:f16:128x256:tma=128x64",
               "--arg", "B:f16:256x128:tma=64x128", "--arg", "C:f32:128x128", "--arg", "128", "--arg", "128",
               "--arg", "256", "--arg", "128"])
    out = capsys.readouterr().out
    assert rc == 0 and "proved: every one of the 16384 output elements" in out, out


def test_a_64_row_tcgen05_tile_uses_layout_f(monkeypatch):
    """Triton's matmul for sm_100 with a 64 x 64 tile: tcgen05.mma with M = 64 (the catalog's data-path Layout F,
    half the lanes) read back by tcgen05.ld.16x32bx2 with its immHalfSplitoff."""
    _triton()
    monkeypatch.chdir(KERNELS)
    M = N = 64
    K = 128
    args = [{"tensor": "A", "type": "f16", "shape": [M, K]}, {"tensor": "B", "type": "f16", "shape": [K, N]},
            {"tensor": "C", "type": "f32", "shape": [M, N]}, M, N, K, K, 1, N, 1, N, 1]
    r = verify(triton="matmul.py:matmul_kernel", constexprs={"BM": 64, "BN": 64, "BK": 32, "INT": 0}, target="sm_100",
               num_warps=4, num_stages=2, grid=[1], computes="C[m, n] = A[m, k] * B[k, n]", args=args)
    assert r.status == "proved", kernel_text(r)
    _agree(r)


def test_wgmma_with_a_from_registers(monkeypatch):
    """matmul_convert_a for sm_90: A converted to bf16 in registers feeds wgmma.mma_async's A register list (the
    catalog's m64nNk16 A fragment across the warpgroup), B through its descriptor."""
    _triton()
    from verify.kernel.launch import Scalar, Tensor
    from verify.kernel.load import compile_triton
    monkeypatch.chdir(KERNELS)
    M = N = 64
    K = 128
    consts = {"BM": 64, "BN": 64, "BK": 32}
    k = compile_triton("matmul.py:matmul_convert_a", consts, (Tensor("A", "f16", (M, K), (K, 1)),
                       Tensor("B", "bf16", (K, N), (N, 1)), Tensor("C", "f32", (M, N), (N, 1)), Scalar(M), Scalar(N),
                       Scalar(K)), "sm_90", 4, 2)
    assert re.search(r"wgmma\.mma_async\S* \{[^}]*\}, \{%r\d+,%r\d+,%r\d+,%r\d+\}, %rd\d+", k.ptx)
    args = [{"tensor": "A", "type": "f16", "shape": [M, K]}, {"tensor": "B", "type": "bf16", "shape": [K, N]},
            {"tensor": "C", "type": "f32", "shape": [M, N]}, M, N, K]
    r = verify(triton="matmul.py:matmul_convert_a", constexprs=consts, target="sm_90", num_warps=4, num_stages=2,
               grid=[1], computes="C[m, n] = A[m, k] * B[k, n]", args=args)
    assert r.status == "proved", kernel_text(r)
    _agree(r)
    # two registers of the first wgmma's A list swapped (a1 and a2): the chain names the register
    m = re.search(r"(wgmma\.mma_async\S* \{[^}]*\}, )\{(%r\d+),(%r\d+),(%r\d+),(%r\d+)\}", k.ptx)
    assert m is not None
    ptx = k.ptx[:m.start()] + m.group(1) + "{" + ",".join(m.group(i) for i in (2, 4, 3, 5)) + "}" + k.ptx[m.end():]
    import tempfile
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "k.ptx").write_text(ptx, encoding="utf-8")
        r = verify(ptx=str(Path(tmp) / "k.ptx"), grid=[1], block=[128], shared=k.shared,
                   computes="C[m, n] = A[m, k] * B[k, n]", args=args)
    _agree(r)
    (f,) = r.findings
    assert f.kind == "wrong_element" and f.element == "C[0, 0]", kernel_text(r)
    assert re.search(r"\(warpgroup 0, thread \d+, register a2 = %r\d+, element \d\) multiplied A\[", f.chain[1].words), \
        f.chain[1].words


@pytest.mark.parametrize("target", ["sm_90", "sm_100"])
def test_a_tma_store_epilogue(target, monkeypatch, tmp_path):
    """matmul_tma_store: the accumulators go to shared memory (st.shared), then a TMA store (cp.async.bulk.tensor
    global.shared) writes the box to C: proved; without the fence.proxy.async between the stores and the TMA store's
    read of them, the unfenced read is reported."""
    _triton()
    from dataclasses import replace
    from verify.kernel.frontdoor import launch_of
    from verify.kernel.launch import Scalar, Tensor, TensorMap
    from verify.kernel.load import compile_triton, load, triton_launch
    from verify.kernel.verdict import verify_launch
    monkeypatch.chdir(KERNELS)
    M = N = 128
    K = 256
    consts = {"BM": 128, "BN": 128, "BK": 64}
    maps = (TensorMap("A", Tensor("A", "f16", (M, K), (K, 1)), (128, 64)),
            TensorMap("B", Tensor("B", "f16", (K, N), (N, 1)), (64, 128)),
            TensorMap("C", Tensor("C", "f32", (M, N), (N, 1)), (128, 128)))
    k = compile_triton("matmul.py:matmul_tma_store", consts, (*maps, Scalar(M), Scalar(N), Scalar(K)), target, 4, 3)
    assert re.search(r"cp\.async\.bulk\.tensor\.2d\.global\.shared::cta", k.ptx)
    args = [{"tensor_map": "A", "type": "f16", "shape": [M, K], "box": [128, 64]},
            {"tensor_map": "B", "type": "f16", "shape": [K, N], "box": [64, 128]},
            {"tensor_map": "C", "type": "f32", "shape": [M, N], "box": [128, 128]}, M, N, K]
    r = verify(triton="matmul.py:matmul_tma_store", constexprs=consts, target=target, grid=[1],
               computes="C[m, n] = A[m, k] * B[k, n]", args=args)
    assert r.status == "proved", kernel_text(r)
    _agree(r)
    lines = k.ptx.split("\n")
    store = next(n for n, s in enumerate(lines) if re.search(r"cp\.async\.bulk\.tensor\.2d\.global", s))
    fence = max(n for n, s in enumerate(lines[:store]) if "fence.proxy.async" in s)
    del lines[fence]
    (tmp_path / "k.ptx").write_text("\n".join(lines), encoding="utf-8")
    lau = replace(triton_launch(launch_of(None, ptx=str(tmp_path / "k.ptx"), grid=[1], block=[128],
                                          computes="C[m, n] = A[m, k] * B[k, n]", args=args), k), entry=None)
    module, fn = load(lau)
    r = verify_launch(module, fn, lau)
    _agree(r)
    assert [f.kind for f in r.findings][:1] == ["proxy_fence_missing"], kernel_text(r)
