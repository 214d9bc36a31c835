"""The faster paths give what the slower ones gave: each compared, on the bundled specs and on seeded
mutants of them (one constant of a formula changed), with a small scalar reference written out here.

* the metadata table (vectorised engine) = the oracle's ``selector_of`` / ``metadata_cell``, errors included;
* ``metadata_budget`` / ``metadata_group`` enumerations over the table = the scalar scans over the oracle;
* ``shapes``' per-axis scan = the first-reaching tables it replaced;
* sparse Z3 terms substituted from one encoding = a direct encoding (Z3 proves them equal);
* the pair checks' joint query = their separate queries;
* a family instance's formula = the per-variable ``replace_node`` rebuild, positions included;
* count identities decided by exact polynomials (``engines.polynomial``) = decided by sympy.
"""
from __future__ import annotations

import random
import re
from functools import lru_cache
from typing import Any, Iterator

import pytest
import z3

from verify import api
from verify.checks import instruction, sparse as sp
from verify.engines import oracle, smt
from verify.errors import SpecError
from verify.formula import Num, Var, replace_node, walk
from verify.layout import family
from verify.layout.model import cells_of
from verify.layout.sparse import (NIBBLES_PER_REGISTER, is_sparse, metadata_cell, metadata_owner, metadata_table,
                                  selector_of)
from verify.witnesses import Witness

from conftest import SPECS

SPARSE_FILES = sorted(p for p in SPECS.glob("*.toml") if ".sp." in p.name)
DENSE_FILES = sorted(p for p in SPECS.glob("*.toml") if ".sp." not in p.name and "'''" in p.read_text())


def _numbers(text: str, first_only: bool = False, quote: str = "'''") -> list[re.Match[str]]:
    """The integer literals inside the formula blocks (``quote``: a fragment's ''', a map's three double quotes)
    and the selector string of a spec (``first_only``: inside its first formula, a sparse spec's A)."""
    blocks = [m.span(1) for m in re.finditer(quote + r"(.*?)" + quote, text, re.S)]
    blocks = blocks[:1] if first_only else blocks + [m.span(1) for m in re.finditer(r'selector = "([^"]*)"', text)]
    return [m for m in re.finditer(r"\b\d+\b", text) if any(a <= m.start() < b for a, b in blocks)]


def mutants(files: list, count: int, seed: int, first_only: bool = False, quote: str = "'''") -> Iterator[Any]:
    """``count`` seeded mutants (a spec with one formula constant changed) that load; the originals first."""
    rng = random.Random(seed)
    for path in files:
        yield api.loads(path.read_text(), str(path))
    made = 0
    while made < count:
        path = rng.choice(files)
        text = path.read_text()
        nums = _numbers(text, first_only, quote)
        if not nums:
            continue
        m = rng.choice(nums)
        new = text[:m.start()] + str(rng.choice([0, 1, 2, 3, 4, 6, 8, 16, 32])) + text[m.end():]
        try:
            spec = api.loads(new, str(path))
        except SpecError:  # a mutant the loader rejects is not a case here
            continue
        made += 1
        yield spec


def _outcome(fn: Any, *args: Any) -> Any:
    """A call's value (a witness as its JSON fields), or the error it raises (type, message, position), so
    errors compare too."""
    try:
        value = fn(*args)
    except oracle.EvalError as e:
        return ("raises", type(e).__name__, str(e), e.pos)
    return value.to_json() if isinstance(value, Witness) else value


@lru_cache(maxsize=None)
def _sparse_mutants(count: int = 60, seed: int = 3, first_only: bool = False) -> tuple[Any, ...]:
    return tuple(lay for spec in mutants(SPARSE_FILES, count, seed, first_only) for lay in spec.layouts
                 if is_sparse(lay))


# ----------------------------------------------------------------------------- metadata enumerations

class _OracleTable:
    """The metadata layout asked of the scalar oracle, lane by lane and nibble by nibble (what the vectorised
    ``MetadataTable`` replaced): the same scan over it must find the same witness."""

    def __init__(self, md: Any) -> None:
        self.md = md

    def selector(self, lane: int) -> int | None:
        return selector_of(self.md, lane)

    def cell(self, lane: int, n: int) -> tuple[int, int] | None:
        return metadata_cell(self.md, lane, n)


