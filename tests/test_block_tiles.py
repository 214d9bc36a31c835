"""Block tiles: warps and warpgroups over a CTA tile (the block-tiles issue).

Real inputs: TTGIR from Triton's lowering of an Ampere and a Hopper matmul (tests/data/ttgir, made by
make_ttgir.py there with the triton wheel), the wheel's own ``to_linear_layout`` as the reference for our
lowering of TTGIR attributes (an optional extra, run in a subprocess; skipped with the reason when absent),
and index code over ``tid``.  Every verdict is decided by both engines (``verify/checks/tiled.py``).
"""
from __future__ import annotations

import dataclasses
import itertools
import json
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import cli
from verify.outputs.text_results import result_text
from verify import api
from verify.checks.tiled import tiled
from verify.layout.notations import ttgir

SPECS = api.load("specs")
TTGIR = Path(__file__).resolve().parent / "data" / "ttgir"
AMPERE, HOPPER, AMPERE_I8 = (TTGIR / f for f in ("ampere_matmul_f16.ttgir", "hopper_matmul_f16.ttgir",
                                                 "ampere_matmul_i8.ttgir"))
C = "mma.m16n8k16.float.C.f32"
LANES = [[0, 2], [0, 4], [1, 0], [2, 0], [4, 0]]
TWELVE_WARPS = ("row = (tid % 32) // 4 + 8 * ((i // 2) % 2)\n"
                "col = 8 * (tid // 32) + (tid % 4) * 2 + (i % 2)\n")


def lay(lid: str) -> api.Layout:
    return api.layout(SPECS, lid)


def triton_json(reg, warp, shape) -> str:
    return json.dumps({"register": reg, "lane": LANES, "warp": warp, "shape": shape})


# ============================================================================ the silent pass

