"""Block-scaled ``tcgen05.mma`` on 4-bit operands (``kind::mxf4``, ``kind::mxf4nvf4``): e2m1 elements packed two to
a byte in shared memory, read through the descriptor model's bit addresses, each product carrying the scale
factors the catalog's scale-factor layouts place in Tensor Memory.  The fixture is Triton's ``tl.dot_scaled`` on
e2m1 operands for sm_100 (``triton_sm100_mxfp4``, made by make_fixtures.py): proved, both engines agreeing; a
scale-factor id changed and a scale vector changed are each the right first wrong element with its chain; changes
that keep the meaning stay proved."""
from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from kernel_plants import KERNELS, agree, first, mutant
from verify.errors import SpecError
from verify.kernel.frontdoor import verify
from verify.kernel.fragments import scale_factor_ids, scale_vectors
from verify.kernel.descriptors import descriptor_addresses, descriptor_bit_addresses
from verify.kernel.launch import parse_launch
from verify.kernel.machine import KernelError
from verify.layout.descriptor import decode_instruction
from verify.outputs.kernel import kernel_text

BASE = "triton_sm100_mxfp4"
NV = "triton_sm100_nvfp4"
# the two MMAs of a 128-wide K tile: K = 64 each, .block32 (two scale factors an MMA: .scale_vec::2X), their
# instruction descriptors naming SFA_ID = SFB_ID = 0 and 2
FIRST, SECOND = 144704640, 1218446496


def test_the_fixture_is_proved_by_both_engines():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    assert r.findings == ()
    agree(r)


def test_the_fixture_is_triton_s_kind_mxf4_with_two_scale_factors_an_mma():
    """What the fixture exercises: kind::mxf4 with e2m1 x e2m1, K = 64, scale-factor ids 0 and 2 (.scale_vec::2X)."""
    text = (KERNELS / f"{BASE}.ptx").read_text(encoding="utf-8")
    assert len(re.findall(r"tcgen05\.mma\.cta_group::1\.kind::mxf4\.block_scale\.block32", text)) == 2
    ids = []
    for v in (FIRST, SECOND):
        assert f"{v};" in text
        d = decode_instruction("mxf4", v)
        assert (d.atype, d.btype, d.m, d.n, d.k) == ("e2m1", "e2m1", 128, 128, 64)
        ids.append((d.sfa_id, d.sfb_id))
    assert ids == [(0, 0), (2, 2)]


