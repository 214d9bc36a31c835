"""Register fragments as named maps: ``(lane|thread, i) -> ([mma,] row, col)``.

A fragment's map is a ``NamedMap`` (``verify.layout.named``) like every other layout's: the checks, both
engines, the algebra and the renderers read it through ``evaluate``/``at``/``encode``.  What makes it a
fragment is where it sits: on the points of a ``Domain`` (threads, elements per thread, the MMA computation
each thread serves, a family's parameters) into a ``Codomain`` (rows x cols, or Tensor Memory's lanes x
columns).  ``FragmentKind`` gives every kind those dimensions from its ``domain`` and ``codomain`` (the
``Layout`` that holds the map places it there: ``model.Layout`` fills both in) and the three faces; a kind
says only how its cells are computed, three independent ways (every point at once with
``verify.engines.vector``, one point with ``verify.engines.oracle``, symbolically with
``verify.engines.smt``):

* ``FormulaFragment``: the doc's pseudo-code and every notation imported into it (definitions ``row`` and
  ``col`` over ``lane`` and ``i``); ``LookupFragment``: a table's formula, with a Z3 face built for lookups
  (``verify.layout.notations.build``).
* ``SparseMap`` (``verify.layout.sparse``): sparse A, a partial map (compressed cells, logical columns).
* ``UnspecifiedMap`` (``verify.layout.model``): wmma's, which the doc leaves unspecified (no point has a cell).
* ``PlacedMap``: any named map the algebra builds (relations, tiles, block tiles, a notation lifted to the
  warp), read by the names of its inputs and outputs.

The MMA computation a thread serves (m8n8k4 runs four in a warp) is the output ``mma`` where the domain has
more than one; a point whose computation is undefined is undefined.
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Hashable, Mapping

import numpy as np

from ..engines import oracle, smt, vector
from ..formula import Formula
from ..formula.bounds import value_bound
from .dims import Dim, find, names, output_name, thread_dim_name
from .elements import MAX_ELEMENTS
from .family import Param, substitute
from .memo import held
from .domain import Cells, Codomain, Domain, Env
from .named import Values, box_bound, computed_once, full

if TYPE_CHECKING:  # pragma: no cover
    import z3


class FragmentKind:
    """The named-map faces every kind of fragment map shares (see the module docstring).  A kind is a frozen
    dataclass with the fields ``domain``, ``codomain`` (``None`` until a ``Layout`` places it) and ``notation``,
    and implements ``grid`` (every point of a domain: ``Cells``), ``_point`` (one point: ``(row, col)`` or
    ``None``), ``_z3`` (``(defined, row, col)`` over a symbolic point), ``cell_bound`` and ``_key``; a family's kind
    also ``at_params`` (the kind at one binding of the parameters)."""

    domain: Domain | None
    codomain: Codomain | None
    notation: str

    # -- what a kind implements
    def grid(self, domain: Domain, env: Env | None = None) -> Cells:
        raise NotImplementedError

    def _point(self, thread: int, i: int) -> tuple[int, int] | None:
        raise NotImplementedError

    def _z3(self, thread: "z3.BitVecRef", i: "z3.BitVecRef",
            env: Mapping[str, "z3.ExprRef"] | None) -> tuple["z3.BoolRef", "z3.ExprRef", "z3.ExprRef"]:
        raise NotImplementedError

    def cell_bound(self, domain: Domain) -> int:
        raise NotImplementedError

    def _key(self) -> Hashable:
        raise NotImplementedError

    def at_params(self, env: Mapping[str, int]) -> "FragmentKind":
        return self

    # -- placement
    def placed(self, domain: Domain, codomain: Codomain) -> Any:
        """This kind on ``domain`` into ``codomain`` (what ``Layout`` does with its map)."""
        if self.domain is domain and self.codomain is codomain:
            return self
        return replace(self, domain=domain, codomain=codomain)  # type: ignore[type-var]

    def _dom(self) -> Domain:
        if self.domain is None:
            raise ValueError("a fragment map is read on its domain: give it one (a Layout places its map)")
        return self.domain

    def _cod(self) -> Codomain:
        if self.codomain is None:
            raise ValueError("a fragment map is read into its codomain: give it one (a Layout places its map)")
        return self.codomain

    # -- the named dimensions
    @property
    def params(self) -> tuple[Param, ...]:
        return self._dom().params

    @property
    @computed_once
    def thread(self) -> str:
        """The thread input's name: ``lane`` for a warp's fragment, ``thread`` for a warpgroup's or a block's."""
        return thread_dim_name(self._dom().threads)

    @property
    @computed_once
    def row_col(self) -> tuple[str, str]:
        """The names of the two outputs a cell has (``row``, ``col``; Tensor Memory's ``tmem_lane``,
        ``tmem_col``)."""
        a, b = self._cod().dims
        return output_name(a), output_name(b)

    @property
    @computed_once
    def inputs(self) -> tuple[Dim, ...]:
        d = self._dom()
        return (Dim(self.thread, d.threads), Dim("i", d.elements))

    @property
    @computed_once
    def outputs(self) -> tuple[Dim, ...]:
        d, c = self._dom(), self._cod()
        r, col = self.row_col
        mma = (Dim("mma", d.groups),) if d.groups > 1 else ()
        return mma + (Dim(r, c.rows), Dim(col, c.cols))

    def key(self) -> Hashable:
        return ("fragment", type(self).__name__, self._key(), self.domain, self.codomain)

    @computed_once
    def bound(self) -> int:
        d = self._dom()
        return max(self.cell_bound(d), d.bound(), box_bound(self.inputs, self.params), box_bound(self.outputs, self.params))

    # -- every point of the domain at once (the enumeration engine's table)
    def cells(self, env: Env | None = None) -> Cells:
        """Every (thread, i) of the domain evaluated: ``[threads, elements]`` arrays (a family: at ``env``),
        memoised on the map."""
        kind, dom = self._concrete(env)
        return held(kind, "_cells", dom, lambda: kind.grid(dom))

    def member(self, env: Env | None) -> "FragmentKind":
        """This map at one binding of its parameters (a plain map: itself), placed on that binding's domain and
        codomain.  One object per binding, held on the family map: every view of the binding (a check's
        evaluation, ``Layout.instance``'s map, a digest) shares the member's evaluated cells."""
        d = self._dom()
        if not d.params:
            return self
        key = tuple(sorted((env or {}).items()))

        def build() -> "FragmentKind":
            e = dict(key)
            cod = None if self.codomain is None else self.codomain.at_binding(e)
            return replace(self.at_params(e), domain=d.at_binding(e), codomain=cod)  # type: ignore[type-var]
        return held(self, "_members", key, build)

    def _concrete(self, env: Env | None) -> tuple["FragmentKind", Domain]:
        """(kind, domain) of one binding of the parameters."""
        m = self.member(env)
        return m, m._dom()

    # -- the three faces
    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        kind, dom = self._concrete(env)
        cells = held(kind, "_cells", dom, lambda: kind.grid(dom))
        t, i = np.asarray(point[self.thread], np.int64), np.asarray(point["i"], np.int64)
        r, c = self.row_col
        if _whole_domain(t, i, dom):  # the enumeration's grid: the cells as they are, no gather
            out = {r: _frozen(cells.row), c: _frozen(cells.col)}
            ok = _frozen(cells.ok)
            if dom.groups > 1:
                g = np.broadcast_to(cells.group[:, None], ok.shape)
                out = {"mma": g, **out}
                ok = ok & (g >= 0)
            return Values(out, ok)
        good = (t >= 0) & (t < dom.threads) & (i >= 0) & (i < dom.count)
        tt, ii = np.where(good, t, 0), np.where(good, i, 0)
        out = {r: cells.row[tt, ii], c: cells.col[tt, ii]}
        ok = good & cells.ok[tt, ii]
        if dom.groups > 1:
            g = cells.group[tt]
            out = {"mma": g, **out}
            ok = ok & (g >= 0)
        return full(Values(out, ok))

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        kind, dom = self._concrete(env)
        t, i = int(point[self.thread]), int(point["i"])
        if not (0 <= t < dom.threads and 0 <= i < dom.count):
            return None
        cell = kind._point(t, i)
        if cell is None:
            return None
        r, c = self.row_col
        out = {r: cell[0], c: cell[1]}
        if dom.groups > 1:
            g = dom.group_of(t)
            if g < 0:
                return None
            out = {"mma": g, **out}
        return out

    def encode(self, point: Mapping[str, "z3.ExprRef"],
               env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]:
        t, i = point[self.thread], point["i"]
        ok, r_, c_ = self._z3(t, i, env or None)
        r, c = self.row_col
        out = {r: r_, c: c_}
        if self._dom().groups > 1:
            out = {"mma": self._dom().z3_group(t), **out}
        return ok, out

    def encode_pair(self, p: Mapping[str, "z3.ExprRef"], q: Mapping[str, "z3.ExprRef"],
                    env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple[tuple["z3.BoolRef", dict[str, "z3.ExprRef"]],
                                                                            tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]]:
        """``encode`` at two points, the cell encoded once: the second point's terms are the first's with its
        unknowns substituted (a fragment's cell is a function of (thread, i) alone)."""
        first = self.encode(p, env)
        pairs = [(_unknown(p[d.name]), _unknown(q[d.name])) for d in self.inputs]
        ok, out = first
        return first, (smt.substitute(ok, *pairs), {k: smt.substitute(v, *pairs) for k, v in out.items()})


def _frozen(a: np.ndarray) -> np.ndarray:
    """A read-only view of a memoised array (what ``evaluate`` hands out is never written)."""
    v = a.view()
    v.flags.writeable = False
    return v


def _whole_domain(t: np.ndarray, i: np.ndarray, dom: Domain) -> bool:
    """``(t, i)`` is the open grid of the whole domain (``named.grid``: threads down, elements across, in order)."""
    return (t.shape == (dom.threads, 1) and i.shape == (1, dom.count)
            and bool((t[:, 0] == np.arange(dom.threads)).all()) and bool((i[0] == np.arange(dom.count)).all()))


def _unknown(x: "z3.ExprRef") -> "z3.ExprRef":
    """The constant a point's coordinate is (under ``smt.natural``'s zero extension)."""
    import z3
    return x.arg(0) if z3.is_app_of(x, z3.Z3_OP_ZERO_EXT) else x


# ----------------------------------------------------------------------------- formulas

# Z3 terms of one formula at one symbolic point, shared by every check that asks (building Z3 terms from
# Python is most of a check's cost): held on the formula, keyed by the variables' AST ids (the entry keeps the
# variables alive, so their ids are never reused).


@dataclass(frozen=True)
class FormulaFragment(FragmentKind):
    """(thread, i) -> (row, col) by the definitions ``row`` and ``col`` of ``formula``."""

    formula: Formula
    notation: str = "formula"
    domain: Domain | None = None
    codomain: Codomain | None = None

    def _key(self) -> Hashable:
        return self.formula

    def at_params(self, env: Mapping[str, int]) -> "FormulaFragment":
        return replace(self, formula=substitute(self.formula, env))

    def cell_bound(self, domain: Domain) -> int:
        env_max = {p.name: max(p.values) for p in domain.params}
        i_max = domain.elements - 1 if isinstance(domain.elements, int) else MAX_ELEMENTS
        return value_bound(self.formula, domain.threads - 1, i_max, env_max)

    def _point(self, thread: int, i: int) -> tuple[int, int] | None:
        """(row, col), or None where no case applies; a column range here is an error."""
        ev = oracle.Evaluator(self.formula, thread, i)
        try:
            r, c = ev.value("row"), ev.value("col")
        except oracle.Undefined:
            return None
        if isinstance(r, tuple) or isinstance(c, tuple):
            raise oracle.EvalError("a column range where a single cell is needed", self.formula.get("col").pos)
        return r, c

    def grid(self, domain: Domain, env: Env | None = None) -> Cells:
        ev = vector.VectorEvaluator(self.formula, np.arange(domain.threads)[:, None],
                                    np.arange(domain.count)[None, :], env)
        r, c = ev.full("row"), ev.full("col")
        shape = (domain.threads, domain.count)
        # the oracle evaluates row, then col (only where row is defined), then rejects ranges
        err = vector.either(r.err, vector.within(r.ok, c.err))
        ok = vector.both(r.ok, c.ok)
        for v in (r, c):
            if v.span is not None:
                err = vector.either(err, vector.within(ok, v.span))
        try:
            group = domain.group_array()
        except oracle.EvalError:
            group = None
        if group is None or (err is not None and err.any()):
            self._raise_first_error(domain)  # the oracle names the first failing point exactly
        okm = np.ones(shape, bool) if ok is None else np.ascontiguousarray(ok, bool)
        return Cells(np.ascontiguousarray(r.lo, np.int64), np.ascontiguousarray(c.lo, np.int64), okm, group)  # type: ignore[arg-type]

    def _raise_first_error(self, domain: Domain) -> None:
        for lane in range(domain.threads):
            domain.group_of(lane)
            for i in range(domain.count):
                self._point(lane, i)
        raise AssertionError("the vectorised engine reported an error that the oracle does not find")

    def _z3(self, thread: "z3.BitVecRef", i: "z3.BitVecRef",
            env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", "z3.ExprRef", "z3.ExprRef"]:
        key = (thread.get_id(), i.get_id(), tuple(sorted((k, v.get_id()) for k, v in (env or {}).items())))

        def build() -> tuple[Any, tuple[Any, Any, Any]]:
            enc = smt.Encoder(self.formula, thread, i, env)
            r, c = enc.definition("row"), enc.definition("col")
            return (thread, i, env), (smt.conj(r.ok, c.ok), r.value, c.value)
        return held(self.formula, "_z3_cell", key, build)[1]


# ----------------------------------------------------------------------------- unspecified

@dataclass(frozen=True)
class UnspecifiedMap(FragmentKind):
    """The doc leaves the map unspecified (wmma: "the distribution of fragments ... is unspecified and is
    target architecture dependent"): no point has a cell.  Only the register counts and the replication they
    imply can be checked; the bijection checks do not apply to it."""

    notation: str = "unspecified"
    domain: Domain | None = None
    codomain: Codomain | None = None

    def _key(self) -> Hashable:
        return ("unspecified",)

    def cell_bound(self, domain: Domain) -> int:
        return 0

    def _point(self, thread: int, i: int) -> tuple[int, int] | None:
        return None

    def grid(self, domain: Domain, env: Env | None = None) -> Cells:
        shape = (domain.threads, domain.count)
        zero = np.zeros(shape, np.int64)
        return Cells(zero, zero.copy(), np.zeros(shape, bool), domain.group_array())

    def _z3(self, thread: "z3.BitVecRef", i: "z3.BitVecRef",
            env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", "z3.ExprRef", "z3.ExprRef"]:
        import z3
        return z3.BoolVal(False), smt.bv(0, thread.size()), smt.bv(0, thread.size())


# ----------------------------------------------------------------------------- any named map, placed

@dataclass(frozen=True)
class PlacedMap(FragmentKind):
    """A named map over (``lane`` or ``thread``, ``i``) to two cell outputs (``row``, ``col``; Tensor Memory's
    ``tmem_lane``, ``tmem_col``), the algebra's or a notation's, placed on a fragment's domain: relations,
    tiles, block tiles and the notations' lifting to the warp give the fragment checks their maps this way.
    ``thread``/``i``/``row``/``col`` name the dimensions of ``named`` that play those parts; ``env`` is a
    family member's binding.  An ``mma`` output of ``named`` is left to the domain."""

    named: Any  # NamedMap
    source_thread: str = "lane"
    source_i: str = "i"
    source_row: str = "row"
    source_col: str = "col"
    notation: str = "algebra"
    env: tuple[tuple[str, int], ...] = ()
    domain: Domain | None = None
    codomain: Codomain | None = None

    @staticmethod
    def of(named: Any, *, notation: str = "algebra") -> "PlacedMap":
        """``named`` read by its names: inputs (``lane`` or ``thread``, ``i``), two outputs besides ``mma``
        (``row`` and ``col`` by name whatever order the map lists them in, else in its order)."""
        ins = names(named.inputs)
        outs = [n for n in names(named.outputs) if n != "mma"]
        thread = "lane" if "lane" in ins else "thread"
        if set(ins) != {thread, "i"}:
            raise ValueError(f"a fragment needs inputs (lane or thread, i), not {ins}")
        if len(outs) != 2:
            raise ValueError(f"a fragment needs two outputs (row, col), not {tuple(outs)}")
        if set(outs) == {"row", "col"}:
            outs = ["row", "col"]
        return PlacedMap(named, thread, "i", outs[0], outs[1], notation=notation)

    def thread_size(self) -> Any:
        """The size of ``named``'s thread input."""
        return find(self.named.inputs, self.source_thread).size

    def cell_sizes(self) -> tuple[Any, Any]:
        """The sizes of ``named``'s two cell outputs."""
        out = {d.name: d for d in self.named.outputs}
        return out[self.source_row].size, out[self.source_col].size

    def _key(self) -> Hashable:
        return ("placed", self.named.key(), self.source_thread, self.source_i, self.source_row, self.source_col, self.env)

    def at_params(self, env: Mapping[str, int]) -> "PlacedMap":
        return replace(self, env=tuple(sorted({**dict(self.env), **env}.items())))

    def cell_bound(self, domain: Domain) -> int:
        return max(self.named.bound(), domain.threads, 1)

    def grid(self, domain: Domain, env: Env | None = None) -> Cells:
        pt = {self.source_thread: np.arange(domain.threads, dtype=np.int64)[:, None],
              self.source_i: np.arange(domain.count, dtype=np.int64)[None, :]}
        v = self.named.evaluate(pt, {**dict(self.env), **dict(env or {})})
        shape = (domain.threads, domain.count)

        def b(a: np.ndarray) -> np.ndarray:
            return np.ascontiguousarray(np.broadcast_to(a, shape))
        return Cells(b(v.out[self.source_row]).astype(np.int64), b(v.out[self.source_col]).astype(np.int64), b(v.ok),
                     domain.group_array())

    def _point(self, thread: int, i: int) -> tuple[int, int] | None:
        out = self.named.at({self.source_thread: thread, self.source_i: i}, dict(self.env))
        return None if out is None else (out[self.source_row], out[self.source_col])

    def _z3(self, thread: "z3.BitVecRef", i: "z3.BitVecRef",
            env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", "z3.ExprRef", "z3.ExprRef"]:
        w = thread.size()
        z_env = {k: smt.bv(v, w) for k, v in self.env}
        z_env.update(env or {})
        ok, out = self.named.encode({self.source_thread: thread, self.source_i: i}, z_env)
        return ok, out[self.source_row], out[self.source_col]


def placed(m: Any, domain: Domain, codomain: Codomain) -> Any:
    """``m`` (a fragment kind, or any named map with fragment inputs and outputs) on ``domain`` into
    ``codomain``."""
    if not isinstance(m, FragmentKind):
        m = PlacedMap.of(m)
    return m.placed(domain, codomain)


__all__ = ["FormulaFragment", "FragmentKind", "PlacedMap", "UnspecifiedMap", "placed"]
