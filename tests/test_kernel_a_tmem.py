"""``tcgen05.mma`` with A in Tensor Memory (``[d-tmem], [a-tmem], b-desc, idesc, ...``): A's element ``(m, k)`` read
where the catalog's packing of A (``tcgen05.packing.A.b16.packed``: lane m, column k / 2, the lower k in the lower
half) puts it, relative to the A address, in the MMA pipeline's view of Tensor Memory.  Fixture:
``examples/kernels/tcgen05_a_tmem.cu`` (A written by ``tcgen05.st.32x32b.x16``, B in shared memory)."""
from __future__ import annotations


import pytest

from kernel_plants import agree, first, KERNELS, mutant, nvcc_makes, only_finding
from verify.errors import SpecError
from verify.kernel.tmem_a import tmem_a_cells
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

BASE = "tcgen05_a_tmem"
IDESC = 134742032  # kind::f16, D f32, A and B f16 K-major, N = 32, M = 128


def _mma_lines(lines: list[str]) -> list[int]:
    return [k for k, s in enumerate(lines) if s.startswith("tcgen05.mma")]


def test_the_catalogs_packing_of_a_is_what_is_read():
    """The cells come from the catalog's spec, both faces alike: (m, k) at lane m, column k // 2, byte 2 * (k % 2)."""
    vec, one = tmem_a_cells(16, 128, 16, "vector"), tmem_a_cells(16, 128, 16, "scalar")
    assert vec.layout_id == "tcgen05.packing.A.b16.packed"
    for a, b in ((vec.lane, one.lane), (vec.col, one.col), (vec.byte, one.byte)):
        assert (a == b).all()
    assert (int(vec.lane[5, 3]), int(vec.col[5, 3]), int(vec.byte[5, 3])) == (5, 1, 2)
    m64 = tmem_a_cells(16, 64, 16)  # M = 64: the same columns, rows at Layout F's lanes
    assert (m64.col == vec.col[:64]).all() and int(m64.lane[16, 3]) == 32


def test_the_a_in_tensor_memory_kernel_is_proved():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 2  # two k-blocks


def test_as_column_off_by_one_k_block_is_reported_at_d_0_0():
    """The planted -DA_COL_OFF: each MMA's A address 8 columns (one k-block of 16 f16) on: the first MMA multiplies
    A's k 16-31 with B's k 0-15 (D[0, 0] first), the second reads columns 48-55, which nothing wrote."""
    r = verify(str(KERNELS / f"{BASE}_col_off.toml"))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert (wrong.element, wrong.count) == ("D[0, 0]", 128 * 32)
    assert "has A[0, 16] * B[0, 0] (k 0 of B meets k 16 of A)" in wrong.words
    unread = next(f for f in r.findings if f.kind == "unwritten_read")
    assert "reads A from Tensor Memory lane 0, column 48, which nothing wrote" in unread.words
    text = kernel_text(r)
    assert ("multiplied A[0, 16], element (0, 0) of its A tile: the A address 0x00000028 (Tensor Memory lane 0, "
            "column 40) reads it from Tensor Memory lane 0, column 40") in text
    assert "tcgen05.st.32x32b.x16 at line 229 [tcgen05_a_tmem.cu:59] (thread 0) wrote it to Tensor Memory lane 0, " \
        "column 40" in text


def test_a_written_for_half_the_lanes_is_reported_at_row_64():
    """The planted -DHALF_A: warps 2 and 3 never write their rows of A: D's rows 64-127 have undefined factors, the
    first wrong element D[64, 0]; the chain names the cell the catalog's packing puts A[64, 0] in."""
    r = verify(str(KERNELS / f"{BASE}_half.toml"))
    assert r.status == "refuted"
    agree(r)
    wrong = next(f for f in r.findings if f.kind == "wrong_element")
    assert (wrong.element, wrong.count) == ("D[64, 0]", 64 * 32)
    unread = next(f for f in r.findings if f.kind == "unwritten_read")
    assert "reads A from Tensor Memory lane 64, column 32, which nothing wrote" in unread.words
    assert unread.count == 64 * 16
    assert ("multiplied an undefined value, element (64, 0) of its A tile: the A address 0x00000020 (Tensor Memory "
            "lane 0, column 32) reads it from Tensor Memory lane 64, column 32") in kernel_text(r)


