"""The tinygrad reference: the CUDA tensor-core fragments of tinygrad's emulator, read with ``ast``.

tinygrad (``pip install tinygrad==0.14.0``, pure Python) generates ``mma.sync`` for NVIDIA GPUs and, to test that
code without one, emulates the instruction (``runtime/ops_python.py``, the ``Ops.WMMA`` case, ``device ==
"CUDA"``): for each tensor-core shape it defines where each element of A, B and C is held.

* ``a_elem(x, k, row, goff)`` returns ``x[E][goff + L]``: A's element (row, k) is element E of lane L;
* ``b_elem(x, col, k, goff)`` likewise for B's (k, col);
* ``c_map(lane, elem)`` returns ``(col, row)`` of C's element (its comment: "(col, row) given (lane, elem) for C &
  D"; ``generic_wmma_helper`` reads it as ``(c_i, c_j)`` with ``c_j`` A's row).

Each shape's branch (``dims == (8,16,16)`` ..., tinygrad's (N, M, K), and the input type where two share a shape)
is paired with the catalog: (8,16,16) half/bfloat16 -> ``mma.m16n8k16`` A, B ``f16_bf16`` and C ``f32``, ``f16``;
(8,16,32) fp8 -> ``mma.m16n8k32`` A, B ``e4m3_e5m2_e3m2_e2m3_e2m1`` and C ``f32``; (8,16,8) half -> ``mma.m16n8k8``
``f16_bf16`` and C ``f32``, ``f16``; (8,16,8) float -> ``mma.m16n8k8`` ``tf32`` and C ``f32``.  The functions are
read with ``ast`` and their index expressions evaluated over names, integers and ``+ - * // %`` (anything else
refused at its line); tinygrad is never imported.  The tensor-core list of ``codegen/opt/tc.py`` (which shapes
tinygrad uses on which architecture) is not needed: the emulator's shapes are the ones it emulates.
"""
from __future__ import annotations

import ast
import time
from pathlib import Path

from ...layout.corrections import in_use_of
from ...layout.model import Layout
from ..crosscheck import CrosscheckReport
from ..fragment import DEFAULT_TIMEOUT
from .common import Evaluated, conform_rows, located, version_of
from .mosaic import _eval_int
from .pyfunc import Refused

NAME = "tinygrad"
DIST = "tinygrad"
VERSION = "0.14.0"
FILE = "tinygrad/runtime/ops_python.py"
INSTALL = f"pip install tinygrad=={VERSION} (pure Python; its emulator's layouts are read from source)"

# (dims, input type or "") -> (M, N, K, {operand: spec ids})
SHAPES: dict[tuple[tuple[int, ...], str], tuple[int, int, int, dict[str, tuple[str, ...]]]] = {
    ((8, 16, 16), ""): (16, 8, 16, {"A": ("mma.m16n8k16.A.f16_bf16",), "B": ("mma.m16n8k16.B.f16_bf16",),
                                    "C": ("mma.m16n8k16.float.C.f32", "mma.m16n8k16.float.C.f16")}),
    ((8, 16, 32), ""): (16, 8, 32, {"A": ("mma.m16n8k32.A.e4m3_e5m2_e3m2_e2m3_e2m1",),
                                    "B": ("mma.m16n8k32.B.e4m3_e5m2_e3m2_e2m3_e2m1",), "C": ("mma.m16n8k32.C.f32",)}),
    ((8, 16, 8), "half"): (16, 8, 8, {"A": ("mma.m16n8k8.A.f16_bf16",), "B": ("mma.m16n8k8.B.f16_bf16",),
                                      "C": ("mma.m16n8k8.C.f32", "mma.m16n8k8.C.f16")}),
    ((8, 16, 8), "float"): (16, 8, 8, {"A": ("mma.m16n8k8.A.tf32",), "B": ("mma.m16n8k8.B.tf32",),
                                       "C": ("mma.m16n8k8.C.f32",)}),
}


def probe() -> str:
    return "" if _installed() is not None else f"no tinygrad: {INSTALL}"


