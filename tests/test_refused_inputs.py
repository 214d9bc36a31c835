"""Inputs users have that were refused (issue 35, item 14), each now read as what it is and checked by both
engines: an unswizzled ``#ttg.nvmma_shared``, a transposed (column-major) TMA box, a 1-D ``!ttg.memdesc``, ``banks``
from a register layout and a shared layout (the lane addresses derived as Triton lowers them), and ``ingest`` of
the shared-memory pages.  Each reading is held to an independent computation (Triton's basis construction
transcribed, a plain-Python bank count, the page's own maps)."""
from __future__ import annotations

import json
import random

import numpy as np
import pytest
from conftest import DOCS, cli

from verify import api
from verify.checks import banks_registers
from verify.layout.named import evaluate_all
from verify.layout.notations.triton import TritonLayout, parse_triton

WGMMA_PAGE = "9-7-15-5-1-2-shared-memory-matrix-layout.md"
TC_PAGES = ("9-7-16-10-6-shared-memory-layout-and-swizzling.md",
            "9-7-16-10-3-valid-combinations-of-type-size-major-ness-and-swizzling.md")
NVMMA0 = ("#shared = #ttg.nvmma_shared<{{swizzlingByteWidth = 0, transposed = false, elementBitWidth = {bits}}}>\n"
          "%a = ttg.local_alloc : () -> !ttg.memdesc<{rows}x{cols}x{t}, #shared, #smem, mutable>\n")


def offsets(lay) -> np.ndarray:
    v = evaluate_all(lay.map)
    assert np.asarray(v.ok).all()
    return np.asarray(v.out["offset"], np.int64)


