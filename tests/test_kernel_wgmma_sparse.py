"""``wgmma.mma_async.sp`` in ``ptx-verify kernel``: the hand-written 2:4 sparse warpgroup kernel
(examples/kernels/wgmma_sparse.cu, its PTX by make_fixtures.py; one k-step with A's stored elements in registers,
one with them compressed in shared memory behind a descriptor) is proved with A's structural zeros declared in the
launch; changes planted in its PTX (the sparsity selector naming the other thread pair, a metadata nibble changed,
a descriptor's LBO and SBO swapped, A's registers swapped) are each reported at the right first wrong element, an
invalid metadata value is an error naming it, and changes that keep the meaning stay proved; the same kernel on
.s8 (wgmma_sparse_s8.cu: m64n16k64, every thread's metadata, selector 0 only) likewise.  Both engines agree
on every verdict.  The executor's tabulation of every wgmma.sp kind of the catalog is the per-warp mma.sp one."""
from __future__ import annotations

import re
import shutil
import subprocess

import numpy as np
import pytest

from kernel_plants import agree, first, KERNELS, mutant, only_finding, ptx_code
from verify.errors import SpecError
from verify.kernel.fragments import NoLayout, sparse_mma_form, sparse_wgmma_form
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

BASE = "wgmma_sparse"
RS, SS = 624, 643  # the PTX lines of the two wgmma.mma_async.sp: A from registers, A through a descriptor
SWAPPED = (8 << 32) | (32 << 16)  # B's descriptor fields with LBO 512 B and SBO 128 B (the kernel's: LBO 128, SBO 512)


def test_the_sparse_warpgroup_kernel_is_proved():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 4 * 2  # 4 CTAs of one warpgroup, K = 64 in two steps of 32


def test_the_fixture_lines_are_the_wgmma_sp():
    lines = (KERNELS / f"{BASE}.ptx").read_text(encoding="utf-8").split("\n")
    assert "wgmma.mma_async.sp" in lines[RS - 1] and "{%r355, %r356, %r357, %r358}" in lines[RS - 1]
    assert "wgmma.mma_async.sp" in lines[SS - 1] and "%rd23, %rd24, %r365, 0, p, 1, 1, 0, 0;" in lines[SS - 1]


def test_the_structural_zeros_are_not_in_the_sum(tmp_path):
    """Declared dense, A's structural zeros are missing products: the first element lacks them."""
    r = verify(mutant(tmp_path, BASE, lambda lines: None,
                       lambda t: t.replace(", sparse = { chunk = 4, keep = [[0, 1], [1, 3]] }", "")))
    f = only_finding(r, "C[0, 0]", 4096)
    assert f.words.startswith("expected sum over k of A[0, k] * B[k, 0]; lacks A[0, 2] * B[2, 0], A[0, 3] * B[3, 0]")


def _each(pattern: str, old: str, new: str, every: bool = False):
    def change(lines: list[str]) -> None:
        for k, s in enumerate(lines):
            if re.search(pattern, s):
                assert old in s, (old, s)
                lines[k] = s.replace(old, new, 1)
                if not every:
                    return
    change.__doc__ = f"{old} -> {new} at {'every' if every else 'the first'} line matching {pattern}"
    return change


