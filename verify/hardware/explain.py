"""Whether a spec's layouts explain the relations observed on a probe run (``verify.hardware.observe``).

``compare`` asks whether a spec's formulas *explain* those relations once
rows and columns are numbered by the spec's own C/D layout (k only up to one
common renumbering of A and B, since D does not change under it).  A layout is
``confirmed`` when every relation agrees, ``contradicted`` otherwise, with the
observed relations it violates in the doc's words.
"""
from __future__ import annotations

from typing import Any, Iterable, Mapping

import numpy as np

from .observe import MAX_LISTED, Elem, Observation, Relations, _regs, relations
from .probes import SPARSE_METADATA, Instruction
from ..witnesses import as_witness
from ..layout.model import Layout
from ..results.hardware import HardwareResult
from ..layout.sparse import SparseMap
from ..layout.model import cells_of, cell_at


# ----------------------------------------------------------------------------- spec side

def _el(prefix: str, e: Elem) -> str:
    """An element in the doc's words (prefix ``t``: a position of a wgmma's B tile in shared memory)."""
    if prefix == "t":
        return f"B tile element {e[1]}"
    return f"lane {e[0]} element {prefix}{e[1]}"


def _d(e: Elem) -> str:
    return f"D element c{e[1]} of lane {e[0]}"


class SpecCells:
    """(group, row, col) of each (lane, i) by a spec layout; sparse A per metadata word.

    Every point is evaluated at once by the enumeration engine (``LayoutMap.cells``; a sparse A: its
    ``info`` and ``logical`` columns), the same values the scalar reference evaluator gives (the engines
    agree point for point: ``tests/test_observe_fast.py`` checks it on every bundled layout)."""

    def __init__(self, lay: Layout) -> None:
        self.layout = lay
        self.sparse = isinstance(lay.map, SparseMap)
        self._by_meta: dict[int, tuple[list[list[int]], list[list[int]], list[list[bool]]]] = {}
        self._groups: list[int] | None = None
        self.sets: dict[int, Any] = {}  # ``_spec_sets`` by axis

    def group(self, lane: int) -> int:
        if self.layout.groups <= 1:
            return 0
        if self._groups is None:
            self._groups = [int(g) for g in self.layout.domain.group_array()]
        return self._groups[lane]

    def _arrays(self, nibble: int) -> tuple[list[list[int]], list[list[int]], list[list[bool]]]:
        if nibble not in self._by_meta:
            lay = self.layout
            if self.sparse:
                inf = lay.map.info(lay.domain)
                row, col, ok = inf.row, lay.map.logical(inf, nibble), inf.ok
            else:
                cells = cells_of(lay)
                row, col = cells.row, cells.col
                ok = np.broadcast_to(np.asarray(cells.ok, dtype=bool), np.shape(row))
            self._by_meta[nibble] = (np.asarray(row).tolist(), np.asarray(col).tolist(), np.asarray(ok).tolist())
        return self._by_meta[nibble]

    def cell(self, lane: int, i: int, meta: int = 0) -> tuple[int, int, int] | None:
        row, col, ok = self._arrays(meta & 0xF if self.sparse else 0)
        if not ok[lane][i]:
            return None
        return self.group(lane), row[lane][i], col[lane][i]

    def reference_cell(self, lane: int, i: int, meta: int = 0) -> tuple[int, int, int] | None:
        """The same by the scalar reference evaluator (``point``; a sparse A: ``point_logical``)."""
        cell = cell_at(self.layout, lane, i)
        if self.sparse:
            k = self.layout.map.point_logical(lane, i, meta & 0xF)
            if cell is None or k is None:
                return None
            return self.group(lane), cell[0], k
        return None if cell is None else (self.group(lane), cell[0], cell[1])


