"""``mma.sp`` / ``mma.sp::ordered_metadata`` in ``ptx-verify kernel``: the hand-written 2:4 sparse kernel
(examples/kernels/mma_sparse.cu, its PTX by make_fixtures.py) is proved, with A's structural zeros declared in the
launch; changes planted in its PTX (two registers of A swapped, the metadata value changed, the sparsity selector
changed) are each reported with the right first wrong element, an invalid metadata value is an error naming it, and
changes that keep the meaning (a register renamed, plain ``mma.sp`` for ``::ordered_metadata``) stay proved.  Both
engines agree on every verdict."""
from __future__ import annotations

import re

import numpy as np
import pytest

from kernel_plants import agree, first, KERNELS, mutant, only_finding
from verify.errors import SpecError
from verify.kernel.frontdoor import verify
from verify.kernel.launch import parse_launch
from verify.outputs.kernel import kernel_text

BASE = "mma_sparse"


def test_the_sparse_kernel_is_proved():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 4 * 4  # 4 CTAs of one warp, K = 64 in steps of 16


def test_the_structural_zeros_are_not_in_the_sum(tmp_path):
    """Declared dense, A's structural zeros are missing products: the first element lacks them."""
    r = verify(mutant(tmp_path, BASE, lambda lines: None,
                       lambda t: t.replace(", sparse = { chunk = 4, keep = [[0, 1], [1, 3]] }", "")))
    f = only_finding(r, "C[0, 0]", 512)
    assert f.words.startswith("expected sum over k of A[0, k] * B[k, 0]; lacks A[0, 2] * B[2, 0], A[0, 3] * B[3, 0]")


def swap_a_registers(lines: list[str]) -> None:
    """The first mma.sp's A registers (rows g and g + 8) trade places."""
    k = first(lines, r"mma\.sp")
    lines[k] = lines[k].replace("{%r50, %r51}", "{%r51, %r50}", 1)


def metadata_value(lines: list[str]) -> None:
    """The even rows' metadata 0x44444444 (indices 0, 1 in every chunk) made 0x44444484: the field of row g's chunk
    1 says indices 0, 2 (the kept element at k 5 is multiplied as k 6)."""
    k = first(lines, r"selp\.b32\s+%r40, 1145324612,")
    lines[k] = lines[k].replace("1145324612", str(0x44444484), 1)


def selector(lines: list[str]) -> None:
    """Sparsity selector 1 where the metadata is in the lanes selector 0 names (lane 1 of each group holds
    0xEEEEEEEE: indices 2, 3)."""
    for k, s in enumerate(lines):
        if "mma.sp" in s:
            lines[k] = s.replace("%r6, 0x0;", "%r6, 0x1;")


PLANTED = [
    (swap_a_registers, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[8, 0] * B[0, 0] (A's m is 8, "
     "the element's is 0)", 512, [("st.global", None), ("mma.sp::ordered_metadata.m16n8k16", 171)]),
    (metadata_value, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 5] * B[6, 0] (k 6 of B meets "
     "k 5 of A)", 128, [("st.global", None), ("mma.sp::ordered_metadata.m16n8k16", 171)]),
    (selector, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 0] * B[2, 0] (k 2 of B meets k 0 of A)",
     512, [("st.global", None), ("mma.sp::ordered_metadata.m16n8k16", 171)]),
]


@pytest.mark.parametrize("change,element,words,count,chain", PLANTED, ids=[p[0].__name__ for p in PLANTED])
def test_a_planted_change_is_the_first_wrong_element(tmp_path, change, element, words, count, chain):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    (f,) = r.findings
    assert (f.kind, f.element, f.count) == ("wrong_element", element, count), kernel_text(r)
    assert f.words.startswith(words), f.words
    got = [(c.opcode, c.line) for c in f.chain][: len(chain)]
    assert [(o, ln if want is not None else None) for (o, ln), (_, want) in zip(got, chain)] == chain, got
    assert f.chain[1].source.endswith("mma_sparse.cu:35")


def rename_register(lines: list[str]) -> None:
    """%r6 (the metadata) renamed %r200 everywhere (a register the function now declares)."""
    k = first(lines, r"\.reg \.b32\s+%r<")
    lines[k] = re.sub(r"%r<\d+>", "%r<201>", lines[k])
    for n, s in enumerate(lines):
        lines[n] = re.sub(r"%r6\b", "%r200", s)


def plain_sparse(lines: list[str]) -> None:
    """``mma.sp`` for ``mma.sp::ordered_metadata`` (the metadata is ordered: the same meaning)."""
    for k, s in enumerate(lines):
        lines[k] = s.replace("mma.sp::ordered_metadata.", "mma.sp.")


@pytest.mark.parametrize("change", [rename_register, plain_sparse])
def test_a_change_that_keeps_the_meaning_stays_proved(tmp_path, change):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "proved", kernel_text(r)
    agree(r)


