"""Index code for a register fragment: the layout as a kernel engineer writes it, ``row = lane / 4 + 8 * (i // 2)``.

The grammar is the one every option that takes code shares (``verify.formula.index``: ``#`` starts a comment,
``//`` is floor division, ``lane``/``tid``/``laneid`` name the thread); the code must define ``row`` and
``col`` over the thread and the element index ``i``, and may read a family's parameters by name.  This module
makes it a ``TVImport`` over the spec's domain, or a block tile (``--threads``), and finds code that reads the
thread beyond the spec's threads.  Errors are ``NotationError`` at the user's line and column.
"""
from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from verify.formula import BinOp, Case, Definition, Formula, FormulaError, Num, Pos, Var, walk
from verify.formula.ast import MAX_TEXT
from verify.formula.index import parse_index

from ..family import substitute

from .errors import NotationError, TVImport, decode_source
from .registry import MapReader, Notation, Option, register, register_reader


def parse_index_code(text: str | bytes, prefix: str = "a", source: str = "argument",
                     params: tuple[str, ...] = ()) -> Formula:
    """Index code -> a ``Formula`` defining ``row`` and ``col`` (see the module docstring); ``params``: the
    names of a family's parameters (wgmma ``N``) the code may read."""
    text = decode_source(text, source, limit=MAX_TEXT * 4)
    try:
        return parse_index(text, prefix, required=("row", "col"), params=tuple(params), thread=True)
    except FormulaError as e:
        raise NotationError(e.message, e.line, e.col, source) from None


def import_index_code(text: str | bytes, threads: int, values: int, prefix: str = "a", *,
                      operand: str | None = None, source: str = "argument",
                      params: Mapping[str, int] | None = None) -> TVImport:
    """``parse_index_code`` as a ``TVImport`` over ``threads`` x ``values`` (the spec's domain: index
    code does not state its own).  ``params``: a family member's parameter values (``{"N": 24}``), which the
    code may read by name; the import is that member's layout (``TVImport.params`` names those it read)."""
    formula = parse_index_code(text, prefix, source, tuple(params or {}))
    read = tuple(sorted({n.name for d in formula.definitions for n in walk(d)
                         if isinstance(n, Var) and n.name in (params or {})}))
    if read:
        formula = substitute(formula, dict(params or {}))
    raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
    return TVImport(formula, threads, values, raw, "index", None, operand.upper() if operand else None, params=read)


# ----------------------------------------------------------------------------- threads beyond the spec's

MAX_THREADS = 1024  # a CUDA block


def thread_reach(formula: Formula, threads: int, values: int) -> tuple[Pos, str] | None:
    """Where index code reads the thread beyond ``threads`` (a block tile written against one warp's spec):
    the first sub-expression, in source order, that is constant over threads ``0 .. threads - 1`` (every
    element) but takes another value for some thread up to ``MAX_THREADS`` (``tid // 32``, ``tid >> 5``,
    ``tid - tid % 32``), or a case condition that holds for no thread of the spec but for a later one
    (``if tid >= 32``).  A condition that holds for every thread of the spec (a domain guard ``lane < 32``) is
    not one.  None when there is none; else (its position, what it is)."""
    from ...engines.vector import VectorEvaluator
    probes: list[tuple[str, Pos, str, Any]] = []
    defs = list(formula.definitions)
    for d in formula.definitions:
        for case in d.cases:
            for node in walk(case.expr):
                if isinstance(node, BinOp):
                    name = f"probe#{len(probes)}"
                    defs.append(Definition(name, (Case(node, None, node.pos),), node.pos))
                    probes.append((name, node.pos, "expr", node))
            if case.cond is not None:
                name = f"probe#{len(probes)}"
                pos = getattr(case.cond, "pos", d.pos)
                defs.append(Definition(name, (Case(Num(1, pos), case.cond, pos), Case(Num(0, pos), None, pos)), pos))
                probes.append((name, pos, "cond", case.cond))
    if not probes:
        return None
    top = max(MAX_THREADS, threads * 2)
    lane = np.arange(top, dtype=np.int64)[:, None]
    idx = np.arange(max(1, values), dtype=np.int64)[None, :]
    ev = VectorEvaluator(Formula(tuple(defs), formula.element_prefix), lane, idx)
    inside = np.broadcast_to(lane < threads, (top, max(1, values)))
    found: list[tuple[tuple[int, int], Pos, str, Any]] = []
    for name, pos, kind, node in probes:
        try:
            v = ev.full(name)
        except (ArithmeticError, ValueError, TypeError):
            continue
        good = np.ones((top, max(1, values)), bool)
        if v.ok is not None:
            good &= np.broadcast_to(v.ok, good.shape)
        if v.err is not None:
            good &= ~np.broadcast_to(v.err, good.shape)
        val = np.broadcast_to(v.lo, good.shape)
        here, beyond = val[inside & good], val[~inside & good]
        if kind == "cond":
            if here.size and not here.any() and beyond.size and beyond.any():
                found.append(((pos.line, pos.col), pos, f"this case holds for no thread of the spec, only from thread "
                                                        f"{threads} on", node))
            continue
        if here.size and beyond.size and (here == here.flat[0]).all() and (beyond != here.flat[0]).any():
            found.append(((pos.line, pos.col), pos, f"this expression is {int(here.flat[0])} for every thread of the "
                                                    f"spec, not from thread {threads} on", node))
    flagged = {id(f[3]) for f in found}
    # the innermost: ``8 * (tid // 32)`` is reported at the ``//``, not at the ``*``
    inner = [f for f in found if not any(id(n) in flagged for n in walk(f[3]) if n is not f[3])]
    if not inner:
        return None
    _, pos, what, _ = min(inner, key=lambda f: f[0])
    return pos, what


