"""Mosaic GPU's ``tcgen05.cp`` copies (``tcgen05.cp.128x256b``, ``.128x128b``, ``.64x128b.warpx2.01_23``), read with ``ast``.

Part of the ``mosaic`` reference (JAX Mosaic GPU's origin); kept in its own file.  What Mosaic's ``tcgen05.py`` says,
each read from the file (never imported or run), and what that states about a copy shape:

* ``async_copy_smem_to_tmem`` copies a ``(128, C)`` array whose shared-memory tiles are ``(8, swizzle_elems)``
  (``utils.tile_shape(tmem_ref.shape, (8, swizzle_elems))``; rows of a tile ``swizzle`` bytes, 8-row tiles ``SBO``
  apart: the descriptor's rows are the array's rows) into a Tensor Memory reference it requires to be
  ``tmem_default_layout(packing=32 // bitwidth)`` (``mma`` reads it so).  It issues ``.128x128b`` when ``swizzle ==
  16`` and ``.128x256b`` otherwise (``cp_cols_bytes`` 16 or 32), copy ``(smem_minor_tile, cp_idx)`` reading at
  ``smem_byte_offset`` and writing at ``tmem_ref.address + tmem_col``.  So source row ``s`` and byte ``b`` of a
  copy are the array's element ``(s, column)`` (the byte's position in its tile row after ``smem_byte_offset``), and
  land where ``tmem_default_layout`` puts that element, relative to ``tmem_col``: (lane, 32-bit column, byte = the
  element's slot x its bytes + the byte within it).  Evaluated for 8-, 16- and 32-bit elements and every swizzle
  (each expression of the function evaluated from its AST by ``mosaic``'s integer evaluator), every copy of a
  two-tile array: all copies must give the same map (else a finding).
* ``async_copy_scales_smem_to_tmem``, for a Tensor Memory reference with ``b_scales_m64_collective_layout()`` (B's
  scale factors of a 2-CTA M = 128 MMA), issues ``tcgen05_cp(SHAPE_64x128b, ..., multicast=WARPX2_01_23)`` per K
  tile, at ``tmem_ref.address + 4 * k_tile``, from a contiguous ``(1, K // 4, 64, 16)`` buffer through
  ``encode_descriptor(load_ptr, 0, 8 * 16)`` (rows 16 bytes apart: source row ``s`` is the buffer's row ``s``).  Its
  docstring gives the recipe that fills that buffer from an ``(N, K // 32)`` array (``scales.reshape(2,
  columns_per_cta, 32, k // 4, 4).transpose(3, 0, 2, 1, 4).reshape(1, k // 4, 64, columns_per_cta * 4)``, N treated
  as padded to 256: ``columns_per_cta`` = 4), and ``b_scales_m64_collective_layout()`` where each ``(n, kb)`` is in
  Tensor Memory (two copies, ``Replicated(2)``).  So source row ``s``, byte ``b`` is the ``(n, kb)`` the recipe puts
  there, and its copies are that layout's two cells; ``copy`` is the rank of the cell's lane among the two (the
  spec's ``copy`` numbers the lower lane 0 in both ``.warpx2`` forms).

What Mosaic states here and CuTe disagree on (``.64x128b.warpx2::01_23``: Mosaic's layout puts source rows 0-31 in
lane quarters 0 and 2, CuTe's ``Copy_Traits`` in 0 and 1) is in ``docs/references.md``, with who is right.
"""
from __future__ import annotations

import ast
import re
from collections.abc import Callable
from typing import Any

from ...layout.model import MapLayout
from .common import Evaluated
from .pyfunc import Refused
from .tiled import Reader, TiledLayout, placements

COPY = "async_copy_smem_to_tmem"
SCALES = "async_copy_scales_smem_to_tmem"
SHAPES = {"SHAPE_128x128b": "tcgen05.cp.128x128b", "SHAPE_128x256b": "tcgen05.cp.128x256b"}
MULTICASTS = {"WARPX2_01_23": "tcgen05.cp.64x128b.warpx2.01_23", "WARPX2_02_13": "tcgen05.cp.64x128b.warpx2.02_13"}
BITWIDTHS = (8, 16, 32)
SWIZZLES = (16, 32, 64, 128)
ROWS = 128
B_SCALES_N = 256          # "both the SMEM and TMEM layout need N to be treated as padded to 256"
_STEP = re.compile(r"\.(reshape|transpose)\(([^()]*)\)")
# the expressions of async_copy_smem_to_tmem evaluated, in order (each must be one assignment of the function)
_EXPRS = ("swizzle_elems", "minor_elems_per_cp", "cps_per_smem_minor_tile", "col_tile_byte_stride",
          "smem_byte_offset", "tmem_cols_per_cp", "tmem_col")