def _installed() -> Path | None:
    where = located(DIST, FILE)
    return where.parent.parent.parent if where is not None and where.is_file() else None


def _is_device(test: ast.expr, name: str) -> bool:
    return (isinstance(test, ast.Compare) and isinstance(test.left, ast.Name) and test.left.id == "device"
            and len(test.comparators) == 1 and isinstance(test.comparators[0], ast.Constant)
            and test.comparators[0].value == name and isinstance(test.ops[0], ast.Eq))


def _branch_key(test: ast.expr) -> tuple[tuple[int, ...], str] | None:
    """``dims == (8,16,16)`` [``and dtype_in == dtypes.half``] -> ((8, 16, 16), "half")."""
    parts = test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) else [test]
    dims: tuple[int, ...] | None = None
    dtype = ""
    for p in parts:
        if not (isinstance(p, ast.Compare) and len(p.comparators) == 1 and isinstance(p.ops[0], ast.Eq)
                and isinstance(p.left, ast.Name)):
            return None
        right = p.comparators[0]
        if p.left.id == "dims" and isinstance(right, ast.Tuple) and all(
                isinstance(x, ast.Constant) and type(x.value) is int for x in right.elts):
            dims = tuple(x.value for x in right.elts if isinstance(x, ast.Constant) and type(x.value) is int)  # all, as tested
        elif p.left.id == "dtype_in" and isinstance(right, ast.Attribute):
            dtype = right.attr
        else:
            return None
    return (dims, dtype) if dims else None


def cuda_branches(tree: ast.Module, file: str) -> tuple[ast.FunctionDef, list[tuple[tuple, ast.If, dict]]]:
    """The CUDA case's ``c_map`` and, per shape branch, its test's key, node and functions by name."""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and _is_device(node.test, "CUDA"):
            c_map = next((s for s in node.body if isinstance(s, ast.FunctionDef) and s.name == "c_map"), None)
            if c_map is None:
                raise Refused("the CUDA case defines no c_map", file, node.lineno)
            out = []
            branch = next((s for s in node.body if isinstance(s, ast.If)), None)
            while isinstance(branch, ast.If):
                key = _branch_key(branch.test)
                if key is not None:
                    funcs = {s.name: s for s in branch.body if isinstance(s, ast.FunctionDef)}
                    out.append((key, branch, funcs))
                branch = branch.orelse[0] if len(branch.orelse) == 1 and isinstance(branch.orelse[0], ast.If) else None
            return c_map, out
    raise Refused('no `device == "CUDA"` case of the WMMA emulation', file, 0)


def _returned(fn: ast.FunctionDef, file: str) -> ast.expr:
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if len(body) != 1 or not isinstance(body[0], ast.Return) or body[0].value is None:
        raise Refused(f"{fn.name}: one return statement expected", file, fn.lineno, fn.col_offset)
    return body[0].value


def holder(fn: ast.FunctionDef, args: dict[str, int], file: str) -> tuple[int, int]:
    """``x[E][goff + L]`` of ``a_elem``/``b_elem`` -> (lane L, element E) with ``goff`` 0."""
    e = _returned(fn, file)
    params = [a.arg for a in fn.args.args]
    if not (isinstance(e, ast.Subscript) and isinstance(e.value, ast.Subscript) and isinstance(e.value.value, ast.Name)
            and e.value.value.id == params[0]):
        raise Refused(f"{fn.name}: x[element][goff + lane] expected", file, e.lineno, e.col_offset)
    missing = [p for p in args if p not in params]
    if missing or len(params) != 4:
        raise Refused(f"{fn.name}({', '.join(params)}): parameters (x, ..., goff) naming {', '.join(args)} expected",
                      file, fn.lineno, fn.col_offset)
    env = {**args, params[-1]: 0}
    at = (file, e.lineno)
    return _eval_int(e.slice, env, at), _eval_int(e.value.slice, env, at)


