"""``tcgen05.mma`` with A in Tensor Memory for the kinds of 32-bit and 8-bit elements and for M = 64: A's element
``(m, k)`` read where the catalog puts it, its column and slot by the catalog's packing of A of that width
(``tcgen05.packing.A.b32``: one ``tf32`` a column; ``tcgen05.packing.A.mxf8f6f4``: four 8-bit elements a column, the
lower k in the lower byte, for ``kind::f8f6f4`` and ``kind::i8`` too), its lane by the MMA's data path (Layout D for
M = 128; Layout F for M = 64: row m at lane m % 16 + 32 (m / 16), with A's lane alignment D's).  Fixtures:
``examples/kernels/tcgen05_a_tmem_kinds.cu`` compiled per kind (``-DKIND_TF32``/``-DKIND_E4M3``/``-DKIND_S8``,
``-DM64``)."""
from __future__ import annotations

import numpy as np
import pytest

from kernel_plants import agree, first, KERNELS, mutant, nvcc_makes, only_finding
from verify.errors import SpecError
from verify.kernel.fragments import NoLayout, datapath
from verify.kernel.frontdoor import verify
from verify.kernel.tmem_a import tmem_a_cells
from verify.outputs.kernel import kernel_text

SRC = "tcgen05_a_tmem_kinds"
PROVED = ["tf32", "e4m3", "s8", "tf32_m64", "e4m3_m64", "s8_m64"]


def _base(name: str) -> str:
    return f"tcgen05_a_tmem_{name}"


def _mma_lines(lines: list[str]) -> list[int]:
    return [k for k, s in enumerate(lines) if s.startswith("tcgen05.mma")]


@pytest.mark.parametrize("bits,lid,at", [(32, "tcgen05.packing.A.b32", (5, 0, 3, 3, 0)),
                                         (8, "tcgen05.packing.A.mxf8f6f4", (5, 0, 7, 1, 3)),
                                         (16, "tcgen05.packing.A.b16.packed", (5, 0, 3, 1, 2))])
def test_each_widths_packing_comes_from_the_catalog(bits, lid, at):
    """(m, k) at lane m, column k // (32 / bits), byte (k % (32 / bits)) x bits / 8: both faces alike."""
    k = 256 // bits
    vec, one = tmem_a_cells(bits, 128, k, "vector"), tmem_a_cells(bits, 128, k, "scalar")
    assert vec.layout_id == one.layout_id == lid
    for a, b in ((vec.lane, one.lane), (vec.col, one.col), (vec.byte, one.byte)):
        assert (a == b).all()
    r, lane_off, kk, col, byte = at
    assert (int(vec.lane[r, kk]), int(vec.col[r, kk]), int(vec.byte[r, kk])) == (r + lane_off, col, byte)
    assert sorted(set(vec.col.reshape(-1).tolist())) == list(range(8))  # one MMA's K: 8 columns, 32 bytes a row


@pytest.mark.parametrize("base", [0, 16])
def test_m64_rows_take_layout_fs_lanes(base):
    """M = 64: the packing's lane (row m, Layout D's) is placed by the catalog's Layout F at the lane alignment, lanes
    relative to the A address (whose lane holds the alignment): row m at m % 16 + 32 (m / 16)."""
    vec, one = tmem_a_cells(8, 64, 32, "vector", base=base), tmem_a_cells(8, 64, 32, "scalar", base=base)
    assert vec.layout_id == "tcgen05.packing.A.mxf8f6f4+tcgen05.datapath.F"
    assert (vec.lane == one.lane).all() and (vec.col == one.col).all() and (vec.byte == one.byte).all()
    dp = datapath(64, 8, 1, False, False, base)
    assert (vec.lane[:, 0] == dp.lane[:, 0] - base).all()
    assert [int(vec.lane[m, 0]) for m in (0, 15, 16, 17, 63)] == [0, 15, 32, 33, 111]
    assert np.unique(vec.lane).size == 64


def test_a_width_the_catalog_does_not_pack_is_refused():
    with pytest.raises(NoLayout, match="no catalog packing of 64-bit A"):
        tmem_a_cells(64, 128, 4)
    with pytest.raises(NoLayout, match=r"the MMA's A is 128 x 128"):
        tmem_a_cells(32, 128, 128)  # the catalog's b32 packing places 64 columns


