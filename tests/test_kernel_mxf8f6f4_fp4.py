"""``tcgen05.mma`` ``kind::mxf8f6f4`` on 4-bit operands: e2m1 elements in shared memory as the catalog's 8-bit
containers (``tcgen05.packing.smem.mxf8f6f4.b4``: the descriptor model addresses each element as an 8-bit container,
the 16 elements of a 16-byte unit packed in its low 8 bytes, the lower container in the lower nibble, then 8 bytes of
padding).  The fixture is Triton's ``tl.dot_scaled`` with A ``"e2m1"`` and B ``"e4m3"`` for sm_100
(``triton_sm100_mixed``, made by make_fixtures.py; A copied 8 bytes at a time by cp.async into the units' low
halves): proved, both engines agreeing; changes planted in its PTX (the second MMA's A descriptor one unit on, the
descriptors' SBO halved, a copy put in the padding half of its units) are each reported at the right first wrong
element with its chain; A's type made 6-bit in the instruction descriptor (``e3m2``: elements across two bytes) is
refused at its line; a register renamed stays proved.

The numeric engine's random e2m1 values are 4 bits wide, so a wrong sum can equal the right one by chance: it must
find a subset of the symbolic engine's wrong elements, and the first of them (the verdict checks this)."""
from __future__ import annotations

import re

import numpy as np
import pytest

from kernel_plants import KERNELS, agree, first, mutant, nvcc_makes, replaced
from verify.errors import SpecError
from verify.kernel.fragments import smem_containers
from verify.kernel.frontdoor import verify
from verify.kernel.subbyte import smem_bits
from verify.layout.descriptor import decode_instruction
from verify.outputs.kernel import kernel_text

BASE = "triton_sm100_mixed"
IDESC = (144769664, 681640592, 1218511520, 1755382448)  # the four MMAs of a 128-wide K tile: K = 32, SF ids 0..3
MMA_LINES = (860, 870, 879, 888)


def test_the_fixture_is_proved_by_both_engines():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    assert r.findings == ()
    agree(r, numeric_subset=True)
    assert r.engines["symbolic"]["wrong_elements"] == r.engines["numeric"]["wrong_elements"] == 0
    assert r.engines["symbolic"]["mma"] == 8  # two K tiles of four MMAs


def test_the_fixture_is_triton_s_kind_mxf8f6f4_on_e2m1_by_e4m3():
    lines = (KERNELS / f"{BASE}.ptx").read_text(encoding="utf-8").split("\n")
    for line, v in zip(MMA_LINES, IDESC):
        assert "tcgen05.mma.cta_group::1.kind::mxf8f6f4.block_scale.block32" in lines[line - 1]
        d = decode_instruction("mxf8f6f4", v)
        assert (d.atype, d.btype, d.m, d.n, d.k) == ("e2m1", "e4m3", 128, 128, 32)
    # A's copies: 8 bytes (16 e2m1) into each 16-byte unit, eight a thread per stage (two prologue loads, one in
    # the loop)
    assert len(re.findall(r"cp\.async\.ca\.shared\.global \[ %r\d+ \+ 0 \], \[ %rd\d+ \+ 0 \], 0x8,",
                          "\n".join(lines))) == 3 * 8


@pytest.mark.parametrize("face", ["vector", "scalar"])
def test_the_containers_are_the_catalog_s(face):
    lid, b4 = smem_containers(4, face)
    assert lid == "tcgen05.packing.smem.mxf8f6f4.b4" and list(b4) == [4 * c for c in range(16)]
    lid, b6 = smem_containers(6, face)
    assert lid == "tcgen05.packing.smem.mxf8f6f4.b6" and list(b6) == [6 * c for c in range(16)]
    assert (smem_bits("e2m1"), smem_bits("e3m2"), smem_bits("e2m3"), smem_bits("e4m3"), smem_bits("f16")) == \
        (4, 6, 6, 8, 16)