@pytest.mark.parametrize("value,ordered,words", [
    (0x44444440, True, "warp 0's metadata for row 0, chunk 0 (lane 0, bits 0-3) is 0b0000, not a valid ordered "
     "metadata value"),
    (0x44444441, True, "warp 0's metadata for row 0, chunk 0 (lane 0, bits 0-3) is 0b0001, not a valid ordered "
     "metadata value"),
    (0x44444441, False, None),  # 0b0001: indices 1, 0 -- valid for mma.sp, not ordered
])
def test_an_invalid_metadata_value_is_an_error_naming_it(tmp_path, value, ordered, words):
    def change(lines: list[str]) -> None:
        k = first(lines, r"selp\.b32\s+%r40, 1145324612,")
        lines[k] = lines[k].replace("1145324612", str(value), 1)
        if not ordered:
            plain_sparse(lines)
    if words is None:  # indices 1, 0: the two kept elements trade columns
        r = verify(mutant(tmp_path, BASE, change))
        assert r.status == "refuted" and r.findings[0].element == "C[0, 0]"
        assert r.findings[0].words.startswith("expected sum over k of A[0, k] * B[k, 0]; has A[0, 1] * B[0, 0] (k 0 "
                                              "of B meets k 1 of A); A[0, 0] * B[1, 0] (k 1 of B meets k 0 of A)")
        return
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, BASE, change))
    assert str(e.value).endswith(words), str(e.value)
    assert "k.ptx:171:" in str(e.value)


@pytest.mark.parametrize("text,message", [
    ("sparse = { chunk = 4 }", "'sparse' is { chunk = C, keep = [[...], ...] }"),
    ("sparse = { chunk = 4, keep = [[0, 4]] }", "'sparse' is { chunk = C, keep = [[...], ...] }"),
    ("sparse = { chunk = 4, keep = [[1, 1]] }", "'sparse' is { chunk = C, keep = [[...], ...] }"),
    ("sparse = 2", "'sparse' is { chunk = C, keep = [[...], ...] }"),
])
def test_a_bad_sparse_field_is_one_error_at_its_tensor(text, message):
    toml = f'ptx = "k.ptx"\ngrid = [1, 1, 1]\nblock = [32, 1, 1]\ncomputes = "C[m, n] = A[m, k] * B[k, n]"\n' \
           f'args = [\n  {{ tensor = "A", type = "f16", shape = [16, 16], {text} }},\n' \
           f'  {{ tensor = "B", type = "f16", shape = [16, 8] }},\n  {{ tensor = "C", type = "f32", shape = [16, 8] }},\n]\n'
    with pytest.raises(SpecError) as e:
        parse_launch(toml, "l.toml")
    assert message in str(e.value) and "l.toml:6:" in str(e.value), str(e.value)


def test_the_pattern_of_structural_zeros():
    t = parse_launch('ptx = "k.ptx"\ngrid = [1, 1, 1]\nblock = [32, 1, 1]\ncomputes = "C[m, n] = A[m, k] * B[k, n]"\n'
                     'args = [{ tensor = "A", type = "f16", shape = [3, 8], sparse = { chunk = 4, keep = [[0, 1], '
                     '[1, 3]] } }, { tensor = "B", type = "f16", shape = [8, 8] }, '
                     '{ tensor = "C", type = "f32", shape = [3, 8] }]\n', "l.toml").tensors()["A"]
    assert t.nonzero().astype(int).tolist() == [[1, 1, 0, 0, 1, 1, 0, 0], [0, 1, 0, 1, 0, 1, 0, 1],
                                                [1, 1, 0, 0, 1, 1, 0, 0]]
    assert np.all(t.nonzero().sum(axis=1) == 4)


# ----------------------------------------------------------------------------- mma.sp on packed .s4 (4:8, pairs)

S4 = "mma_sparse_s4"


