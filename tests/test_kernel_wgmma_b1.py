"""``wgmma.mma_async`` on packed ``.b1`` (``.and.popc``) in ``ptx-verify kernel``: the hand-written kernel of
examples/kernels/wgmma_b1.cu (m64n8k256, A's packed words in the A register fragment for the first k-step, A copied
byte by byte to shared memory behind a descriptor for the second; B through descriptors) is proved with A and B
declared as packed tensors, each element read at the bit address the descriptor model gives it; changes planted in
its PTX (a descriptor's LBO and SBO swapped, two A registers swapped, the bytes of a packed A register permuted:
its elements' k order wrong) are each reported at the right first wrong element; a shift by a part of a byte is an
error at its line, ``.xor.popc`` is refused at its line (not a sum of products), and changes that keep the meaning
(a register renamed, the SBO of a B tile of one core-matrix row group) stay proved.

The numeric engine's random values are 1 bit wide here, so a wrong sum can equal the right one by chance: it must
find a subset of the symbolic engine's wrong elements, and the first of them (the verdict checks this)."""
from __future__ import annotations

import re

import pytest

from kernel_plants import KERNELS, agree, first, mutant, nvcc_makes, replaced
from verify.errors import SpecError
from verify.kernel.fragments import wgmma_form
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

BASE = "wgmma_b1"
RS, SS = 602, 622  # the PTX lines of the two wgmma.mma_async: A from registers, A through a descriptor
FIELDS = 68720001024  # the descriptors' LBO 128 B (field 8) and SBO 256 B (field 16), bits 16-29 and 32-45
SWAPPED = (8 << 32) | (16 << 16)


def test_the_packed_warpgroup_kernel_is_proved():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)
    assert r.engines["symbolic"]["wrong_elements"] == r.engines["numeric"]["wrong_elements"] == 0
    assert r.engines["symbolic"]["mma"] == 4 * 2  # 4 CTAs of one warpgroup, K = 512 in two steps of 256


def test_the_fixture_lines_are_the_wgmmas():
    lines = (KERNELS / f"{BASE}.ptx").read_text(encoding="utf-8").split("\n")
    assert "b1.b1.and.popc" in lines[RS - 1] and "{%r352, %r353, %r354, %r355}, %rd26, p;" in lines[RS - 1]
    assert "b1.b1.and.popc" in lines[SS - 1] and "%rd27, %rd28, p;" in lines[SS - 1]


@pytest.mark.slow
def test_the_fixture_is_what_nvcc_makes(tmp_path):
    nvcc_makes(tmp_path, BASE, BASE, [], arch="sm_90a")


@pytest.mark.parametrize("n", [8, 24, 64, 256])
def test_the_catalog_form_is_packed_32_to_a_register(n):
    f = wgmma_form(f"m64n{n}k256", "s32", "b1", "b1")
    assert (f.shape, f.a_bits, f.b_bits, f.a.registers, f.a.per_register, f.a.element_bits) == \
        ((64, n, 256), 1, 1, 4, 32, 1)
    assert f.d.registers == n // 2
    g = wgmma_form(f"m64n{n}k256", "s32", "b1", "b1", "scalar")  # the numeric engine's one-point face agrees
    for x, y in ((f.a, g.a), (f.d, g.d)):
        assert (x.row == y.row).all() and (x.col == y.col).all()



def _after_first_load(extra: str):
    def change(lines: list[str]) -> None:
        lines.insert(first(lines, r"ld\.global\.u32\s+%r352,") + 1, f"\t{extra}")
    change.__doc__ = f"``{extra}`` after the load of A's register a0"
    return change


PLANTED = [
    # A's descriptor (second k-step) with its LBO and SBO swapped: A tile element (0, 128) read from row 8's bytes
    ("lbo_sbo_a", replaced(r"or\.b64\s+%rd27, %rd35, ", str(FIELDS), str(SWAPPED)), 2048,
     "expected sum over k of A[0, k] * B[0, k]; has A[8, 256] * B[0, 384] (A's m is 8, the element's is 0)", SS,
     "multiplied A[8, 256], element (0, 128) of its A tile: the A descriptor 0x0000000800100000 (start 0x0, LBO 256 B "
     "(field 16), SBO 128 B (field 8), base offset 0, swizzle none) reads it"),
    # the first wgmma's A registers a0 and a1 (rows g and g + 8) trade places
    ("swap_a_registers", replaced(r"wgmma\.mma_async", "{%r352, %r353,", "{%r353, %r352,"), 2048,
     "expected sum over k of A[0, k] * B[0, k]; has A[8, 0] * B[0, 0] (A's m is 8, the element's is 0)", RS,
     "(warpgroup 0, thread 0, register a0 = %r353, element 0) multiplied A[8, 0]"),
    # a0's bytes swapped in pairs: k 0..7 <-> k 8..15 of the first k-step (the bit positions of 16 elements wrong)
    ("bytes_permuted", _after_first_load("prmt.b32 %r352, %r352, 0, 0x2301;"), 1024,
     "expected sum over k of A[0, k] * B[0, k]; has A[0, 8] * B[0, 0] (k 0 of B meets k 8 of A)", RS + 1,
     "(warpgroup 0, thread 0, register a0 = %r352, element 0) multiplied A[0, 8]"),
]


@pytest.mark.parametrize("name,change,count,words,line,link", PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_change_is_the_first_wrong_element(tmp_path, name, change, count, words, line, link):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r, numeric_subset=True)
    (f,) = r.findings
    assert (f.kind, f.element, f.count) == ("wrong_element", "C[0, 0]", count), kernel_text(r)
    assert f.words.startswith(words), f.words
    assert (f.chain[0].opcode, f.chain[1].opcode, f.chain[1].line) == ("st.global", "wgmma.mma_async.m64n8k256",
                                                                        line), kernel_text(r)
    assert link in f.chain[1].words, f.chain[1].words
    assert f.chain[1].source.endswith(f"wgmma_b1.cu:{52 if line <= RS + 1 else 56}")


def rename_register(lines: list[str]) -> None:
    """%r352 (A's register a0) renamed %r500 everywhere (a register the function now declares)."""
    k = first(lines, r"\.reg \.b32\s+%r<")
    lines[k] = re.sub(r"%r<\d+>", "%r<501>", lines[k])
    for n, s in enumerate(lines):
        lines[n] = re.sub(r"%r352\b", "%r500", s)


# the first B tile has 8 rows (N = 8), one core-matrix row group: its SBO (the next 8 rows) is never used
unused_sbo = replaced(r"or\.b64\s+%rd26, %rd34, ", str(FIELDS), str((64 << 32) | (8 << 16)))


@pytest.mark.parametrize("change", [rename_register, unused_sbo], ids=["rename_register", "unused_sbo"])
def test_a_change_that_keeps_the_meaning_stays_proved(tmp_path, change):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)


def test_a_shift_by_part_of_a_byte_is_an_error_at_its_line(tmp_path):
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, BASE, _after_first_load("shl.b32 %r352, %r352, 1;")))
    assert "shl.b32 shifts data by 1 bits (thread 0): the executor follows data only in whole bytes" in str(e.value)
    assert "k.ptx:578:" in str(e.value)


def test_xor_popc_is_refused_at_its_line(tmp_path):
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, BASE, lambda lines: [lines.__setitem__(k, s.replace(".and.popc", ".xor.popc"))
                                                     for k, s in enumerate(lines)] and None))
    assert f"k.ptx:{RS}:" in str(e.value)
    assert ".b1 is executed with .and.popc only: popc(a XOR b) is not a sum of products" in str(e.value)