def _ref_budget(md: Any, threads: int, rows: int, chunks: int) -> dict[str, Any] | None:
    """``metadata_budget``'s enumeration over the oracle."""
    return sp._budget_enum(_OracleTable(md), md, threads, rows, chunks)


def _ref_group(md: Any, lay: Any) -> dict[str, Any] | None:
    """``metadata_group``'s enumeration as a scalar scan over the oracle (the code it replaced)."""
    inf = lay.map.info(lay.domain)
    group_rows: dict[int, set[int]] = {}
    for lane in range(lay.threads):
        for i in range(lay.n_elements):
            if inf.defined[lane, i]:
                group_rows.setdefault(lane >> 2, set()).add(int(inf.row[lane, i]))
    for lane in range(lay.threads):
        s = selector_of(md, lane)
        if s not in md.selectors:
            continue
        for n in range(NIBBLES_PER_REGISTER):
            cell = metadata_cell(md, lane, n)
            if cell is not None and cell[0] not in group_rows.get(lane >> 2, set()):
                return {"selector": s, "lane": lane, "nibble": n, "row": cell[0], "chunk": cell[1]}
    return None


def _group_enum(table: Any, md: Any, lay: Any) -> dict[str, Any] | None:
    return sp._group_enum(table, md, lay.threads, sp._group_rows(lay.map.info(lay.domain)))


def test_metadata_table_is_the_oracle_everywhere() -> None:
    compared = raised = 0
    for lay in _sparse_mutants():
        md = lay.map.model
        if md.metadata is None:
            continue
        table = metadata_table(md, lay.threads)
        for lane in range(lay.threads):
            assert _outcome(table.selector, lane) == _outcome(selector_of, md, lane), (lay.id, lane)
            for n in range(NIBBLES_PER_REGISTER):
                got = _outcome(table.cell, lane, n)
                assert got == _outcome(metadata_cell, md, lane, n), (lay.id, lane, n)
                compared += 1
                raised += isinstance(got, tuple) and got[:1] == ("raises",)
    assert compared > 10_000 and raised > 0  # the mutants reach evaluation errors too


def test_metadata_enumerations_are_the_scalar_scans() -> None:
    witnesses = 0
    for lay in _sparse_mutants():
        md = lay.map.model
        if md.metadata is None:
            continue
        rows, chunks = lay.rows, md.chunks_per_row
        table = metadata_table(md, lay.threads)
        got = _outcome(sp._budget_enum, table, md, lay.threads, rows, chunks)
        assert got == _outcome(_ref_budget, md, lay.threads, rows, chunks), lay.id
        group = _outcome(_group_enum, table, md, lay)
        assert group == _outcome(_ref_group, md, lay), lay.id
        witnesses += (got is not None) + (group is not None)
    assert witnesses > 10


def test_metadata_owner_table_is_unchanged() -> None:
    lay = next(x for x in _sparse_mutants() if x.map.model.metadata is not None)
    md = lay.map.model
    owner = metadata_owner(md, lay.threads, md.selectors[0])
    assert owner and all(metadata_cell(md, ln, nb) == cell for cell, (ln, nb) in owner.items())


# ----------------------------------------------------------------------------- shapes

def _ref_spans(cells: Any, rows: int, cols: int, groups: int) -> list[tuple[int, str, int | None, int | None]]:
    """``shapes``' enumeration from the first-reaching tables (the code it replaced)."""
    first = instruction._first_reaching(cells, groups)
    out = []
    for g in range(groups):
        for axis, n in (("row", rows), ("col", cols)):
            got = first[axis].get(g, {})
            extra = sorted(x for x in got if not 0 <= x < n)
            missing = [x for x in range(n) if x not in got]
            if extra or missing:
                out.append((g, axis, missing[0] if missing else None, extra[0] if extra else None))
    return out