def _partition_violations(keys_obs: Mapping[Elem, Any], keys_spec: Mapping[Elem, Any], what: str,
                          name: Any, spec_word: Any, obs_why: Any) -> list[tuple[str, dict[str, Any]]]:
    """Elements grouped together by one side but not the other.

    Elements the experiments never reached (empty observed key) are left out: an
    unreached element says something about the other operands, not about this one.
    """
    out: list[tuple[str, dict[str, Any]]] = []
    first_obs: dict[Any, Elem] = {}
    first_spec: dict[Any, Elem] = {}
    for e in sorted(keys_obs):
        ko, ks = keys_obs[e], keys_spec.get(e)
        if not ko or (isinstance(ko, tuple) and not any(ko)):
            continue
        if ko in first_obs:
            f = first_obs[ko]
            if keys_spec.get(f) != ks:
                out.append((f"the hardware puts {name(f)} and {name(e)} in one {what} ({obs_why(f, e)}); "
                            f"the spec puts them in {spec_word(keys_spec.get(f))} and {spec_word(ks)}",
                            {"relation": what, "first": list(f), "second": list(e), "hardware": "same",
                             "spec": [spec_word(keys_spec.get(f)), spec_word(ks)]}))
        else:
            first_obs[ko] = e
        if ks is not None:
            if ks in first_spec:
                f = first_spec[ks]
                if keys_obs.get(f) != ko:
                    out.append((f"the spec puts {name(f)} and {name(e)} in one {what} ({spec_word(ks)}); "
                                f"on the hardware they differ ({obs_why(f, e, False)})",
                                {"relation": what, "first": list(f), "second": list(e), "hardware": "different",
                                 "spec": [spec_word(ks), spec_word(ks)]}))
            else:
                first_spec[ks] = e
    return out


def _word(kind: str) -> Any:
    def f(key: Any) -> str:
        if key is None:
            return "no cell (the formula is undefined there)"
        g, v = key
        return f"{kind} {v}" + (f" of MMA computation {g}" if g else "")
    return f


def _diff_sets(obs: frozenset[Elem], exp: frozenset[Elem]) -> str:
    extra = sorted(obs - exp)
    missing = sorted(exp - obs)
    parts = []
    if extra:
        parts.append(f"it reaches {_d(extra[0])}, which the spec does not put there")
    if missing:
        parts.append(f"it does not reach {_d(missing[0])}, which the spec puts there")
    return "; ".join(parts)


def compare(ins: Instruction, obs: Observation, rel: Relations | None = None) -> list[HardwareResult]:
    """One result per layout the instruction tests (doc and corrected)."""
    rel = rel or relations(ins, obs)
    memo: dict[int, SpecCells] = {}

    def spec_cells(lay: Layout) -> SpecCells:  # one per layout object: each point is evaluated once
        if id(lay) not in memo:
            memo[id(lay)] = SpecCells(lay)
        return memo[id(lay)]
    a_lay, b_lay, c_lay = ins.a.layout, ins.b.layout, ins.c.layout
    assert a_lay is not None and c_lay is not None  # A and C/D are held in registers (only a wgmma's B is a tile)
    probe_c = spec_cells(c_lay)
    probe_a = spec_cells(a_lay)
    probe_b = None if b_lay is None else spec_cells(b_lay)  # a wgmma's B tile has no spec
    bp = "b" if probe_b is not None else "t"
    a_part_ok = not _a_k(probe_a, rel, bp)
    b_part_ok = probe_b is not None and not _b_k(probe_b, rel)
    found: list[tuple[Layout, list[tuple[str, dict[str, Any]]], str]] = []
    for lay in ins.layouts:
        viol: list[tuple[str, dict[str, Any]]] = []
        note = ""
        if (lay.regs.count, lay.regs.elements_per_register, lay.n_elements) != _regs(ins, lay.operand):
            regs, epr, n = _regs(ins, lay.operand)
            viol.append((f"the instruction takes {regs} registers of {epr} element(s) ({n} per lane) for "
                         f"{lay.operand}; the spec says {lay.regs.count} x {lay.regs.elements_per_register} "
                         f"({lay.n_elements})", {"relation": "registers", "hardware": [regs, epr, n],
                                                 "spec": [lay.regs.count, lay.regs.elements_per_register, lay.n_elements]}))
        else:
            cells = spec_cells(lay)
            if lay.operand in ("C", "D"):
                viol += _c_checks(cells, rel, bp)
            elif lay.operand == "A":
                viol += _a_rows(cells, probe_c, rel) + _a_k(cells, rel, bp)
                if not ins.pairs:
                    note = " (its rows; its k classes are observed at the smallest N)"
                if not viol and probe_b is not None:
                    if b_part_ok:
                        viol += _pairing(cells, probe_b, rel, "A")
                    else:
                        note = f" (k pairing with B not checked: {probe_b.layout.id} has the wrong k classes)"
            else:
                viol += _b_cols(cells, probe_c, rel) + _b_k(cells, rel)
                if not viol:
                    if a_part_ok:
                        viol += _pairing(probe_a, cells, rel, "B")
                    else:
                        note = f" (k pairing with A not checked: {a_lay.id} has the wrong k classes)"
        found.append((lay, viol, note))
    bad_probe = {lay.id for lay, viol, _ in found if viol} & {x.layout.id for x in (ins.a, ins.b, ins.c)
                                                              if x.layout is not None}
    sim = "SIMULATED: " if obs.simulated else ""
    out = []
    for lay, viol, note in found:
        if viol:
            listed = [v[0] for v in viol[:MAX_LISTED]]
            more = f" (and {len(viol) - MAX_LISTED} more)" if len(viol) > MAX_LISTED else ""
            others = sorted(bad_probe - {lay.id})
            if others:
                # A's rows are read through B (all ones) and C/D, and so on: say so
                more += (f" [also contradicted in this run: {', '.join(others)}; this operand's relations are "
                         f"observed through them]")
            msg = f"{sim}{ins.text} on {obs.gpu}: {listed[0]}{more}"
            out.append(HardwareResult(lay.id, ins.id, "contradicted", msg, obs.gpu, obs.simulated,
                                      tuple(listed), as_witness(viol[0][1]), obs.path, expected=expected_status(lay, ins.layouts)))
        else:
            msg = f"{sim}{ins.text} on {obs.gpu}: every observed relation agrees{note}"
            out.append(HardwareResult(lay.id, ins.id, "confirmed", msg, obs.gpu, obs.simulated, (), None, obs.path,
                                      expected=expected_status(lay, ins.layouts)))
    return out


