"""``tcgen05.cp .64x128b.warpx2::02_13`` as FlashInfer's sm_100 MLA decode relies on it, read with ``ast``.

Part of the ``flashinfer`` reference (FlashInfer's origin).  FlashInfer 0.7.4's MLA decode
(``flashinfer/attention/prims_ts/kernels/mla_decode/helpers/query.py``, a CuTe DSL kernel in Python; read, never
imported or run) stages the 64 rows of Q of a CTA into Tensor Memory as the A operand of its M = 64 ``tcgen05.mma``
(``copy_q_fp8_to_tmem``: "Copy 64x512 E4M3 Q values to Layout E(1CTA) or Layout B(2CTA)"; its 2-CTA caller
``q_desc``: "Stage 64 local Q rows into the replicated group-2 TMEM A layout").  What the function states, each
read from its AST (a statement that is not there, or says something else, is refused at its line):

* the source: ``prims.Tcgen05SmemDesc.build(source, leading_byte_offset=16, stride_byte_offset=1024, layout=2)``, a
  K-major 128-byte-swizzle tile (layout type 2, the descriptor's 128B code) of 128-byte rows, 8-row groups 1024
  bytes apart: the descriptor's rows are Q's rows; copy ``part`` (``for part in cutlass.range_constexpr(32)``)
  starts at ``base_desc + ((part // 8) * 512 + part % 8)`` (the start address in 16-byte units: panel ``part // 8``
  of 8192 bytes = 64 rows x 128 bytes, 16-byte column ``part % 8``), so its source byte ``b`` of row ``s`` is byte
  ``k = 128 (part // 8) + 16 (part % 8) + b`` of Q's row ``s``;
* the copy: ``prims.tcgen05_cp(SHAPE_64X128B, make_tmem_ptr(tmem_base + part * 4, ...), descriptor, ...,
  multicast=WARPX2_02_13)``: into 32-bit column ``part * 4`` on;
* the target: A in Tensor Memory for the data-path layout named, whose lanes are those of the accumulator's rows
  (the sub-partition computing row ``s`` reads A's row ``s``): ``tcgen05.datapath.B`` (per CTA, ``cta`` 0) gives
  row ``s`` the lanes ``{s + 64 h}``, whatever ``N`` (checked for every ``N`` of the spec).  A's row ``s``, byte
  ``k`` is at 32-bit column ``k // 4``, byte ``k % 4`` (8-bit elements packed four to a column, as
  ``tcgen05.packing.A.mxf8f6f4``).

So source row ``s``, byte ``b`` and ``copy`` ``c`` land at (the ``c``-th lowest of row ``s``'s lanes, ``k // 4 - 4
part``, ``k % 4``), the same for every ``part`` (else a finding), compared with the spec's ``::02_13``.  Like the
8-bit ``ldmatrix``/``stmatrix`` readers (``flashinfer_ldsm.py``, ``flashinfer_stsm.py``) what FlashInfer states is a
relation to another catalog layout, ``tcgen05.datapath.B``, which four origins back; it counts as an origin only
because that layout is itself agreed by two or more.
"""
from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from ...layout.corrections import in_use_of
from ...layout.model import MapLayout
from .common import Evaluated, located
from .pyfunc import Refused, parse_module

DIST = "flashinfer-python"
REL = "flashinfer/attention/prims_ts/kernels/mla_decode/helpers/query.py"
FILE = "mla_decode/helpers/query.py"
FUNC = "copy_q_fp8_to_tmem"
SPEC = "tcgen05.cp.64x128b.warpx2.02_13"
DATAPATH = "tcgen05.datapath.B"
MULTICAST = "WARPX2_02_13"
ROWS, ROW_BYTES, PANEL_BYTES = 64, 128, 8192


def _kw(call: ast.Call, name: str) -> ast.expr | None:
    return next((k.value for k in call.keywords if k.arg == name), None)


def _int(e: ast.expr | None, what: str, line: int) -> int:
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    raise Refused(f"{what} is no integer literal", FILE, getattr(e, "lineno", line))


def _calls(fn: ast.AST, suffix: str) -> list[ast.Call]:
    return [n for n in ast.walk(fn) if isinstance(n, ast.Call) and ast.unparse(n.func).endswith(suffix)]