def test_shape_spans_are_the_first_reaching_scan() -> None:
    compared = problems = 0
    for spec in mutants(DENSE_FILES + SPARSE_FILES, 120, 5):
        for lay in spec.layouts:
            if lay.unspecified:
                continue
            for _, inst in lay.instances()[:4]:
                try:
                    cells = cells_of(inst)
                except (oracle.EvalError, AssertionError):
                    continue
                got = instruction._span_problems(cells, inst.rows, inst.cols, inst.groups)
                assert got == _ref_spans(cells, inst.rows, inst.cols, inst.groups), inst.id
                compared += 1
                problems += bool(got)
    assert compared > 200 and problems > 20


# ----------------------------------------------------------------------------- sparse Z3 terms and queries

def _ref_info(lay: Any, lane: z3.BitVecRef, i: z3.BitVecRef) -> dict[str, Any]:
    """A sparse element's Z3 terms encoded directly at the point, the rank summed term by term (the
    encoding the substituted one replaced)."""
    w, md = lane.size(), lay.map.model
    enc = smt.Encoder(lay.map.normal, lane, i)
    row, col = enc.definition("row"), enc.definition("col")
    first, last = col.value
    defined = smt.conj(row.ok, col.ok)
    rank: z3.ExprRef = smt.bv(0, w)
    for k in range(lay.n_elements):
        sub = (i, smt.bv(k, w))
        same = z3.And(smt.bv(k, w) < i, z3.substitute(defined, sub), z3.substitute(row.value, sub) == row.value,
                      z3.substitute(first, sub) == first)
        rank = rank + z3.If(same, smt.bv(1, w), smt.bv(0, w))
    chunk, kept = smt.bv(md.chunk, w), smt.bv(md.kept, w)
    width = last - first + 1
    placed = z3.And(width > 0, z3.SRem(first, chunk) == 0, z3.SRem(width, chunk) == 0, rank < (width / chunk) * kept)
    return {"defined": defined, "ok": z3.And(defined, placed), "row": row.value, "first": first, "last": last,
            "rank": rank, "col": (first / chunk) * kept + rank, "chunk": first / chunk + rank / kept,
            "j": z3.SRem(rank, kept)}


def test_substituted_sparse_terms_equal_a_direct_encoding() -> None:
    for lay in _sparse_mutants(16, 4, True)[::3]:
        cells = sp._Sparse(lay)
        w = sp._width(cells)
        for names in ("lane1 i1", "lane2 i2"):  # the first point asked, then one substituted from it
            lane, i = z3.BitVecs(names, w)
            got, ref = cells.z3_info(lane, i), _ref_info(lay, lane, i)
            differs = z3.Or([z3.Not(got[k] == ref[k]) for k in ref])
            assert smt.solve([smt.in_domain(lane, i, lay.threads, lay.n_elements), differs], 30)[0] == "unsat", lay.id


def _ref_pairs(cells: Any, values: tuple[int, ...], ordered: bool) -> str:
    """The pair check's two separate queries (outside its chunk; two of a chunk colliding), as before the
    joint query."""
    p = sp._pair_terms(cells)
    dom = p.first + [sp._in_set(p.mv, values, p.mv.size())]
    res = smt.solve(dom + [p.outside], 30)[0]
    if res != "unsat":
        return res
    return smt.solve(dom + p.second + [z3.Not(p.la < p.lb) if ordered else p.la == p.lb], 30)[0]


@pytest.mark.slow
def test_joint_query_gives_each_check_its_own_verdict() -> None:
    proved = refuted = 0
    for lay in _sparse_mutants(16, 4, True):
        cells = sp._Sparse(lay)
        md = cells.model
        joint = sp._all_proved(cells, 30)
        for values, ordered in ((md.valid, False), (md.ordered, True), (md.invalid, False)):
            got = sp._pairs_z3(cells, values, ordered, joint, smt.Budget(30))[0]
            assert got == _ref_pairs(cells, values, ordered), (lay.id, values, ordered)
        ranges = smt.solve([sp._range_terms(cells)[3]], 30)[0]
        assert sp.check_chunk_ranges(cells, 30).engines["z3"] == smt.status(ranges), lay.id
        proved += joint
        refuted += not joint
    assert proved > 3 and refuted > 3


# ----------------------------------------------------------------------------- families

def _ref_substitute(formula: Any, env: dict[str, int]) -> Any:
    out = formula
    for node in [n for d in formula.definitions for n in walk(d) if isinstance(n, Var) and n.name in env]:
        out = replace_node(out, node, Num(env[node.name], node.pos))
    return out


