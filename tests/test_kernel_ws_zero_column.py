"""``tcgen05.mma.ws`` with its zero-column mask descriptor (PTX ISA 9.1, 9.7.16.4.3, Table 45;
``verify.layout.zero_column``): the columns its mask names are multiplied as zeros (no products; their B is not
read), and MMA column n reads column n + shift of the B the descriptor describes.  Fixture:
``examples/kernels/tcgen05_ws_zero_column.cu`` (two M = 64 MMAs into the same D, with masks P then ~P, both shifting
B by 2: D = A * B)."""
from __future__ import annotations

import pytest

from kernel_plants import KERNELS, agree, mutant, nvcc_makes, replaced
from verify.kernel.frontdoor import verify
from verify.kernel.machine import KernelError
from verify.layout.zero_column import ZeroColumnMask, decode, mask
from verify.outputs.kernel import kernel_text

BASE = "tcgen05_ws_zero_column"
P = 145243841056736001   # start counts 1, 3; first spans 1, 0; skip span 2, use span 4; shift 2
Q = 144683094421537537   # ~P: start counts 1, 3; first spans 0, 1; skip span 4, use span 2; shift 2
LINE = 177               # the first MMA (mask P, in %rd12)


def _p(value: int):
    return replaced(r"mov\.b64 \t%rd12,", f"{P};", f"{value};")


def test_the_fixtures_masks_are_complementary():
    p, q = mask(decode(P), 64, 64), mask(decode(Q), 64, 64)
    assert all(a ^ b for a, b in zip(p, q))
    assert decode(P) == ZeroColumnMask((1, 3, 0, 0), (1, 0, 0, 0), 1, 2, 4, 2)
    assert "".join(map(str, p[:12])) == "110000011100"


def test_the_zero_column_kernel_is_proved():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 2


def test_the_mask_built_another_way_stays_proved(tmp_path):
    """P as its high word moved in and its low word or-ed on: the same value, the same kernel."""
    def change(lines: list[str]) -> None:
        k = next(k for k, s in enumerate(lines) if f"%rd12, {P};" in s)
        lines[k:k + 1] = [f"\tmov.b64 \t%rd12, {P >> 32 << 32};", f"\tor.b64  \t%rd12, %rd12, {P & 0xFFFFFFFF};"]
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def _first_wrong(r):
    assert r.status == "refuted"
    agree(r)
    return next(f for f in r.findings if f.kind == "wrong_element")


def test_a_skip_span_one_longer_is_reported_at_the_first_column_both_masks_zero(tmp_path):
    """P's runs of zeroed columns 4 long, not 3: column 2 (P's first span now covers columns 0-2) is one ~P zeroes
    too, so D[0, 2] has no products at all."""
    p = ZeroColumnMask((1, 3, 0, 0), (1, 0, 0, 0), 1, 3, 4, 2).encode()
    wrong = _first_wrong(verify(mutant(tmp_path, BASE, _p(p))))
    assert (wrong.element, wrong.count) == ("D[0, 2]", 2048)
    assert "lacks A[0, 0] * B[0, 2]" in wrong.words and " has " not in wrong.words


def test_a_shift_one_more_is_reported_at_the_first_column_p_keeps(tmp_path):
    p = ZeroColumnMask((1, 3, 0, 0), (1, 0, 0, 0), 1, 2, 4, 3).encode()
    r = verify(mutant(tmp_path, BASE, _p(p)))
    wrong = _first_wrong(r)
    assert (wrong.element, wrong.count) == ("D[0, 2]", 2560)
    assert "has A[0, 0] * B[0, 3] (B's n is 3, the element's is 2)" in wrong.words
    assert {f.kind for f in r.findings} == {"wrong_element", "unwritten_read"}  # column 63 reads tile row 66


def test_the_non_zero_mask_bit_cleared_is_reported_at_d_0_0(tmp_path):
    """Non-zero mask 0: the first MMA zeroes no column, and the columns ~P keeps have their products twice."""
    wrong = _first_wrong(verify(mutant(tmp_path, BASE, _p(P & ~(1 << 39)))))
    assert (wrong.element, wrong.count) == ("D[0, 0]", 1536)
    assert "counts A[0, 0] * B[0, 0], A[0, 1] * B[1, 0], A[0, 2] * B[2, 0] more than once" in wrong.words


@pytest.mark.parametrize("value,words", [
    (P | (1 << 36), "reserved bits 36-38"),
    ((P & ~(0x3F << 56)) | (33 << 56), "a column shift of 33"),
])
def test_a_bad_mask_is_an_error_at_its_line(tmp_path, value, words):
    with pytest.raises(KernelError) as e:
        verify(mutant(tmp_path, BASE, _p(value)))
    assert e.value.line == LINE and words in e.value.message, e.value.message


def test_a_mask_register_nothing_wrote_is_an_error_at_its_line(tmp_path):
    with pytest.raises(KernelError) as e:
        verify(mutant(tmp_path, BASE, replaced(r"mov\.b64 \t%rd12,", "mov.b64 \t%rd12,", "// mov.b64 \t%rd12,")))
    assert e.value.line == LINE and "holds no known value" in e.value.message, e.value.message


def test_a_mask_with_a_collector_fill_is_refused(tmp_path):
    with pytest.raises(KernelError) as e:
        verify(mutant(tmp_path, BASE, replaced(r"kind::f16 \[%r20\], %rd13, %rd14, %r51, 0", "kind::f16 ",
                                               "kind::f16.collector::b0::fill ")))
    assert e.value.line == LINE and "a zero-column mask descriptor with .collector::b0::fill" in e.value.message


@pytest.mark.slow
def test_nvcc_makes_the_committed_fixture(tmp_path):
    nvcc_makes(tmp_path, BASE, BASE, [])


def test_a_shift_past_two_tiles_reads_the_rows_of_as_many_whole_tiles_as_reach_them():
    """N = 16 with a shift of 32: MMA column n reads the described tile's row n + 32, in its third copy of the
    canonical layout (the rows the descriptor model gives a tile of 48 rows), not an index error."""
    import numpy as np

    from verify.kernel.descriptors import descriptor_addresses, descriptor_rows
    value = 0x0000404000010000  # start 0, LBO 16 B, SBO 1024 B, version 1, no swizzle
    rows_at = np.arange(16) + 32
    got = descriptor_rows("tcgen05", value, "K", 16, 16, 16, "vector", rows_at)
    assert got.shape == (16, 16)
    assert np.array_equal(got, descriptor_addresses("tcgen05", value, "K", 16, 48, 16)[32:48])
    assert np.array_equal(descriptor_rows("tcgen05", value, "K", 16, 16, 16, "vector", np.arange(16) + 2),
                          descriptor_addresses("tcgen05", value, "K", 16, 32, 16)[2:18])
