"""Mosaic GPU's scale factors of B in Tensor Memory (``tcgen05.sf.B.4x1``), read from ``tcgen05.py`` with ``ast``.

Part of the ``mosaic`` reference (JAX Mosaic GPU's origin); kept in its own file.  What Mosaic's source says, each
read from the file (never imported or run):

* ``mma`` requires, for a non-collective MMA (M = 128, the 4x1 data path), ``b_scale.layout == scales_layout()``
  over a ``(N rounded up to 128, K / 32)`` array: B's factors are laid out like A's, N rows instead of M
  (``scales_layout()``: row n in lane n % 32 of *every* lane quarter, the ``n // 32``-th 32-bit column of its
  128-row tile, K block k at byte k);
* ``_do_mma`` passes the one ``scale_id`` as both the A and the B scale id of the instruction descriptor
  (``create_scaled_instr_descriptor(..., scale_id, scale_id, ...)``: ``b_scale_idx`` is the sixth argument), the
  id of each kind evaluated as for A (``mosaic.scale_steps``).

So for every ``VS`` and ``N`` of the spec, copy ``q`` of row ``n`` (the copy in lane quarter ``q``) and K block
``kb`` are read at (``32 q + n % 32``, column, byte ``scale_id(kb // VS) + kb % VS``); the byte must be where
``scales_layout()`` put the factor (else a finding).  The map rows are the spec's ``(quarter, row, kb) ->
(tmem_lane, tmem_col, byte)``.
"""
from __future__ import annotations

import ast
from collections.abc import Callable

from ...layout.model import MapLayout
from .common import Evaluated
from .pyfunc import Refused
from .tiled import Reader, TiledLayout, placements

SPEC = "tcgen05.sf.B.4x1"
B_ARG = 5    # create_scaled_instr_descriptor(m, n, a_type, b_type, a_scale_idx, b_scale_idx, ...)


def _b_scale_checked(reader: Reader, tc: str) -> int:
    """The line where ``mma`` requires ``b_scale.layout == scales_layout()`` (``!=`` raising), else Refused."""
    fn = reader.function(tc, "mma")
    for node in ast.walk(fn):
        if (isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], ast.NotEq)
                and ast.unparse(node.left) == "b_scale.layout"
                and ast.unparse(node.comparators[0]) == "scales_layout()"):
            return node.lineno
    raise Refused("mma: no check that B's scales have scales_layout()", f"{tc}.py", fn.lineno)


def _b_id_is_scale_id(reader: Reader, tc: str) -> int:
    """The line of ``_do_mma``'s ``create_scaled_instr_descriptor`` call whose B scale id is ``scale_id``."""
    fn = reader.function(tc, "_do_mma")
    for node in ast.walk(fn):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id == "create_scaled_instr_descriptor" and len(node.args) > B_ARG):
            arg = node.args[B_ARG]
            if isinstance(arg, ast.Name) and arg.id == "scale_id":
                return node.lineno
            raise Refused(f"the B scale id is {ast.unparse(node.args[B_ARG])}, not scale_id", f"{tc}.py", node.lineno)
    raise Refused("_do_mma: no create_scaled_instr_descriptor call", f"{tc}.py", fn.lineno)


def _values(spec: MapLayout, name: str) -> tuple[int, ...]:
    return next((tuple(p.values) for p in spec.params if p.name == name), ())


def sfb_items(reader: Reader, index: dict, where: str, tc: str, scale_steps: Callable, eval_int: Callable
              ) -> list[Evaluated]:
    """``tcgen05.sf.B.4x1`` for every ``VS`` Mosaic issues and every ``N`` of the spec (see the module docstring);
    ``scale_steps`` and ``eval_int`` are ``mosaic``'s readers of ``_do_mma``'s kinds and integer expressions."""
    spec = index.get(SPEC)
    if not isinstance(spec, MapLayout):
        return []
    name = "scales_layout() for B (mma's check) with _do_mma's scale id"
    try:
        check_line = _b_scale_checked(reader, tc)
        call_line = _b_id_is_scale_id(reader, tc)
        steps, width_e, sid_e, sid_line = scale_steps(reader)
        lay = reader.call(tc, "scales_layout")
        if not isinstance(lay, TiledLayout):
            raise Refused("scales_layout returned no layout", f"{tc}.py", reader.line(tc, "scales_layout"))
    except (Refused, ValueError) as refused:
        return [Evaluated(name, "SFB", where, getattr(refused, "line", 0), spec, error=str(refused))]
    at = (f"{tc}.py", sid_line)
    text = f"{lay.text()} (B's layout checked at {tc}.py:{check_line}, B's scale id at :{call_line})"
    items: list[Evaluated] = []
    for variant, st in sorted(steps.items()):
        vs = eval_int(width_e, {"scale_steps": st}, at)
        if vs not in _values(spec, "VS"):
            continue
        ids = {k: eval_int(sid_e, {"k_step": k, "scale_steps": st, "scale_vec_width": vs}, at) for k in range(st)}
        for n in _values(spec, "N"):
            padded = max(128, -(-n // 128) * 128)
            label = f"{name} ({variant.upper()}: scale_steps = {st}) over ({padded}, 4), N = {n}"
            try:
                placed = list(placements(lay, (padded, 4)))
            except ValueError as err:
                items.append(Evaluated(label, "SFB", where, sid_line, spec, (("N", n), ("VS", vs)), error=str(err)))
                continue
            rows, bad = [], ""
            for w, ln, reg, e, (r, kb) in sorted(placed):
                if r >= n:
                    continue
                read = ids[kb // vs] + kb % vs
                if read != e:
                    bad = bad or (f"K block {kb} of row {r} (copy {w}): scales_layout puts it at byte {e}, the MMA "
                                  f"given scale id {ids[kb // vs]} reads byte {read}")
                rows.append((w, r, kb, 32 * w + ln, reg, read))
            items.append(Evaluated(label, "SFB", where, sid_line, spec, (("N", n), ("VS", vs)), text=text,
                                   map_rows=tuple(sorted(rows)), error=bad))
    return items
