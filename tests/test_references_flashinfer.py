"""The FlashInfer and TensorRT-LLM references (``references.flashinfer``, ``references.trtllm``) and their C
reader (``references.cexpr``).

The reader is tested on literal C (C's precedence and truncating division, casts, declarations, and what it
refuses, with positions); the references on the installed flashinfer-python's headers (``pip install --no-deps
flashinfer-python==0.7.4``; skipped otherwise), as shipped and with one expression changed in a copy.
"""
from __future__ import annotations

import functools
import shutil
from pathlib import Path

import pytest
from conftest import SPECS

from verify import api
from verify.checks.references import NAMES, ORIGINS, reference
from verify.checks.references import flashinfer as fi
from verify.checks.references import trtllm
from verify.checks.references.cexpr import Where, evaluate, function_body, run_function, strip_comments
from verify.checks.references.pyfunc import Refused

AT = Where("f.cuh", 10, 4)


@functools.cache
def spec_layouts() -> list:
    specs = api.load(SPECS)
    return [*api.layouts(specs), *api.map_layouts(specs)]


# ----------------------------------------------------------------------------- the C reader

@pytest.mark.parametrize(("expr", "want"), [
    ("gid + (lane & 1) * 8", 3 + 8), ("lane >> 2", 1), ("lane & 3", 1), ("-7 / 2", -3), ("-7 % 2", -1),
    ("7 / -2", -3), ("1 + 2 * 3 << 1", 14), ("6 & 3 ^ 1 | 8", 11), ("(size_t)(lane + 1) * 2", 12),
    ("0x10u + 3l", 19), ("~0 & 7", 7), ("(mIdx % (32 * 4)) / 32", 1),
])
def test_c_semantics(expr: str, want: int) -> None:
    assert evaluate(expr, {"gid": 3, "lane": 5, "mIdx": 37}, AT) == want


@pytest.mark.parametrize(("expr", "reason", "col"), [
    ("f(lane)", "name 'f' is bound to no", 4), ("lane ? 1 : 2", "outside the C integer subset", 9),
    ("a.b", "outside the C integer subset", 5), ("nope + 1", "name 'nope' is bound to no", 4),
    ("1 / (lane - 5)", "division by zero", 6), ("(1 + 2", "a '(' without its ')'", 4), ("1 << 70", "shift by 70", 6),
])
def test_c_refusals_with_positions(expr: str, reason: str, col: int) -> None:
    with pytest.raises(Refused) as e:
        evaluate(expr, {"lane": 5}, AT)
    assert reason in e.value.reason and (e.value.file, e.value.line, e.value.col) == ("f.cuh", 10, col)


def test_straight_line_functions() -> None:
    text = strip_comments("""\
int64_t off(int a, int b) {
  // a comment
  int32_t x = a % 4, y = b / 2;  /* two */
  const int64_t z = x * 16 + y;
  return z + 1;
}
""")
    body, line = function_body(text, r"int64_t\s+off\s*\(", "f.cuh")
    assert line == 1 and run_function(body, line, {"a": 7, "b": 9}, "f.cuh") == 3 * 16 + 4 + 1
    with pytest.raises(Refused) as e:
        run_function("int x = a;\n  for (;;) {}\n  return x;", 5, {"a": 1}, "f.cuh")
    assert "not an integer declaration or a return" in e.value.reason and e.value.line == 6
    with pytest.raises(Refused) as e:
        run_function("int a = 2; return a;", 5, {"a": 1}, "f.cuh")
    assert "a declaration NAME = EXPR of a new name" in e.value.reason
    with pytest.raises(Refused):
        function_body("int f() { return 1;", r"int\s+f\s*\(", "f.cuh")


# ----------------------------------------------------------------------------- the references

def test_registration_and_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    assert {"flashinfer", "trtllm"} <= set(NAMES)
    assert (ORIGINS["flashinfer"], ORIGINS["trtllm"]) == ("FlashInfer", "TensorRT-LLM")
    monkeypatch.setattr(fi, "root", lambda: None)
    assert reference("flashinfer").probe().startswith("no FlashInfer headers: pip install --no-deps flashinfer-python==")
    assert reference("trtllm").probe().startswith("no TensorRT-LLM kernels: pip install --no-deps")


