"""The polynomial engine of count identities (``verify.engines.polynomial``): one literal case per operation."""
from __future__ import annotations

from fractions import Fraction

import pytest

from verify.engines import polynomial as P
from verify.formula import parse_expression

J = P.var("j")


def ext(text: str, first: int, step: int) -> P.Poly | None:
    return P.of_extent(parse_expression(text, ("N",)), "N", first, step)


def test_add_and_scale_cancel() -> None:
    assert P.add(J, P.scale(J, Fraction(-1))) == ()
    assert P.add(P.const(2), P.const(3)) == P.const(5)


def test_mul_collects_powers() -> None:
    assert P.mul(P.add(J, P.const(1)), P.add(J, P.const(-1))) == P.add(P.mul(J, J), P.const(-1))


def test_floor_of_an_integer_polynomial_is_itself() -> None:
    assert P.floor_div(P.add(P.scale(J, Fraction(8)), P.const(4)), P.const(4)) == P.add(P.scale(J, Fraction(2)), P.const(1))


def test_floor_drops_a_constant_fraction() -> None:
    assert P.floor_div(P.add(P.scale(J, Fraction(2)), P.const(1)), P.const(2)) == J  # floor(j + 1/2) = j


def test_floor_of_a_fractional_slope_is_one_atom() -> None:
    a = P.floor_div(J, P.const(4))
    assert a == P.var(P.scale(J, Fraction(1, 4))) and P.floor_div(J, P.const(4)) == a  # the same atom twice
    assert P.floor_div(P.add(J, P.const(4)), P.const(4)) == P.add(a, P.const(1))  # floor(j/4 + 1) = floor(j/4) + 1


def test_divisor_or_shift_in_j_is_undecided() -> None:
    assert P.floor_div(P.const(4), J) is None and P.floor_div(J, P.const(0)) is None
    assert ext("1 << N", 0, 1) is None


def test_extent_over_a_run() -> None:
    assert ext("N / 4 * 2 * 128", 8, 8) == ext("64 * N", 8, 8) == P.add(P.scale(J, Fraction(512)), P.const(512))
    assert ext("N % 2", 2, 2) == () and ext("N >> 1 << 1", 2, 2) == ext("N", 2, 2)


def test_identity_on_run() -> None:
    n = lambda t: parse_expression(t, ("N",))  # noqa: E731
    assert P.identity_on_run(n("N / 8 + N / 8"), n("2 * (N / 8)"), "N", 4, 2) is True  # the atoms cancel
    assert P.identity_on_run(n("N * 3"), n("N * 2 + 8"), "N", 8, 1) is False  # equal at N = 8 only
    assert P.identity_on_run(n("N / N"), n("1"), "N", 1, 1) is None


def test_a_foreign_variable_is_an_error() -> None:
    with pytest.raises(ValueError, match="not an extent in N"):
        P.of_extent(parse_expression("N * M", ("N", "M")), "N", 1, 1)
