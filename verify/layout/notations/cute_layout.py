"""CuTe's layout value: ``IntTuple`` nested shapes and strides, and ``CuteLayout`` (``shape:stride``).

A CuTe layout maps a 1-D coordinate to an index: the coordinate is split colexicographically over
the (flattened) shape — leftmost mode fastest — and each digit is multiplied by its stride.  The
int-tuple helpers (``flatten``, ``product``, ``congruent``, ``compact_left``, ``tuple_text``) and the
layout's evaluation live here; reading layouts from text is ``cute_parse``'s job.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property

IntTuple = int | tuple["IntTuple", ...]

MAX_DEPTH = 32            # nesting of tuples / template arguments (real layouts use <= 4)


# ----------------------------------------------------------------------------- int tuples

def _leaves(t: IntTuple) -> Iterator[int]:
    """Leaves of a nested tuple, left to right (iterative: no recursion limit)."""
    stack: list[Iterator[IntTuple]] = [iter((t,))]
    while stack:
        for x in stack[-1]:
            if isinstance(x, tuple):
                stack.append(iter(x))
                break
            yield x
        else:
            stack.pop()


def flatten(t: IntTuple) -> tuple[int, ...]:
    return tuple(_leaves(t))


def product(t: IntTuple) -> int:
    p = 1
    for x in _leaves(t):
        p *= x
    return p


def congruent(a: IntTuple, b: IntTuple) -> bool:
    """Same tree structure (CuTe's ``congruent``): ints match ints, tuples of equal rank match."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        if isinstance(x, tuple) != isinstance(y, tuple):
            return False
        if isinstance(x, tuple):
            if len(x) != len(y):  # type: ignore[arg-type]
                return False
            stack.extend(zip(x, y))  # type: ignore[arg-type]
    return True


def _rebuild(like: IntTuple, leaves: Iterator[int]) -> IntTuple:
    """A tuple with the structure of ``like`` and the given leaves (bounded depth: parsed input)."""
    if isinstance(like, tuple):
        return tuple(_rebuild(x, leaves) for x in like)
    return next(leaves)


def compact_left(shape: IntTuple) -> IntTuple:
    """CuTe's default stride (``LayoutLeft``): prefix products; extent-1 modes get stride 0."""
    out, cur = [], 1
    for s in _leaves(shape):
        out.append(0 if s == 1 else cur)
        cur *= s
    return _rebuild(shape, iter(out))


def tuple_text(t: IntTuple) -> str:
    if isinstance(t, tuple):
        return "(" + ",".join(tuple_text(x) for x in t) + ")"
    return str(t)


def _depth(t: IntTuple) -> int:
    depth, stack = 0, [(t, 0)]
    while stack:
        x, d = stack.pop()
        depth = max(depth, d)
        if isinstance(x, tuple):
            if d >= MAX_DEPTH:
                return d + 1
            stack.extend((y, d + 1) for y in x)
    return depth


# ----------------------------------------------------------------------------- the layout

def _apply(x: int, size: int, leaves: tuple[tuple[int, int], ...]) -> int:
    """A layout of ``size`` with flattened ``leaves`` (extent, stride) at the 1-D coordinate ``x``."""
    if not 0 <= x < size:
        raise ValueError(f"coordinate {x} outside 0..{size - 1}")
    out = 0
    for s, d in leaves:
        out += (x % s) * d
        x //= s
    return out


@dataclass(frozen=True)
class CuteLayout:
    """A CuTe layout ``shape:stride`` (nested tuples of ints, congruent)."""

    shape: IntTuple
    stride: IntTuple

    def __post_init__(self) -> None:
        if _depth(self.shape) > MAX_DEPTH or _depth(self.stride) > MAX_DEPTH:
            raise ValueError(f"layout nested deeper than {MAX_DEPTH} levels")
        if not congruent(self.shape, self.stride):
            raise ValueError(f"shape {tuple_text(self.shape)} and stride {tuple_text(self.stride)} are not congruent")
        for s in _leaves(self.shape):
            if not isinstance(s, int) or isinstance(s, bool) or s < 1:
                raise ValueError(f"shape entry {s!r} is not a positive integer")
        for d in _leaves(self.stride):
            if not isinstance(d, int) or isinstance(d, bool) or d < 0:
                raise ValueError(f"stride entry {d!r} is not a non-negative integer")

    def size(self) -> int:
        return product(self.shape)

    def rank(self) -> int:
        """Number of top-level modes (an integer shape is one mode)."""
        return len(self.shape) if isinstance(self.shape, tuple) else 1

    def mode(self, k: int) -> CuteLayout:
        if not isinstance(self.shape, tuple):
            if k != 0:
                raise IndexError(k)
            return self
        return CuteLayout(self.shape[k], self.stride[k])  # type: ignore[index]

    def leaves(self) -> tuple[tuple[int, int], ...]:
        """(extent, stride) of each flattened mode, fastest first."""
        return tuple(zip(flatten(self.shape), flatten(self.stride)))

    @cached_property
    def _modes(self) -> tuple[tuple[int, tuple[tuple[int, int], ...]], ...]:
        """(size, leaves) of the whole layout, then of each top-level mode: what ``__call__`` reads."""
        return ((self.size(), self.leaves()),) + tuple((m.size(), m.leaves()) for m in map(self.mode, range(self.rank())))

    def __call__(self, *coord: int) -> int:
        """``L(x)`` on a 1-D coordinate, or ``L(c0, c1, ...)`` with one integer per top-level mode."""
        modes = self._modes
        if len(coord) == 1:
            return _apply(coord[0], *modes[0])
        if len(coord) != self.rank():
            raise ValueError(f"{len(coord)} coordinates for a rank-{self.rank()} layout")
        return sum(_apply(c, *modes[k + 1]) for k, c in enumerate(coord))

    def cosize(self) -> int:
        """One past the largest index the layout reaches."""
        return sum((s - 1) * d for s, d in self.leaves()) + 1

    def __str__(self) -> str:
        return f"{tuple_text(self.shape)}:{tuple_text(self.stride)}"

    def to_cpp(self) -> str:
        def cpp(t: IntTuple, kind: str) -> str:
            if isinstance(t, tuple):
                return f"{kind}<" + ",".join(cpp(x, kind) for x in t) + ">"
            return f"_{t}"
        return f"Layout<{cpp(self.shape, 'Shape')},{cpp(self.stride, 'Stride')}>"
