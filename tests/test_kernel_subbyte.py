"""``mma`` on elements narrower than a byte in ``ptx-verify kernel``: the hand-written kernels of
examples/kernels/mma_subbyte.cu (packed ``.s4``, m16n8k32; ``-DB1``: packed ``.b1`` with ``.and.popc``, m16n8k128)
are proved with A and B declared as packed tensors; changes planted in their PTX (two registers of A swapped, the
bytes of a packed register permuted: its elements' k order wrong) are each reported with the right first wrong
element; data shifted by a part of a byte (a nibble order the executor cannot follow) is an error at its line; a
register renamed stays proved.

The numeric engine's random values are 4 or 1 bits wide here, so a wrong sum can equal the right one by chance: it
must find a subset of the symbolic engine's wrong elements, and the first of them (the verdict checks this)."""
from __future__ import annotations

import re

import pytest

from kernel_plants import KERNELS, agree, first, mutant
from verify.errors import SpecError
from verify.kernel.frontdoor import verify
from verify.kernel.launch import parse_launch
from verify.outputs.kernel import kernel_text



@pytest.mark.parametrize("base,mmas", [("mma_s4", 16), ("mma_b1", 16)])
def test_the_packed_kernels_are_proved(base, mmas):
    r = verify(str(KERNELS / f"{base}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)
    assert r.engines["symbolic"]["wrong_elements"] == r.engines["numeric"]["wrong_elements"] == 0
    assert r.engines["symbolic"]["mma"] == mmas  # 4 CTAs of one warp, 4 K steps


def swap_a_registers(lines: list[str]) -> None:
    """The first mma's A registers (rows g and g + 8) trade places."""
    k = first(lines, r"mma\.sync")
    lines[k] = lines[k].replace("{%r95, %r96}", "{%r96, %r95}", 1)


def _after_first_load(extra: str):
    def change(lines: list[str]) -> None:
        k = first(lines, r"ld\.global\.u32\s+%r95, \[%rd16\];")
        lines.insert(k + 1, f"\t{extra}")
    change.__doc__ = f"``{extra}`` after the first load of A"
    return change


halves_swapped = _after_first_load("prmt.b32 %r95, %r95, 0, 0x1032;")  # k 0..3 <-> k 4..7 (s4)
bytes_permuted = _after_first_load("prmt.b32 %r95, %r95, 0, 0x3201;")  # k 0, 1 <-> k 2, 3 (s4)

PLANTED = [
    ("mma_s4", swap_a_registers, "C[0, 0]", "expected sum over k of A[0, k] * B[0, k]; has A[8, 0] * B[0, 0] (A's m "
     "is 8, the element's is 0)", 512),
    ("mma_s4", halves_swapped, "C[0, 0]", "expected sum over k of A[0, k] * B[0, k]; has A[0, 4] * B[0, 0] (k 0 of B "
     "meets k 4 of A)", 256),
    ("mma_s4", bytes_permuted, "C[0, 0]", "expected sum over k of A[0, k] * B[0, k]; has A[0, 2] * B[0, 0] (k 0 of B "
     "meets k 2 of A)", 256),
    ("mma_b1", swap_a_registers, "C[0, 0]", "expected sum over k of A[0, k] * B[0, k]; has A[8, 0] * B[0, 0] (A's m "
     "is 8, the element's is 0)", 512),
    ("mma_b1", bytes_permuted, "C[0, 0]", "expected sum over k of A[0, k] * B[0, k]; has A[0, 8] * B[0, 0] (k 0 of "
     "B meets k 8 of A)", 256),
]


@pytest.mark.parametrize("base,change,element,words,count", PLANTED,
                         ids=[f"{p[0]}-{p[1].__name__ if hasattr(p[1], '__name__') else 'x'}-{i}"
                              for i, p in enumerate(PLANTED)])
def test_a_planted_change_is_the_first_wrong_element(tmp_path, base, change, element, words, count):
    r = verify(mutant(tmp_path, base, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r, numeric_subset=True)
    (f,) = r.findings
    assert (f.kind, f.element, f.count) == ("wrong_element", element, count), kernel_text(r)
    assert f.words.startswith(words), f.words
    assert f.chain[1].opcode.startswith("mma.m16n8k") and f.chain[1].source.endswith("mma_subbyte.cu:30")


def test_a_shift_by_part_of_a_byte_is_an_error_at_its_line(tmp_path):
    with pytest.raises(SpecError) as e:
        verify(mutant(tmp_path, "mma_s4", _after_first_load("shl.b32 %r95, %r95, 4;")))
    assert "shl.b32 shifts data by 4 bits (thread 0): the executor follows data only in whole bytes" in str(e.value)
    assert "k.ptx:91:" in str(e.value)


def rename_register(lines: list[str]) -> None:
    """%r95 renamed %r200 everywhere (a register the function now declares)."""
    k = first(lines, r"\.reg \.b32\s+%r<")
    lines[k] = re.sub(r"%r<\d+>", "%r<201>", lines[k])
    for n, s in enumerate(lines):
        lines[n] = re.sub(r"%r95\b", "%r200", s)


@pytest.mark.parametrize("base", ["mma_s4", "mma_b1"])
def test_a_register_renamed_stays_proved(tmp_path, base):
    r = verify(mutant(tmp_path, base, rename_register))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)


@pytest.mark.parametrize("shape,strides", [([16, 7], None), ([16, 8], [1, 16]), ([16, 8], [9, 1])])
def test_a_packed_tensor_must_pack_whole_bytes_along_its_last_index(shape, strides):
    extra = "" if strides is None else f", strides = {strides}"
    toml = ('ptx = "k.ptx"\ngrid = [1, 1, 1]\nblock = [32, 1, 1]\ncomputes = "C[m, n] = A[m, k] * B[n, k]"\n'
            f'args = [\n  {{ tensor = "A", type = "s4", shape = {shape}{extra} }},\n'
            '  { tensor = "B", type = "s4", shape = [8, 8] },\n  { tensor = "C", type = "s32", shape = [16, 8] },\n]\n')
    with pytest.raises(SpecError) as e:
        parse_launch(toml, "l.toml")
    assert "s4 elements are packed 2 to a byte along the last index" in str(e.value) and "l.toml:6:" in str(e.value)


def test_a_packed_tensor_spans_its_bytes():
    t = parse_launch('ptx = "k.ptx"\ngrid = [1, 1, 1]\nblock = [32, 1, 1]\ncomputes = "C[m, n] = A[m, k] * B[n, k]"\n'
                     'args = [{ tensor = "A", type = "b1", shape = [4, 64] }, { tensor = "B", type = "u4", shape = '
                     '[8, 64] }, { tensor = "C", type = "s32", shape = [4, 8] }]\n', "l.toml").tensors()
    assert (t["A"].packed, t["A"].span, t["B"].packed, t["B"].span) == (8, 32, 2, 256)


# ----------------------------------------------------------------------------- the other shapes (mma_subbyte_shapes.cu)

SHAPES = ["mma_s4_m8n8k32", "mma_b1_m8n8k128", "mma_s4_m16n8k64", "mma_b1_m16n8k256"]


def _swap_first_two(lines: list[str], which: int) -> None:
    """The first mma's operand list ``which`` (0: D, 1: A) with its first two registers swapped."""
    k = first(lines, r"mma\.sync")
    lists = re.findall(r"\{[^}]*\}", lines[k])
    regs = [x.strip() for x in lists[which][1:-1].split(",")]
    regs[0], regs[1] = regs[1], regs[0]
    lines[k] = lines[k].replace(lists[which], "{" + ", ".join(regs) + "}", 1)


@pytest.mark.parametrize("base", SHAPES)
def test_every_packed_shape_is_proved_and_a_swap_is_caught(tmp_path, base):
    r = verify(str(KERNELS / f"{base}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r, numeric_subset=True)
    assert r.engines["symbolic"]["mma"] == 16  # 4 CTAs of one warp, 4 K steps
    wide = "m16n8" in base
    r = verify(mutant(tmp_path, base, lambda lines: _swap_first_two(lines, 1 if wide else 0)))
    assert r.status == "refuted", kernel_text(r)
    agree(r, numeric_subset=True)
    f = r.findings[0]
    assert f.element == "C[0, 0]", kernel_text(r)
    want = ("has A[8, 0] * B[0, 0] (A's m is 8, the element's is 0)" if wide else
            "has A[0, 0] * B[1, 0] (B's n is 1, the element's is 0)")
    assert f.words.startswith("expected sum over k of A[0, k] * B[0, k]; " + want), f.words