def triton_nvmma0(rows: int, cols: int) -> np.ndarray:
    """Triton's ``nvmmaSharedToLinearLayout`` for ``swizzlingByteWidth == 0``, transcribed as bases: identity1D over
    the TMA block's dim1 then dim0 (each at most 256), then ``ensureLayoutNotSmallerThan`` (dim0, then dim1); the
    offset -> (dim0, dim1) bases inverted by enumeration."""
    br, bc = min(rows, 256), min(cols, 256)
    bases = [(0, 1 << k) for k in range(bc.bit_length() - 1)] + [(1 << k, 0) for k in range(br.bit_length() - 1)]
    bases += [(br << k, 0) for k in range((rows // br).bit_length() - 1)]
    bases += [(0, bc << k) for k in range((cols // bc).bit_length() - 1)]
    out = np.full((rows, cols), -1, np.int64)
    for off in range(rows * cols):
        r = c = 0
        for k, (dr, dc) in enumerate(bases):
            if off >> k & 1:
                r ^= dr
                c ^= dc
        out[r, c] = off
    return out


@pytest.mark.parametrize("rows,cols,t,bits", [(64, 64, "f16", 16), (512, 32, "f32", 32), (8, 512, "f16", 16),
                                              (16, 128, "i8", 8)])
def test_an_unswizzled_nvmma_shared_is_triton_s_identity_over_tma_blocks(rows, cols, t, bits):
    lay = api.shared_layout("triton", NVMMA0.format(rows=rows, cols=cols, t=t, bits=bits))
    assert lay.swizzle is None and lay.element_bits == bits
    assert (offsets(lay) == triton_nvmma0(rows, cols)).all()
    from verify.checks.maps import bijective  # both engines: a bijection onto the buffer
    assert [c.status for c in bijective(lay.map)] == ["proved"] * 3


def test_an_unswizzled_nvmma_shared_reaches_every_command(capsys, tmp_path):
    p = tmp_path / "nvmma0.ttgir"
    p.write_text(NVMMA0.format(rows=64, cols=64, t="f16", bits=16), encoding="utf-8")
    rc, out, err = cli(capsys, "banks", "--triton", str(p), "--access", "ldmatrix.x4")
    assert rc == 1 and "conflict_free  FAIL" in out and err == ""  # 128-byte rows, no swizzle: degree 8
    rc, out, err = cli(capsys, "descriptor", "--triton", str(p))
    assert rc == 1 and "no wgmma descriptor reads" in out and err == ""  # row-major rows are no canonical layout
    rc, out, err = cli(capsys, "conform", "wgmma.shared.atom.K.none", "--triton", str(p))
    assert rc == 1 and err == ""


def test_a_column_major_tma_box_is_the_transposed_row_major_box(capsys):
    col = api.shared_layout("tma", "32x64:64B:col", type="f16")
    row = api.shared_layout("tma", "64x32:64B", type="f16")
    assert (col.rows, col.cols) == (32, 64) and (offsets(col) == offsets(row).T).all()
    rc, out, err = cli(capsys, "descriptor", "--tma", "64x64:128B:col", "--type", "f16")
    assert rc == 0 and "MN-major 128B swizzling" in out and "reads the layout exactly: proved (z3 proved, " \
        "enumeration proved)" in out, out
    rc, out, err = cli(capsys, "consistent", "--writer", "tma:64x64:128B:col", "--reader",
                       "descriptor:0x4000004000400000", "--type", "f16", "--major", "MN")
    assert rc == 0 and "consistent" in out, (out, err)
    rc, out, err = cli(capsys, "descriptor", "--tma", "128x64:128B:col", "--type", "f16")  # 128 rows x 2 B > 128 B
    assert rc == 2 and "wider than the 128-byte span" in err


ONE_D = ("#shared1 = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n"
         "#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = false, elementBitWidth = 32}>\n")


@pytest.mark.parametrize("text", [
    "#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n"
    "%b = ttg.local_alloc : () -> !ttg.memdesc<128xf32, #s, #smem, mutable>\n",
    "#s = #ttg.shared_linear<{offset = [[1], [2], [4], [8], [16], [32], [64]]}>\n"
    "%b = ttg.local_alloc : () -> !ttg.memdesc<128xf32, #s, #smem, mutable>\n",
    "#s = #ttg.nvmma_shared<{swizzlingByteWidth = 0, transposed = false, elementBitWidth = 32}>\n"
    "%bar = ttg.local_alloc : () -> !ttg.memdesc<1xi64, #b, #smem, mutable>\n"
    "%b = ttg.local_alloc : () -> !ttg.memdesc<128xf32, #s, #smem, mutable>\n",
])
def test_a_one_dimensional_memdesc_is_a_row(text):
    lay = api.shared_layout("triton", text)
    assert (lay.rows, lay.cols, lay.element_bits) == (1, 128, 32)
    assert (offsets(lay) == np.arange(128).reshape(1, 128)).all()


def test_a_one_dimensional_memdesc_refuses_a_swizzle_at_its_field(capsys, tmp_path):
    p = tmp_path / "one.ttgir"
    p.write_text("#s = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 32}>\n"
                 "%b = ttg.local_alloc : () -> !ttg.memdesc<128xf32, #s, #smem, mutable>\n", encoding="utf-8")
    rc, out, err = cli(capsys, "banks", "--triton", str(p), "--access", "ld.shared.v4")
    assert rc == 2 and out == "" and err.startswith(f"{p}:1:25: error: swizzlingByteWidth = 128 needs a 2-D tensor")


def test_the_memdesc_of_the_encoding_is_read_not_the_first_one():
    text = ("#bar = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [0]}>\n"
            "%0 = ttg.local_alloc : () -> !ttg.memdesc<32x16xf16, #other, #smem, mutable>\n"
            "%1 = ttg.local_alloc : () -> !ttg.memdesc<1xi64, #bar, #smem, mutable>\n")
    lay = api.shared_layout("triton", text)
    assert (lay.rows, lay.cols, lay.element_bits) == (1, 1, 64)


# ----------------------------------------------------------------------------- banks from registers

BLOCKED = ("#blocked = #ttg.blocked<{{sizePerThread = [{s0}, {s1}], threadsPerWarp = [{t0}, {t1}], warpsPerCTA = "
           "[{w0}, {w1}], order = [{o0}, {o1}]}}>\n%1 = ttg.convert_layout %x : tensor<{rows}x{cols}xf16, #blocked>\n")
SHARED = {
    "plain": "#s = #ttg.swizzled_shared<{vec = 1, perPhase = 1, maxPhase = 1, order = [1, 0]}>\n",
    "swizzled": "#s = #ttg.swizzled_shared<{vec = 8, perPhase = 1, maxPhase = 8, order = [1, 0]}>\n",
    "nvmma128": "#s = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>\n",
}


def _shared(kind: str, rows: int, cols: int):
    return api.shared_layout("triton", SHARED[kind] + f"%a = ttg.local_alloc : () -> !ttg.memdesc<{rows}x{cols}xf16, "
                                                      "#s, #smem, mutable>\n")


def plain_degree(regs: TritonLayout, lay) -> tuple[int, int]:
    """(vector width, worst conflict degree) by plain Python, point by point: Triton's vector (the largest run of
    registers on consecutive aligned offsets, at most 16 bytes), then per warp and run, each 32-lane access's
    4-byte words per bank."""
    table = offsets(lay)
    off = {(t, r): int(table[regs.at_thread(t, r)]) for t in range(regs.threads) for r in range(regs.values)}
    vec = 1
    while vec * 2 <= min(regs.values, 8) and all(
            off[t, r + j] == off[t, r] + j and off[t, r] % (vec * 2) == 0
            for t in range(regs.threads) for r in range(0, regs.values, vec * 2) for j in range(vec * 2)):
        vec *= 2
    nbytes = vec * 2
    group = 128 // max(nbytes, 4)
    worst = 1
    for w in range(regs.threads // 32):
        for r in range(0, regs.values, vec):
            for g in range(0, 32, group):
                words = {(off[32 * w + lane, r] * 2) // 4 + j for lane in range(g, g + group)
                         for j in range(max(1, nbytes // 4))}
                per_bank: dict[int, int] = {}
                for word in words:
                    per_bank[word % 32] = per_bank.get(word % 32, 0) + 1
                worst = max(worst, max(per_bank.values()))
    return vec, worst


def _blocked(rng: random.Random) -> tuple[str, int, int]:
    while True:
        s = [rng.choice((1, 2, 4, 8)), rng.choice((1, 2, 4, 8))]
        t0 = rng.choice((1, 2, 4, 8, 16, 32))
        w0 = rng.choice((1, 2, 4))
        w1 = 4 // w0
        o = rng.choice(((1, 0), (0, 1)))
        rows, cols = s[0] * t0 * w0, s[1] * (32 // t0) * w1
        if 8 <= rows <= 64 and 8 <= cols <= 64:
            text = BLOCKED.format(s0=s[0], s1=s[1], t0=t0, t1=32 // t0, w0=w0, w1=w1, o0=o[0], o1=o[1], rows=rows,
                                  cols=cols)
            return text, rows, cols


ACCUMULATOR_STORE = dict(s0=1, s1=8, t0=4, t1=8, w0=4, w1=1, o0=1, o1=0)  # 8 contiguous f16 per thread
COLUMN_STORE = dict(s0=8, s1=1, t0=8, t1=4, w0=1, w1=4, o0=0, o1=1)  # 8 per thread down a column


def _files(tmp_path, blocked: dict, shared: str, tile: str = "64x64") -> tuple[str, str]:
    """(register layout file, shared layout file): a 64 x 64 f16 blocked layout and a shared encoding of ``tile``."""
    regs, smem = tmp_path / "r.ttgir", tmp_path / "s.ttgir"
    regs.write_text(BLOCKED.format(**blocked, rows=64, cols=64), encoding="utf-8")
    smem.write_text(SHARED[shared] + f"%a = ttg.local_alloc : () -> !ttg.memdesc<{tile}xf16, #s, #smem>\n",
                    encoding="utf-8")
    return str(regs), str(smem)


def test_banks_from_registers_store_an_accumulator_tile_without_conflicts(capsys, tmp_path):
    regs, smem = _files(tmp_path, ACCUMULATOR_STORE, "nvmma128")
    rc, out, err = cli(capsys, "banks", "--triton", smem, "--registers", regs, "--access", "st.shared")
    assert rc == 0 and err == "", err
    assert out.startswith("lane addresses derived from the register layout as Triton lowers it: 8 elements (16 "
                          "bytes) per lane per access, st.shared.v4.b32; 4 instructions per warp")
    assert "16 instructions, 32 addressing lanes" in out and "conflict_free  ok    (z3 proved, enumeration proved)" in out
    rc, out, err = cli(capsys, "banks", "--triton", smem, "--registers", regs, "--access", "st.shared",
                       "--format", "json")
    doc = json.loads(out)
    assert doc["addresses"] == {"derived_from": "registers", "elements_per_access": 8, "access": "st.shared.v4.b32",
                                "instructions_per_warp": 4, "warps": 4, "registers": 32}


def test_banks_from_registers_name_the_conflicting_instruction(capsys, tmp_path):
    regs, smem = _files(tmp_path, COLUMN_STORE, "plain")
    rc, out, err = cli(capsys, "banks", "--triton", smem, "--registers", regs, "--access", "ld.shared")
    assert rc == 1 and err == ""
    assert "conflict_free  FAIL  (z3 refuted, enumeration refuted): instruction = 0: at origin (0, 0), lanes 0 and " \
           "1 (cells (0, 0) and (8, 0)) address 0x0 and 0x400: both bank 0" in out, out
    assert "bank conflicts: degree 8" in out


def test_banks_from_registers_refuse_what_triton_would_not_lower(capsys, tmp_path):
    regs, smem = _files(tmp_path, ACCUMULATOR_STORE, "plain", tile="32x64")
    for argv, words in (((), "covers 64 x 64, more than the shared tile (32 x 64)"),
                        (("--addresses", regs), "--addresses and --registers")):
        rc, out, err = cli(capsys, "banks", "--triton", smem, "--registers", regs, "--access", "st.shared", *argv)
        assert rc == 2 and out == "" and words in err, err
    regs, smem = _files(tmp_path, ACCUMULATOR_STORE, "plain")
    rc, out, err = cli(capsys, "banks", "--triton", smem, "--registers", regs, "--access", "ld.shared.v2")
    assert rc == 2 and "the vector width is derived" in err


@pytest.mark.parametrize("seed", range(4))
def test_banks_from_registers_agree_with_a_plain_count(seed):
    """Generated blocked layouts into three shared layouts: the vector width and the conflict degree as a plain
    Python count finds them, and both engines agree on every property."""
    rng = random.Random(seed)
    for _ in range(3):
        text, rows, cols = _blocked(rng)
        regs = parse_triton(text)
        for kind in SHARED:
            if kind == "nvmma128" and cols < 64:
                continue
            lay = _shared(kind, rows, cols)
            r = banks_registers.check_register_banks(regs, lay, "st")
            vec, degree = plain_degree(regs, lay)
            assert (r.derivation.vec, r.banks.degree) == (vec, degree), (text, kind)
            for c in r.banks.checks:
                assert c.status in ("proved", "refuted") and c.engines["z3"] == c.engines["enumeration"], (c, text)
            assert (r.banks.get("conflict_free").status == "proved") == (degree == 1)


# ----------------------------------------------------------------------------- ingest of the shared-memory pages

def _need_docs() -> None:
    if not DOCS.is_dir():
        pytest.skip(f"no doc pages at {DOCS}")


def test_ingest_of_the_wgmma_shared_memory_page_writes_its_maps(capsys, tmp_path):
    _need_docs()
    page = str(DOCS / WGMMA_PAGE)
    out = tmp_path / "specs"
    rc, stdout, err = cli(capsys, "ingest", page, "--out", str(out))
    assert rc == 0 and stdout == f"wrote {out / 'wgmma.shared.toml'}\n", (rc, stdout, err)
    assert "warning: smem-injective" in err and "0 unexpected finding(s)" in err
    rc, check_out, _ = cli(capsys, "check", page)
    rc2, spec_out, _ = cli(capsys, "check", str(out))
    assert rc == rc2 == 0
    # The page's check also judges the page's statements (its counts, shapes, bit fields); the written spec holds
    # only the maps, so the two summaries differ by that count and agree on the maps and the findings.
    assert check_out.splitlines()[-1] == \
        "0 layouts, 21 maps, 0 instructions, 282 statements: 4 findings (4 known errata), 0 unexpected"
    assert spec_out.splitlines()[-1] == \
        "0 layouts, 21 maps, 0 instructions: 4 findings (4 known errata), 0 unexpected"


def test_every_ingested_map_is_the_page_s_map():
    """The written formulas read back to the page's syntax trees, and each written map is the page's, both engines."""
    _need_docs()
    from verify.catalog.emit import emit_maps_toml
    from verify.catalog.shared_pages import read
    from verify.catalog.spec import load_spec_text
    from verify.checks.maps import same
    specs, findings = read([str(DOCS / WGMMA_PAGE), *(str(DOCS / p) for p in TC_PAGES)])
    assert {s.instruction for s in specs} == {"wgmma", "tcgen05"}
    n = 0
    for spec in specs:
        back = {m.id: m for m in load_spec_text(emit_maps_toml(spec), f"{spec.instruction}.shared.toml").maps}
        for m in spec.maps:
            b = back[m.id]
            assert b.map.formula == m.map.formula and b.map.inputs == m.map.inputs and b.params == m.params
            assert (b.kind, b.checks, b.expect, b.unit, b.provenance.source.line) == (m.kind, m.checks, m.expect, m.unit,
                                                                         m.provenance.source.line)
            r = same(m.map, b.map, check="equal")
            assert r.status == "proved" and r.engines == {"z3": "proved", "enumeration": "proved"}, (m.id, r.message)
            n += 1
    assert n == 30


def test_ingest_of_a_page_with_neither_section_still_says_so(capsys, tmp_path):
    p = tmp_path / "page.md"
    p.write_text("# Something else\n\nNo layouts here.\n", encoding="utf-8")
    rc, out, err = cli(capsys, "ingest", str(p))
    assert rc == 2 and out == "" and "no shared-memory layout section" in err