METADATA_NIBBLES = tuple(m & 0xF for m in SPARSE_METADATA)  # the probes' metadata words, one nibble each


def expected_status(lay: Layout, layouts: Iterable[Layout]) -> str:
    """What a run on hardware that does what the specs say is expected to give for ``lay``, as ``check``
    judges a known erratum: a doc layout whose spec records a correction (the erratum's
    correction, what the hardware does) is expected ``contradicted`` when the two differ in what a probe
    sees, i.e. in the register shape or in the cell of some (lane, i) (for a sparse A also under the
    probes' metadata); every other layout (a corrected one, one without erratum, a doc layout whose erratum
    is in its words only, e.g. the element list) is expected ``confirmed`` (a layout the doc leaves
    unspecified, wmma: ``observed``)."""
    fixed = next((x for x in layouts if x.corrects == lay.id), None)
    fine = "observed" if lay.unspecified else "confirmed"  # wmma: the map is observed, never doc-stated
    if fixed is None or lay.corrected:
        return fine
    return "contradicted" if observably_differ(lay, fixed) else fine


def observably_differ(a: Layout, b: Layout) -> bool:
    """Whether two layouts of one operand differ in registers or in the cell of some (lane, i) (a family:
    in some instance)."""
    if a.is_family or b.is_family:
        if not (a.is_family and b.is_family):
            return True
        return any(observably_differ(x, b.instance(**env)) for env, x in a.instances())
    if (a.regs.count, a.regs.elements_per_register, a.n_elements, a.threads) != (
            b.regs.count, b.regs.elements_per_register, b.n_elements, b.threads):
        return True
    if a.unspecified or b.unspecified:
        return a.unspecified != b.unspecified
    sa, sb = SpecCells(a), SpecCells(b)
    if sa.sparse or sb.sparse:
        return any(sa.cell(lane, i, m) != sb.cell(lane, i, m) for lane in range(a.threads)
                   for i in range(a.n_elements) for m in METADATA_NIBBLES)
    ca, cb = cells_of(a), cells_of(b)
    ok = np.broadcast_to(ca.ok, ca.row.shape)
    if not np.array_equal(ok, np.broadcast_to(cb.ok, cb.row.shape)):
        return True
    return bool(np.any((ca.row != cb.row)[ok]) or np.any((ca.col != cb.col)[ok])
                or not np.array_equal(ca.group, cb.group))


def _spec_sets(c: SpecCells, axis: int) -> tuple[dict[Elem, tuple[int, int] | None], dict[tuple[int, int], frozenset[Elem]]]:
    """D element -> (group, row or col) by the C/D spec, and the inverse (once per layout and axis)."""
    if axis not in c.sets:
        c.sets[axis] = _spec_sets_of(c, axis)
    return c.sets[axis]


def _spec_sets_of(c: SpecCells, axis: int) -> tuple[dict[Elem, tuple[int, int] | None], dict[tuple[int, int], frozenset[Elem]]]:
    key: dict[Elem, tuple[int, int] | None] = {}
    inv: dict[tuple[int, int], set[Elem]] = {}
    for lane in range(c.layout.threads):
        for i in range(c.layout.n_elements):
            cell = c.cell(lane, i)
            k = None if cell is None else (cell[0], cell[axis])
            key[(lane, i)] = k
            if k is not None:
                inv.setdefault(k, set()).add((lane, i))
    return key, {k: frozenset(v) for k, v in inv.items()}