PLANTED = [
    # the second MMA's A descriptor start 16 B on instead of 32 B: one 16-byte unit (16 containers), not two
    ("start_a", replaced(r"add\.s32\s+%r223, %r220, 2;", "2;", "1;"), 16384,
     "expected sum over k of A[0, k] * B[k, 0] * SA[0, k / 32] * SB[0, k / 32]; has A[0, 16] * B[32, 0] * SA[0, 1] "
     "* SB[0, 1] (k 32 of B meets k 16 of A)", ("multiplied B[32, 0], element (0, 0) of its B tile", 870)),
    # the descriptors' SBO 1024 B made 512 B (A's and B's: one register holds both high words)
    ("sbo", replaced(r"mov\.b32\s+%r222, 1073758272;", "1073758272", "1073758240"), 16384,
     "expected sum over k of A[0, k] * B[k, 0] * SA[0, k / 32] * SB[0, k / 32]; has A[0, 8] * B[4, 0] * SA[0, 0] * "
     "SB[0, 0] (k 4 of B meets k 8 of A)", ("SBO 512 B (field 32)", 860)),
]


@pytest.mark.parametrize("name,change,count,words,link", PLANTED, ids=[p[0] for p in PLANTED])
def test_a_planted_change_is_the_first_wrong_element(tmp_path, name, change, count, words, link):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r, numeric_subset=True)
    (f,) = r.findings
    assert (f.kind, f.element, f.count) == ("wrong_element", "C[0, 0]", count), kernel_text(r)
    assert f.words.startswith(words), f.words
    mma = next(c for c in f.chain if c.opcode.startswith("tcgen05.mma"))
    assert link[0] in mma.words and mma.line == link[1], kernel_text(r)


def test_a_copy_into_the_padding_half_is_an_unread_and_a_wrong_element(tmp_path):
    """Thread 0's first copy of A (row 0, k 0..15) written 8 bytes on, into its unit's padding: the MMA reads the
    unit's low half, which nothing wrote."""
    r = verify(mutant(tmp_path, BASE, replaced(r"cp\.async\.ca\.shared\.global \[ %r30 \+ 0 \]", "%r30 + 0", "%r30 + 8")))
    assert r.status == "refuted", kernel_text(r)
    agree(r, numeric_subset=True)
    kinds = {f.kind: f for f in r.findings}
    assert set(kinds) == {"unwritten_read", "wrong_element"}, kernel_text(r)
    assert "tcgen05 reads shared 0x4, which nothing wrote" in kinds["unwritten_read"].words
    f = kinds["wrong_element"]
    assert (f.element, f.count) == ("C[0, 0]", 2048)
    assert "lacks A[0, 0] * B[0, 0] * SA[0, 0] * SB[0, 0]" in f.words
    assert "has an undefined value" in f.words


def test_a_6_bit_type_is_refused_at_its_line(tmp_path):
    """A's type in the first instruction descriptor made e3m2: 16 six-bit elements in 12 bytes, across bytes."""
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, BASE, replaced(r"mov\.b32\s+%r210, 144769664;", "144769664", "144769536")))
    assert f"k.ptx:{MMA_LINES[0]}:" in str(e.value)
    assert ("A's 6-bit elements are packed 16 to a 16-byte unit (tcgen05.packing.smem.mxf8f6f4.b6): container 1's "
            "element is bits 6-11, across two bytes; the executor follows data in whole bytes") in str(e.value)


def rename_register(lines: list[str]) -> None:
    """%r220 (the A descriptor's start field) renamed %r900 everywhere (a register the function now declares)."""
    k = first(lines, r"\.reg \.b32\s+%r<")
    n = int(re.search(r"%r<(\d+)>", lines[k]).group(1))
    assert n < 900
    lines[k] = re.sub(r"%r<\d+>", "%r<901>", lines[k])
    for j, s in enumerate(lines):
        lines[j] = re.sub(r"%r220\b", "%r900", s)


def test_a_register_renamed_stays_proved(tmp_path):
    r = verify(mutant(tmp_path, BASE, rename_register))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)


def test_the_containers_are_read_only_tables():
    _, b4 = smem_containers(4)
    assert isinstance(b4, np.ndarray) and not b4.flags.writeable


# ----------------------------------------------------------------------------- kind::f8f6f4 (tcgen05_fp4.cu)