def test_the_packed_sparse_kernel_is_proved():
    r = verify(str(KERNELS / f"{S4}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)
    assert r.engines["symbolic"]["mma"] == 4 * 4  # 4 CTAs of one warp, K = 256 in steps of 64


def _replace_first(pattern: str, old: str, new: str):
    def change(lines: list[str]) -> None:
        k = first(lines, pattern)
        lines[k] = lines[k].replace(old, new, 1)
    change.__doc__ = f"{old} -> {new} at the first line matching {pattern}"
    return change


S4_PLANTED = [
    # 0x5410 -> 0x4510: the second chunk's two kept bytes in the wrong order (k 10, 11 where k 8, 9 belong)
    ("packed_order", _replace_first(r"selp\.b32\s+%r6, 21520,", "21520", str(0x4510)),
     "C[0, 0]", "expected sum over k of A[0, k] * B[0, k]; has A[0, 10] * B[0, 8] (k 8 of B meets k 10 of A)"),
    ("metadata_value", _replace_first(r"selp\.b32\s+%r62, 1145324612,", "1145324612", str(0x44444484)),
     "C[0, 0]", "expected sum over k of A[0, k] * B[0, k]; has A[0, 10] * B[0, 12] (k 12 of B meets k 10 of A)"),
    ("selector", lambda lines: [lines.__setitem__(k, s.replace("%r7, 0x0;", "%r7, 0x1;"))
                                for k, s in enumerate(lines) if "mma.sp" in s],
     "C[0, 0]", "expected sum over k of A[0, k] * B[0, k]; has A[0, 0] * B[0, 4] (k 4 of B meets k 0 of A)"),
    ("swap_a_registers", _replace_first(r"mma\.sp", "{%r100, %r101}", "{%r101, %r100}"),
     "C[0, 0]", "expected sum over k of A[0, k] * B[0, k]; has A[8, 0] * B[0, 0] (A's m is 8, the element's is 0)"),
]


@pytest.mark.parametrize("name,change,element,words", S4_PLANTED, ids=[p[0] for p in S4_PLANTED])
def test_a_planted_change_in_the_packed_sparse_kernel(tmp_path, name, change, element, words):
    r = verify(mutant(tmp_path, S4, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r, numeric_subset=True)
    f = r.findings[0]
    assert f.element == element, kernel_text(r)
    assert f.words.startswith(words), f.words


def test_the_packed_sparse_kernel_with_its_zeros_left_out_lacks_them(tmp_path):
    r = verify(mutant(tmp_path, S4, lambda lines: None,
                          lambda t: t.replace(", sparse = { chunk = 8, keep = [[0, 1, 2, 3], [2, 3, 6, 7]] }", "")))
    assert r.status == "refuted"
    assert r.findings[0].words.startswith("expected sum over k of A[0, k] * B[0, k]; lacks A[0, 4] * B[0, 4], "
                                          "A[0, 5] * B[0, 5], A[0, 6] * B[0, 6]")


# ----------------------------------------------------------------------------- .s8 (2:4) and .tf32 (1:2): mma_sparse_more.cu

MORE = [
    ("mma_sparse_s8", None, None, None),
    ("mma_sparse_s8", _replace_first(r"selp\.b32\s+%r62, 1145324612,", "1145324612", str(0x44444484)),
     "C[0, 0]", "has A[0, 5] * B[0, 6] (k 6 of B meets k 5 of A)"),
    ("mma_sparse_s8", lambda lines: [lines.__setitem__(k, s.replace("%r7, 0x0;", "%r7, 0x1;"))
                                     for k, s in enumerate(lines) if "mma.sp" in s],
     "C[0, 0]", "has A[0, 0] * B[0, 2] (k 2 of B meets k 0 of A)"),
    ("mma_sparse_tf32", None, None, None),
    ("mma_sparse_tf32", _replace_first(r"selp\.b32\s+%r29, 1145324612,", "1145324612", str(0x444444E4)),
     "C[0, 0]", "has A[0, 2] * B[3, 0] (k 3 of B meets k 2 of A)"),
    ("mma_sparse_tf32", lambda lines: [lines.__setitem__(k, s.replace("%r5, 0x0;", "%r5, 0x1;"))
                                       for k, s in enumerate(lines) if "mma.sp" in s],
     "C[0, 0]", "has A[0, 0] * B[1, 0] (k 1 of B meets k 0 of A)"),
]


@pytest.mark.parametrize("base,change,element,words", MORE,
                         ids=[f"{m[0]}-{'proved' if m[1] is None else i}" for i, m in enumerate(MORE)])
def test_the_s8_and_tf32_sparse_forms(tmp_path, base, change, element, words):
    """Proved as compiled; the metadata of chunk 1 changed, or the selector naming lanes that hold other metadata:
    the first wrong element."""
    if change is None:
        r = verify(str(KERNELS / f"{base}.toml"))
        assert r.status == "proved", kernel_text(r)
        agree(r)
        return
    lines = (KERNELS / f"{base}.ptx").read_text(encoding="utf-8").split("\n")
    change(lines)
    (tmp_path / "k.ptx").write_text("\n".join(lines), encoding="utf-8")
    (tmp_path / "k.toml").write_text((KERNELS / f"{base}.toml").read_text(encoding="utf-8")
                                     .replace(f"{base}.ptx", "k.ptx"), encoding="utf-8")
    r = verify(str(tmp_path / "k.toml"))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    f = r.findings[0]
    assert f.element == element and words in f.words.split("; ")[1], f.words


def test_an_invalid_tf32_metadata_value_is_an_error(tmp_path):
    lines = (KERNELS / "mma_sparse_tf32.ptx").read_text(encoding="utf-8").split("\n")
    _replace_first(r"selp\.b32\s+%r29, 1145324612,", "1145324612", str(0x44444445))(lines)
    (tmp_path / "k.ptx").write_text("\n".join(lines), encoding="utf-8")
    (tmp_path / "k.toml").write_text((KERNELS / "mma_sparse_tf32.toml").read_text(encoding="utf-8")
                                     .replace("mma_sparse_tf32.ptx", "k.ptx"), encoding="utf-8")
    with pytest.raises(SpecError) as e:
        verify(str(tmp_path / "k.toml"))
    assert str(e.value).endswith("warp 0's metadata for row 0, chunk 0 (lane 0, bits 0-3) is 0b0101, not a valid "
                                 "ordered metadata value"), str(e.value)
