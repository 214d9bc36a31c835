"""Register fragments as named maps, and named maps as register fragments.

* ``fragment_map(layout)``: a fragment of the layout model (``verify.layout.model``: a ``LayoutMap`` over a
  ``Domain`` and a ``Codomain``) as a named map ``(lane|thread, i) -> ([mma,] row, col)`` (Tensor Memory
  fragments: ``(tmem_lane, tmem_col)``), so the algebra can combine it with anything.
* ``as_layout_map(named)`` / ``as_fragment(named, like)``: a named map with those inputs and outputs as the
  fragment model's ``LayoutMap`` / as a fragment ``Layout`` with another layout's register facts, so every
  fragment check, ``conform`` and the renderers work on maps the algebra builds (relations, tiles, the
  notations' lifting to the warp).
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Hashable, Mapping

import numpy as np

from ..engines import smt
from .dims import Dim, find, names, output_name, thread_dim_name
from .family import Param, extent_at, substitute
from .model import Cells, Codomain, Domain, Layout
from .named import Env, Values, box_bound, full

if TYPE_CHECKING:  # pragma: no cover
    import z3


# ----------------------------------------------------------------------------- fragments <-> named maps

@dataclass(frozen=True)
class FragmentMap:
    """A fragment of the layout model (``verify.layout.model``: a ``LayoutMap`` over a ``Domain`` and a
    ``Codomain``) as a named map ``(lane|thread, i) -> ([mma,] row, col)`` (Tensor Memory fragments:
    ``(tmem_lane, tmem_col)``).  Build it with ``fragment_map(layout)``."""

    map: Any  # LayoutMap
    domain: Any  # Domain
    codomain: Any  # Codomain

    @property
    def params(self) -> tuple[Param, ...]:
        return self.domain.params  # type: ignore[no-any-return]

    @property
    def thread(self) -> str:
        return thread_dim_name(self.domain.threads)

    @property
    def inputs(self) -> tuple[Dim, ...]:
        return (Dim(self.thread, self.domain.threads), Dim("i", self.domain.elements))

    @property
    def outputs(self) -> tuple[Dim, ...]:
        r, c = (output_name(n) for n in self.codomain.dims)
        mma = (Dim("mma", self.domain.groups),) if self.domain.groups > 1 else ()
        return mma + (Dim(r, self.codomain.rows), Dim(c, self.codomain.cols))

    def key(self) -> Hashable:
        return ("fragment", type(self.map), self.map.key(), self.domain, self.codomain)

    def bound(self) -> int:
        return max(self.map.bound(self.domain), self.domain.bound(), box_bound(self.inputs, self.params),
                   box_bound(self.outputs, self.params))

    def _concrete(self, env: Env | None) -> tuple[Any, Any]:
        """(map, domain) of one binding of the parameters."""
        if not self.params:
            return self.map, self.domain
        env = dict(env or {})
        d = self.domain
        lmap = self.map
        if hasattr(lmap, "formula"):
            lmap = replace(lmap, formula=substitute(lmap.formula, env))
        elif hasattr(lmap, "with_params"):
            lmap = lmap.with_params(env)
        return lmap, Domain(d.threads, extent_at(d.elements, env), d.groups, d.group, (), d.replication)

    def evaluate(self, point: Mapping[str, np.ndarray], env: Env | None = None) -> Values:
        lmap, dom = self._concrete(env)
        cells = _fragment_cells(lmap, dom)
        t, i = np.asarray(point[self.thread], np.int64), np.asarray(point["i"], np.int64)
        good = (t >= 0) & (t < dom.threads) & (i >= 0) & (i < dom.elements)
        tt, ii = np.where(good, t, 0), np.where(good, i, 0)
        r, c = (output_name(n) for n in self.codomain.dims)
        out = {r: cells.row[tt, ii], c: cells.col[tt, ii]}
        ok = good & cells.ok[tt, ii]
        if dom.groups > 1:
            g = cells.group[tt]
            out = {"mma": g, **out}
            ok = ok & (g >= 0)
        return full(Values(out, ok))

    def at(self, point: Mapping[str, int], env: Env | None = None) -> dict[str, int] | None:
        lmap, dom = self._concrete(env)
        t, i = int(point[self.thread]), int(point["i"])
        if not (0 <= t < dom.threads and 0 <= i < dom.elements):
            return None
        cell = lmap.point(t, i)
        if cell is None:
            return None
        r, c = (output_name(n) for n in self.codomain.dims)
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
        ok, r_, c_ = self.map.z3_cell(t, i, env or None)
        r, c = (output_name(n) for n in self.codomain.dims)
        out = {r: r_, c: c_}
        if self.domain.groups > 1:
            out = {"mma": self.domain.z3_group(t), **out}
        return ok, out


    def encode_pair(self, p: Mapping[str, "z3.ExprRef"], q: Mapping[str, "z3.ExprRef"],
                    env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple[tuple["z3.BoolRef", dict[str, "z3.ExprRef"]],
                                                                            tuple["z3.BoolRef", dict[str, "z3.ExprRef"]]]:
        """``encode`` at two points, the cell encoded once: the second point's terms are the first's with its
        unknowns substituted (a fragment's cell is a function of (thread, i) alone; the fragment checks have
        always encoded a collision this way)."""
        first = self.encode(p, env)
        pairs = [(_unknown(p[d.name]), _unknown(q[d.name])) for d in self.inputs]
        ok, out = first
        return first, (smt.substitute(ok, *pairs), {k: smt.substitute(v, *pairs) for k, v in out.items()})


def _unknown(x: "z3.ExprRef") -> "z3.ExprRef":
    """The constant a point's coordinate is (under ``smt.natural``'s zero extension)."""
    import z3
    return x.arg(0) if z3.is_app_of(x, z3.Z3_OP_ZERO_EXT) else x


def _fragment_cells(lmap: Any, domain: Domain) -> Cells:
    key = getattr(lmap, "key", None)
    try:
        k = (type(lmap), key(), domain) if key is not None else None
        hash(k)
    except TypeError:
        k = None
    if k is None:
        return lmap.cells(domain)  # type: ignore[no-any-return]
    hit = _CELLS.get(k)
    if hit is None:
        if len(_CELLS) > 1 << 10:
            _CELLS.clear()
        hit = _CELLS[k] = lmap.cells(domain)
    assert isinstance(hit, Cells)
    return hit


_CELLS: dict[Hashable, Any] = {}


def fragment_map(layout: Layout) -> FragmentMap:
    """A fragment layout as a named map (see ``FragmentMap``)."""
    return FragmentMap(layout.map, layout.domain, layout.codomain)


@dataclass(frozen=True)
class LayoutMapView:
    """A named map ``(thread, i) -> (row, col)`` as the fragment model's ``LayoutMap`` (cells, point,
    z3_cell), so that every fragment check, conform and the renderers work on maps the algebra builds.
    ``thread``/``i``/``row``/``col`` name the dimensions that play those parts."""

    named: Any  # NamedMap
    thread: str = "lane"
    i: str = "i"
    row: str = "row"
    col: str = "col"
    notation: str = "algebra"
    env: tuple[tuple[str, int], ...] = field(default=())

    def key(self) -> Hashable:
        return ("view", self.named.key(), self.thread, self.i, self.row, self.col, self.env)

    def bound(self, domain: Domain) -> int:
        return max(self.named.bound(), domain.threads, 1)

    def with_params(self, env: Mapping[str, int]) -> "LayoutMapView":
        """The view of one family member (``Layout.instance`` asks for it)."""
        return replace(self, env=tuple(sorted({**dict(self.env), **env}.items())))

    def _env(self, env: Mapping[str, Any] | None) -> dict[str, Any]:
        return {**dict(self.env), **dict(env or {})}

    def cells(self, domain: Domain, env: Env | None = None) -> Cells:
        pt = {self.thread: np.arange(domain.threads, dtype=np.int64)[:, None],
              self.i: np.arange(domain.elements, dtype=np.int64)[None, :]}  # type: ignore[arg-type]
        v = self.named.evaluate(pt, self._env(env))
        shape = (domain.threads, domain.elements)
        b = (lambda a: np.ascontiguousarray(np.broadcast_to(a, shape)))  # noqa: E731
        return Cells(b(v.out[self.row]).astype(np.int64), b(v.out[self.col]).astype(np.int64), b(v.ok),
                     domain.group_array())

    def point(self, thread: int, i: int) -> tuple[int, int] | None:
        out = self.named.at({self.thread: thread, self.i: i}, dict(self.env))
        return None if out is None else (out[self.row], out[self.col])

    def z3_cell(self, thread: "z3.BitVecRef", i: "z3.BitVecRef",
                env: Mapping[str, "z3.ExprRef"] | None = None) -> tuple["z3.BoolRef", "z3.ExprRef", "z3.ExprRef"]:
        w = thread.size()
        z_env = {k: smt.bv(v, w) for k, v in self.env}
        z_env.update(env or {})
        ok, out = self.named.encode({self.thread: thread, self.i: i}, z_env)
        return ok, out[self.row], out[self.col]


def as_layout_map(named: Any, *, notation: str = "algebra") -> LayoutMapView:
    """A named map over (``lane`` or ``thread``, ``i``) to two outputs (``row``, ``col``, or Tensor
    Memory's ``tmem_lane``, ``tmem_col``; an ``mma`` output is left to the fragment's domain) as a
    fragment ``LayoutMap``."""
    ins = names(named.inputs)
    outs = [n for n in names(named.outputs) if n != "mma"]
    thread = "lane" if "lane" in ins else "thread"
    if set(ins) != {thread, "i"}:
        raise ValueError(f"a fragment view needs inputs (lane or thread, i), not {ins}")
    if len(outs) != 2:
        raise ValueError(f"a fragment view needs two outputs (row, col), not {tuple(outs)}")
    if set(outs) == {"row", "col"}:
        outs = ["row", "col"]  # by name, whatever order the map lists them in (a transpose swaps it)
    return LayoutMapView(named, thread, "i", outs[0], outs[1], notation=notation)


def as_fragment(named: Any, like: Layout, **changes: Any) -> Layout:
    """A named map as a fragment ``Layout`` with ``like``'s identity and register facts (relations and
    tiles check it with every fragment check).  The domain takes the map's thread count and ``like``'s
    elements, MMA computations and parameters, the codomain the map's output sizes (``changes`` may give
    ``domain``/``codomain`` and any other field); expectations and corrections are dropped."""
    view = as_layout_map(named)
    thread = find(named.inputs, view.thread)
    domain = replace(like.domain, threads=thread.size)
    out = {d.name: d for d in named.outputs}
    codomain = Codomain(out[view.row].size, out[view.col].size, like.codomain.dims)
    fields: dict[str, Any] = dict(map=view, domain=domain, codomain=codomain, corrected=False, expect={}, partial=False)
    fields.update(changes)
    return replace(like, **fields)