def c_position(fn: ast.FunctionDef, lane: int, elem: int, file: str) -> tuple[int, int]:
    """``c_map(lane, elem)`` = (col, row) -> (row, col)."""
    e = _returned(fn, file)
    if not (isinstance(e, ast.Tuple) and len(e.elts) == 2):
        raise Refused("c_map: a (col, row) tuple expected", file, e.lineno, e.col_offset)
    a, b = (arg.arg for arg in fn.args.args)
    env = {a: lane, b: elem}
    col, row = (_eval_int(x, env, (file, e.lineno)) for x in e.elts)
    return row, col


def entries(kind: str, fn: ast.FunctionDef, m: int, n: int, k: int, n_c: int, file: str
            ) -> tuple[tuple[int, int, int, int], ...]:
    out = []
    if kind == "C":
        for lane in range(32):
            for elem in range(n_c):
                out.append((lane, elem, *c_position(fn, lane, elem, file)))
    elif kind == "A":
        for row in range(m):
            for kk in range(k):
                out.append((*holder(fn, {"k": kk, "row": row}, file), row, kk))
    else:
        for kk in range(k):
            for col in range(n):
                out.append((*holder(fn, {"k": kk, "col": col}, file), kk, col))
    if len({(t, i) for t, i, _, _ in out}) != len(out):
        raise ValueError(f"{fn.name}: two elements held by the same lane and element")
    return tuple(sorted(out))


def evaluate_default(specs: list, timeout: float = DEFAULT_TIMEOUT, path: str | Path | None = None
                     ) -> CrosscheckReport:
    """The installed tinygrad (or ``path``: a directory holding ``tinygrad/runtime/ops_python.py``)."""
    t0 = time.perf_counter()
    root = Path(path) if path is not None else _installed()
    if root is None or not (root / FILE).is_file():
        raise FileNotFoundError(f"no tinygrad: {INSTALL}")
    lays = {lay.id: lay for lay in specs if isinstance(lay, Layout)}
    items: list[Evaluated] = []
    try:
        tree = ast.parse((root / FILE).read_text(encoding="utf-8", errors="replace"), filename=FILE)
        c_map, branches = cuda_branches(tree, FILE)
    except (SyntaxError, ValueError, RecursionError, MemoryError, OSError, Refused) as e:
        return CrosscheckReport(f"tinygrad {version_of(DIST)}", (FILE,), tuple(conform_rows(
            [Evaluated("WMMA emulation (CUDA)", "", FILE, getattr(e, "line", 0) or getattr(e, "lineno", 0) or 0,
                       lays.get("mma.m16n8k16.A.f16_bf16"), error=str(e))], timeout)), {}, time.perf_counter() - t0,
            NAME, "tinygrad tensor-core emulator")
    for key, branch, funcs in branches:
        shape = SHAPES.get(key)
        if shape is None:
            continue
        m, n, k, by = shape
        for operand, ids in by.items():
            fn = c_map if operand == "C" else funcs.get("a_elem" if operand == "A" else "b_elem")
            for sid in ids:
                spec = in_use_of(lays, sid)
                if spec is None:
                    continue
                name = f"{key[0]}{' ' + key[1] if key[1] else ''} {operand}"
                line = fn.lineno if fn is not None else branch.lineno
                if fn is None:
                    items.append(Evaluated(name, operand, FILE, line, spec, error=f"the {key} branch defines no "
                                           f"{'a_elem' if operand == 'A' else 'b_elem'}"))
                    continue
                try:
                    ents = entries(operand, fn, m, n, k, spec.n_elements, FILE)
                except (Refused, ValueError) as e:
                    items.append(Evaluated(name, operand, FILE, line, spec, error=str(e)))
                    continue
                items.append(Evaluated(name, operand, FILE, line, spec, entries=ents, text=f"def {fn.name} (line {fn.lineno})"))
    rows = conform_rows(items, timeout)
    where = f"tinygrad {version_of(DIST)}" if path is None else f"tinygrad files in {Path(path).name}"
    return CrosscheckReport(where, (FILE,), tuple(rows), {}, time.perf_counter() - t0, NAME,
                            "tinygrad tensor-core emulator")