# the last run's classes, held with the run's table (one run at a time: the doc and corrected layouts of one
# comparison share it); compared by identity, never keyed by an id() a later table may reuse
_LAST_CLASSES: list[tuple[Any, dict[Elem, frozenset[Elem]], dict[frozenset[Elem], Elem]]] = []


def _classes(table: tuple[Mapping[Elem, frozenset[Elem]], ...]
             ) -> tuple[dict[Elem, frozenset[Elem]], dict[frozenset[Elem], Elem]]:
    """The observed classes of D elements (the first set each D element is seen in) and a witness of each
    (the first source element reaching it): the same for every C/D layout compared with one run."""
    if _LAST_CLASSES and _LAST_CLASSES[0][0] is table:
        return _LAST_CLASSES[0][1], _LAST_CLASSES[0][2]
    classes: dict[Elem, frozenset[Elem]] = {}
    witness: dict[frozenset[Elem], Elem] = {}
    for rels in table:
        for src_el, ds in sorted(rels.items()):
            if ds and ds not in witness:
                witness[ds] = src_el
                for d in ds:
                    classes.setdefault(d, ds)
    _LAST_CLASSES[:] = [(table, classes, witness)]
    return classes, witness


def _c_checks(c: SpecCells, rel: Relations, bp: str = "b") -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for z, ds in sorted(rel.c_to_d.items()):
        if ds != {z}:
            where = ("no D element" if not ds else ", ".join(_d(d) for d in sorted(ds)[:3]))
            out.append((f"C element c{z[1]} of lane {z[0]} arrives at {where}; the spec gives C and D "
                        f"one layout, so it must arrive at {_d(z)}",
                        {"relation": "c_to_d", "lane": z[0], "i": z[1], "element": f"c{z[1]}",
                         "arrives": [list(d) for d in sorted(ds)]}))
    for axis, what, table, src in ((1, "row", rel.rows, "a"), (2, "column", rel.cols, bp)):
        key, _inv = _spec_sets(c, axis)
        classes, witness = _classes(table)
        obs_key = {d: classes.get(d, frozenset()) for d in key}

        def why(f: Elem, e: Elem, same: bool = True, _w=witness, _k=obs_key, _s=src) -> str:
            if same:
                w = _w.get(_k[f])
                return f"both receive {_el(_s, w)}" if w else "neither receives anything"
            w = _w.get(_k[f])
            return (f"{_el(_s, w)} reaches {_d(f)} but not {_d(e)}" if w else f"{_d(f)} receives nothing")
        out += _partition_violations(obs_key, key, what, _d, _word(what), why)
    return out


def _a_rows(a: SpecCells, c: SpecCells, rel: Relations) -> list[tuple[str, dict[str, Any]]]:
    _key, inv = _spec_sets(c, 1)
    out: list[tuple[str, dict[str, Any]]] = []
    for m, meta in enumerate(rel.metadata):
        for x, ds in sorted(rel.rows[m].items()):
            cell = a.cell(x[0], x[1], meta)
            if cell is None:
                out.append((f"{_el('a', x)} has no cell in the spec, yet reaches {len(ds)} D elements",
                            {"relation": "row", "lane": x[0], "i": x[1], "element": f"a{x[1]}"}))
                continue
            exp = inv.get((cell[0], cell[1]), frozenset())
            if ds != exp:
                out.append((f"{_el('a', x)} (row {cell[1]} per the spec): {_diff_sets(ds, exp)}",
                            {"relation": "row", "lane": x[0], "i": x[1], "element": f"a{x[1]}",
                             "spec_row": cell[1], "reaches": [list(d) for d in sorted(ds)]}))
    return out


def _b_cols(b: SpecCells, c: SpecCells, rel: Relations) -> list[tuple[str, dict[str, Any]]]:
    _key, inv = _spec_sets(c, 2)
    out: list[tuple[str, dict[str, Any]]] = []
    union: dict[Elem, frozenset[Elem]] = {}
    for rels in rel.cols:
        for y, ds in rels.items():
            union[y] = union.get(y, frozenset()) | ds
    for y, ds in sorted(union.items()):
        cell = b.cell(y[0], y[1])
        if cell is None:
            out.append((f"{_el('b', y)} has no cell in the spec, yet reaches {len(ds)} D elements",
                        {"relation": "column", "lane": y[0], "i": y[1], "element": f"b{y[1]}"}))
            continue
        exp = inv.get((cell[0], cell[2]), frozenset())
        if ds != exp:
            out.append((f"{_el('b', y)} (column {cell[2]} per the spec): {_diff_sets(ds, exp)}",
                        {"relation": "column", "lane": y[0], "i": y[1], "element": f"b{y[1]}",
                         "spec_col": cell[2], "reaches": [list(d) for d in sorted(ds)]}))
    return out


