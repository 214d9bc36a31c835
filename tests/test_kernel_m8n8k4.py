"""``mma.m8n8k4`` .f16 (the quad-pair form: four MMA computations per warp) in ``ptx-verify kernel``: the
hand-written kernel (examples/kernels/mma_m8n8k4.cu, its PTX by make_fixtures.py) is proved; changes planted in its
PTX (two registers of A swapped, the two halves of a packed A register in the wrong order, two D registers swapped,
a lane's quad-pair taken wrong) are each reported with the right first wrong element; a register renamed stays
proved.  The ``.f64`` form (one MMA per warp, mma_m8n8k4_f64.cu) too.  Both engines agree on every verdict."""
from __future__ import annotations

import re

import pytest

from kernel_plants import KERNELS, agree, first, mutant
from verify.kernel.frontdoor import verify
from verify.outputs.kernel import kernel_text

BASE = "mma_m8n8k4"


def test_the_quad_pair_kernel_is_proved():
    r = verify(str(KERNELS / f"{BASE}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)
    assert r.engines["symbolic"]["mma"] == 4 * 4  # 4 CTAs of one warp, K = 16 in steps of 4


def swap_a_registers(lines: list[str]) -> None:
    """The first mma's A registers (k 0, 1 and k 2, 3) trade places."""
    k = first(lines, r"mma\.sync")
    lines[k] = lines[k].replace("{%r38, %r39}", "{%r39, %r38}", 1)


def packed_order(lines: list[str]) -> None:
    """The first A register packed high half first (k 1 where k 0 belongs)."""
    k = first(lines, r"mov\.b32 %r38, \{%rs1,%rs2\}")
    lines[k] = lines[k].replace("{%rs1,%rs2}", "{%rs2,%rs1}", 1)


def swap_d_registers(lines: list[str]) -> None:
    """The first mma writes its d0 and d1 to each other's register."""
    k = first(lines, r"mma\.sync")
    lines[k] = lines[k].replace("{%f169, %f168,", "{%f168, %f169,", 1)


def quad_pair(lines: list[str]) -> None:
    """8 q taken as (lane << 1) & 16: quad-pairs 1 and 3 compute the rows of 0 and 2."""
    k = first(lines, r"and\.b32\s+%r30, %r29, 24;")
    lines[k] = lines[k].replace("24;", "16;")


PLANTED = [
    (swap_a_registers, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 2] * B[0, 0] (k 0 of B meets "
     "k 2 of A)"),
    (packed_order, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 1] * B[0, 0] (k 0 of B meets "
     "k 1 of A)"),
    (swap_d_registers, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 0] * B[0, 1] (B's n is 1, "
     "the element's is 0)"),
    (quad_pair, "C[8, 0]", "expected sum over k of A[8, k] * B[k, 0]; has A[0, 0] * B[0, 0] (A's m is 0, the "
     "element's is 8)"),
]


@pytest.mark.parametrize("change,element,words", PLANTED, ids=[p[0].__name__ for p in PLANTED])
def test_a_planted_change_is_the_first_wrong_element(tmp_path, change, element, words):
    r = verify(mutant(tmp_path, BASE, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    f = r.findings[0]
    assert f.element == element, kernel_text(r)
    assert f.words.startswith(words), f.words


def rename_register(lines: list[str]) -> None:
    """%r38 renamed %r200 everywhere (a register the function now declares)."""
    k = first(lines, r"\.reg \.b32\s+%r<")
    lines[k] = re.sub(r"%r<\d+>", "%r<201>", lines[k])
    for n, s in enumerate(lines):
        lines[n] = re.sub(r"%r38\b", "%r200", s)


def test_a_register_renamed_stays_proved(tmp_path):
    r = verify(mutant(tmp_path, BASE, rename_register))
    assert r.status == "proved", kernel_text(r)
    agree(r)


# ----------------------------------------------------------------------------- .f64: one MMA per warp

F64 = "mma_m8n8k4_f64"


def test_the_f64_kernel_is_proved():
    r = verify(str(KERNELS / f"{F64}.toml"))
    assert r.status == "proved", kernel_text(r)
    agree(r)


def f64_swap_d(lines: list[str]) -> None:
    """The first mma writes d0 and d1 to each other's register."""
    k = first(lines, r"mma\.sync")
    lines[k] = lines[k].replace("{%fd60, %fd59}, {%fd31}", "{%fd59, %fd60}, {%fd31}", 1)


def f64_a_for_b(lines: list[str]) -> None:
    """The first mma's B operand given A's register."""
    k = first(lines, r"mma\.sync")
    lines[k] = lines[k].replace("{%fd31}, {%fd32}", "{%fd31}, {%fd31}", 1)


@pytest.mark.parametrize("change,element,words", [
    (f64_swap_d, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 0] * B[0, 1] (B's n is 1, the "
     "element's is 0)"),
    (f64_a_for_b, "C[0, 0]", "expected sum over k of A[0, k] * B[k, 0]; has A[0, 0] * A[0, 0] (the product of A "
     "and A, not of A and B)"),
], ids=["f64_swap_d", "f64_a_for_b"])
def test_a_planted_change_in_the_f64_kernel(tmp_path, change, element, words):
    r = verify(mutant(tmp_path, F64, change))
    assert r.status == "refuted", kernel_text(r)
    agree(r)
    f = r.findings[0]
    assert f.element == element, kernel_text(r)
    assert f.words.startswith(words), f.words