EvalInt = Callable[[ast.expr, dict, tuple], int]


def _assignments(fn: ast.FunctionDef, name: str) -> list[ast.Assign]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Assign) and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Name) and n.targets[0].id == name]


def _one(fn: ast.FunctionDef, name: str, file: str) -> ast.Assign:
    found = _assignments(fn, name)
    if len(found) != 1:
        raise Refused(f"{fn.name}: {len(found)} assignments of {name} (one expected)", file, fn.lineno)
    return found[0]


def _requires(fn: ast.FunctionDef, text: str, file: str) -> int:
    """The line of the comparison ``text`` (a check that raises on it), else Refused."""
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and ast.unparse(node) == text:
            return node.lineno
    raise Refused(f"{fn.name}: no check {text!r}", file, fn.lineno)


def _shape_choice(fn: ast.FunctionDef, file: str) -> dict[bool, tuple[str, int, int]]:
    """``swizzle == 16`` -> (shape attribute, cp_cols_bytes, line) for each branch of the function's ``if``."""
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "swizzle == 16":
            out = {}
            for branch, body in ((True, node.body), (False, node.orelse)):
                shape = [s.value.attr for s in body if isinstance(s, ast.Assign) and ast.unparse(s.targets[0])
                         == "cp_shape" and isinstance(s.value, ast.Attribute)]
                cols = [s.value.value for s in body if isinstance(s, ast.Assign) and ast.unparse(s.targets[0])
                        == "cp_cols_bytes" and isinstance(s.value, ast.Constant) and type(s.value.value) is int]
                if len(shape) != 1 or len(cols) != 1:
                    raise Refused("the swizzle == 16 branch does not set cp_shape and cp_cols_bytes", file, node.lineno)
                out[branch] = (shape[0], cols[0], node.lineno)
            return out
    raise Refused(f"{fn.name}: no `if swizzle == 16` choosing the copy shape", file, fn.lineno)


def _names(spec: MapLayout) -> tuple[list[str], list[str]]:
    return [d.name for d in spec.inputs], [d.name for d in spec.outputs]


def _row(spec: MapLayout, vals: dict[str, int]) -> tuple[int, ...]:
    ins, outs = _names(spec)
    return tuple(vals[n] for n in (*ins, *outs))


def smem_copy_items(reader: Reader, index: dict, where: str, tc: str, eval_int: EvalInt) -> list[Evaluated]:
    """``tcgen05.cp.128x128b`` and ``.128x256b`` from ``async_copy_smem_to_tmem`` (see the module docstring)."""
    specs = {sid: index.get(sid) for sid in SHAPES.values()}
    if not any(isinstance(s, MapLayout) for s in specs.values()):
        return []
    file = f"{tc}.py"
    try:
        fn = reader.function(tc, COPY)
        layout_line = _requires(fn, "tmem_ref.layout != tmem_default_layout(packing=tmem_ref.packing)", file)
        _requires(fn, "tmem_ref.packing != 32 // bitwidth", file)
        _requires(fn, "tmem_ref.shape[0] != TMEM_ROWS", file)
        choice = _shape_choice(fn, file)
        exprs = {name: _one(fn, name, file) for name in _EXPRS}
    except Refused as err:
        return [Evaluated(f"{COPY}", "", where, getattr(err, "line", 0), s, error=str(err))
                for s in specs.values() if isinstance(s, MapLayout)]
    items: list[Evaluated] = []
    for swizzle in SWIZZLES:
        shape_attr, cp_bytes, choice_line = choice[swizzle == 16]
        spec = specs.get(SHAPES.get(shape_attr, ""))
        if not isinstance(spec, MapLayout):
            continue
        for bw in BITWIDTHS:
            name = (f"{COPY}: {shape_attr} for swizzle {swizzle}, {bw}-bit elements, into "
                    f"tmem_default_layout(packing={32 // bw})")
            try:
                rows = _smem_copy_rows(reader, tc, spec, exprs, swizzle, bw, cp_bytes, eval_int)
            except (Refused, ValueError, KeyError) as err:
                items.append(Evaluated(name, "", where, choice_line, spec, error=str(err)))
                continue
            items.append(Evaluated(name, "", where, choice_line, spec,
                                   text=f"tmem_default_layout(packing={32 // bw}) checked at {file}:{layout_line}",
                                   map_rows=rows))
    return items