PLANTED = [
    # sparsity selector 1: the metadata of threads 2, 3 of each group of four (0xEEEEEEEE: indices 2, 3) is read
    ("selector", _each(r"wgmma\.mma_async\.sp", "%r365, 0, p", "%r365, 1, p", every=True), "C[0, 0]", 4096,
     "expected sum over k of A[0, k] * B[k, 0]; has A[0, 0] * B[2, 0] (k 2 of B meets k 0 of A)", RS,
     "(warpgroup 0, thread 0, register a0 = %r355: a stored element of row 0's chunk 0, placed at k 2 by the "
     "metadata %r365, thread 2, bits 0-3, selector 1) multiplied A[0, 0]"),
    # the same in the second wgmma only (A through the descriptor): the first k-step is right, the second wrong
    ("selector_shared_a", _each(r"wgmma\.mma_async\.sp.*%rd23", "%r365, 0, p", "%r365, 1, p"), "C[0, 0]", 4096,
     "expected sum over k of A[0, k] * B[k, 0]; has A[0, 32] * B[34, 0] (k 34 of B meets k 32 of A)", SS,
     "(warpgroup 0) multiplied A[0, 32], element (0, 2) of its A tile: the A descriptor"),
    # the even rows' metadata 0x44444444 made 0x44444484: nibble 1 (chunk 1 of thread 0, chunk 5 of thread 1) says
    # indices 0, 2: the kept element at k 5 is multiplied as k 6, in both k-steps
    ("metadata_nibble", _each(r"selp\.b32\s+%r394, 1145324612,", "1145324612", str(0x44444484)), "C[0, 0]", 1024,
     "expected sum over k of A[0, k] * B[k, 0]; has A[0, 5] * B[6, 0] (k 6 of B meets k 5 of A); A[0, 21] * B[22, 0]"
     " (k 22 of B meets k 21 of A); A[0, 37] * B[38, 0]", RS,
     "(warpgroup 0, thread 1, register a0 = %r355: a stored element of row 0's chunk 1, placed at k 6 by the metadata "
     "%r365, thread 0, bits 4-7, selector 0) multiplied A[0, 5]"),
    # B's descriptor of the first k-step with its LBO and SBO swapped: B's n 8 read as k 8
    ("lbo_sbo", _each(r"or\.b64\s+%rd22, %rd34, 137439477760", "137439477760", str(SWAPPED)), "C[0, 0]", 4096,
     "expected sum over k of A[0, k] * B[k, 0]; has A[0, 8] * B[0, 8] (B's n is 8, the element's is 0)", RS,
     "(warpgroup 0) multiplied B[0, 8], element (8, 0) of its B tile: the B descriptor 0x0000000800200000 (start 0x0, "
     "LBO 512 B (field 32), SBO 128 B (field 8), base offset 0, swizzle none) reads it from shared 0x200"),
    # A's descriptor with its LBO and SBO swapped: rows 8.. of the compressed tile read as its columns 8..
    ("lbo_sbo_a", _each(r"or\.b64\s+%rd23, %rd35, 68720001024", "68720001024", str((8 << 32) | (16 << 16))),
     "C[0, 0]", 4096, "expected sum over k of A[0, k] * B[k, 0]; has A[8, 32] * B[48, 0] (A's m is 8, the element's "
     "is 0)", SS, "multiplied A[8, 32], element (0, 16) of its A tile: the A descriptor 0x0000000800100080"),
    # the first wgmma's A registers a0 and a1 (rows g and g + 8) trade places
    ("swap_a_registers", _each(r"wgmma\.mma_async\.sp", "{%r355, %r356,", "{%r356, %r355,"), "C[0, 0]", 4096,
     "expected sum over k of A[0, k] * B[k, 0]; has A[8, 0] * B[0, 0] (A's m is 8, the element's is 0)", RS,
     "multiplied A[8, 0]"),
]


@pytest.mark.parametrize("name,change,element,count,words,line,link", PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_change_is_the_first_wrong_element(tmp_path, name, change, element, count, words, line, link):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    (f,) = r.findings
    assert (f.kind, f.element, f.count) == ("wrong_element", element, count), kernel_text(r)
    assert f.words.startswith(words), f.words
    assert (f.chain[0].opcode, f.chain[1].opcode, f.chain[1].line) == ("st.global", "wgmma.mma_async.sp.m64n16k32",
                                                                        line), kernel_text(r)
    assert link in f.chain[1].words, f.chain[1].words
    assert f.chain[1].source.endswith(f"wgmma_sparse.cu:{63 if line == RS else 68}")


def rename_register(lines: list[str]) -> None:
    """%r365 (the metadata) renamed %r500 everywhere (a register the function now declares)."""
    k = first(lines, r"\.reg \.b32\s+%r<")
    lines[k] = re.sub(r"%r<\d+>", "%r<501>", lines[k])
    for n, s in enumerate(lines):
        lines[n] = re.sub(r"%r365\b", "%r500", s)


def other_pair(lines: list[str]) -> None:
    """The metadata of the thread pair selector 0 does not name: 0xEEEEEEEE made 0xBBBBBBBB (never read)."""
    k = first(lines, r"selp\.b32\s+%r365, %r394, -286331154")
    lines[k] = lines[k].replace("-286331154", str(0xBBBBBBBB - (1 << 32)), 1)


def same_fields(lines: list[str]) -> None:
    """The first wgmma reads its metadata from a copy of the register (a mov just before it): the same fields."""
    k = first(lines, r"wgmma\.mma_async\.sp")
    lines[k] = lines[k].replace("%r365, 0, p", "%r501, 0, p", 1)
    lines.insert(k, "\tmov.b32 \t%r501, %r365;")
    d = first(lines, r"\.reg \.b32\s+%r<")
    lines[d] = re.sub(r"%r<\d+>", "%r<502>", lines[d])


@pytest.mark.parametrize("change", [rename_register, other_pair, same_fields])
def test_a_change_that_keeps_the_meaning_stays_proved(tmp_path, change):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


@pytest.mark.parametrize("value,words", [
    (0x44444440, "warpgroup 0's metadata for row 0, chunk 0 (thread 0, bits 0-3) is 0b0000, not a valid metadata "
     "value"),
    (0x4444F444, "warpgroup 0's metadata for row 0, chunk 3 (thread 0, bits 12-15) is 0b1111, not a valid metadata "
     "value"),
])
def test_an_invalid_metadata_value_is_an_error_naming_it(tmp_path, value, words):
    change = _each(r"selp\.b32\s+%r394, 1145324612,", "1145324612", str(value))
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, BASE, change))
    assert str(e.value).endswith(words), str(e.value)
    assert f"k.ptx:{RS}:" in str(e.value)