def _root() -> Path:
    r = fi.root()
    if r is None or fi.probe():
        pytest.skip(f"reference flashinfer unavailable: {fi.probe()}")
    return r


def _copy(tmp_path: Path, rels: tuple[str, ...]) -> Path:
    root = _root()
    for rel in rels:
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(root / rel, tmp_path / rel)
    return tmp_path


def test_installed_flashinfer_scale_factors_agree() -> None:
    _root()
    rows = [r for r in fi.evaluate_default(spec_layouts()).rows if r.spec.startswith("mma.block_scale")]
    assert sorted((r.spec, r.kind, r.params) for r in rows) == [
        ("mma.block_scale.m16n8k32.SFA.ue8m0", "agree", (("BYTE_ID_A", 0), ("THREAD_ID_A", 0))),
        ("mma.block_scale.m16n8k32.SFB.ue8m0", "agree", (("BYTE_ID_B", 0), ("THREAD_ID_B", 0))),
        ("mma.block_scale.m16n8k64.SFA.ue4m3", "agree", (("BYTE_ID_A", 0), ("THREAD_ID_A", 0))),
        # the MXFP4 indexer's .scale_vec::2X (flashinfer_mxf4.py), one row per kstep
        *[("mma.block_scale.m16n8k64.SFA.ue8m0", "agree", (("BYTE_ID_A", 0), ("THREAD_ID_A", 0)))] * 2,
        ("mma.block_scale.m16n8k64.SFB.ue4m3", "agree", (("BYTE_ID_B", 0), ("THREAD_ID_B", 0))),
        *[("mma.block_scale.m16n8k64.SFB.ue8m0", "agree", (("BYTE_ID_B", 0), ("THREAD_ID_B", 0)))] * 2]


def test_flashinfer_changed_row_or_selector_is_found(tmp_path: Path) -> None:
    root = _copy(tmp_path, (fi.WARP_TILES, *(m.wrapper_file for m in fi.MMAS)))
    p = root / fi.WARP_TILES
    text = p.read_text()
    assert text.count("const int scale_row = gid + (lane & 1) * 8;") == 1
    p.write_text(text.replace("const int scale_row = gid + (lane & 1) * 8;", "const int scale_row = gid + (lane & 2) * 4;"))
    rows = {r.spec: r for r in fi.evaluate_default(spec_layouts(), path=root).rows}
    bad = rows["mma.block_scale.m16n8k64.SFA.ue4m3"]
    assert bad.kind == "differ" and "lane 1" in bad.detail and bad.line == text[:text.find("scale_row =")].count("\n") + 1
    assert rows["mma.block_scale.m16n8k32.SFA.ue8m0"].kind == "agree"
    w = root / fi.MMAS[0].wrapper_file
    wt = w.read_text()
    imm = '"n"(static_cast<uint16_t>(0))'
    byte_at = wt.index(imm, wt.index('"r"(static_cast<uint32_t>(scale_a))'))   # {byte-id-a, thread-id-a}
    thread_at = wt.index(imm, byte_at + 1)
    one = imm.replace("(0)", "(1)")
    w.write_text(wt[:byte_at] + one + wt[byte_at + len(imm):])     # byte-id-a 1: a byte FlashInfer never fills
    rows = {r.spec: r for r in fi.evaluate_default(spec_layouts(), path=root).rows}
    bad = rows["mma.block_scale.m16n8k32.SFA.ue8m0"]
    assert dict(bad.params)["BYTE_ID_A"] == 1 and bad.kind == "differ"
    w.write_text(wt[:thread_at] + one + wt[thread_at + len(imm):])      # thread-id-a 1: lanes 2, 3
    rows = {r.spec: r for r in fi.evaluate_default(spec_layouts(), path=root).rows}
    ok = rows["mma.block_scale.m16n8k32.SFA.ue8m0"]     # the same rows: g + 8 (lane % 2) whichever pair reads
    assert dict(ok.params)["THREAD_ID_A"] == 1 and ok.kind == "agree"