def read_copy(text: str) -> tuple[int, dict[int, tuple[int, int]], str]:
    """``copy_q_fp8_to_tmem``'s line, part -> (first byte of Q's row the copy reads, its 32-bit column), and the
    data-path layouts its docstring names (``Refused`` where the function says anything else)."""
    tree = parse_module(text, FILE)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == FUNC]
    if len(fns) != 1:
        raise Refused(f"{len(fns)} definitions of {FUNC} (one expected)", FILE, 0)
    fn = fns[0]
    doc = ast.get_docstring(fn) or ""
    if "Layout B(2CTA)" not in doc:
        raise Refused(f"{FUNC}: its docstring names no Layout B(2CTA) target", FILE, fn.lineno)
    builds = _calls(fn, "Tcgen05SmemDesc.build")
    if len(builds) != 1:
        raise Refused(f"{FUNC}: {len(builds)} descriptor builds (one expected)", FILE, fn.lineno)
    b = builds[0]
    sbo = _int(_kw(b, "stride_byte_offset"), "stride_byte_offset", b.lineno)
    layout = _int(_kw(b, "layout"), "the descriptor's layout type", b.lineno)
    if (sbo, layout) != (8 * ROW_BYTES, 2):
        raise Refused(f"the source is no K-major 128-byte swizzle of 128-byte rows (SBO {sbo}, layout type {layout})",
                      FILE, b.lineno)
    loops = [n for n in ast.walk(fn) if isinstance(n, ast.For) and isinstance(n.target, ast.Name)
             and n.target.id == "part" and isinstance(n.iter, ast.Call) and len(n.iter.args) == 1]
    if len(loops) != 1:
        raise Refused(f"{FUNC}: no single `for part in range_constexpr(n)` loop", FILE, fn.lineno)
    loop = loops[0]
    it = loop.iter
    assert isinstance(it, ast.Call)
    parts = _int(it.args[0], "the number of copies", loop.lineno)
    desc = [n for n in loop.body if isinstance(n, ast.Assign) and ast.unparse(n.targets[0]) == "descriptor"]
    cps = _calls(loop, "tcgen05_cp")
    if len(desc) != 1 or len(cps) != 1:
        raise Refused(f"{FUNC}: the loop has no single descriptor and tcgen05_cp", FILE, loop.lineno)
    cp = cps[0]
    shape = ast.unparse(cp.args[0]).rsplit(".", 1)[-1] if cp.args else ""
    multicast = ast.unparse(_kw(cp, "multicast") or ast.Constant("")).rsplit(".", 1)[-1]
    if shape != "SHAPE_64X128B" or multicast != MULTICAST:
        raise Refused(f"the copy is {shape} {multicast}, not .64x128b.warpx2::02_13", FILE, cp.lineno)
    if len(cp.args) < 3 or ast.unparse(cp.args[2]) != "descriptor":
        raise Refused("the copy is not given the loop's descriptor", FILE, cp.lineno)
    step = _offset(desc[0].value, "base_desc", desc[0].lineno)       # in 16-byte units
    ptrs = _calls(cp.args[1], "make_tmem_ptr")
    if len(ptrs) != 1 or not ptrs[0].args:
        raise Refused("the copy's Tensor Memory address is no make_tmem_ptr(...)", FILE, cp.lineno)
    col = _offset(ptrs[0].args[0], "tmem_base", cp.lineno)
    out = {p: (16 * _eval(step, p, desc[0].lineno), _eval(col, p, cp.lineno)) for p in range(parts)}
    return fn.lineno, out, doc


def _offset(e: ast.expr, base: str, line: int) -> ast.expr:
    """``base + X`` (``X`` possibly in an ``Int32``/``Int64`` cast): X."""
    if not (isinstance(e, ast.BinOp) and isinstance(e.op, ast.Add) and ast.unparse(e.left) == base):
        raise Refused(f"{ast.unparse(e)[:60]!r} is not {base} + an offset", FILE, line)
    right = e.right
    if isinstance(right, ast.Call) and ast.unparse(right.func) in ("Int32", "Int64") and len(right.args) == 1:
        right = right.args[0]
    return right