def _a_k(a: SpecCells, rel: Relations, bp: str = "b") -> list[tuple[str, dict[str, Any]]]:
    out: list[tuple[str, dict[str, Any]]] = []
    for m, meta in enumerate(rel.metadata):
        obs = dict(rel.meets[m])
        spec = {}
        for x in obs:
            cell = a.cell(x[0], x[1], meta)
            spec[x] = None if cell is None else (cell[0], cell[2])

        def why(f: Elem, e: Elem, same: bool = True, _o=obs) -> str:
            if same:
                b = sorted(_o[f])
                return f"both meet {_el(bp, b[0])}" if b else "neither meets any B element"
            only = sorted(_o[f] ^ _o[e])
            if not only:
                return "they meet different B elements"
            owner = f if only[0] in _o[f] else e
            other = e if owner == f else f
            return f"{_el('a', owner)} meets {_el(bp, only[0])}, {_el('a', other)} does not"
        meta_note = f" under metadata 0x{meta:08x}" if len(rel.metadata) > 1 else ""
        out += [(t + meta_note, dict(d, metadata=f"0x{meta:08x}")) for t, d in
                _partition_violations(obs, spec, "k", lambda e: _el("a", e), _word("k"), why)]
    return out


def _b_k(b: SpecCells, rel: Relations) -> list[tuple[str, dict[str, Any]]]:
    met_by: dict[Elem, list[set[Elem]]] = {}
    for m in range(len(rel.metadata)):
        for x, ys in rel.meets[m].items():
            for y in ys:
                met_by.setdefault(y, [set() for _ in rel.metadata])[m].add(x)
    elems = sorted(rel.cols[0])
    obs = {y: tuple(frozenset(s) for s in met_by.get(y, [set() for _ in rel.metadata])) for y in elems}
    spec = {}
    for y in elems:
        cell = b.cell(y[0], y[1])
        spec[y] = None if cell is None else (cell[0], cell[1])

    def why(f: Elem, e: Elem, same: bool = True) -> str:
        if same:
            xs = sorted(set().union(*obs[f]))
            return f"both are met by {_el('a', xs[0])}" if xs else "neither is met by any A element"
        for m in range(len(rel.metadata)):
            only = sorted(obs[f][m] ^ obs[e][m])
            if only:
                owner = f if only[0] in obs[f][m] else e
                other = e if owner == f else f
                return f"{_el('a', only[0])} meets {_el('b', owner)}, not {_el('b', other)}"
        return "they are met by different A elements"
    return _partition_violations(obs, spec, "k", lambda e: _el("b", e), _word("k"), why)


def _pairing(a: SpecCells, b: SpecCells, rel: Relations, side: str) -> list[tuple[str, dict[str, Any]]]:
    """With A's and B's k classes right, the spec must also pair the right classes."""
    out: list[tuple[str, dict[str, Any]]] = []
    bcells = {y: b.cell(y[0], y[1]) for y in rel.cols[0]}
    at_k: dict[tuple[int, int], set[Elem]] = {}  # (group, k) -> the B elements the spec puts there
    for y, cb in bcells.items():
        if cb is not None:
            at_k.setdefault((cb[0], cb[1]), set()).add(y)
    for m, meta in enumerate(rel.metadata):
        for x, ys in sorted(rel.meets[m].items()):
            ca = a.cell(x[0], x[1], meta)
            if ca is None:
                continue
            exp = frozenset(at_k.get((ca[0], ca[2]), ()))
            if ys != exp:
                bad = sorted(ys - exp) or sorted(exp - ys)
                y = bad[0]
                cb = bcells[y]
                met = "meets" if y in ys else "does not meet"
                out.append((f"{_el('a', x)} {met} {_el('b', y)} on the hardware; the spec puts them at "
                            f"k {ca[2]} and k {cb[1] if cb else None} (A and B are paired wrongly)",
                            {"relation": "k-pairing", "a": list(x), "b": list(y), "meets": y in ys,
                             "spec_k": [ca[2], cb[1] if cb else None], "metadata": f"0x{meta:08x}"}))
                if len(out) >= MAX_LISTED + 1:
                    return out
    return out