def test_undefined_metadata_is_an_error_naming_it(tmp_path):
    """The first wgmma reads its metadata from a register nothing wrote."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"\.reg \.b32\s+%r<")
        lines[k] = re.sub(r"%r<\d+>", "%r<501>", lines[k])
        k = first(lines, r"wgmma\.mma_async\.sp")
        lines[k] = lines[k].replace("%r365, 0, p", "%r500, 0, p")
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, BASE, change))
    assert str(e.value).endswith("warpgroup 0's metadata for row 0, chunk 0 (thread 0, bits 0-3) is undefined"), \
        str(e.value)
    assert f"k.ptx:{RS}:" in str(e.value)


def test_a_selector_the_kind_lacks_is_an_error(tmp_path):
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, BASE, _each(r"wgmma\.mma_async\.sp", "%r365, 0, p", "%r365, 2, p")))
    assert "sparsity selector 2 is not one of [0, 1]" in str(e.value) and f"k.ptx:{RS}:" in str(e.value)


# ----------------------------------------------------------------------------- the .s8 kind (m64nNk64, selector 0)

S8 = "wgmma_sparse_s8"
S8_RS, S8_SS = 578, 597


def test_the_s8_sparse_warpgroup_kernel_is_proved():
    r = verify(str(KERNELS / f"{S8}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)
    assert r.engines["symbolic"]["mma"] == 4 * 2


S8_PLANTED = [
    # the even rows' metadata nibble 1 (chunk 1 of the row the thread holds) says indices 0, 2
    ("metadata_nibble", _each(r"selp\.b32\s+%r360, -572662307, 1145324612", "1145324612", str(0x44444484)), 2048,
     "expected sum over k of A[0, k] * B[k, 0]; has A[0, 5] * B[6, 0] (k 6 of B meets k 5 of A); A[0, 37] * B[38, 0]",
     S8_RS, "placed at k 6 by the metadata %r360, thread 0, bits 4-7, selector 0) multiplied A[0, 5]"),
    # A's descriptor with its LBO and SBO swapped
    ("lbo_sbo_a", _each(r"or\.b64\s+%rd23, %rd36, 68720001024", "68720001024", str((8 << 32) | (16 << 16))), 4096,
     "expected sum over k of A[0, k] * B[k, 0]; has A[8, 64] * B[96, 0] (A's m is 8, the element's is 0)", S8_SS,
     "multiplied A[8, 64], element (0, 32) of its A tile: the A descriptor 0x0000000800100080"),
]


@pytest.mark.parametrize("name,change,count,words,line,link", S8_PLANTED, ids=[p[0] for p in S8_PLANTED])
def test_a_planted_change_in_the_s8_kernel(tmp_path, name, change, count, words, line, link):
    r = verify(mutant(tmp_path, S8, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r, numeric_subset=True)
    f = r.findings[0]
    assert (f.element, f.count) == ("C[0, 0]", count), kernel_text(r)
    assert f.words.startswith(words), f.words
    assert (f.chain[1].opcode, f.chain[1].line) == ("wgmma.mma_async.sp.m64n16k64", line)
    assert link in f.chain[1].words, f.chain[1].words


def test_the_e4m3_sparse_warpgroup_kernel_is_proved(tmp_path):
    """wgmma_sparse_s8.cu with -DE4M3 (m64n16k64 f32 += e4m3 x e4m3), and with a metadata nibble planted."""
    r = verify(str(KERNELS / "wgmma_sparse_e4m3.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)
    assert r.engines["symbolic"]["mma"] == 4 * 2
    r = verify(mutant(tmp_path, "wgmma_sparse_e4m3",
                      _each(r"selp\.b32\s+%r352, -572662307, 1145324612", "1145324612", str(0x44444484))))
    assert r.status == "refuted", kernel_text(r)
    agree(r, numeric_subset=True)
    assert (r.findings[0].element, r.findings[0].count) == ("C[0, 0]", 2048)
    assert r.findings[0].words.startswith("expected sum over k of A[0, k] * B[k, 0]; has A[0, 5] * B[6, 0]")


def test_the_s8_kind_has_selector_0_only(tmp_path):
    """Every thread supplies the .s8 kind's metadata: selector 1 is an error naming the catalog's layout."""
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, S8, _each(r"wgmma\.mma_async\.sp", "%r360, 0, p", "%r360, 1, p")))
    assert str(e.value).endswith("sparsity selector 1 is not one of [0] for wgmma.sp.m64nNk64.A.u8_s8"), str(e.value)
    assert f"k.ptx:{S8_RS}:" in str(e.value)


# ----------------------------------------------------------------------------- every wgmma.sp kind of the catalog

KINDS = [("m64n16k32", "m16n8k32", "f32", "f16"), ("m64n16k32", "m16n8k32", "f32", "bf16"),
         ("m64n8k16", "m16n8k16", "f32", "tf32"), ("m64n8k64", "m16n8k64", "f32", "e4m3"),
         ("m64n8k64", "m16n8k64", "f32", "e5m2"), ("m64n16k64", "m16n8k64", "s32", "s8"),
         ("m64n16k64", "m16n8k64", "s32", "u8")]


@pytest.mark.parametrize("face", ["vector", "scalar"])
@pytest.mark.parametrize("shape,per_warp,dtype,atype", KINDS, ids=[k[0] + "." + k[3] for k in KINDS])
def test_each_sparse_warpgroup_kind_is_the_per_warp_mma_sp(shape, per_warp, dtype, atype, face):
    """Per warp w, the stored A elements and the metadata layout the executor reads for wgmma.sp are the catalog's
    mma.sp ones with rows + 16 w (what the specs state), with the same valid fields and selectors."""
    w = sparse_wgmma_form(shape, dtype, atype, atype, face)
    s = sparse_mma_form(per_warp, dtype, atype, atype, dtype, face=face)
    assert w.a.row.shape == (128, s.a.row.shape[1])
    for warp in range(4):
        at = slice(32 * warp, 32 * warp + 32)
        assert np.array_equal(w.a.row[at], s.a.row + 16 * warp) and np.array_equal(w.a.col[at], s.a.col)
        assert np.array_equal(w.chunk[at], s.chunk) and np.array_equal(w.j[at], s.j)
        assert np.array_equal(w.meta_row[at], np.where(s.meta_row >= 0, s.meta_row + 16 * warp, -1))
        assert np.array_equal(w.meta_chunk[at], s.meta_chunk) and np.array_equal(w.selector[at], s.selector)
    assert (w.valid, w.selectors) == (s.valid, s.selectors)
    assert w.stored_cols * w.a_bits == 256  # every kind's compressed A row is 32 bytes


def test_a_sparse_kind_the_catalog_lacks_is_no_layout():
    with pytest.raises(NoLayout):
        sparse_wgmma_form("m64n16k32", "f32", "tf32", "tf32")
    with pytest.raises(NoLayout):
        sparse_wgmma_form("m64n8k16", "f32", "f16", "f16")


@pytest.mark.slow
@pytest.mark.parametrize("name,source,defines", [(BASE, f"{BASE}.cu", []), (S8, f"{S8}.cu", []),
                                                 ("wgmma_sparse_e4m3", f"{S8}.cu", ["-DE4M3"])])
def test_the_sparse_warpgroup_kernel_compiles_to_the_fixture(tmp_path, name, source, defines):
    """nvcc here makes the committed PTX (its code), and that PTX is proved (above)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc is not installed")
    shutil.copy(KERNELS / source, tmp_path / source)
    subprocess.run([nvcc, "-ptx", "-arch=sm_90a", "-lineinfo", *defines, source, "-o", "k.ptx"], cwd=tmp_path,
                   check=True)
    assert ptx_code((tmp_path / "k.ptx").read_text(encoding="utf-8")) == \
        ptx_code((KERNELS / f"{name}.ptx").read_text(encoding="utf-8"))
