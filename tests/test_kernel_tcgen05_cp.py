"""``tcgen05.cp`` (shared memory to Tensor Memory through a matrix descriptor): the catalog's copy layouts of each
shape (``specs/tcgen05.cp.toml`` and ``tcgen05.cp.32x128b.warpx4``) and the executor's copy.  The fixture
(``tcgen05_cp.cu``, made by make_fixtures.py) copies A of a GEMM into Tensor Memory with ``.128x256b`` and two
``.128x128b`` and multiplies it there (``tcgen05.mma`` with A in Tensor Memory): proved, both engines agreeing; a
copy's shape or Tensor Memory column changed is the right first wrong element with its chain; the forms not
executed are refused at their line."""
from __future__ import annotations

import re

import numpy as np
import pytest

from conftest import cli
from kernel_plants import KERNELS, agree, first, mutant, nvcc_makes, only_finding
from verify.kernel.fragments import COPY_LAYOUTS, copy_cells
from verify.kernel.frontdoor import verify
from verify.kernel.machine import KernelError
from verify.outputs.kernel import kernel_text

BASE = "tcgen05_cp"
SECOND = "tcgen05.cp.cta_group::1.128x128b [%r150]"  # the copy of A's bytes 32-47 (k 16-23) to columns 40-43
SECOND_LINE = "\ttcgen05.cp.cta_group::1.128x128b [%r150], %rd18;"
MULTICAST = "64x128b.warpx2::01_23"


def test_the_fixture_is_proved_by_both_engines():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    assert r.findings == ()
    agree(r)


def test_the_fixture_copies_a_with_two_shapes_before_its_mmas():
    text = (KERNELS / f"{BASE}.ptx").read_text(encoding="utf-8")
    copies = re.findall(r"tcgen05\.cp\.cta_group::1\.(\S+) \[", text)
    assert copies == ["128x256b", "128x128b", "128x128b"]
    assert text.index("tcgen05.cp.") < text.index("tcgen05.mma.")


@pytest.mark.slow
def test_nvcc_makes_the_fixture(tmp_path):
    nvcc_makes(tmp_path, BASE, BASE, [])


@pytest.mark.slow
def test_nvcc_makes_the_planted_fixture(tmp_path):
    nvcc_makes(tmp_path, BASE, f"{BASE}_shape", ["-DCP_SHAPE"])


def test_the_planted_fixture_is_the_base_with_one_copy_s_shape_changed():
    base = (KERNELS / f"{BASE}.ptx").read_text(encoding="utf-8").splitlines()[1:]
    planted = (KERNELS / f"{BASE}_shape.ptx").read_text(encoding="utf-8").splitlines()[1:]
    changed = [(a, b) for a, b in zip(base, planted) if a != b]
    assert len(base) == len(planted) and changed == [(SECOND_LINE, SECOND_LINE.replace("128x128b", MULTICAST))]


def _replace(old: str, new: str):
    def change(lines: list[str]) -> None:
        k = first(lines, re.escape(old))
        lines[k] = lines[k].replace(old, new)
    return change


def test_a_copy_of_another_shape_is_the_first_wrong_element_with_its_chain():
    """The second copy made .64x128b.warpx2::01_23 (tcgen05_cp_shape, -DCP_SHAPE): 64 source rows, rows 0-31 to
    lane quarters 0 and 1, so lane 32 holds row 0's bytes 32-47 (A[0, 16..23]) where the MMA reads row 32's."""
    r = verify(str(KERNELS / f"{BASE}_shape.toml"))
    f = only_finding(r, "D[32, 0]", 3072)
    assert f.words.startswith("expected sum over k of A[32, k] * B[k, 0]; has A[0, 16] * B[16, 0] (A's m is 0, the "
                              "element's is 32)"), f.words
    chain = [(c.opcode, c.line) for c in f.chain]
    assert chain[:4] == [("st.global", 443), ("tcgen05.ld.32x32b.x32", 430), ("tcgen05.mma.kind::f16", 392),
                         ("tcgen05.cp.64x128b.warpx2::01_23", 347)], kernel_text(r)
    assert f.chain[3].words == "(thread 0) copied it from shared memory to Tensor Memory lane 32, column 40 (address " \
                               "from lines 317-338)", kernel_text(r)
    assert "wrote it to shared 0x1000" in f.chain[4].words, kernel_text(r)


@pytest.mark.parametrize("shape,element,count", [("64x128b.warpx2::02_13", "D[64, 0]", 2048),
                                                 ("32x128b.warpx4", "D[32, 0]", 3072)],
                         ids=["warpx2-02_13", "warpx4"])
