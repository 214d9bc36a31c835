"""Imported layouts into the layout model: a ``TVImport`` becomes a ``Layout`` shaped like a spec.

Every notation importer returns a ``TVImport`` (a formula defining ``row``/``col`` over the thread
and ``i``, its threads and values, the extent it states).  ``to_layout`` gives it the identity of
the spec layout it claims to be (instruction, shape, operand, types, element names), its own
domain (the imported threads x values) and a ``FormulaFragment``; every check, both engines and every
renderer then work on it unchanged, and ``conform`` compares it with the spec cell by cell.

Two conventions are applied here, both stated in ``docs/layouts.md``:

* **codomain**: the extent the notation states (a Triton ``shape``, a table's ``rows``/``cols``),
  else the spec's rows x cols;
* **MMA computations** (m8n8k4 runs four per warp): when the spec has several and the import
  defines only lanes of the first (a CuTe SM70 atom: one quad-pair, ``ThrID = (4,2):(1,16)``), the
  import is *lifted* to the warp: lane ``l`` of computation ``g`` acts as the lane at the same
  position in computation 0 (lane 5 as lane 1, lane 20 as lane 16), and the spec's own group
  formula says which computation each lane serves.  An import over the whole warp keeps its own
  lanes and takes the spec's group formula; one over several warps takes it per warp
  (``lane % threads``).
"""
from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any
from functools import lru_cache

import numpy as np

from verify.formula import BinOp, Compare, Formula, InSet, Num, Var, walk

from ..family import substitute
from ..fragment_maps import FormulaFragment, PlacedMap
from ..named import mux
from ..elements import number_ranges
from ..model import Codomain, Domain, Layout
from ..records import Provenance, RegisterFacts, Source
from .errors import NeedsMember, NotationError, TVImport
from .registry import notation as notation_named
from .registry import read_options
from .expr import check_reach, parse_index_code



def _defined_lanes(formula: Formula, threads: int, values: int) -> np.ndarray:
    c = FormulaFragment(formula, domain=Domain(threads, values)).cells()
    return np.flatnonzero(c.ok.any(axis=1))


def _lift_table(like: Layout, defined: np.ndarray) -> tuple[int, ...] | None:
    """Per lane of ``like``, the lane of MMA computation 0 it acts as; None when no lift applies."""
    groups: dict[int, list[int]] = {}
    for lane in range(like.threads):
        groups.setdefault(like.group_of(lane), []).append(lane)
    first = groups.get(0, [])
    if not defined.size or not set(defined.tolist()) <= set(first):
        return None
    if any(len(v) != len(first) for v in groups.values()) or -1 in groups:
        return None
    base = [0] * like.threads
    for lanes in groups.values():
        for pos, lane in enumerate(lanes):
            base[lane] = first[pos]
    return tuple(base)


def _lifted(imp: TVImport, formula: Formula, like: Layout, base: tuple[int, ...]) -> Any:
    """The imported map over the warp: lane ``l`` acts as lane ``base[l]`` of MMA computation 0, i.e.
    ``compose(imported, (lane, i) -> (base[lane], i))`` (``verify.layout.algebra``)."""
    from .. import algebra as A
    from .. import reshape
    from ..dims import Dim
    from ..named import FormulaMap as NamedFormulaMap
    from ..named import TableMap
    rows, cols = imp.extent if imp.extent is not None else (like.rows, like.cols)
    lane, i = Dim("lane", like.threads), Dim("i", imp.values)
    imported = NamedFormulaMap(formula, (lane, i), (Dim("row", rows), Dim("col", cols)))
    lift = TableMap((Dim("thread", like.threads),), (Dim("lane", like.threads),), tuple(enumerate(base)))
    lifted = A.compose(imported, A.product(lift, A.identity(i)))
    return PlacedMap.of(reshape.relabel(lifted, inputs={"thread": "lane"}), notation=imp.notation)


