"""TileLang's Tensor Memory data-path atoms (``mma_sm100_layout.py``), read with ``ast`` and evaluated here.

Part of the ``tilelang`` reference (TileLang's origin); kept in its own file.  TileLang 0.1.15 lowers ``tcgen05.mma``
with its own CuTe-style layout algebra (``tilelang/layout/cute.py``), and states the accumulator's place in Tensor
Memory in ``tilelang/cuda/intrinsics/layout/mma_sm100_layout.py``: ``make_tmem_frg_atom(num_sms, alloc_mode, atom_m,
atom_n)`` returns ``(atom, tile_stride)`` for a 1- or 2-CTA MMA of ``atom_m`` rows per CTA, and
``make_tmem_frg_ws_atom(atom_m, atom_n)`` the atom of a weight-stationary (``.ws``) MMA.  Each atom is a literal
``cute.make_layout(shape[, stride])`` (no stride: CuTe's column-major default), and the module docstring states its
addressing: "virtual TMEM addressing (datapath stride one, column stride 128)", so the atom's value ``v`` at
``(row, col)`` is lane ``v % 128``, column ``v // 128`` (in 32-bit columns: the data paths are compared for a 32-bit
D).  TileLang's atoms are a transcription of CUTLASS's ``tmem_frg`` (its docstring says so) in TileLang's own code,
which allocates Tensor Memory and forms MMA addresses in TileLang's kernels; they count as TileLang's, as
tensor-layouts' transcription of CuTe's traits counts as its own (``docs/references.md``).

The two functions are evaluated by a closed statement walker, never executed: an optional docstring, ``name =
expr``, ``if``/``elif``/``else``, ``assert test[, message]`` (the test evaluated; a failing one refuses the call),
``return expr``; ``raise`` refuses the call.  Expressions: integer literals, names bound to the arguments or
earlier assignments, ``+ - * // %``, tuples (nested: a layout's shape), ``a if c else b``, one comparison (``== !=
< <= > >= is in``, ``is not``, ``not in``) with a set or tuple on the right of ``in``, ``and``/``or``/``not``, an
enumerator of a class defined in the same file (``TCGEN05TmemAllocMode.INTERLEAVED``), and ``cute.make_layout(shape)``
or ``cute.make_layout(shape, stride)``.  Anything else is ``Refused`` at its file:line:col.

Pairings (``PAIRS``; the rows a CTA holds are ``atom_m``, two CTAs splitting the rows): ``make_tmem_frg_atom(2,
INTERLEAVED, 128, N)`` -> ``tcgen05.datapath.A``; ``(2, INTERLEAVED, 64, N)`` -> ``B``; ``(1, INTERLEAVED, 128, N)``
-> ``D``; ``(1, INTERLEAVED, 64, N)`` -> ``F`` at ``BASE`` 0 (the atom of one tile; a second tile's place depends on
``tile_stride``, not read); ``make_tmem_frg_ws_atom(64, N)`` -> ``E`` (its reviewed correction, 2x2) and ``(32, N)``
-> ``G``, for every ``N`` of the spec.  TileLang's "Layout C" (its docstring's table: a 2-CTA M = 64, 32 rows per
CTA, 1x4) is not the table's Layout C (M = 128, ``cta_group::2``, sparse, 64 rows per CTA), so it is not paired.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...layout.corrections import in_use_of
from ...layout.model import MapLayout
from ...layout.notations.cute_layout import CuteLayout, compact_left
from ..crosscheck import Row
from .common import Evaluated, conform_rows
from .pyfunc import Refused

FILE = "mma_sm100_layout.py"
ATOM = "make_tmem_frg_atom"
WS = "make_tmem_frg_ws_atom"
ADDRESSING = "datapath stride one, column stride 128"
LANES = 128
# (spec id, function, leading arguments (an enumerator as its member name), rows per CTA, CTAs)
PAIRS: tuple[tuple[str, str, tuple[Any, ...], int, int], ...] = (
    ("tcgen05.datapath.A", ATOM, (2, "INTERLEAVED", 128), 128, 2),
    ("tcgen05.datapath.B", ATOM, (2, "INTERLEAVED", 64), 64, 2),
    ("tcgen05.datapath.D", ATOM, (1, "INTERLEAVED", 128), 128, 1),
    ("tcgen05.datapath.E", WS, (64,), 64, 1),
    ("tcgen05.datapath.F", ATOM, (1, "INTERLEAVED", 64), 64, 1),
    ("tcgen05.datapath.G", WS, (32,), 32, 1),
)
LIMIT = 1 << 40


@dataclass(frozen=True)
class Enumerator:
    cls: str
    name: str


class _Walker:
    """Evaluates the module-level functions of one file over the subset in the module docstring."""

    def __init__(self, tree: ast.Module, file: str) -> None:
        self.file = file
        self.functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
        self.enums: dict[str, set[str]] = {}
        for n in tree.body:
            if isinstance(n, ast.ClassDef):
                self.enums[n.name] = {t.id for st in n.body if isinstance(st, ast.Assign)
                                      for t in st.targets if isinstance(t, ast.Name)}

    def _pos(self, node: ast.AST) -> tuple[str, int, int]:
        return self.file, getattr(node, "lineno", 0), getattr(node, "col_offset", 0)

    def enumerator(self, cls: str, name: str) -> Enumerator:
        if name not in self.enums.get(cls, set()):
            raise Refused(f"{cls}.{name} is no enumerator of a class of {self.file}", self.file, 0)
        return Enumerator(cls, name)

    def call(self, name: str, args: tuple[Any, ...]) -> Any:
        fn = self.functions.get(name)
        if fn is None:
            raise Refused(f"{name} is not defined in {self.file}", self.file, 0)
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.defaults or a.posonlyargs or fn.decorator_list:
            raise Refused(f"{name}: only plain positional parameters are read", *self._pos(fn))
        if len(a.args) != len(args):
            raise Refused(f"{name} takes {len(a.args)} arguments, called with {len(args)}", *self._pos(fn))
        env = {p.arg: v for p, v in zip(a.args, args)}
        body = list(fn.body)
        if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
            body = body[1:]
        done, value = self._block(body, env)
        if not done:
            raise Refused(f"{name} returns nothing", *self._pos(fn))
        return value

    def _block(self, body: list[ast.stmt], env: dict[str, Any]) -> tuple[bool, Any]:
        for st in body:
            if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
                env[st.targets[0].id] = self._expr(st.value, env)
            elif isinstance(st, ast.Return) and st.value is not None:
                return True, self._expr(st.value, env)
            elif isinstance(st, ast.If):
                done, value = self._block(st.body if self._truth(st.test, env) else st.orelse, env)
                if done:
                    return done, value
            elif isinstance(st, ast.Assert):
                if not self._truth(st.test, env):
                    raise Refused("the assertion fails for these arguments", *self._pos(st))
            elif isinstance(st, ast.Raise):
                raise Refused("the function raises for these arguments", *self._pos(st))
            elif isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                continue
            else:
                raise Refused(f"{type(st).__name__} statement outside the subset", *self._pos(st))
        return False, None

    def _truth(self, e: ast.expr, env: dict[str, Any]) -> bool:
        v = self._expr(e, env)
        if not isinstance(v, bool):
            raise Refused("a condition that is no comparison", *self._pos(e))
        return v

    def _int(self, e: ast.expr, env: dict[str, Any]) -> int:
        v = self._expr(e, env)
        if type(v) is not int:
            raise Refused("an integer is needed here", *self._pos(e))
        return v

    def _expr(self, e: ast.expr, env: dict[str, Any]) -> Any:
        pos = self._pos(e)
        if isinstance(e, ast.Constant) and type(e.value) is int:
            return e.value
        if isinstance(e, ast.Name):
            if e.id not in env:
                raise Refused(f"name {e.id!r} is bound to no argument or assignment", *pos)
            return env[e.id]
        if isinstance(e, ast.Tuple):
            return tuple(self._expr(x, env) for x in e.elts)
        if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id in self.enums:
            if e.attr not in self.enums[e.value.id]:
                raise Refused(f"{e.value.id}.{e.attr} is no enumerator", *pos)
            return Enumerator(e.value.id, e.attr)
        if isinstance(e, ast.BinOp) and type(e.op) in (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv, ast.Mod):
            a, b = self._int(e.left, env), self._int(e.right, env)
            if isinstance(e.op, (ast.FloorDiv, ast.Mod)) and b == 0:
                raise Refused("division by zero", *pos)
            if isinstance(e.op, ast.FloorDiv):
                v = a // b
            elif isinstance(e.op, ast.Mod):
                v = a % b
            else:
                v = a + b if isinstance(e.op, ast.Add) else a - b if isinstance(e.op, ast.Sub) else a * b
            if not -LIMIT < v < LIMIT:
                raise Refused("integer out of bounds", *pos)
            return v
        if isinstance(e, ast.IfExp):
            return self._expr(e.body if self._truth(e.test, env) else e.orelse, env)
        if isinstance(e, ast.BoolOp):
            vals = (self._truth(x, env) for x in e.values)
            return all(vals) if isinstance(e.op, ast.And) else any(vals)
        if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not):
            return not self._truth(e.operand, env)
        if isinstance(e, ast.Compare) and len(e.ops) == 1:
            return self._compare(e, env)
        if isinstance(e, ast.Call) and isinstance(e.func, ast.Attribute) and isinstance(e.func.value, ast.Name) \
                and e.func.value.id == "cute" and e.func.attr == "make_layout" and not e.keywords \
                and 1 <= len(e.args) <= 2:
            shape = self._expr(e.args[0], env)
            stride = self._expr(e.args[1], env) if len(e.args) == 2 else compact_left(shape)
            try:
                return CuteLayout(shape, stride)
            except (ValueError, TypeError) as err:
                raise Refused(f"no CuTe layout: {err}", *pos) from None
        what = type(e).__name__ if not isinstance(e, ast.BinOp) else f"operator {type(e.op).__name__}"
        raise Refused(f"{what} outside the subset", *pos)

    def _compare(self, e: ast.Compare, env: dict[str, Any]) -> bool:
        op, right = e.ops[0], e.comparators[0]
        left = self._expr(e.left, env)
        if isinstance(op, (ast.In, ast.NotIn)):
            if not isinstance(right, (ast.Set, ast.Tuple)):
                raise Refused("`in` with no literal set or tuple", *self._pos(right))
            found = left in [self._expr(x, env) for x in right.elts]
            return found if isinstance(op, ast.In) else not found
        r = self._expr(right, env)
        if isinstance(op, (ast.Is, ast.Eq)):
            return left == r
        if isinstance(op, (ast.IsNot, ast.NotEq)):
            return left != r
        if type(left) is int and type(r) is int and type(op) in (ast.Lt, ast.LtE, ast.Gt, ast.GtE):
            return {ast.Lt: left < r, ast.LtE: left <= r, ast.Gt: left > r, ast.GtE: left >= r}[type(op)]
        raise Refused(f"comparison {type(op).__name__} outside the subset", *self._pos(e))


def _index(specs: list) -> dict[str, MapLayout]:
    maps = {m.id: m for m in specs if isinstance(m, MapLayout)}
    return {i: in_use_of(maps, i) or m for i, m in maps.items()}


def _values(spec: MapLayout, name: str) -> tuple[int, ...]:
    return next((tuple(p.values) for p in spec.params if p.name == name), ())


def _atom(value: Any, fn: ast.FunctionDef, file: str) -> CuteLayout:
    """The layout of a return value: the atom itself or the first of ``(atom, tile_stride)``."""
    if isinstance(value, tuple) and len(value) == 2 and isinstance(value[0], CuteLayout):
        value = value[0]
    if not isinstance(value, CuteLayout) or value.rank() != 2:
        raise Refused(f"{fn.name} returned no rank-2 layout (or (layout, tile_stride))", file, fn.lineno,
                      fn.col_offset)
    return value


def map_rows(atom: CuteLayout, spec: MapLayout, params: dict[str, int], rows: int, ctas: int, n: int
             ) -> tuple[tuple[int, ...], ...]:
    """(row, col, outputs...) of the spec's map from TileLang's atom: CTA ``row // rows`` holds row ``row % rows``
    at lane ``v % 128``, column ``v // 128`` of its value ``v``; ``BASE`` added to the lane."""
    names = [d.name for d in spec.outputs]
    out = []
    for r in range(rows * ctas):
        for c in range(n):
            v = atom(r % rows, c)
            vals = {"cta": r // rows, "tmem_lane": v % LANES + params.get("BASE", 0), "tmem_col": v // LANES}
            out.append((r, c, *(vals[k] for k in names)))
    return tuple(out)


def evaluate(root: Path, specs: list, timeout: float, where_dir: str, only: tuple[str, ...] = ()) -> list[Row]:
    """TileLang's data-path atoms against the spec's data paths (rows; one ``unmatched`` when the file is absent);
    ``only``: these spec ids of ``PAIRS`` alone."""
    path = root / FILE
    where = f"{where_dir}/{FILE}"
    if not path.is_file():
        return [Row("unmatched", FILE, "", where, 0, detail=f"no {FILE} in this TileLang (its sm_100 layouts)")]
    try:
        tree = ast.parse(path.read_text(encoding="utf-8", errors="replace"), filename=FILE)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as e:
        return [Row("malformed", FILE, "", where, getattr(e, "lineno", 0) or 0, detail=f"{FILE}: {e}")]
    doc = ast.get_docstring(tree) or ""
    if ADDRESSING not in " ".join(doc.split()):
        return [Row("malformed", FILE, "", where, 1,
                    detail=f"{FILE}:1:0: the module docstring no longer states the atoms' addressing "
                           f"({ADDRESSING!r}): how to read an atom's value is unknown")]
    walker = _Walker(tree, FILE)
    index = _index(specs)
    items: list[Evaluated] = []
    for spec_id, func, lead, rows, ctas in PAIRS:
        spec = index.get(spec_id)
        if only and spec_id not in only:
            continue
        fn = walker.functions.get(func)
        line = fn.lineno if fn is not None else 0
        if spec is None:
            continue
        for n in _values(spec, "N"):
            params = {"N": n, **({"BASE": 0} if _values(spec, "BASE") else {})}
            shown = ", ".join(f"TCGEN05TmemAllocMode.{a}" if isinstance(a, str) else str(a) for a in (*lead, n))
            name = f"{func}({shown})" + (f", each of {ctas} CTAs" if ctas > 1 else "")
            try:
                if fn is None:
                    raise Refused(f"{func} is not defined in {FILE}", FILE, 0)
                args = tuple(walker.enumerator("TCGEN05TmemAllocMode", a) if isinstance(a, str) else a
                             for a in lead) + (n,)
                atom = _atom(walker.call(func, args), fn, FILE)
                text = f"{func}(...) = {atom}"
                table = map_rows(atom, spec, params, rows, ctas, n)
            except Refused as e:
                items.append(Evaluated(name, "", where, line, spec, tuple(sorted(params.items())),
                                       error=f"{e.file}:{e.line}:{e.col}: {e.reason}"))
                continue
            except ValueError as e:   # the atom does not cover the spec's (row, col)
                items.append(Evaluated(name, "", where, line, spec, tuple(sorted(params.items())), error=str(e)))
                continue
            items.append(Evaluated(name, "", where, line, spec, tuple(sorted(params.items())), text=text,
                                   map_rows=table))
    return conform_rows(items, timeout)