def test_each_multicast_shape_puts_its_rows_where_the_catalog_says(tmp_path, shape, element, count):
    """.warpx2::02_13: rows 0-31 to lane quarters 0 and 2 (lanes 64-95 hold rows 0-31); .warpx4: rows 0-31 to every
    quarter."""
    r = verify(mutant(tmp_path, BASE, _replace(SECOND, SECOND.replace("128x128b", shape))))
    f = only_finding(r, element, count)
    m = int(element[2:].split(",")[0])
    assert f.words.startswith(f"expected sum over k of A[{m}, k] * B[k, 0]; has A[0, 16] * B[16, 0]"), f.words


def test_a_copy_to_another_tensor_memory_column_is_the_first_wrong_element(tmp_path):
    """The third copy's address one column on (45, not 44): column 44 is never written, and k 24-25 of A are read as
    k 26-27."""
    r = verify(mutant(tmp_path, BASE, _replace("add.s32 \t%r144, %r70, 44;", "add.s32 \t%r144, %r70, 45;")))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    f = next(x for x in r.findings if x.kind == "wrong_element")
    assert (f.element, f.count) == ("D[0, 0]", 4096), kernel_text(r)
    assert "A[0, 24] * B[26, 0] (k 26 of B meets k 24 of A)" in f.words, f.words
    u = next(x for x in r.findings if x.kind == "unwritten_read")
    assert "reads A from Tensor Memory lane 0, column 44, which nothing wrote" in u.words, u.words


@pytest.mark.parametrize("new,words", [
    (SECOND.replace("128x128b", "128x128b.b8x16.b6x16_p32"), "unsupported instruction 'tcgen05.cp.cta_group::1."
     "128x128b.b8x16.b6x16_p32' (decompression .b8x16.b6x16_p32 is not executed: it unpacks 4-bit or 6-bit "
     "elements into 8-bit containers, so one source byte's bits go to two destination bytes, and the executor "
     "follows data in whole bytes)"),
    (SECOND.replace("128x128b", "128x128b.b8x16.b4x16_p64"), "unsupported instruction "
     "'tcgen05.cp.cta_group::1.128x128b.b8x16.b4x16_p64' (decompression .b8x16.b4x16_p64 is not executed"),
    (SECOND.replace("128x128b", "4x256b"), "unsupported instruction 'tcgen05.cp.cta_group::1.4x256b' (.4x256b "
     "copies 4 rows; the PTX ISA does not say which shared-memory bytes its 4 rows are: the layouts a descriptor "
     "describes are made of 8-row units"),
    (SECOND.replace("128x128b", "64x128b"), "tcgen05.cp.cta_group::1.64x128b: the catalog has no tcgen05.cp "
     ".64x128b (.64x128b takes .warpx2::02_13 or ::01_23, .32x128b .warpx4, the others none)"),
    (SECOND.replace("128x128b", "128x128b.warpx4"), "tcgen05.cp.cta_group::1.128x128b.warpx4: the catalog has no "
     "tcgen05.cp .128x128b.warpx4"),
], ids=["decompression", "decompression-4bit", "4x256b", "64x128b-alone", "128x128b-warpx4"])
def test_a_form_not_executed_is_an_error_at_its_line(tmp_path, capsys, new, words):
    launch = mutant(tmp_path, BASE, _replace(SECOND, new))
    with pytest.raises(KernelError, match=r"k\.ptx:347:\d+: " + re.escape(words)):
        verify(launch)
    rc, out, err = cli(capsys, "kernel", launch)
    assert (rc, out) == (2, "") and len(err.strip().splitlines()) == 1, err


def test_the_copy_layouts_are_the_catalog_s_in_both_faces():
    """Every copy shape the catalog states, evaluated as numpy arrays and point by point: the same cells."""
    for shape, multicast in COPY_LAYOUTS:
        v, p = copy_cells(shape, multicast), copy_cells(shape, multicast, "point")
        assert v.layout_id == p.layout_id
        for a, b in ((v.lane, p.lane), (v.col, p.col), (v.byte, p.byte)):
            assert np.array_equal(a, b)


def test_where_the_multicast_shapes_put_a_row():
    """Row 40 of a .64x128b block: lanes 40 and 104 (warps 1 and 3) with ::02_13, lanes 72 and 104 (warps 2 and 3)
    with ::01_23; row 5 of .32x128b.warpx4 in every lane quarter; a .128x256b row's 32 bytes in 8 columns."""
    assert copy_cells("64x128b", "warpx2::02_13").lane[40, 0].tolist() == [40, 104]
    assert copy_cells("64x128b", "warpx2::01_23").lane[40, 0].tolist() == [72, 104]
    assert copy_cells("32x128b", "warpx4").lane[5, 0].tolist() == [5, 37, 69, 101]
    c = copy_cells("128x256b", "")
    assert (c.col[7, :, 0].tolist(), c.byte[7, :4, 0].tolist()) == ([k // 4 for k in range(32)], [0, 1, 2, 3])
    assert copy_cells("4x256b", "").lane[:, 0, 0].tolist() == [0, 32, 64, 96]