@pytest.mark.parametrize("name", PROVED)
def test_the_kernel_is_proved(name):
    r = verify(str(KERNELS / f"{_base(name)}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 2  # two k-blocks of 32 bytes


@pytest.mark.parametrize("name,has,count", [("tf32_col_off", "has A[0, 1] * B[0, 0] (k 0 of B meets k 1 of A)", 4096),
                                            ("s8_col_off", "has A[0, 4] * B[0, 0] (k 0 of B meets k 4 of A)", 4096)])
def test_as_column_off_by_one_32_bit_column_is_reported_at_d_0_0(name, has, count):
    """The planted -DA_COL_OFF: each MMA's A address one 32-bit column on: one tf32 element, four 8-bit ones; the
    second MMA reads column 48, which nothing wrote."""
    r = verify(str(KERNELS / f"{_base(name)}.toml"))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert (wrong.element, wrong.count) == ("D[0, 0]", count)
    assert has in wrong.words
    unread = next(f for f in r.findings if f.kind == "unwritten_read")
    assert "reads A from Tensor Memory lane 0, column 48, which nothing wrote" in unread.words
    assert "the A address 0x00000021 (Tensor Memory lane 0, column 33) reads it from Tensor Memory lane 0, " \
        "column 33" in kernel_text(r)


def test_a_lane_quarter_swapped_is_reported_at_d_0_0():
    """The planted -DQUARTER_SWAP (M = 64): warp 0 writes rows 16-31 of A into its lanes 0-15, where Layout F puts
    rows 0-15: D[0, 0] has A[16, k] for A[0, k], every element of D wrong."""
    r = verify(str(KERNELS / f"{_base('tf32_m64_quarter')}.toml"))
    f = only_finding(r, "D[0, 0]", 64 * 32)
    assert "has A[16, 0] * B[0, 0] (A's m is 16, the element's is 0)" in f.words
    assert "lacks A[0, 0] * B[0, 0]" in f.words
    assert ("multiplied A[16, 0], element (0, 0) of its A tile: the A address 0x00000020 (Tensor Memory lane 0, "
            "column 32) reads it from Tensor Memory lane 0, column 32") in kernel_text(r)


def test_the_second_mma_reading_the_first_k_block_of_a(tmp_path):
    """M = 64, tf32: the second MMA given the first one's A address: D[0, 0] has A[0, 0] * B[8, 0]."""
    def change(lines: list[str]) -> None:
        k = _mma_lines(lines)[1]
        lines[k] = lines[k].replace("[%r54]", "[%r50]")
    r = verify(mutant(tmp_path, _base("tf32_m64"), change))
    f = only_finding(r, "D[0, 0]", 64 * 32)
    assert "A[0, 0] * B[8, 0]" in f.words and "lacks A[0, 8] * B[8, 0]" in f.words


def test_a_row_of_layout_f_read_from_the_other_lanes(tmp_path):
    """M = 64: A written to lanes 16-31 of each quarter (the tcgen05.st's address 16 lanes on) while the MMA reads
    A at lane alignment 0: lanes 0-15 of A were never written, D[0, 0] has undefined factors."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"add\.s32 \t%r31, %r16, 32;")
        lines[k] = f"\tadd.s32 \t%r31, %r16, {32 + (16 << 16)};"
    r = verify(mutant(tmp_path, _base("tf32_m64"), change))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert (wrong.element, wrong.count) == ("D[0, 0]", 64 * 32)
    unread = next(f for f in r.findings if f.kind == "unwritten_read" and "reads A" in f.words)
    assert "reads A from Tensor Memory lane 0, column 32, which nothing wrote" in unread.words


def test_the_a_address_computed_another_way_stays_proved(tmp_path):
    """Meaning-preserving: the second k-block's A address as the first's plus 8 columns (not D's plus 40)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"add\.s32 \t%r54, %r13, 40;")
        lines[k] = "\tadd.s32 \t%r54, %r50, 8;"
    r = verify(mutant(tmp_path, _base("tf32_m64"), change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_a_and_d_at_other_lane_alignments_is_an_error(tmp_path):
    """Layout F: A and D take the same lane alignment (9.7.16.10.5, lines 16-19): A's address 16 lanes on is an
    error at the MMA (exit 2), never executed at some other lanes."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"add\.s32 \t%r50, %r13, 32;")
        lines[k] = f"\tadd.s32 \t%r50, %r13, {32 + (16 << 16)};"
    with pytest.raises(SpecError, match=r":\d+:\d+: .*A in Tensor Memory at lane alignment 16 and D at 0: M = 64 "
                                        r"\(Layout F\) takes one lane alignment for A and D"):
        verify(mutant(tmp_path, _base("tf32_m64"), change))


def test_negated_a_stays_refused(tmp_path):
    """The instruction descriptor's negate-A bit (13): the sums of products carry no sign, so the MMA is refused."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"mov\.b32 \t%r55, 67635472;")
        lines[k] = f"\tmov.b32 \t%r55, {67635472 | 1 << 13};"
    with pytest.raises(SpecError, match=r":\d+:\d+: .*negated operands are not executed"):
        verify(mutant(tmp_path, _base("tf32_m64"), change))


@pytest.mark.slow
@pytest.mark.parametrize("name,defines", [
    ("tf32", ["-DKIND_TF32"]), ("tf32_col_off", ["-DKIND_TF32", "-DA_COL_OFF"]), ("e4m3", ["-DKIND_E4M3"]),
    ("s8", ["-DKIND_S8"]), ("s8_col_off", ["-DKIND_S8", "-DA_COL_OFF"]), ("tf32_m64", ["-DKIND_TF32", "-DM64"]),
    ("tf32_m64_quarter", ["-DKIND_TF32", "-DM64", "-DQUARTER_SWAP"]), ("e4m3_m64", ["-DKIND_E4M3", "-DM64"]),
    ("s8_m64", ["-DKIND_S8", "-DM64"])])
def test_the_kernels_compile_to_the_fixtures(tmp_path, name, defines):
    """nvcc here makes the committed PTX (its code), and that PTX is verified (above)."""
    nvcc_makes(tmp_path, SRC, _base(name), defines)