def test_e2m1_tensors_are_packed_two_to_a_byte_along_the_last_index():
    toml = (KERNELS / f"{BASE}.toml").read_text(encoding="utf-8")
    a = parse_launch(toml, "k.toml").tensors()["A"]
    assert (a.packed, a.element_bytes, a.span) == (2, 1, 128 * 256 // 2)
    bad = toml.replace('type = "e2m1", shape = [128, 256] }', 'type = "e2m1", shape = [128, 255] }', 1)
    with pytest.raises(SpecError, match=r"k\.toml:\d+:\d+: .*e2m1 elements are packed 2 to a byte along the last index"):
        parse_launch(bad, "k.toml")


def test_sub_byte_elements_take_their_bit_address_from_the_descriptor_model():
    """A K-major e2m1 operand without swizzling: element (0, k) at bit 4 k (two to a byte, the lower k in the low
    nibble); its byte address is the 4-bit reader's, not the 8-bit one's."""
    value = 0x0000404000010000  # start 0, LBO 16 B, SBO 1024 B, version 1, no swizzle
    bits = descriptor_bit_addresses("tcgen05", value, "K", 4, 128, 64)
    assert list(bits[0, :4]) == [0, 4, 8, 12]
    assert np.array_equal(bits // 8, descriptor_addresses("tcgen05", value, "K", 4, 128, 64))
    assert bits[0, 32] == 8 * 16  # the next 16-byte core-matrix column: LBO


# ----------------------------------------------------------------------------- planted changes

def _replace(old: str, new: str, count: int = 0):
    def change(lines: list[str]) -> None:
        hits = [k for k, s in enumerate(lines) if old in s]
        assert hits and (count == 0 or len(hits) >= count), old
        for k in hits[:count or None]:
            lines[k] = lines[k].replace(old, new)
    return change


def change_sf_id(lines: list[str]) -> None:
    """The second MMA's instruction descriptor with its scale-factor A id 2 made 0 (the first MMA's K blocks)."""
    _replace(f"{SECOND};", f"{SECOND & ~(3 << 29)};")(lines)


def change_scale_vec(lines: list[str]) -> None:
    """The first MMA made kind::mxf4nvf4 with .block16 (.scale_vec::4X: four scale factors of 16 elements each)."""
    k = first(lines, r"kind::mxf4\.block_scale\.block32")
    lines[k] = lines[k].replace("kind::mxf4.block_scale.block32", "kind::mxf4nvf4.block_scale.block16")


def move_sfb_column(lines: list[str]) -> None:
    """The scale factors of B read one Tensor Memory column on (the factors of the next 32 rows of B)."""
    _replace("add.s32 \t%r193, %r486, 132;", "add.s32 \t%r193, %r486, 133;")(lines)


PLANTED = [
    (change_sf_id, "expected sum over k of A[0, k] * B[0, k] * SA[0, k / 32] * SB[0, k / 32]; has A[0, 64] * "
     "B[0, 64] * SA[0, 0] * SB[0, 2] (SA's k / 32 is 0, but k is 64: the scale factor of another block)",
     [("st.global.v4", 1088), ("tcgen05.ld.32x32b.x128", 980), ("tcgen05.mma.kind::mxf4", 825),
      ("tcgen05.st.32x32b.x4", 769), ("ld.shared.v4", 743), ("ld.global", 675)],
     "multiplied SA[0, 0], the scale factor of element (0, 0) of its A tile: the instruction descriptor 0x08a004a0 "
     "(SFA_ID 0, SFB_ID 2) reads it from Tensor Memory lane 0, column 128, byte 0"),
    (change_scale_vec, "expected sum over k of A[0, k] * B[0, k] * SA[0, k / 32] * SB[0, k / 32]; has A[0, 16] * "
     "B[0, 16] * SA[0, 1] * SB[0, 1] (SA's k / 32 is 1, but k is 16: the scale factor of another block)",
     [("st.global.v4", 1088), ("tcgen05.ld.32x32b.x128", 980), ("tcgen05.mma.kind::mxf4nvf4", 815)],
     "multiplied SA[0, 1], the scale factor of element (0, 16) of its A tile: the instruction descriptor "
     "0x08a00480 (SFA_ID 0, SFB_ID 0) reads it from Tensor Memory lane 0, column 128, byte 1"),
    (move_sfb_column, "expected sum over k of A[0, k] * B[0, k] * SA[0, k / 32] * SB[0, k / 32]; has A[0, 0] * "
     "B[0, 0] * SA[0, 0] * SB[32, 0] (SB's n is 32, the element's is 0)",
     [("st.global.v4", 1088), ("tcgen05.ld.32x32b.x128", 980), ("tcgen05.mma.kind::mxf4", 815)],
     "reads it from Tensor Memory lane 0, column 133"),
]


@pytest.mark.parametrize("change,words,chain,link", PLANTED, ids=[p[0].__name__ for p in PLANTED])
def test_a_planted_change_is_the_first_wrong_element_with_its_chain(tmp_path, change, words, chain, link):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    f = next(x for x in r.findings if x.kind == "wrong_element")
    assert (f.element, f.count) == ("C[0, 0]", 16384), kernel_text(r)
    assert f.words.startswith(words), f.words
    assert [(c.opcode, c.line) for c in f.chain][:len(chain)] == chain, kernel_text(r)
    assert any(link in c.words for c in f.chain), kernel_text(r)


def test_a_scale_factor_id_the_scale_vector_does_not_allow_is_an_error_at_its_line(tmp_path):
    """Both MMAs made .scale_vec::4X (kind::mxf4nvf4): the catalog's 4X fragment allows only scale-factor id 0, and
    the second MMA's instruction descriptor names 2 (for A and for B)."""
    def change(lines: list[str]) -> None:
        _replace("kind::mxf4.block_scale.block32", "kind::mxf4nvf4.block_scale.scale_vec::4X")(lines)
    with pytest.raises(KernelError, match=r"k\.ptx:825:\d+: .*the instruction descriptor 0x48a004a0 names SFA_ID 2 "
                                          r"and SFB_ID 2, but \.scale_vec::4X allows scale-factor ids 0$"):
        verify(mutant(tmp_path, BASE, change))


# Table 55's kind / scale-vector rule (the catalog's tcgen05.scale_vec.kinds): a spelling the kind does not take
# planted into each block-scaled fixture's first MMA; ptxas 13.0 refuses each one ("cannot be combined with", or
# kind::mxf4nvf4 "requires modifier '.scale_vectorsize'")
MXF8 = "triton_sm100_mxfp8"
WRONG_SCALE_VEC = [
    (BASE, "kind::mxf4.block_scale.block32", "kind::mxf4.block_scale.block16", 815,
     ".kind::mxf4 takes .scale_vec::2X, .block32 or no .scale_vectorsize, not .block16"),
    (BASE, "kind::mxf4.block_scale.block32", "kind::mxf4.block_scale.scale_vec::4X", 815,
     ".kind::mxf4 takes .scale_vec::2X, .block32 or no .scale_vectorsize, not .scale_vec::4X"),
    (BASE, "kind::mxf4.block_scale.block32", "kind::mxf4.block_scale.scale_vec::1X", 815,
     ".kind::mxf4 takes .scale_vec::2X, .block32 or no .scale_vectorsize, not .scale_vec::1X"),
    (NV, "kind::mxf4nvf4.block_scale.block16", "kind::mxf4nvf4.block_scale", 876,
     ".kind::mxf4nvf4 takes .scale_vec::2X, .scale_vec::4X, .block32 or .block16, and none is spelled"),
    (NV, "kind::mxf4nvf4.block_scale.block16", "kind::mxf4nvf4.block_scale.scale_vec::1X", 876,
     ".kind::mxf4nvf4 takes .scale_vec::2X, .scale_vec::4X, .block32 or .block16, not .scale_vec::1X"),
    (MXF8, "kind::mxf8f6f4.block_scale.block32", "kind::mxf8f6f4.block_scale.block16", 850,
     ".kind::mxf8f6f4 takes .scale_vec::1X, .block32 or no .scale_vectorsize, not .block16"),
    (MXF8, "kind::mxf8f6f4.block_scale.block32", "kind::mxf8f6f4.block_scale.scale_vec::2X", 850,
     ".kind::mxf8f6f4 takes .scale_vec::1X, .block32 or no .scale_vectorsize, not .scale_vec::2X"),
]


@pytest.mark.parametrize("base,old,new,line,words", WRONG_SCALE_VEC,
                         ids=[w[2].replace("::", "-") for w in WRONG_SCALE_VEC])
def test_a_scale_vector_the_kind_does_not_take_is_an_error_at_its_line(tmp_path, capsys, base, old, new, line,
                                                                        words):
    from conftest import cli

    def change(lines: list[str]) -> None:
        k = first(lines, re.escape(old))
        lines[k] = lines[k].replace(old, new)
    launch = mutant(tmp_path, base, change)
    rc, out, err = cli(capsys, "kernel", launch)
    assert (rc, out) == (2, ""), err
    (msg,) = err.strip().split("\n")
    assert re.fullmatch(rf".*k\.ptx:{line}:\d+: error: tcgen05\.mma\S*{re.escape(new)}\S*: {re.escape(words)} "
                        r"\(tcgen05\.scale_vec\.kinds: PTX ISA 9\.0 Table 55\)", msg), msg


@pytest.mark.parametrize("base,old,new", [
    (MXF8, "kind::mxf8f6f4.block_scale.block32", "kind::mxf8f6f4.block_scale.scale_vec::1X"),
    (MXF8, "kind::mxf8f6f4.block_scale.block32", "kind::mxf8f6f4.block_scale"),
    (BASE, "kind::mxf4.block_scale.block32", "kind::mxf4.block_scale"),
    (NV, "kind::mxf4nvf4.block_scale.block16", "kind::mxf4nvf4.block_scale.scale_vec::4X"),
], ids=["mxf8f6f4-1X", "mxf8f6f4-none", "mxf4-none", "mxf4nvf4-4X"])
def test_a_spelling_the_kind_takes_for_the_same_scale_vector_stays_proved(tmp_path, base, old, new):
    r = verify(mutant(tmp_path, base, _replace(old, new)))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_the_scale_vectors_of_each_kind_are_the_catalog_s():
    """Table 55 as the catalog records it: each spelling a kind takes, and the scale factors a row it means."""
    assert scale_vectors("mxf8f6f4") == {"": 1, "scale_vec::1X": 1, "block32": 1}
    assert scale_vectors("mxf4") == {"": 2, "scale_vec::2X": 2, "block32": 2}
    assert scale_vectors("mxf4nvf4") == {"scale_vec::2X": 2, "scale_vec::4X": 4, "block32": 2, "block16": 4}


def test_the_catalog_s_scale_vectors_are_table_55_s(docs_dir):
    """Table 55 of the 9.0 page read here on its own (each row's kind, a row without one continuing the kind above;
    its last cell's ".scale_vec::NX / .blockN" pairs): the spellings each kind takes are the catalog's, and a
    .blockN means the N of the .scale_vec::NX it is paired with.  None spelled is not in the table (the tcgen05.mma
    page's text: .block32 for mxf4, an error for mxf4nvf4; ptxas's .block32 for mxf8f6f4)."""
    page = docs_dir / "9-7-16-10-7-1-valid-combinations-of-scale-vectorsize-with-types-and-mma-kind.md"
    lines = page.read_text(encoding="utf-8").splitlines()
    start = next(k for k, s in enumerate(lines) if s.startswith("| .kind::\\* | Element Data Type"))
    pairs: dict[str, set[tuple[str, str]]] = {}
    kind = ""
    for row in lines[start + 2:]:
        if not row.startswith("|"):
            break
        cells = [c.strip() for c in row.strip("|").split("|")]
        m = re.fullmatch(r"`\.kind::(\w+)`", cells[0])
        kind = m.group(1) if m else kind
        pairs.setdefault(kind, set()).update(re.findall(r"`\.(scale_vec::\dX)` / `\.(block\d+)`", cells[-1]))
    assert set(pairs) == {"mxf8f6f4", "mxf4", "mxf4nvf4"}
    for k, ps in pairs.items():
        takes = scale_vectors(k)
        assert {q for q in takes if q} == {q for p in ps for q in p}, k
        for vec, block in ps:
            assert takes[vec] == takes[block] == int(vec[len("scale_vec::"):-1]), (k, vec, block)


def test_the_allowed_scale_factor_ids_are_the_catalog_s():
    assert scale_factor_ids(1) == ((0, 1, 2, 3), ("ue8m0",))
    assert scale_factor_ids(2) == ((0, 2), ("ue8m0",))
    assert scale_factor_ids(4) == ((0,), ("ue8m0", "ue4m3"))


def rename_register(lines: list[str]) -> None:
    """%r191 (the first MMA's instruction descriptor) renamed %r588."""
    k = first(lines, r"\.reg \.b32\s+%r<588>")
    lines[k] = lines[k].replace("%r<588>", "%r<589>")
    for n, s in enumerate(lines):
        lines[n] = re.sub(r"%r191\b", "%r588", s)


def spell_scale_vec(lines: list[str]) -> None:
    """.block32 spelled .scale_vec::2X (for kind::mxf4 with K = 64 the same two scale factors an MMA)."""
    _replace(".block_scale.block32", ".block_scale.scale_vec::2X")(lines)


@pytest.mark.parametrize("change", [rename_register, spell_scale_vec], ids=lambda c: c.__name__)
def test_a_change_that_keeps_the_meaning_stays_proved(tmp_path, change):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_the_launch_must_give_b_as_it_is_stored(tmp_path):
    """B declared K x N (as if packed along N): the products meet the wrong elements of B, or the launch is
    refused; it is never proved."""
    def toml(text: str) -> str:
        text = text.replace("B[n, k]", "B[k, n]")
        return text.replace('{ tensor = "B", type = "e2m1", shape = [128, 256] }',
                            '{ tensor = "B", type = "e2m1", shape = [256, 128] }')
    r = verify(mutant(tmp_path, BASE, lambda lines: None, toml))
    assert r.status != "proved", kernel_text(r)


def test_the_fixture_recipe_is_in_make_fixtures():
    text = Path(KERNELS / "make_fixtures.py").read_text(encoding="utf-8")
    assert '"triton_sm100_mxfp4.ptx", 128, 128, 128, 4, 3, "sm_100", "matmul_scaled_fp4"' in text
    assert '"triton_sm100_nvfp4.ptx", 128, 128, 128, 4, 3, "sm_100", "matmul_scaled_nvfp4"' in text


# ----------------------------------------------------------------------------- kind::mxf4nvf4 (.scale_vec::4X)


def test_the_nvfp4_fixture_is_kind_mxf4nvf4_with_four_e4m3_scale_factors_an_mma_and_is_proved():
    text = (KERNELS / f"{NV}.ptx").read_text(encoding="utf-8")
    assert len(re.findall(r"tcgen05\.mma\.cta_group::1\.kind::mxf4nvf4\.block_scale\.block16", text)) == 2
    d = decode_instruction("mxf4nvf4", 136316032)
    assert "136316032;" in text
    assert (d.atype, d.btype, d.k, d.sfa_id, d.sfb_id, d.scale_type) == ("e2m1", "e2m1", 64, 0, 0, "ue4m3")
    r = verify(str(KERNELS / f"{NV}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def test_nvfp4_s_second_mma_reading_the_first_mma_s_scale_factors_of_a(tmp_path):
    """The second MMA of a K tile given the first's scale-A address (Tensor Memory column 128, not 132): its
    products carry the factors of K blocks 0-3."""
    def change(lines: list[str]) -> None:
        _replace("%rd107, %r203, [ %r206 + 0 ]", "%rd107, %r203, [ %r204 + 0 ]")(lines)
    r = verify(mutant(tmp_path, NV, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    f = next(x for x in r.findings if x.kind == "wrong_element")
    assert (f.element, f.count) == ("C[0, 0]", 16384), kernel_text(r)
    assert f.words.startswith("expected sum over k of A[0, k] * B[0, k] * SA[0, k / 16] * SB[0, k / 16]; has "
                              "A[0, 64] * B[0, 64] * SA[0, 0] * SB[0, 4] (SA's k / 16 is 0, but k is 64"), f.words
    assert [(c.opcode, c.line) for c in f.chain][:3] == [("st.global.v4", 1121), ("tcgen05.ld.32x32b.x128", 1014),
                                                         ("tcgen05.mma.kind::mxf4nvf4", 885)], kernel_text(r)