def _smem_copy_rows(reader: Reader, tc: str, spec: MapLayout, exprs: dict[str, ast.Assign], swizzle: int, bw: int,
                    cp_bytes: int, eval_int: EvalInt) -> tuple[tuple[int, ...], ...]:
    file = f"{tc}.py"
    lay = reader.call(tc, "tmem_default_layout", packing=32 // bw)
    if not isinstance(lay, TiledLayout):
        raise Refused("tmem_default_layout returned no layout", file, reader.line(tc, "tmem_default_layout"))
    env = {"swizzle": swizzle, "bitwidth": bw, "cp_cols_bytes": cp_bytes}
    for name in _EXPRS[:3]:
        env[name] = eval_int(exprs[name].value, env, (file, exprs[name].lineno))
    se = env["swizzle_elems"]
    cols = 2 * se                                           # two minor tiles
    env["col_tile_stride"] = 8 * se                         # contiguous (R / 8, C / se, 8, se) tiles
    env["col_tile_byte_stride"] = eval_int(exprs["col_tile_byte_stride"].value, env,
                                           (file, exprs["col_tile_byte_stride"].lineno))
    cells = {idx: (32 * w + ln, reg, e) for w, ln, reg, e, idx in placements(lay, (ROWS, cols))}
    first: tuple[tuple[int, ...], ...] | None = None
    for tile in range(cols // se):
        for cp_idx in range(env["cps_per_smem_minor_tile"]):
            local = {**env, "smem_minor_tile": tile, "cp_idx": cp_idx}
            for name in _EXPRS[4:]:
                local[name] = eval_int(exprs[name].value, local, (file, exprs[name].lineno))
            t, in_tile = divmod(local["smem_byte_offset"], env["col_tile_byte_stride"])
            if in_tile + cp_bytes > swizzle:
                raise Refused(f"copy {cp_idx} of tile {tile} reads past its tile row ({in_tile} + {cp_bytes} > "
                              f"{swizzle} bytes)", file, exprs["smem_byte_offset"].lineno)
            rows = []
            for s in range(ROWS):
                for b in range(cp_bytes):
                    bit = 8 * (in_tile + b)
                    lane, reg, slot = cells[(s, t * se + bit // bw)]
                    byte = slot * (bw // 8) + (bit % bw) // 8
                    rows.append(_row(spec, {"src_row": s, "src_byte": b, "tmem_lane": lane,
                                            "tmem_col": reg - local["tmem_col"], "byte": byte}))
            got = tuple(rows)
            if first is None:
                first = got
            elif got != first:
                raise Refused(f"copy {cp_idx} of minor tile {tile} places its bytes unlike the first copy", file,
                              exprs["tmem_col"].lineno)
    if first is None:
        raise Refused("no copy issued", file, exprs["tmem_col"].lineno)
    return first


def _b_scales_branch(fn: ast.FunctionDef, file: str) -> tuple[ast.If, ast.Call]:
    for node in ast.walk(fn):
        if isinstance(node, ast.If) and ast.unparse(node.test) == "tmem_ref.layout == b_scales_m64_collective_layout()":
            calls = [c for c in ast.walk(node) if isinstance(c, ast.Call) and ast.unparse(c.func).endswith("tcgen05_cp")]
            if len(calls) != 1:
                raise Refused("the b_scales_m64_collective_layout branch issues no single tcgen05_cp", file, node.lineno)
            return node, calls[0]
    raise Refused(f"{fn.name}: no branch for b_scales_m64_collective_layout()", file, fn.lineno)


def b_scales_copy_items(reader: Reader, index: dict, where: str, tc: str, eval_int: EvalInt) -> list[Evaluated]:
    """The ``.64x128b.warpx2`` copy of B's 2-CTA scale factors (see the module docstring)."""
    file = f"{tc}.py"
    targets = [s for s in (index.get(i) for i in MULTICASTS.values()) if isinstance(s, MapLayout)]
    if not targets:
        return []
    try:
        fn = reader.function(tc, SCALES)
        branch, call = _b_scales_branch(fn, file)
        shape = ast.unparse(call.args[0]).rsplit(".", 1)[-1] if call.args else ""
        multicast = next((ast.unparse(k.value).rsplit(".", 1)[-1] for k in call.keywords if k.arg == "multicast"), "")
        if shape != "SHAPE_64x128b" or multicast not in MULTICASTS:
            raise Refused(f"the copy is {shape} {multicast or 'without a multicast'}, not .64x128b.warpx2", file,
                          call.lineno)
        spec = index.get(MULTICASTS[multicast])
        if not isinstance(spec, MapLayout):
            return []
        smem = [n for n in ast.walk(branch) if isinstance(n, ast.Assign) and ast.unparse(n.targets[0])
                == "expected_smem_shape"]
        if not smem or ast.unparse(smem[0].value) != "(1, k_tiles, 64, 16)":
            raise Refused("the branch expects no (1, k_tiles, 64, 16) buffer", file, branch.lineno)
        desc = [n for n in ast.walk(branch) if isinstance(n, ast.Call)
                and ast.unparse(n.func).endswith("encode_descriptor")]
        if not desc or len(desc[0].args) < 3 or eval_int(desc[0].args[2], {}, (file, desc[0].lineno)) != 128:
            raise Refused("the copy's descriptor has no stride byte offset of 128 (8 rows of 16 bytes)", file,
                          branch.lineno)
        steps = _recipe(fn, file)
        lay = reader.call(tc, "b_scales_m64_collective_layout")
        if not isinstance(lay, TiledLayout):
            raise Refused("b_scales_m64_collective_layout returned no layout", file,
                          reader.line(tc, "b_scales_m64_collective_layout"))
        held = _recipe_positions(steps, B_SCALES_N, 4, (file, fn.lineno), eval_int)
        copies: dict[tuple[int, ...], list[tuple[int, int, int]]] = {}
        for w, ln, reg, e, idx in placements(lay, (B_SCALES_N, 4)):
            copies.setdefault(idx, []).append((32 * w + ln, reg, e))
    except (Refused, ValueError) as err:
        return [Evaluated(f"{SCALES} (b_scales_m64_collective_layout)", "", where, getattr(err, "line", 0), s,
                          error=str(err)) for s in targets]
    rows = []
    for (s, b), nk in sorted(held.items()):
        for c, (lane, col, byte) in enumerate(sorted(copies[nk])):
            rows.append(_row(spec, {"src_row": s, "src_byte": b, "copy": c, "tmem_lane": lane, "tmem_col": col,
                                    "byte": byte}))
    recipe = " ".join(f".{op}({args})" for op, args in steps)
    return [Evaluated(f"{SCALES}: {multicast} of the docstring's buffer{recipe} into b_scales_m64_collective_layout()",
                      "", where, call.lineno, spec, text=lay.text(), map_rows=tuple(rows))]


def _recipe(fn: ast.FunctionDef, file: str) -> list[tuple[str, str]]:
    doc = ast.get_docstring(fn) or ""
    start = doc.find("scales.reshape(2, columns_per_cta")
    if start < 0:
        raise Refused(f"{fn.name}: its docstring gives no recipe for b_scales_m64_collective_layout", file, fn.lineno)
    steps = [(m.group(1), m.group(2)) for m in _STEP.finditer(doc[start:start + 400])][:3]
    if [op for op, _ in steps] != ["reshape", "transpose", "reshape"]:
        raise Refused(f"{fn.name}: the B-scale recipe is not reshape, transpose, reshape", file, fn.lineno)
    return steps


def apply_recipe(steps: list[tuple[str, str]], shape: tuple[int, int], env: dict[str, int], at: tuple[str, int],
                 eval_int: EvalInt) -> Any:
    """``arange`` of ``shape`` through a docstring recipe's reshapes and transposes (each argument an integer
    expression over ``env``, read with ``ast`` and evaluated by ``eval_int``, never executed): where each element
    of the tile ends up."""
    import numpy as np
    arr = np.arange(shape[0] * shape[1]).reshape(shape)
    for op, args in steps:
        vals = []
        for a in args.split(","):
            try:
                e = ast.parse(a.strip(), mode="eval").body
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                raise Refused(f"{a.strip()[:40]!r} is no integer expression", *at) from None
            vals.append(eval_int(e, env, at))
        try:
            arr = arr.reshape(vals) if op == "reshape" else arr.transpose(vals)
        except ValueError as err:
            raise Refused(f"{op}{tuple(vals)}: {err}", *at) from None
    return arr


def _recipe_positions(steps: list[tuple[str, str]], n: int, k: int, at: tuple[str, int], eval_int: EvalInt
                      ) -> dict[tuple[int, int], tuple[int, int]]:
    """(buffer row, byte) of K tile 0 -> the (n, kb) the recipe puts there (8-bit factors)."""
    arr = apply_recipe(steps, (n, k), {"columns_per_cta": n // 64, "k": k}, at, eval_int)
    if arr.shape != (1, k // 4, 64, 16):
        raise Refused(f"the recipe gives {tuple(arr.shape)}, not (1, {k // 4}, 64, 16)", *at)
    return {(s, b): divmod(int(arr[0, 0, s, b]), k) for s in range(64) for b in range(16)}
