"""CTA rasterisation maps (``map.raster.*``) as three references' own code states them, read and evaluated here.

Each is read from the installed package's file, never imported or run, and conformed to its spec member by
member (``maps.same``, both engines).  The rows go into the report of the reference of the same origin:

* **Triton** (the ``triton`` reference): ``triton/language/standard.py``'s ``swizzle2d(i, j, size_i, size_j,
  size_g)`` ("transforms the indices of a row-major size_i * size_j matrix into the indices of a column-major
  matrix for each group of size_g rows"), the grouped ordering of Triton's matmul tutorial as a library function:
  block ``pid`` of a row-major grid is ``(i, j) = (pid // NN, pid % NN)``, and ``swizzle2d(i, j, NM, NN, G)`` is
  its tile -> ``map.raster.triton.grouped``;
* **FlashInfer** (the ``flashinfer`` reference): ``flashinfer/triton/kernels/sm_constraint_gemm.py``'s
  ``_compute_pid(tile_id, num_pid_in_group, num_pid_m, GROUP_SIZE_M, NUM_SMS)`` of its persistent Triton GEMMs
  (the callers pass ``num_pid_in_group = GROUP_SIZE_M * num_pid_n``) -> ``map.raster.triton.grouped.persistent``;
* **CUTLASS** (the ``cute-text`` reference: the CUTLASS headers of the same wheel, CuTe's origin):
  ``cutlass/gemm/threadblock/threadblock_swizzle.h``'s ``GemmIdentityThreadblockSwizzle::get_tile_offset(int
  log_tile)``: its ``GemmCoord{...}``'s first two C expressions, evaluated by ``cexpr`` with ``block_idx_x``,
  ``block_idx_y`` and ``log_tile`` -> ``map.raster.cutlass.identity`` (``T = 1 << log_tile``).

The Python functions are evaluated by a straight-line interpreter (``run_python``): ``name = expr`` statements
and one ``return`` of a tuple, expressions of names, integers, ``+ - * // %`` and ``min(a, b)`` or
``<module>.minimum(a, b)``; anything else is refused at its file:line:col.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from pathlib import Path

from ...layout.corrections import in_use_of
from ...layout.model import MapLayout
from . import cexpr
from .common import Evaluated, located
from .pyfunc import LIMIT, Refused

TRITON_FILE = "triton/language/standard.py"
FLASHINFER_FILE = "flashinfer/triton/kernels/sm_constraint_gemm.py"
CUTLASS_FILE = "cutlass/gemm/threadblock/threadblock_swizzle.h"
_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
        ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def _function(text: str, file: str, name: str) -> ast.FunctionDef:
    try:
        tree = ast.parse(text, filename=file)
    except SyntaxError as e:
        raise Refused(f"does not parse: {e.msg}", file, e.lineno or 0, e.offset or 0) from None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    raise Refused(f"no function {name}", file, 0)


def _expr(e: ast.expr, env: dict[str, int], file: str) -> int:
    at = (file, getattr(e, "lineno", 0), getattr(e, "col_offset", 0))
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.Name) and e.id in env:
        return env[e.id]
    if isinstance(e, ast.BinOp) and type(e.op) in _OPS:
        a, b = _expr(e.left, env, file), _expr(e.right, env, file)
        if isinstance(e.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            raise Refused("division by zero", *at)
        v = _OPS[type(e.op)](a, b)
        if not -LIMIT < v < LIMIT:
            raise Refused("integer out of bounds", *at)
        return v
    if isinstance(e, ast.Call) and len(e.args) == 2 and not e.keywords and (
            (isinstance(e.func, ast.Name) and e.func.id == "min")
            or (isinstance(e.func, ast.Attribute) and e.func.attr == "minimum" and isinstance(e.func.value, ast.Name))):
        return min(_expr(e.args[0], env, file), _expr(e.args[1], env, file))
    raise Refused(f"{type(e).__name__} outside the subset (names, integers, + - * // %, min)", *at)


def run_python(fn: ast.FunctionDef, args: tuple[int, ...], file: str) -> tuple[int, ...]:
    """The tuple ``fn`` returns for ``args``: straight-line ``name = expr`` statements and one ``return``."""
    names = [a.arg for a in fn.args.args]
    if len(names) != len(args) or fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs:
        raise Refused(f"{fn.name} takes ({', '.join(names)}), not {len(args)} arguments", file, fn.lineno)
    env = dict(zip(names, args))
    for st in fn.body:
        if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
            continue   # the docstring
        if isinstance(st, ast.Assign) and len(st.targets) == 1 and isinstance(st.targets[0], ast.Name):
            env[st.targets[0].id] = _expr(st.value, env, file)
            continue
        if isinstance(st, ast.Return) and isinstance(st.value, ast.Tuple):
            return tuple(_expr(x, env, file) for x in st.value.elts)
        raise Refused(f"{type(st).__name__} outside the straight-line subset", file, st.lineno, st.col_offset)
    raise Refused(f"{fn.name} returns no tuple", file, fn.lineno)


def _members(spec: MapLayout) -> list[dict[str, int]]:
    values = [(p.name, tuple(p.values)) for p in spec.params]
    out: list[dict[str, int]] = [{}]
    for name, vs in values:
        out = [{**m, name: v} for m in out for v in vs]
    return out


def _spec(specs: Iterable, spec_id: str) -> MapLayout | None:
    by = {s.id: s for s in specs if isinstance(s, MapLayout)}
    found = in_use_of(by, spec_id)
    return found if isinstance(found, MapLayout) else None


def _python_items(specs: Iterable, spec_id: str, dist: str, rel: str, func: str, label: str, call) -> list[Evaluated]:
    spec = _spec(specs, spec_id)
    path = located(dist, rel)
    if spec is None or path is None or not path.is_file():
        return []
    try:
        fn = _function(path.read_text(encoding="utf-8", errors="replace"), rel, func)
    except Refused as e:
        return [Evaluated(label, "", rel, e.line, spec, error=str(e))]
    text = f"{func} ({rel}:{fn.lineno})"
    items = []
    for m in _members(spec):
        params = tuple(sorted(m.items()))
        try:
            rows = tuple((pid, *call(fn, rel, m, pid)) for pid in range(m["NM"] * m["NN"]))
        except Refused as e:
            items.append(Evaluated(label, "", rel, e.line, spec, params, text=text, error=str(e)))
            continue
        items.append(Evaluated(label, "", rel, fn.lineno, spec, params, text=text, map_rows=rows))
    return items


def triton_items(specs: Iterable) -> list[Evaluated]:
    """``swizzle2d`` -> ``map.raster.triton.grouped`` (see the module docstring)."""
    def call(fn, rel, m, pid):
        return run_python(fn, (pid // m["NN"], pid % m["NN"], m["NM"], m["NN"], m["G"]), rel)
    return _python_items(specs, "map.raster.triton.grouped", "triton", TRITON_FILE, "swizzle2d",
                         "swizzle2d(pid // NN, pid % NN, NM, NN, G)", call)


def flashinfer_items(specs: Iterable) -> list[Evaluated]:
    """``_compute_pid`` -> ``map.raster.triton.grouped.persistent`` (see the module docstring)."""
    def call(fn, rel, m, pid):
        return run_python(fn, (pid, m["G"] * m["NN"], m["NM"], m["G"], 1), rel)
    return _python_items(specs, "map.raster.triton.grouped.persistent", "flashinfer-python", FLASHINFER_FILE,
                         "_compute_pid", "_compute_pid(pid, G * NN, NM, G, NUM_SMS)", call)


_OFFSET = re.compile(r"static\s+GemmCoord\s+get_tile_offset\(\s*int\s+log_tile\s*\)\s*\{(?P<body>.*?)\n\s*\}", re.S)
_COORD = re.compile(r"return\s+GemmCoord\s*\{(?P<args>.*?)\}\s*;", re.S)


def cutlass_items(specs: Iterable, root: Path) -> list[Evaluated]:
    """``GemmIdentityThreadblockSwizzle::get_tile_offset(int log_tile)`` -> ``map.raster.cutlass.identity``."""
    spec = _spec(specs, "map.raster.cutlass.identity")
    path = Path(root) / CUTLASS_FILE
    if spec is None or not path.is_file():
        return []
    text = cexpr.strip_comments(path.read_text(encoding="utf-8", errors="replace"))
    label = "GemmIdentityThreadblockSwizzle::get_tile_offset(log_tile)"
    start = text.find("struct GemmIdentityThreadblockSwizzle")
    m = _OFFSET.search(text, start) if start >= 0 else None
    c = _COORD.search(m.group("body")) if m else None
    line = text.count("\n", 0, m.start()) + 1 if m else 0
    if c is None or m is None:
        return [Evaluated(label, "", CUTLASS_FILE, line, spec, error=f"{CUTLASS_FILE}: no get_tile_offset(int log_tile) "
                          "returning GemmCoord{...} in GemmIdentityThreadblockSwizzle")]
    args = cexpr._split_commas(c.group("args"))
    at = cexpr.Where(CUTLASS_FILE, text.count("\n", 0, m.start("body") + c.start("args")) + 1)
    items = []
    for mem in _members(spec):
        t = mem["T"]
        if t & (t - 1):
            continue
        log_tile = t.bit_length() - 1
        params = tuple(sorted(mem.items()))
        rows = []
        try:
            for bx in range(mem["NM"] * t):
                for by in range(-(-mem["NN"] // t)):
                    env = {"block_idx_x": bx, "block_idx_y": by, "log_tile": log_tile}
                    rows.append((bx, by, cexpr.evaluate(args[0], env, at), cexpr.evaluate(args[1], env, at)))
        except (Refused, IndexError) as e:
            items.append(Evaluated(label, "", CUTLASS_FILE, at.line, spec, params, error=str(e)))
            continue
        items.append(Evaluated(label, "", CUTLASS_FILE, at.line, spec, params,
                               text=f"GemmCoord{{{args[0].strip()}, {args[1].strip()}, ...}}", map_rows=tuple(rows)))
    return items