FP4 = "tcgen05_fp4"
FP4_FIELDS = (1 << 46) | (32 << 32) | (8 << 16)  # the descriptors' version 1, SBO 512 B, LBO 128 B


def test_the_unscaled_fp4_kernel_is_proved():
    """kind::f8f6f4 on e2m1 x e4m3 with no block scaling: A's packed bytes copied into the low halves of its
    containers' 16-byte units by the kernel itself."""
    lines = (KERNELS / f"{FP4}.ptx").read_text(encoding="utf-8").split("\n")
    assert sum("tcgen05.mma.cta_group::1.kind::f8f6f4 [%r12]" in s for s in lines) == 2
    d = decode_instruction("f8f6f4", 134742672)
    assert "134742672;" in "\n".join(lines) and (d.atype, d.btype, d.m, d.n, d.k) == ("e2m1", "e4m3", 128, 32, 32)
    r = verify(str(KERNELS / f"{FP4}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)
    assert r.engines["symbolic"]["wrong_elements"] == r.engines["numeric"]["wrong_elements"] == 0
    assert r.engines["symbolic"]["mma"] == 2


def _swap_bytes_0_1(lines: list[str]) -> None:
    """Thread r's packed bytes 0 and 1 of A's row (k 0, 1 and k 2, 3) loaded the other way round."""
    replaced(r"ld\.global\.u8\s+%r31, \[%rd7\+1\];", "[%rd7+1]", "[%rd7]")(lines)
    replaced(r"ld\.global\.u8\s+%r32, \[%rd7\];", "[%rd7]", "[%rd7+1]")(lines)


FP4_PLANTED = [
    # the first MMA's A descriptor with its LBO and SBO swapped: A tile element (0, 16) read from row 8's unit
    ("lbo_sbo_a", replaced(r"or\.b64\s+%rd10, %rd14, ", str(FP4_FIELDS), str((1 << 46) | (8 << 32) | (32 << 16))),
     "expected sum over k of A[0, k] * B[0, k]; has A[8, 0] * B[0, 16] (A's m is 8, the element's is 0)",
     "multiplied A[8, 0], element (0, 16) of its A tile: the A descriptor 0x0000400800200000 (start 0x0, LBO 512 B "
     "(field 32), SBO 128 B (field 8)"),
    # two packed bytes of A swapped: the nibbles of k 0, 1 land where k 2, 3 belong
    ("bytes_swapped", _swap_bytes_0_1,
     "expected sum over k of A[0, k] * B[0, k]; has A[0, 2] * B[0, 0] (k 0 of B meets k 2 of A)",
     "multiplied A[0, 2], element (0, 0) of its A tile: the A descriptor 0x0000402000080000"),
]


@pytest.mark.parametrize("name,change,words,link", FP4_PLANTED, ids=[p[0] for p in FP4_PLANTED])
def test_a_planted_change_in_the_unscaled_kernel_is_the_first_wrong_element(tmp_path, name, change, words, link):
    r = verify(mutant(tmp_path, FP4, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r, numeric_subset=True)
    (f,) = r.findings
    assert (f.kind, f.element, f.count) == ("wrong_element", "D[0, 0]", 4096), kernel_text(r)
    assert f.words.startswith(words), f.words
    mma = next(c for c in f.chain if c.opcode.startswith("tcgen05.mma"))
    assert mma.line == 224 and link in mma.words, kernel_text(r)
    assert mma.source.endswith("tcgen05_fp4.cu:59")


def _rename_idesc(lines: list[str]) -> None:
    """%r94 (the instruction descriptor) renamed %r900 everywhere (a register the function now declares)."""
    k = first(lines, r"\.reg \.b32\s+%r<")
    lines[k] = re.sub(r"%r<\d+>", "%r<901>", lines[k])
    for j, t in enumerate(lines):
        lines[j] = re.sub(r"%r94\b", "%r900", t)


def test_a_register_renamed_in_the_unscaled_kernel_stays_proved(tmp_path):
    r = verify(mutant(tmp_path, FP4, _rename_idesc))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)


@pytest.mark.slow
def test_the_unscaled_fixture_is_what_nvcc_makes(tmp_path):
    nvcc_makes(tmp_path, FP4, FP4, [], arch="sm_100a")