def _with_positions(node: Any) -> Any:
    """The AST as nested tuples, positions included (AST equality leaves them out)."""
    import dataclasses
    if isinstance(node, tuple):
        return tuple(_with_positions(x) for x in node)
    if dataclasses.is_dataclass(node):
        return (type(node).__name__,) + tuple(_with_positions(getattr(node, f.name)) for f in dataclasses.fields(node))
    return node


def test_instance_formulas_are_the_per_variable_rebuild() -> None:
    count = 0
    for lay in api.layouts(api.load([SPECS])):
        for p in lay.domain.params:
            for v in p.values[:3]:
                got = family.substitute(lay.formula, {p.name: v})
                assert _with_positions(got) == _with_positions(_ref_substitute(lay.formula, {p.name: v})), lay.id
                count += 1
    assert count > 100


def _to_sympy(e: Any, symbols: dict[str, Any]) -> Any:
    """sympy's form of an extent AST (``/``, ``%``, ``>>`` as floors: exact for the non-negative values extents
    take), built from the AST (never from text): the reference the polynomial engine is held to."""
    import sympy
    from verify.formula import BinOp, Neg
    if isinstance(e, int):
        return sympy.Integer(e)
    if isinstance(e, Num):
        return sympy.Integer(e.value)
    if isinstance(e, Var):
        return symbols[e.name]
    if isinstance(e, Neg):
        return -_to_sympy(e.operand, symbols)
    assert isinstance(e, BinOp)
    a, b = _to_sympy(e.left, symbols), _to_sympy(e.right, symbols)
    return {"+": lambda: a + b, "-": lambda: a - b, "*": lambda: a * b, "/": lambda: sympy.floor(a / b),
            "%": lambda: a - b * sympy.floor(a / b), "<<": lambda: a * 2**b, ">>": lambda: sympy.floor(a / 2**b)}[e.op]()


def _ref_identity(lhs: Any, rhs: Any, param: Any) -> tuple[str, dict[str, int] | None]:
    """``prove_identity`` decided by sympy (``simplify`` on every difference) instead of the polynomial engine."""
    import sympy
    j = sympy.Symbol("j", integer=True, nonnegative=True)
    sym = sympy.Symbol(param.name, integer=True, positive=True)
    undecided = False
    for first, step, count in param.runs():
        d = sympy.simplify(sympy.expand((_to_sympy(lhs, {param.name: sym}) - _to_sympy(rhs, {param.name: sym}))
                                        .subs(sym, first + step * j)))
        if d == 0:
            continue
        for v in range(first, first + step * count, step):
            if family.extent_at(lhs, {param.name: v}) != family.extent_at(rhs, {param.name: v}):
                return "refuted", {param.name: v}
        undecided = True
    return ("unknown" if undecided else "proved"), None


def _random_extent(rng: random.Random, depth: int) -> str:
    """An extent over N of the shapes specs write (products, sums, floors by constants, shifts)."""
    if depth == 0 or rng.random() < 0.3:
        return rng.choice(["N", "N", str(rng.randint(1, 16))])
    op = rng.choice(["+", "-", "*", "*", "/", "/", "%", "<<", ">>"])
    left = _random_extent(rng, depth - 1)
    right = (str(rng.choice([1, 2, 3, 4, 8])) if op in ("/", "%") else str(rng.randint(0, 3)) if op in ("<<", ">>")
             else _random_extent(rng, depth - 1))
    return f"({left} {op} {right})"


def test_generated_identities_decided_as_sympy_decides() -> None:
    """Two engines on 120 generated count identities (each side an extent over N; half of them rewritten so they
    hold): the polynomial engine's verdict and witness are sympy's."""
    rng = random.Random(22)
    verdicts: set[str] = set()
    for _ in range(120):
        lhs = _random_extent(rng, 3)
        rhs = f"({lhs}) * 2 - ({lhs})" if rng.random() < 0.5 else _random_extent(rng, 3)
        first, step = rng.choice([1, 2, 4, 8, 16]), rng.choice([1, 2, 4, 8, 16])
        values = tuple(range(first, first + step * rng.randint(1, 12), step)) + ((rng.choice([300, 301, 512]),)
                                                                                 if rng.random() < 0.3 else ())
        param = family.Param("N", values)
        a, b = _extent(lhs), _extent(rhs)
        got = family.prove_identity(a, b, param)
        assert got == _ref_identity(a, b, param), (lhs, rhs, values)
        verdicts.add(got[0])
    assert verdicts == {"proved", "refuted", "unknown"}