def test_the_second_mma_reading_the_first_k_block_of_a(tmp_path):
    """The second MMA given the first one's A address: D[0, 0] has A[0, 0] * B[16, 0], lacks A[0, 16] * B[16, 0]."""
    def change(lines: list[str]) -> None:
        k = _mma_lines(lines)[1]
        lines[k] = lines[k].replace("[%r102]", "[%r98]")
    r = verify(mutant(tmp_path, BASE, change))
    f = only_finding(r, "D[0, 0]", 128 * 32)
    assert "A[0, 0] * B[16, 0]" in f.words and "lacks A[0, 16] * B[16, 0]" in f.words


def test_the_a_address_computed_another_way_stays_proved(tmp_path):
    """Meaning-preserving: the second k-block's A address as the first's plus 8 columns (not D's plus 40)."""
    def change(lines: list[str]) -> None:
        k = first(lines, r"add\.s32 \t%r102, %r13, 40;")
        lines[k] = "\tadd.s32 \t%r102, %r98, 8;"
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_the_mma_reading_a_the_tcgen05_st_still_writes(tmp_path):
    """tcgen05.wait::st removed: the MMA reads A's cells while the tcgen05.st may still write them."""
    def change(lines: list[str]) -> None:
        lines[first(lines, r"tcgen05\.wait::st")] = ""
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "refuted"
    f = next(f for f in r.findings if f.kind == "tmem_store_in_flight")
    assert "reads A from Tensor Memory lane 0, column 32 a tcgen05.st still writes" in f.words


def test_a_transposed_a_in_tensor_memory_is_an_error(tmp_path):
    """A in Tensor Memory is K-major: an instruction descriptor with A's transpose bit (15) is an error at the MMA."""
    def change(lines: list[str]) -> None:
        k = first(lines, rf"mov\.b32 \t%r103, {IDESC};")
        lines[k] = f"\tmov.b32 \t%r103, {IDESC | 1 << 15};"
    with pytest.raises(SpecError, match=r"A in Tensor Memory is K-major; the instruction descriptor 0x08088010 "
                                        r"transposes A"):
        verify(mutant(tmp_path, BASE, change))


def test_an_a_of_sub_byte_elements_is_refused(tmp_path):
    """kind::f8f6f4 with E2M1 A and B (type code 5): 4-bit elements in Tensor Memory are not executed, so the MMA
    is refused at its line (8-bit, 32-bit and M = 64 A in Tensor Memory: tests/test_kernel_a_tmem_kinds.py)."""
    def change(lines: list[str]) -> None:
        for k in _mma_lines(lines):
            lines[k] = lines[k].replace("kind::f16", "kind::f8f6f4")
        k = first(lines, rf"mov\.b32 \t%r103, {IDESC};")
        lines[k] = f"\tmov.b32 \t%r103, {IDESC | 5 << 7 | 5 << 10};"
    with pytest.raises(SpecError, match=r":\d+:\d+: .*A in Tensor Memory: no catalog packing of 4-bit A elements in Tensor Memory"):
        verify(mutant(tmp_path, BASE, change))


@pytest.mark.slow
@pytest.mark.parametrize("name,defines", [(BASE, []), (f"{BASE}_col_off", ["-DA_COL_OFF"]),
                                          (f"{BASE}_half", ["-DHALF_A"])])
def test_the_a_tmem_kernel_compiles_to_the_fixture(tmp_path, name, defines):
    """nvcc here makes the committed PTX (its code), and that PTX is verified (above)."""
    nvcc_makes(tmp_path, BASE, name, defines)