def _eval(e: ast.expr, part: int, line: int) -> int:
    """An integer expression of ``part``, literals and ``+ * // %`` (anything else refused)."""
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.Name) and e.id == "part":
        return part
    if isinstance(e, ast.BinOp) and type(e.op) in _OPS:
        a, b = _eval(e.left, part, line), _eval(e.right, part, line)
        if isinstance(e.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            raise Refused("division by zero", FILE, line)
        return _OPS[type(e.op)](a, b)
    raise Refused(f"{ast.unparse(e)[:40]!r} is outside the integer subset (part, integers, + * // %)", FILE, line)


_OPS = {ast.Add: lambda a, b: a + b, ast.Mult: lambda a, b: a * b, ast.FloorDiv: lambda a, b: a // b,
        ast.Mod: lambda a, b: a % b}


def _lanes(datapath: MapLayout) -> dict[int, tuple[int, ...]]:
    """Row s (CTA 0) -> the lanes the data path gives its accumulator (every column; the same for every N)."""
    seen: dict[int, tuple[int, ...]] | None = None
    ns = next((p.values for p in datapath.params if p.name == "N"), ())
    for n in ns:
        got = {}
        for s in range(ROWS):
            outs = [datapath.evaluate(row=s, col=c, N=n) for c in range(n)]
            got[s] = tuple(sorted({o["tmem_lane"] for o in outs if o is not None and o.get("cta", 0) == 0}))
        if seen is not None and got != seen:
            raise ValueError(f"{DATAPATH}: a row's lanes depend on N")
        seen = got
    if not seen:
        raise ValueError(f"{DATAPATH} has no member")
    return seen


def cp_items(specs: Iterable, root: Path | None = None) -> list[Evaluated]:
    """``tcgen05.cp.64x128b.warpx2.02_13`` from ``copy_q_fp8_to_tmem`` (``root``: a directory holding ``REL``;
    default the installed wheel).  Nothing when the file or either spec is absent."""
    by = {s.id: s for s in specs if isinstance(s, MapLayout)}
    spec, datapath = in_use_of(by, SPEC), in_use_of(by, DATAPATH)
    path = (Path(root) / REL) if root is not None else located(DIST, REL)
    if not isinstance(spec, MapLayout) or not isinstance(datapath, MapLayout) or path is None or not path.is_file():
        return []
    name = f"{FUNC}: {MULTICAST} of Q's 64 rows into {DATAPATH}'s A lanes"
    try:
        line, parts, _ = read_copy(path.read_text(encoding="utf-8", errors="replace"))
        lanes = _lanes(datapath)
        first: tuple[tuple[int, ...], ...] | None = None
        for part, (start, col0) in sorted(parts.items()):
            panel, at = divmod(start, PANEL_BYTES)
            if at % ROW_BYTES + 16 > ROW_BYTES or at >= ROW_BYTES:
                raise Refused(f"copy {part} starts {at} bytes into a panel: not within one 128-byte row", FILE, line)
            rows = []
            for s in range(ROWS):
                for b in range(16):
                    k = panel * ROW_BYTES + at + b          # byte of Q's row s
                    for c, lane in enumerate(lanes[s]):
                        rows.append((s, b, c, lane, k // 4 - col0, k % 4))
            got = tuple(rows)
            if first is None:
                first = got
            elif got != first:
                raise Refused(f"copy {part} (Q bytes {panel * ROW_BYTES + at} on, column {col0}) lands unlike copy 0",
                              FILE, line)
        if first is None:
            raise Refused(f"{FUNC} issues no copy", FILE, line)
    except (Refused, ValueError) as e:
        return [Evaluated(name, "", FILE, getattr(e, "line", 0), spec, error=str(e))]
    names = [d.name for d in spec.inputs] + [d.name for d in spec.outputs]
    order = [("src_row", "src_byte", "copy", "tmem_lane", "tmem_col", "byte").index(n) for n in names]
    rows_t = tuple(tuple(r[i] for i in order) for r in first)
    return [Evaluated(name, "", FILE, line, spec, text=f"{len(parts)} copies, Q row s -> {DATAPATH} lanes of row s",
                      map_rows=rows_t)]