def test_twelve_warp_index_code_is_no_longer_a_silent_pass(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The issue's first wrong answer: 12-warp index code against the m16n8 accumulator came back ``equal``
    (evaluated for tid 0..31 only).  Now: without --threads an error at the ``//`` that reads the warp."""
    path = tmp_path / "twelve.txt"
    path.write_text(TWELVE_WARPS, encoding="utf-8")
    rc, out, err = cli(capsys, "conform", C, "--formula", str(path))
    assert rc == 2 and out == ""
    assert err.startswith(f"{path}:2:16: error: the index code reads the thread beyond the spec's 32 threads")
    assert "give --threads N" in err and len(err.strip().splitlines()) == 1


def test_twelve_warps_with_threads_are_tiled_and_the_missing_columns_named(tmp_path: Path,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """M = 16, N = 104 over 12 warps covers 96 columns: tiled over 16 x 96, and --block 16x104 names column 96."""
    path = tmp_path / "twelve.txt"
    path.write_text(TWELVE_WARPS, encoding="utf-8")
    rc, out, _ = cli(capsys, "conform", C, "--formula", str(path), "--threads", "384")
    assert rc == 0 and out.splitlines()[0].endswith(": tiled")
    assert "block 16 x 96: 12 sub-tiles of 16 x 8 (the spec's C), each cell held once" in out
    assert "warp 11: rows 0-15 x cols 88-95" in out and "    0123456789ab" in out
    rc, out, _ = cli(capsys, "conform", C, "--formula", str(path), "--threads", "384", "--block", "16x104")
    assert rc == 1 and out.splitlines()[0].endswith(": differs")
    assert "cell (0, 96) is held by no thread" in out and "    0123456789ab." in out
    rc, out, _ = cli(capsys, "conform", C, "--formula", str(path), "--threads", "384", "--format", "json")
    doc = json.loads(out)["conform"]
    assert doc["status"] == "tiled" and doc["tiling"]["units"] == 12 and doc["tiling"]["block"] == [16, 96]
    assert [p["col"] for p in doc["tiling"]["placements"]] == list(range(0, 96, 8))


@pytest.mark.parametrize("code, where", [
    ("row = (tid % 32) // 4 + 8 * ((i // 2) % 2) + 16 * (tid >> 5)\ncol = (tid % 4) * 2 + (i % 2)\n", "1:56"),
    ("row = lane // 4 + 8 * ((i // 2) % 2)\ncol = (lane % 4) * 2 + (i % 2) + 8 if tid >= 32\n"
     "      (lane % 4) * 2 + (i % 2) otherwise\n", "2:39"),
    ("w = tid / 32\nrow = (tid % 32) / 4 + 8 * ((i / 2) % 2)\ncol = (tid % 4) * 2 + (i % 2) + 8 * w\n", "1:9"),
])
def test_reading_the_warp_is_found_wherever_it_is_written(code: str, where: str) -> None:
    with pytest.raises(api.NotationError) as e:
        api.index_code(code, lay(C))
    assert e.value.one_line().startswith(f"argument:{where}: error: the index code reads the thread beyond")


def test_a_one_warp_formula_with_a_domain_guard_is_not_flagged() -> None:
    code = "row = lane / 4 + 8 * ((i / 2) % 2) if lane < 32\ncol = (lane % 4) * 2 + (i % 2)\n"
    assert api.conform(C, api.index_code(code, lay(C))).status == "equal"


def test_threads_and_elements_are_validated() -> None:
    for bad in ("0", "x", "100000", "-3"):
        with pytest.raises(api.NotationError, match="--threads"):
            api.index_code(TWELVE_WARPS, lay(C), threads=bad)
    with pytest.raises(api.NotationError, match="--elements needs --threads"):
        api.index_code(TWELVE_WARPS, lay(C), elements="8")


# ============================================================================ tiled, both engines

def test_sixteen_warps_along_n_are_tiled_not_differs() -> None:
    """The issue's second wrong answer: a correct 16-warp Triton layout over 16 x 128 (warps along N)."""
    given = api.triton(triton_json([[0, 1], [8, 0]], [[0, 8], [0, 16], [0, 32], [0, 64]], [16, 128]), lay(C))
    res = api.conform(C, given)
    assert res.status == "tiled" and res.exit_code() == 0
    assert res.engines == {"z3": "proved", "enumeration": "proved"}
    assert [(u, r, c) for u, _, r, c in res.tiling.placements] == [(u, 0, 8 * u) for u in range(16)]
    assert res.tiling.bases() == ([(0, 8), (0, 16), (0, 32), (0, 64)], [])


def test_warps_ordered_along_n_where_the_store_expects_m_are_told_apart() -> None:
    """Two 4-warp layouts of a 64 x 8 block: warps along M (the hardware's order) and along N over 16 x 32 are
    both tiled, with placements that say which is which; a warp whose rows are shifted by one differs."""
    along_m = api.triton(triton_json([[0, 1], [8, 0]], [[16, 0], [32, 0]], [64, 8]), lay(C))
    res = api.conform(C, along_m)
    assert res.status == "tiled" and [x[2:] for x in res.tiling.placements] == [(0, 0), (16, 0), (32, 0), (48, 0)]
    assert "placement (row, col): warp 0 repeat 0 at (0, 0); each warp bit adds (16, 0), (32, 0)" in result_text(res)
    moved = api.index_code("row = (tid % 32) // 4 + 8 * ((i // 2) % 2) + 16 * (tid // 32) + (tid // 96)\n"
                           "col = (tid % 4) * 2 + (i % 2)\n", lay(C), threads="128")
    res = api.conform(C, moved)  # warp 3 one row down: still a tile, but row 48 is held by no thread
    assert res.status == "differs" and res.tiling.offset(3, 0) == (49, 0) and "cell (48, 0) is held by no thread" in \
        res.message
    torn = api.index_code("row = (tid % 32) // 4 + 8 * ((i // 2) % 2) + 16 * (tid // 32) + (tid // 96) * (tid % 2)\n"
                          "col = (tid % 4) * 2 + (i % 2)\n", lay(C), threads="128")
    res = api.conform(C, torn)  # warp 3's odd lanes one row down: not the spec moved
    assert res.status == "differs" and res.counterexample["kind"] == "tile" and res.tiling is None
    c = res.counterexample
    assert (c["thread"], c["i"], c["index"], c["lane"], c["offset"]) == (97, 0, 3, 1, [48, 0])
    assert "warp 3's repeat 0 is the spec moved by (+48, +0)" in res.message and "holds (49, 2)" in res.message


def test_register_repeats_follow_the_repeat_bits_of_either_convention() -> None:
    """Triton puts the instruction's elements first (i = e + 4 t); a layout that interleaves the repeats
    (i = t + 2 e') is tiled too, with its repeat bits named."""
    triton = api.triton(triton_json([[0, 1], [8, 0], [0, 8]], [], [16, 16]), lay(C))
    res = api.conform(C, triton)
    assert res.status == "tiled" and res.tiling.repeats.bits == (2,)
    inter = api.triton(triton_json([[0, 8], [0, 1], [8, 0]], [], [16, 16]), lay(C))
    res = api.conform(C, inter)
    assert res.status == "tiled" and res.tiling.repeats.bits == (0,)
    assert "of repeat (bit 0 of i)" in result_text(res)


def test_replicated_warps_are_tiled_with_their_multiplicity() -> None:
    """Warps side by side along N hold the same A: each cell by 2 sub-tiles; --block still checks the extent."""
    given = api.triton(json.dumps({"register": [[0, 1], [8, 0], [0, 8], [0, 16]], "lane": LANES, "warp": [[0, 0]],
                                   "shape": [16, 32]}), lay("mma.m16n8k16.A.f16_bf16"))
    res = api.conform("mma.m16n8k16.A.f16_bf16", given)
    assert res.status == "tiled" and res.tiling.multiplicity == 2
    assert res.engines == {"z3": "proved", "enumeration": "proved"}
    assert "each cell held by 2 sub-tiles (copies)" in result_text(res)
    res = api.conform("mma.m16n8k16.A.f16_bf16", given, block=(16, 64))
    assert res.status == "differs" and "(a cell held twice)" in res.message
    assert "block 16 x 64: 4 sub-tiles of 16 x 16 (the spec's A), 1024 sub-tile cells for the block's 1024" in \
        result_text(res)


def test_a_partition_with_a_hole_and_one_with_an_overlap_name_the_cell() -> None:
    overlap = api.index_code("row = (tid % 32) // 4 + 8 * ((i // 2) % 2)\ncol = (tid % 4) * 2 + (i % 2) + "
                             "4 * (tid // 32)\n", lay(C), threads="64")
    res = api.conform(C, overlap)
    assert res.status == "differs" and res.tiling is not None
    assert "(a cell held twice)" in res.message and "(0, 4)" in res.message


def test_the_engines_decide_tiled_independently() -> None:
    """A map whose Z3 face lies at one point: the engines disagree, an error, never ``tiled``."""
    from verify.layout.fragment_maps import FormulaFragment as FormulaMap

    @dataclasses.dataclass(frozen=True)
    class Lying(FormulaMap):
        def _z3(self, thread, i, env=None):
            import z3
            ok, r, c = super()._z3(thread, i, env)
            return ok, z3.If(z3.And(thread == 40, i == 1), r + 1, r), c

    given = api.index_code(TWELVE_WARPS, lay(C), threads="64")
    liar = dataclasses.replace(given, map=Lying(given.map.formula, "index"))
    st, tiling, _, _ = tiled(lay(C), liar)
    assert st.status == "error" and tiling is None and "engines disagree" in st.message


# ============================================================================ TTGIR, real dumps

def test_ampere_matmul_accumulator_a_and_b(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli(capsys, "conform", C, "--triton", str(AMPERE), "--tensor", "#mma")
    assert rc == 0 and out.splitlines()[0] == f"conform {C} <- triton {AMPERE}: tiled"
    assert "block 128 x 256: 256 sub-tiles of 16 x 8 (the spec's C), each cell held once" in out
    assert "each warp bit adds (0, 8), (0, 16), (16, 0)" in out
    a = "128x32, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>"
    rc, out, _ = cli(capsys, "conform", "mma.m16n8k16.A.f16_bf16", "--triton", str(AMPERE), "--tensor", a)
    assert rc == 0 and "each cell held by 4 sub-tiles (copies)" in out
    b = "32x256, #ttg.dot_op<{opIdx = 1, parent = #mma, kWidth = 2}>"
    rc, out, _ = cli(capsys, "conform", "mma.m16n8k16.B.f16_bf16", "--triton", str(AMPERE), "--tensor", b)
    assert rc == 0 and "each cell held by 2 sub-tiles (copies)" in out


def test_ampere_int8_operands_with_kwidth_4(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli(capsys, "conform", "mma.m16n8k32.A.u8_s8", "--triton", str(AMPERE_I8), "--tensor",
                     "64x64, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 4}>")
    assert rc == 0 and out.splitlines()[0].endswith(": tiled"), out
    rc, out, _ = cli(capsys, "conform", "mma.m16n8k32.C.s32", "--triton", str(AMPERE_I8), "--tensor", "#mma")
    assert rc == 0 and "block 64 x 128" in out, out


def test_hopper_matmul_two_warpgroups(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = cli(capsys, "conform", "wgmma.m64nNk16.D.f32", "--triton", str(HOPPER), "--tensor", "#mma")
    assert rc == 0
    assert out.splitlines()[:2] == [
        f"conform wgmma.m64nNk16.D.f32 (N = 256) <- triton {HOPPER}: tiled",
        "  member: N = 256, the largest member that tiles the given (give --param to compare with another)"]
    assert "warpgroup 0: rows 0-63 x cols 0-255" in out and "warpgroup 1: rows 64-127 x cols 0-255" in out
    rc, out, _ = cli(capsys, "conform", "wgmma.m64nNk16.D.f32", "--triton", str(HOPPER), "--tensor", "#mma",
                     "--param", "N=128")
    assert rc == 0 and "2 warpgroups of 128 threads x 2 register repeats" in out


def test_a_dump_with_several_tensors_asks_for_one(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = cli(capsys, "conform", C, "--triton", str(AMPERE))
    assert rc == 2 and out == "" and "tensors with distributed layouts" in err and "--tensor" in err
    assert len(err.strip().splitlines()) == 1
    rc, _, err = cli(capsys, "conform", C, "--triton", str(AMPERE), "--tensor", "#nothing")
    assert rc == 2 and "no tensor type with a distributed layout matching --tensor '#nothing'" in err


@pytest.mark.parametrize("text, message", [
    ("#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [4, 1], instrShape = [16, 8]}>\n",
     "needs the tensor's shape"),
    ("#mma = #ttg.nvidia_mma<{versionMajor = 5, warpsPerCTA = [4, 1], instrShape = [16, 8]}>\ntensor<64x8xf32, #mma>",
     "versionMajor = 5 is not read here"),
    ("#mma = #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [3, 1], instrShape = [16, 8]}>\ntensor<64x8xf32, #mma>",
     "warpsPerCTA entry 3 is not a power of two"),
    ("#b = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [4, 4], warpsPerCTA = [1, 1], order = [1, 0]}>\n"
     "tensor<16x16xf32, #b>", "a warp has 32 threads"),
    ("tensor<16x16xf32, #ttg.dot_op<{opIdx = 0, parent = #mma, kWidth = 2}>>", "#mma is not defined"),
    ("#mma = #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1], instrShape = [16, 8], CTAsPerCGA = [2, 1]}>\n"
     "tensor<64x8xf32, #mma>", "several CTAs"),
    ("#mma = #ttg.nvidia_mma<{versionMajor = 2, warpsPerCTA = [4, 1], instrShape = [16, 8]\ntensor<64x8xf32, #mma>",
     "expected ',' or '}'"),
])
def test_bad_ttgir_is_one_positioned_line(text: str, message: str) -> None:
    with pytest.raises(api.NotationError) as e:
        api.triton(text, lay(C))
    assert message in e.value.one_line() and e.value.one_line().startswith("argument:")


# ============================================================================ our lowering = the wheel's

MMA2 = "#mma = #ttg.nvidia_mma<{versionMajor = 2, versionMinor = 0, warpsPerCTA = [%d, %d], instrShape = [16, 8]}>"
MMA3 = "#mma = #ttg.nvidia_mma<{versionMajor = 3, versionMinor = 0, warpsPerCTA = [%d, %d], instrShape = [16, %d, 16]}>"
BLOCKED = ("#blocked = #ttg.blocked<{sizePerThread = [%d, %d], threadsPerWarp = [%d, %d], warpsPerCTA = [%d, %d], "
           "order = [%d, %d]}>")


def _attributes() -> list[dict]:
    """mma v2 and v3, their dot operands (kWidth 1..8), slices, blocked in every order: over tensors smaller and
    larger than the layout (broadcast and repeats)."""
    items = []

    def add(defs: str, tensor: str, shape: list[int], warps: int) -> None:
        items.append({"defs": defs, "tensor": tensor, "shape": shape, "warps": warps})
    for wm, wn in [(1, 1), (2, 2), (4, 1), (1, 4), (2, 4), (8, 1)]:
        for s in [(16, 8), (32, 16), (64, 64), (128, 256), (16, 128), (256, 64)]:
            add(MMA2 % (wm, wn), f"tensor<{s[0]}x{s[1]}xf32, #mma>", list(s), wm * wn)
            for op, kw in itertools.product((0, 1), (1, 2, 4, 8)):
                add(MMA2 % (wm, wn), f"tensor<{s[0]}x{s[1]}xf16, #ttg.dot_op<{{opIdx = {op}, parent = #mma, "
                    f"kWidth = {kw}}}>>", list(s), wm * wn)
            add(MMA2 % (wm, wn), f"tensor<{s[0]}xf32, #ttg.slice<{{dim = 1, parent = #mma}}>>", [s[0]], wm * wn)
            add(MMA2 % (wm, wn), f"tensor<{s[1]}xf32, #ttg.slice<{{dim = 0, parent = #mma}}>>", [s[1]], wm * wn)
    for (wm, wn), n in itertools.product([(4, 1), (8, 1), (4, 2)], (8, 64, 256)):
        for s in [(64, 64), (128, 256), (64, 8), (256, 128)]:
            add(MMA3 % (wm, wn, n), f"tensor<{s[0]}x{s[1]}xf32, #mma>", list(s), wm * wn)
            add(MMA3 % (wm, wn, n), f"tensor<{s[0]}x{s[1]}xf16, #ttg.dot_op<{{opIdx = 0, parent = #mma, kWidth = 2}}>>",
                list(s), wm * wn)
    for spt, tpw, wpc, order in itertools.product([(1, 1), (1, 4), (4, 1), (2, 2)], [(1, 32), (8, 4), (32, 1)],
                                                  [(4, 1), (1, 8), (2, 2)], [(1, 0), (0, 1)]):
        d = BLOCKED % (*spt, *tpw, *wpc, *order)
        for s in [(128, 256), (32, 32), (128, 1), (1, 256)]:
            add(d, f"tensor<{s[0]}x{s[1]}xf32, #blocked>", list(s), wpc[0] * wpc[1])
        add(d, "tensor<128xf32, #ttg.slice<{dim = 1, parent = #blocked}>>", [128], wpc[0] * wpc[1])
        add(d, "tensor<64xf32, #ttg.slice<{dim = 0, parent = #blocked}>>", [64], wpc[0] * wpc[1])
    return items


def _wheel(items: list[dict]) -> list[dict]:
    probe = subprocess.run([sys.executable, "-c", "import triton._C.libtriton"], capture_output=True, text=True)
    if probe.returncode != 0:
        pytest.skip("the triton wheel is not installed (pip install triton: the reference for TTGIR lowering)")
    ref = Path(__file__).resolve().parent / "triton_reference.py"
    run = subprocess.run([sys.executable, str(ref)], input=json.dumps(items), capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)


def test_our_ttgir_lowering_gives_the_wheels_bases() -> None:
    """Every attribute of the sweep: the bases of each input (register, lane, warp) are the wheel's, in order
    (zero bases included: they are broadcasts)."""
    items = _attributes()
    ref = _wheel(items)
    assert len(ref) == len(items)
    compared = 0
    for it, r in zip(items, ref):
        assert "error" not in r, (it, r)
        bases, extent, _ = ttgir.parse(it["defs"] + "\n" + it["tensor"], "t")
        if len(it["shape"]) == 1:  # a slice: a column (dim 1 removed) or a row (dim 0 removed)
            row = "dim = 0" in it["tensor"]
            want = {k: [[0, b[0]] if row else [b[0], 0] for b in r[k]] for k in ("register", "lane", "warp")}
        else:
            want = {k: r[k] for k in ("register", "lane", "warp")}
        assert {k: [list(b) for b in bases.get(k, ())] for k in want} == want, it
        compared += 1
    assert compared > 800


def test_the_fixture_dumps_lower_like_the_wheel() -> None:
    """Each distributed tensor type of the committed dumps, read from the whole dump, against the wheel."""
    items, ours = [], []
    for path in (AMPERE, HOPPER, AMPERE_I8):
        text = path.read_text(encoding="utf-8")
        aliases, tensors, _ = ttgir.read_text(text, str(path))
        defs = "\n".join(line for line in text.splitlines() if line.startswith("#") and "#ttg." in line)
        warps = int(text.split('"ttg.num-warps" = ')[1].split(" ")[0])
        seen = set()
        for t in tensors:
            if len(t.shape) != 2 or (t.layout.kind == "ref" and t.layout.name not in aliases):
                continue
            start = text.index(">", text.index("tensor<", t.at))  # the tensor type as written
            depth, k = 0, text.index("tensor<", t.at) + len("tensor")
            while True:
                depth += text[k] == "<"
                depth -= text[k] == ">"
                if depth == 0:
                    break
                k += 1
            written = text[text.index("tensor<", t.at):k + 1]
            if written in seen or start < 0:
                continue
            seen.add(written)
            items.append({"defs": defs, "tensor": written, "shape": list(t.shape), "warps": warps})
            ours.append(ttgir.parse(defs + "\n" + written, str(path))[0])
    ref = _wheel(items)
    assert len(items) >= 12
    for it, r, mine in zip(items, ref, ours):
        assert "error" not in r, (it["tensor"], r)
        assert {k: [list(b) for b in mine.get(k, ())] for k in ("register", "lane", "warp")} == \
            {k: r[k] for k in ("register", "lane", "warp")}, it["tensor"]


# ============================================================================ CuTe TiledMMA, as CuTe prints it

CUTE = Path(__file__).resolve().parent / "data" / "cute_tiled"
TILED_MMAS = [("sm80_16x8x16_atom2x2x1_tile32x32", C, None),
              ("sm80_16x8x16_atom2x2x1_rowmajor_tile64x32", C, None),
              ("sm90_64x128x16_two_warpgroups", "wgmma.m64nNk16.D.f32", {"N": 128}),
              ("sm90_64x128x16_three_warpgroups_192x256", "wgmma.m64nNk16.D.f32", {"N": 128})]


@pytest.mark.parametrize("name, lid, params", TILED_MMAS)
def test_tiled_mma_is_cutes_own_tv_layout_and_tiled(name: str, lid: str, params) -> None:
    """Each fixture is CuTe's print(tiled_mma) and its get_layoutC_TV() (print_tiled_mma.cpp there, compiled on
    the host against the nvidia-cutlass 4.2 headers): our TiledMMA, built from the print with the algebra, holds
    at every (thread, value) the cell CuTe's TV layout names, and conforms to the atom's spec as ``tiled``."""
    from verify.layout.model import cells_of
    from verify.layout.notations.cute_parse import parse_cute
    text = (CUTE / f"{name}.txt").read_text(encoding="utf-8")
    spec = lay(lid)
    given = api.tiled_mma(text, spec, params=params)
    tv = parse_cute(text.split("\nTV: ")[1].split("\n")[0])
    rows, cols = (int(x) for x in text.split("TILE ")[1].split())
    assert (given.threads, given.n_elements, given.rows, given.cols) == (tv.mode(0).size(), tv.mode(1).size(), rows,
                                                                           cols)
    c = cells_of(given)
    for t in range(given.threads):
        for v in range(given.n_elements):
            idx = tv(t, v)
            assert c.ok[t, v] and (c.row[t, v], c.col[t, v]) == (idx % rows, idx // rows), (t, v)
    res = api.conform(spec, given, params=params)
    assert res.status == "tiled" and res.engines == {"z3": "proved", "enumeration": "proved"}


def test_tiled_mma_output_names_the_warps(capsys: pytest.CaptureFixture[str]) -> None:
    path = CUTE / "sm80_16x8x16_atom2x2x1_tile32x32.txt"
    rc, out, _ = cli(capsys, "conform", C, "--tiled-mma", str(path))
    assert rc == 0 and out.splitlines()[0] == f"conform {C} <- tiled_mma {path}: tiled"
    assert "warp 1: rows 16-31 x cols 0-7, 16-23" in out and "warp 2: rows 0-15 x cols 8-15, 24-31" in out
    path = CUTE / "sm90_64x128x16_three_warpgroups_192x256.txt"
    rc, out, _ = cli(capsys, "conform", "wgmma.m64nNk16.D.f32", "--tiled-mma", str(path), "--param", "N=128")
    assert rc == 0 and "warpgroup 2: rows 128-191 x cols 0-255" in out
    assert "3 warpgroups of 128 threads x 2 register repeats" in out


@pytest.mark.parametrize("edit, message", [
    (("(_32,_32,_16)", "((_1,_2,_1):(_0,_1,_0),_,_)"), "a permutation layout"),
    (("ThrLayoutVMNK:  (_32,_2,_2,_1):(_1,_32,_64,_0)", "ThrLayoutVMNK:  (_32,_2,_2,_2):(_1,_32,_64,_128)"),
     "splits K over 2 units"),
    (("  Shape_MNK:  (_16,_8,_16)\n", ""), "has no Shape_MNK"),
    (("PermutationMNK: (_32,_32,_16)", "PermutationMNK: (_40,_32,_16)"), "PermutationMNK: a 40 x 32 block"),
])
def test_bad_tiled_mma_is_one_positioned_line(edit: tuple[str, str], message: str) -> None:
    text = (CUTE / "sm80_16x8x16_atom2x2x1_tile32x32.txt").read_text(encoding="utf-8").replace(*edit)
    with pytest.raises(api.NotationError) as e:
        api.tiled_mma(text, lay(C))
    assert message in e.value.one_line()


# ============================================================================ "X tiled as warps W over B"

def test_block_tile_stated_in_the_api_and_on_the_command_line(capsys: pytest.CaptureFixture[str]) -> None:
    """The Ampere dump's accumulator is the m16n8 C tiled as 2 x 4 warps over 128 x 256 in Triton's order, and
    the Hopper dump's is wgmma D (N = 256) over 2 x 1 warpgroups; 4 x 2 warps differ (warps in another order)."""
    given = api.triton(AMPERE.read_text(encoding="utf-8"), lay(C), tensor="#mma")
    assert api.conform(api.block_tile(C, (2, 4), (128, 256)), given).status == "equal"
    res = api.conform(api.block_tile(C, (4, 2), (128, 256)), given)
    assert res.status == "differs" and res.engines == {"z3": "refuted", "enumeration": "refuted"}
    hopper = api.triton(HOPPER.read_text(encoding="utf-8"), lay(C), tensor="#mma")
    d = api.block_tile("wgmma.m64nNk16.D.f32", (2, 1), (128, 256), "triton-hopper", params={"N": 256})
    assert api.conform(d, hopper).status == "equal"
    rc, out, _ = cli(capsys, "conform", C, "--triton", str(AMPERE), "--tensor", "#mma", "--warps", "2x4")
    assert rc == 0 and out.splitlines()[0].endswith(": equal")
    assert out.splitlines()[0].startswith(f"conform {C} over 2 x 4 warps, 128 x 256 (triton) <- triton")
    rc, out, _ = cli(capsys, "conform", C, "--triton", str(AMPERE), "--tensor", "#mma", "--warps", "4x2")
    assert rc == 1 and "first difference: thread 0 element c4: spec (0, 16), given (0, 32)" in out
    tm = api.tiled_mma((CUTE / "sm80_16x8x16_atom2x2x1_tile32x32.txt").read_text(encoding="utf-8"), lay(C))
    assert api.conform(api.block_tile(C, (2, 2), (32, 32), "cute"), tm).status == "equal"
    assert api.conform(api.block_tile(C, (2, 2), (32, 32), "triton"), tm).status == "differs"


def test_block_tile_errors() -> None:
    with pytest.raises(api.BlockError, match="not a whole number"):
        api.block_tile(C, (4, 1), (48, 8))
    with pytest.raises(api.FamilyError, match="give params"):
        api.block_tile("wgmma.m64nNk16.D.f32", (2, 1), (128, 256))
    with pytest.raises(TypeError):
        api.block_tile(C, (4, 1), (64,))


# ============================================================================ two elements swapped in one warp

SWAP_IN_WARP_1 = ("j = 2 if i == 1 && tid // 32 == 1\n  1 if i == 2 && tid // 32 == 1\n  i otherwise\n"
                  "row = (tid % 32) // 4 + 8 * ((j // 2) % 2) + 16 * (tid // 32)\ncol = (tid % 4) * 2 + (j % 2)\n")


def test_a_block_tile_with_two_elements_swapped_says_per_warp_what_the_permutation_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Issue 35 item 18: the same swap that one atom reports as ``permuted: c1<->c2`` was a generic ``differs`` in
    a block tile; now ``permuted``, per warp, with the tiling, decided by both engines."""
    atom = api.index_code(SWAP_IN_WARP_1.replace("tid // 32 == 1", "tid // 32 == 0").replace(" + 16 * (tid // 32)", ""),
                          lay(C))
    alone = api.conform(C, atom)
    assert alone.status == "permuted" and alone.permutation.text() == "c1<->c2"
    res = api.conform(C, api.index_code(SWAP_IN_WARP_1, lay(C), threads="128"))
    assert res.status == "permuted" and res.exit_code() == 1
    assert res.permutation.text() == "warp 1: c1<->c2; warps 0, 2-3: as spec"
    assert [x[2:] for x in res.tiling.placements] == [(0, 0), (16, 0), (32, 0), (48, 0)]
    assert res.engines == {"z3": "proved", "enumeration": "proved", "z3_permutation": "proved"}
    assert [c.check for c in res.checks] == ["equal", "permuted", "coverage"]
    assert all(c.engines.get("z3") in ("proved", "refuted") and c.engines.get("enumeration") == c.engines["z3"]
               for c in res.checks)
    c = res.counterexample
    assert (c["lane"], c["element"], c["first"], c["second"]) == (32, "c1", {"row": 16, "col": 1}, {"row": 24, "col": 0})
    text = result_text(res)
    assert ("every thread holds the cells of the spec's C tiled over the block in another element order, per warp "
            "(given <- tiled spec): warp 1: c1<->c2; warps 0, 2-3: as spec") in text
    assert "block 64 x 8: 4 sub-tiles of 16 x 8 (the spec's C), each cell held once" in text
    path = tmp_path / "swap.txt"
    path.write_text(SWAP_IN_WARP_1, encoding="utf-8")
    rc, out, _ = cli(capsys, "conform", C, "--formula", str(path), "--threads", "128", "--format", "json")
    doc = json.loads(out)["conform"]
    assert rc == 1 and doc["status"] == "permuted"
    assert doc["permutation"]["per_unit"] == [{"who": "warp 1", "permutation": "c1<->c2"},
                                              {"who": "warps 0, 2-3", "permutation": "as spec"}]


def test_a_swap_across_register_repeats_of_one_lane_is_named_at_that_lane() -> None:
    """Elements of two repeats swapped in one thread (lane 6 of warp 2): the permutation crosses the repeats."""
    code = ("j = 9 if i == 5 && tid == 70\n  5 if i == 9 && tid == 70\n  i otherwise\n"
            "e = j % 4\nt = j // 4\nw = tid // 32\n"
            "row = (tid % 32) // 4 + 8 * ((e // 2) % 2) + 16 * (w // 2) + 32 * (t // 2)\n"
            "col = (tid % 4) * 2 + (e % 2) + 8 * (w % 2) + 16 * (t % 2)\n")
    res = api.conform(C, api.index_code(code, lay(C), threads="128", elements="16"))
    assert res.status == "permuted" and res.tiling.repeats.count == 4
    assert res.permutation.text() == "warp 2 lane 6: c5<->c9; warps 0-1, 3: as spec; warp 2 lanes 0-5, 7-31: as spec"
    unswapped = api.conform(C, api.index_code(code.replace("tid == 70", "tid == 999"), lay(C), threads="128",
                                              elements="16"))
    assert unswapped.status == "tiled"


def test_a_tile_that_is_not_a_permutation_stays_differs() -> None:
    """Warp 1 holds a cell of warp 0 in place of one of its own: no order of its elements is the tiled spec."""
    code = SWAP_IN_WARP_1.replace("row = ", "down = 16 if tid == 33 && i == 1\n  0 otherwise\nrow = 0 - down + ")
    res = api.conform(C, api.index_code(code, lay(C), threads="128"))
    assert res.status == "differs" and res.tiling is None and res.permutation is None


def test_an_undecided_permutation_of_a_tile_is_said_not_passed_over(monkeypatch: pytest.MonkeyPatch) -> None:
    """Z3 unknown on the permutation step (its budget spent on a large tile): ``differs`` (the given is not tiled:
    proved) with a line that says the permutation is undecided, never a silent ``differs`` or a ``permuted``."""
    from verify.checks import conform as conform_mod
    from verify.results import CheckResult

    def spent(spec, given, timeout=10.0):
        return CheckResult("permuted", "unknown", "proved", None, "Z3 gave up within the budget", 0.0,
                           {"z3": "unknown", "enumeration": "proved"}), None
    monkeypatch.setattr(conform_mod, "permuted", spent)
    res = api.conform(C, api.index_code(SWAP_IN_WARP_1, lay(C), threads="128"))
    assert res.status == "differs" and res.permutation is None
    assert res.message.endswith("whether its threads hold the cells of the spec's C tiled over the block in another "
                                "element order is undecided: permuted unknown (Z3 gave up within the budget)")
