"""A register fragment's points and cells: ``Domain`` (threads, elements per thread, the MMA computation each
thread serves, a family's parameters, replication), ``Codomain`` (the rows x cols each computation covers) and
``Cells`` (every point evaluated at once: the enumeration engine's table).  ``verify.layout.model`` builds a
``Layout`` on them and ``verify.layout.fragment_maps`` places its map there.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from functools import lru_cache
from typing import TYPE_CHECKING, Mapping

import numpy as np

from ..engines import oracle, smt
from ..formula import Formula
from ..formula.bounds import value_bound
from .family import Extent, Param, extent_at

if TYPE_CHECKING:  # pragma: no cover
    import z3

Env = Mapping[str, int]


# ----------------------------------------------------------------------------- domain and codomain

@dataclass(frozen=True)
class Domain:
    """The (thread, i) points of a layout.

    ``group`` maps a thread to its MMA computation (``None``: the threads compute one);
    ``replication`` is how many points hold each cell (1 for every PTX fragment; Triton and
    Volta-style layouts may replicate).
    """

    threads: int
    elements: Extent  # per thread: an int, or (a family) an expression over its parameters
    groups: int = 1
    group: Formula | None = None
    params: tuple[Param, ...] = ()
    replication: int = 1

    @property
    def threads_per_group(self) -> int:
        return self.threads // self.groups

    def bindings(self) -> list[dict[str, int]]:
        """Every binding of the parameters: every combination, in lexicographic order of the values in the
        order the parameters are declared (``[{}]`` without parameters)."""
        names = [p.name for p in self.params]
        return [dict(zip(names, combo)) for combo in itertools.product(*(p.values for p in self.params))]

    def group_of(self, thread: int) -> int:
        """Which MMA computation ``thread`` belongs to (-1 where the group formula is undefined)."""
        if self.group is None:
            return 0
        return _group_table(self.group, self.threads)[thread] if 0 <= thread < self.threads else -1

    def group_array(self) -> np.ndarray:
        """The MMA computation of every thread (int64, -1 where undefined)."""
        if self.group is None:
            return np.zeros(self.threads, np.int64)
        return np.asarray(_group_table(self.group, self.threads), np.int64)

    def z3_group(self, thread: "z3.BitVecRef") -> "z3.ExprRef":
        if self.group is None:
            return smt.bv(0, thread.size())
        return smt.Encoder(self.group, thread, smt.bv(0, thread.size())).definition("group").value

    @property
    def count(self) -> int:
        """Elements per thread of a concrete domain (a family's member; ``ValueError`` for the family itself)."""
        if not isinstance(self.elements, int):
            raise ValueError("a family's elements per thread depend on its parameters: take a member")
        return self.elements

    def z3_contains(self, thread: "z3.BitVecRef", i: "z3.BitVecRef") -> "z3.BoolRef":
        return smt.in_domain(thread, i, self.threads, self.count)

    @property
    def most_elements(self) -> int:
        """Elements per thread (a family: its largest member's)."""
        n = self.elements
        return n if isinstance(n, int) else max(extent_at(n, env) for env in self.bindings())

    def z3_point(self, names: str, width: int) -> "list[z3.BitVecRef]":
        """The unknowns (thread, i), named by the two words of ``names``, of a query that keeps them in this
        domain (a family's: in some member's), each declared with only the bits its largest value needs
        (``smt.natural``, whose precondition the query keeps)."""
        return smt.naturals(names, width, (self.threads - 1, self.most_elements - 1))

    def at_binding(self, env: Mapping[str, int]) -> "Domain":
        """The domain of one binding of the parameters: the extents evaluated, no parameters left."""
        return Domain(self.threads, extent_at(self.elements, env), self.groups, self.group, (), self.replication)

    def bound(self) -> int:
        """A bound on every value the group formula takes (for the bit width)."""
        return value_bound(self.group, self.threads - 1, 0) if self.group is not None else 0


@lru_cache(maxsize=None)
def _group_table(group: Formula, threads: int) -> tuple[int, ...]:
    out = []
    for lane in range(threads):
        g = oracle.evaluate(group, "group", lane, 0)
        out.append(int(g) if isinstance(g, int) else -1)
    return tuple(out)


@dataclass(frozen=True)
class Codomain:
    """The rows x cols matrix that each MMA computation's points cover.

    ``dims`` names the two axes for messages and tables: ``("row", "col")`` for a matrix,
    ``("lane", "column")`` for Tensor Memory (tcgen05.ld/st: rows are TMEM lanes, columns 32-bit
    TMEM columns, both relative to the address operand ``taddr``).
    """

    rows: Extent
    cols: Extent
    dims: tuple[str, str] = ("row", "col")

    def at_binding(self, env: Mapping[str, int]) -> "Codomain":
        """The matrix of one binding of a family's parameters."""
        return Codomain(extent_at(self.rows, env), extent_at(self.cols, env), self.dims)


# ----------------------------------------------------------------------------- the map

@dataclass(frozen=True)
class Cells:
    """Every point of a domain evaluated: the enumeration engine's view of a layout.

    ``row``/``col`` are ``[threads, elements]`` int64 arrays, meaningful where ``ok`` (a case
    of the formula applies); ``group`` is the MMA computation of each thread.
    """

    row: np.ndarray
    col: np.ndarray
    ok: np.ndarray
    group: np.ndarray