def _threads_option(value: str | None, name: str, source: str) -> int | None:
    if value is None:
        return None
    text = str(value).strip()
    if not text.isdigit() or len(text) > 5 or not 1 <= int(text) <= MAX_THREADS * (4 if name == "elements" else 1):
        top = MAX_THREADS * (4 if name == "elements" else 1)
        raise NotationError(f"--{name} {value!r}: give a whole number of {name} in 1..{top}", 1, 1, source)
    return int(text)


def block_extent(formula: Formula, threads: int, values: int, source: str) -> tuple[int, int]:
    """The rows x cols a block tile of index code covers: one past its largest row and column."""
    from ...engines.vector import VectorEvaluator
    lane = np.arange(threads, dtype=np.int64)[:, None]
    idx = np.arange(values, dtype=np.int64)[None, :]
    ev = VectorEvaluator(formula, lane, idx)
    out = []
    for name in ("row", "col"):
        v = ev.full(name)
        good = np.ones((threads, values), bool)
        if v.ok is not None:
            good &= np.broadcast_to(v.ok, good.shape)
        if v.err is not None:
            good &= ~np.broadcast_to(v.err, good.shape)
        vals = np.broadcast_to(v.lo, good.shape)[good]
        if not vals.size:
            raise NotationError(f"the index code defines no {name} for any of the {threads} threads", 1, 1, source)
        out.append(int(vals.max()) + 1)
    return out[0], out[1]


def _read(text: str | bytes, like: Any, *, source: str = "argument", threads: str | None = None,
          elements: str | None = None) -> TVImport:
    """Index code against ``like`` (its domain); with ``threads`` a block tile of that many threads (thread =
    lane + 32 * warp) and ``elements`` elements per thread (default the spec's), over the rows x cols it
    reaches.  Without ``threads``, code that reads the thread beyond the spec's threads is an error
    (``thread_reach``): it would be judged on the spec's threads only."""
    n_threads = _threads_option(threads, "threads", source)
    n_elements = _threads_option(elements, "elements", source)
    if n_threads is None:
        if n_elements is not None:
            raise NotationError("--elements needs --threads (a block tile's elements per thread)", 1, 1, source)
        imp = import_index_code(text, like.threads, like.n_elements, like.prefix, operand=like.operand, source=source,
                                params=dict(like.params_bound))
        check_reach(imp.formula, like.threads, like.n_elements, source)
        return imp
    values = n_elements if n_elements is not None else like.n_elements
    imp = import_index_code(text, n_threads, values, like.prefix, operand=like.operand, source=source,
                            params=dict(like.params_bound))
    rows, cols = block_extent(imp.formula, n_threads, values, source)
    return TVImport(imp.formula, n_threads, values, imp.text, "index", (rows, cols), imp.operand, params=imp.params)


def check_reach(formula: Formula, threads: int, values: int, source: str) -> None:
    """``NotationError`` at the first place the code reads the thread beyond the spec's ``threads``."""
    hit = thread_reach(formula, threads, values)
    if hit is None:
        return
    pos, what = hit
    raise NotationError(f"the index code reads the thread beyond the spec's {threads} threads ({what}): it would "
                        f"be judged on threads 0..{threads - 1} "
                        "only; give --threads N (the block's threads) to judge it as a block tile", pos.line, pos.col,
                        source)


def _read_map(text: str, *, inputs: tuple, outputs: tuple, params: tuple = (), source: str = "argument",
              **_: object) -> Any:
    """Index code over a ``[[layout]]``'s input names defining its outputs, as a named map."""
    from ..named import formula_map
    try:
        return formula_map(text, inputs, outputs, params=params, index_code=True)
    except FormulaError as e:
        raise NotationError(e.message, e.line, e.col, source) from None


register_reader("map", MapReader("index", _read_map, reads_params=True, order=1))

register(Notation(
    "index", "--formula", "FILE", False, "index code: row = ... and col = ... over lane and i", _read, order=3,
    options=(Option("threads", "--threads", "N", "with --formula: the index code is a block tile of N threads "
                    "(tid = lane + 32 * warp), judged tile by tile against the spec (status tiled)"),
             Option("elements", "--elements", "N", "with --formula --threads: elements per thread (default the "
                    "spec's)")),
    api_doc="Hand-written index code: ``row = ...`` and ``col = ...`` over ``lane`` (or ``tid``) and ``i``, in the "
            "spec formula language plus ``//`` (floor division) and ``#`` comments (``docs/layouts.md``); a family's "
            "parameters (``N``) may be read by name.  ``threads=\"384\"`` (and ``elements=``): a block tile of "
            "that many threads.", api_name="index_code"))