def test_flashinfer_statement_gone_is_malformed_with_the_file(tmp_path: Path) -> None:
    root = _copy(tmp_path, (fi.WARP_TILES, *(m.wrapper_file for m in fi.MMAS)))
    p = root / fi.WARP_TILES
    p.write_text(p.read_text().replace("qk_k_scale_selector<KV>(k_sc + gid * SCALE_STRIDE, blk)", "0"))
    rows = {r.spec: r for r in fi.evaluate_default(spec_layouts(), path=root).rows}
    bad = rows["mma.block_scale.m16n8k32.SFB.ue8m0"]
    assert bad.kind == "malformed" and "0 matches" in bad.detail and bad.header == fi.WARP_TILES


def _tile_only() -> list:
    return [lay for lay in spec_layouts() if lay.id == "storage.sf.cutlass.128x4.tile"]


def test_installed_trtllm_tile_agrees_and_a_stride_changed_differs(tmp_path: Path) -> None:
    _root()
    rows = trtllm.evaluate_default(_tile_only()).rows
    assert [(r.spec, r.kind) for r in rows] == [("storage.sf.cutlass.128x4.tile", "agree")]
    root = _copy(tmp_path, (trtllm.FILE,))
    p = root / trtllm.FILE
    text = p.read_text()
    old = "int64_t innerMStride = 4 * innerKStride;  // 4\n\n  // M tile layout [32, 4] is column-major.\n" \
          "  int32_t outerMIdx = (mIdx % 32);\n  int64_t outerMStride = 4 * innerMStride;  // 16\n\n" \
          "  int32_t kTileIdx = (kIdx / 4);\n  int64_t kTileStride = 32 * outerMStride;  // 512\n\n" \
          "  // SF vector size 16 or 32. We round the \"numCols\" up to a multiple of 64 or 128.\n" \
          "  // It is the same as rounding the \"numColVecs\" up to a multiple of 4.\n  int32_t numKTiles"
    assert text.count(old) == 2 and text.find(old) < text.find("get_sf_out_offset_128x4(int mIdx")   # 5-, 3-arg
    p.write_text(text.replace(old, old.replace("outerMStride = 4 * innerMStride", "outerMStride = 2 * innerMStride"),
                              1))
    rows = trtllm.evaluate_default(_tile_only(), path=root).rows
    assert [r.kind for r in rows] == ["differ"] and rows[0].header == trtllm.FILE


@pytest.mark.slow
def test_installed_trtllm_agrees_on_every_member() -> None:
    _root()
    rows = trtllm.evaluate_default(spec_layouts()).rows
    assert len(rows) == 19 and all(r.kind == "agree" for r in rows)


def test_any_text_is_a_value_or_refused() -> None:
    """The C reader on hostile text: a value or ``Refused``, never another exception."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    @settings(max_examples=300, deadline=None)
    @given(st.text(alphabet="lane gid()+-*/%&|^~<>0x19 ,;=intreturn", max_size=60))
    def run(text: str) -> None:
        for call in (lambda: evaluate(text, {"lane": 5, "gid": 1}, AT),
                     lambda: run_function(text, 1, {"lane": 5}, "f.cuh")):
            try:
                v = call()
            except Refused:
                continue
            assert isinstance(v, int)
    run()


def test_c_integer_literals_are_read_as_c_reads_them() -> None:
    """``01`` (octal, found by the hostile-text test above) is 1, ``010`` is 8, ``0x10`` 16; ``09`` is no C literal
    and is refused at its column, never a ``ValueError``."""
    assert [evaluate(t, {}, AT) for t in ("01", "010", "0x10", "10u", "0")] == [1, 8, 16, 10, 0]
    with pytest.raises(Refused, match="no C integer literal"):
        evaluate("1 + 09", {}, AT)