def to_layout(imp: TVImport, like: Layout, *, source: str = "argument", layout_id: str | None = None) -> Layout:
    """``imp`` as a ``Layout`` with ``like``'s identity (instruction, shape, operand, types, element
    names) and its own domain and codomain (see the module docstring for both conventions).  A layout the notation
    built itself (``imp.built``: a TiledMMA, tiled with the algebra) keeps its map, named as given."""
    if imp.built is not None:
        built: Layout = imp.built  # type: ignore[assignment]
        view = replace(built.map, notation=imp.notation)
        return replace(built, map=view, id=layout_id or f"given({imp.notation}) as {like.id}", expect={},
                       provenance=replace(built.provenance, spec_path=source, formula_text=imp.text, formula_line=1,
                                          source=Source(file=source, line=1, section=like.provenance.source.section,
                                                        title=f"{imp.notation} layout", document=imp.notation)))
    formula = Formula(imp.formula.definitions, like.prefix)
    threads, group, groups = imp.threads, None, 1
    lift: tuple[int, ...] | None = None
    if like.groups > 1:
        if imp.threads < like.threads:
            lift = _lift_table(like, _defined_lanes(formula, imp.threads, imp.values))
        if lift is not None:
            threads, group, groups = like.threads, like.group, like.groups
        elif imp.threads == like.threads:
            group, groups = like.group, like.groups
        elif imp.threads % like.threads == 0 and like.group is not None:
            group = substitute(like.group, {"lane": BinOp("%", Var("lane"), Num(like.threads))})
            groups = like.groups
    rows, cols = imp.extent if imp.extent is not None else (like.rows, like.cols)
    epr = like.regs.elements_per_register if imp.values % like.regs.elements_per_register == 0 else 1
    lid = layout_id or f"given({imp.notation}) as {like.id}"
    note = f"lifted from MMA computation 0 to the warp: {number_ranges(sorted(set(lift)))}" if lift else ""
    return Layout(
        id=lid, instruction=like.instruction, shape=like.shape, operand=like.operand, types=like.types,
        variant=like.variant, domain=Domain(threads, imp.values, groups, group), codomain=Codomain(rows, cols),
        map=_lifted(imp, formula, like, lift) if lift is not None else
        (LookupMap if imp.notation == "table" else FormulaFragment)(formula, imp.notation),
        regs=RegisterFacts(max(1, imp.values // epr), like.regs.type, epr, element_bits=like.regs.element_bits),
        provenance=Provenance(Source(file=source, line=1, section=like.provenance.source.section,
                                     title=f"{imp.notation} layout", document=imp.notation),
                              source, 1, imp.text, derived=note),
        expect={},
        params_bound=tuple((k, v) for k, v in like.params_bound if k in imp.params))


def import_as(notation: str, text: str | bytes, like: Layout, *, source: str = "argument", **options: Any) -> Layout:
    """Read ``text`` in a registered notation (``verify.layout.notations.registry``: ``cute``, ``triton``,
    ``table``, ``index``...) as a layout of the same instruction operand as ``like``; ``options`` are the
    notation's own (``thr_id`` for CuTe).  Bad text is a positioned ``NotationError``.  ``like`` a family:
    index code that reads its parameters is a family itself; any other text raises ``NeedsMember``
    (``verify.checks.members.read_as`` reads it against each member)."""
    try:
        n = notation_named(notation)
    except KeyError as e:
        raise NotationError(e.args[0], 1, 1, source) from None
    if like.is_family:
        block = n.name == "index" and options.get("threads") is not None
        return _family_index(text, like, source) if n.name == "index" and not block else _needs_member(like)
    return to_layout(n.read(text, like, source=source, **read_options(n, options)), like, source=source)


def _needs_member(like: Layout) -> Layout:
    raise NeedsMember(f"{like.id} is a family: read against one member")


def _family_index(text: str | bytes, like: Layout, source: str) -> Layout:
    """Index code states no domain of its own (it takes the spec's), so against a family it is a family too:
    the same parameters, domain and extents as ``like``, the code free to read the parameters by name
    (``N``).  ``conform`` then answers for every member.  Values ``like`` carries (``params_bound``: names
    ``--param`` binds that the family lacks, ``layout.params``) are read by name too; the layout keeps those
    it read."""
    from ..params import reads
    values = dict(like.params_bound)
    names = tuple(p.name for p in like.domain.params)
    formula = parse_index_code(text, like.prefix, source, names + tuple(k for k in values if k not in names))
    read = {k: values[k] for k in reads(formula, values)}
    formula = substitute(formula, read) if read else formula
    for _, member in like.instances():
        check_reach(substitute(formula, dict(member.params_bound)), member.threads, member.n_elements, source)
    raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
    return replace(like, id=f"given(index) as {like.id}", map=FormulaFragment(Formula(formula.definitions, like.prefix), "index"),
                   domain=Domain(like.threads, like.domain.elements, like.groups, like.group, like.domain.params),
                   regs=replace(like.regs, element_list=None, elements_text=None),
                   provenance=Provenance(Source(file=source, line=1, section=like.provenance.source.section,
                                                title="index layout", document="index"), source, 1, raw,
                                         figure=like.provenance.figure, arch=like.provenance.arch),
                   expect={}, partial=False, params_bound=tuple(read.items()))


# ----------------------------------------------------------------------------- tables for Z3

@dataclass(frozen=True)
class LookupMap(FormulaFragment):
    """A table's formula (``table.table_to_formula``: ``key = lane * values + i``, then one case per
    value with the set of keys that take it) with a Z3 face built for lookups.

    The enumeration engines evaluate the formula as any other.  For Z3 the set-membership cases
    are read from the AST (data, not evaluated) into a multiplexer tree over the bits of ``key``
    (``If(key bit b, upper half, lower half)``, identical halves shared), which Z3 bit-blasts into a
    small circuit; the membership chains themselves cost Z3 one disjunction per table entry.
    """

    def _tables(self) -> tuple[int, dict[int, int], dict[int, int]]:
        return _lookup_tables(self.formula)

    def first_outside(self, rows: int, cols: int) -> tuple[int, int, int, int] | None:
        """The first (lane, i) in (lane, i) order whose cell lies outside rows x cols, as (lane, i, row,
        col), read from the table's data without evaluating it (None: every cell inside)."""
        size, row, col = self._tables()
        values = _table_values(self.formula)
        bad = [k for k in row.keys() & col.keys() if not (0 <= row[k] < rows and 0 <= col[k] < cols)]
        if not bad:
            return None
        k = min(bad)
        return (*divmod(k, values), row[k], col[k])

    def _z3(self, thread, i, env=None):
        import z3

        from ...engines import smt
        size, rows, cols = self._tables()
        w = thread.size()
        key = smt.Encoder(self.formula, thread, i).definition("key")
        bits = max(1, (size - 1).bit_length())
        kv = z3.Extract(bits - 1, 0, key.value) if w >= bits else key.value
        in_range = z3.ULT(key.value, smt.bv(size, w)) if size < (1 << (w - 1)) else z3.BoolVal(True)
        row_ok, row = mux(kv, bits, rows, w)
        col_ok, col = mux(kv, bits, cols, w)
        return z3.And(key.ok, in_range, row_ok, col_ok), row, col


def _table_domain(formula: Formula) -> tuple[int, int]:
    """(threads, values) of a table formula, from its ``key`` definition's domain condition."""
    key = formula.get("key").cases[0]
    threads, values = None, None
    for n in walk(key.cond) if key.cond is not None else ():
        if isinstance(n, Compare) and isinstance(n.operands[0], Var) and isinstance(n.operands[1], Num):
            if n.operands[0].name == "lane":
                threads = n.operands[1].value
            else:
                values = n.operands[1].value
    if threads is None or values is None:
        raise ValueError("not a table formula")
    return threads, values


def _table_values(formula: Formula) -> int:
    return _table_domain(formula)[1]


@lru_cache(maxsize=64)
def _lookup_tables(formula: Formula) -> tuple[int, dict[int, int], dict[int, int]]:
    threads, values = _table_domain(formula)
    out = []
    for name in ("row", "col"):
        table: dict[int, int] = {}
        for case in formula.get(name).cases:
            if not (isinstance(case.expr, Num) and isinstance(case.cond, InSet)):
                raise ValueError("not a table formula")
            for k in case.cond.values:
                table.setdefault(k, case.expr.value)  # the first case that applies wins
        out.append(table)
    return threads * values, out[0], out[1]