@pytest.mark.parametrize("lhs, rhs, values", [
    ("(N / 4) * 2 * 128", "64 * N", range(8, 257, 8)),
    ("N * 4 * 32", "16 * N * 16", (1, 2)),
    ("(N / 2) * 128", "64 * N", range(8, 257, 16)),  # floor of an odd multiple: not a polynomial in j
    ("(N / 3) * 3", "N", range(1, 20)),
    ("N * N - N", "N * (N - 1)", range(1, 9)),
    ("N * 3", "N * 2 + 8", (4, 8, 12)),
    ("N * 3", "N * 2 + 8", (8,)),  # equal at the one value, not as polynomials: sympy cannot decide
    ("N % 2", "0", (2, 4, 6, 7)),
])
def test_identities_decided_as_with_simplify(lhs: str, rhs: str, values: range) -> None:
    param = family.Param("N", tuple(values))
    a, b = _extent(lhs), _extent(rhs)
    family.prove_identity.cache_clear()
    assert family.prove_identity(a, b, param) == _ref_identity(a, b, param)


def _extent(text: str) -> Any:
    from verify.formula import parse_expression
    return parse_expression(text, ("N",))


def test_witness_table_query_stops_when_its_budget_is_spent() -> None:
    """Building the ground query is work inside ``--timeout`` too: a spent budget gives ``unknown``,
    never a verdict; with time the same table is proved."""
    x, y = z3.BitVecs("x y", 16)
    rows = [(k, k + 1) for k in range(300)]
    assert smt.holds_everywhere(y == x + 1, [x, y], rows, smt.Budget(10.0)) == "unsat"
    assert smt.holds_everywhere(y == x + 1, [x, y], rows, smt.Budget(0.0)) == "unknown"
    assert smt.holds_everywhere(y == x + 2, [x, y], rows, smt.Budget(10.0)) == "sat"
    one_bad = rows[:150] + [(150, 152)] + rows[151:]  # one row in the middle fails
    assert smt.holds_everywhere(y == x + 1, [x, y], one_bad, smt.Budget(10.0)) == "sat"
    assert smt.holds_everywhere(y == x + 1, [x, y], [(7, 8)], smt.Budget(10.0)) == "unsat"
    assert smt.holds_everywhere(y == x + 1, [x, y], [(7, 9)], smt.Budget(10.0)) == "sat"


def test_queries_share_one_solver_and_nothing_else() -> None:
    """Every quantifier-free query runs in the process's one solver, in a scope of its own: nothing of a query is
    left for the next (assertions, an exhausted budget, a failed ``add``), and a query's model outlives its scope."""
    x = z3.BitVec("shared_solver_x", 8)
    first, m1 = smt.solve([x == 1], 10.0)
    assert first == "sat" and m1 is not None
    assert smt.solve([x == 2], 10.0)[0] == "sat"  # x == 1 did not stay asserted
    assert smt.as_int(m1, x) == 1  # the first model, read after its scope was popped
    hard = [z3.BitVec("shared_solver_a", 32) * z3.BitVec("shared_solver_b", 32) == 0x7FFF0001,
            z3.UGT(z3.BitVec("shared_solver_a", 32), 1), z3.UGT(z3.BitVec("shared_solver_b", 32), 1)]
    starved = smt.Budget(10.0)
    starved.units = 1  # one unit of solver work: the query cannot finish
    assert smt.solve(hard, starved)[0] == "unknown"
    assert smt.solve([x == 3], 10.0)[0] == "sat"  # the starved budget was that query's alone
    with pytest.raises(z3.Z3Exception):
        smt.solve([x == 4, 5], 10.0)  # Z3 refuses the 5 while adding
    assert smt.solve([x == 4], 10.0)[0] == "sat"
    assert smt.solve([x == 4, x == 5], 10.0)[0] == "unsat"
    assert smt._qf_bv_solver().num_scopes() == 0  # every scope was popped, the failed one too
    assert smt._qf_bv_solver() is smt._qf_bv_solver()


def test_a_partial_family_out_of_time_is_unknown_never_proved() -> None:
    """mma block-scale selectors (16 bindings, one surjective budget for all of them): with no time the
    verdict is ``unknown``; with time, ``proved``."""
    from verify.checks.family import check_any
    from verify.checks.fragment import clear_caches
    lay = api.layout(api.load([SPECS / "mma.block_scale.m16n8k32.toml"]), "mma.block_scale.m16n8k32.SFB.ue8m0")
    clear_caches()
    assert check_any(lay, 1e-6).get("surjective").status == "unknown"
    clear_caches()
    assert check_any(lay, 10.0).get("surjective").status == "proved"


# ----------------------------------------------------------------------------- narrow unknowns

def _results(layouts: list[Any], instructions: list[Any]) -> list[Any]:
    """Every check's JSON (witnesses and messages included) of the layouts, maps and instructions, from cold
    caches (a memoised verdict would answer for the other encoding)."""
    from verify.checks import fragment
    fragment.clear_caches()

    def one(lay: Any) -> Any:
        try:
            return api.check(lay, 30).to_json()
        except SpecError as e:  # a mutant's formula that fails on some point (division by zero): errors compare too
            return ("error", str(e))
    return [one(lay) for lay in layouts] + [r.to_json() for r in instruction.check_instructions(instructions, timeout=30)]


def test_narrow_unknowns_give_the_full_width_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """``smt.natural`` declares a lane, an element, a box coordinate or a parameter with only the bits its
    query allows it: every verdict, witness and message is the one the full-width unknowns give, on spec files
    of each kind (fragments, families, sparse A and its metadata, Tensor Memory, maps) and seeded mutants of
    them, refutations among them."""
    names = ("mma.m16n8k16.float", "mma.m8n8k4.f16", "mma.sp.m16n8k16.f16", "wgmma.m64nNk16", "wgmma.sp.m64nNk32",
             "tcgen05.ld.16x64b", "tcgen05.shared", "wgmma.shared", "storage.scale_factors", "tcgen05.packing")
    files = [SPECS / f"{n}.toml" for n in names]
    specs = list(mutants(files, 8, 11))
    map_files = [SPECS / f"{n}.toml" for n in ("tcgen05.shared", "storage.scale_factors", "tcgen05.packing")]
    maps = [m for spec in list(mutants(map_files, 6, 5, quote='"""'))[3:] for m in spec.maps]  # the maps' formulas
    layouts = [lay for spec in specs for lay in [*spec.layouts, *spec.maps]] + maps
    narrow = _results(layouts, specs)
    monkeypatch.setattr(smt, "NARROW", False)
    full = _results(layouts, specs)
    assert narrow == full
    kinds = {(("map" if "kind" in r else "family" if "params" in r else "fragment") if "operands" not in r
              else "instruction", c["status"]) for r in narrow if isinstance(r, dict) for c in r["checks"].values()}
    assert {(k, s) for k in ("fragment", "family", "map", "instruction") for s in ("proved", "refuted")} <= kinds


def test_natural_declares_only_the_bits_its_top_needs() -> None:
    x = smt.natural("x", 16, 31)
    assert x.size() == 16 and x.arg(0).size() == 5 and z3.is_const(x.arg(0))  # ZeroExt(11, x: 5 bits)
    assert smt.natural("y", 16, 32).arg(0).size() == 6 and smt.natural("z", 16, 0).arg(0).size() == 1
    for plain in (smt.natural("x", 8, 255), smt.natural("x", 8, -1), smt.natural("x", 16, 1 << 20)):
        assert z3.is_const(plain)
    assert smt.solve([x == 31], 5)[0] == "sat" and smt.solve([x == 32], 5)[0] == "unsat"
    a, b = smt.naturals("a b", 12, (3, 100))
    assert (a.arg(0).size(), b.arg(0).size()) == (2, 7)
