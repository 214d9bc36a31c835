"""The JAX Mosaic GPU reference: Mosaic's register and Tensor Memory layouts, read from source and evaluated here.

Mosaic GPU (``pip install --no-deps jax==0.10.2``: pure Python under ``jax/experimental/mosaic/gpu``; importing
it needs jaxlib, so this reference never does) drives ``wgmma`` and ``tcgen05`` on Hopper and Blackwell in JAX's
own CI.  Its layout objects are data, read with ``ast`` and evaluated by ``references.tiled`` (the semantics of
``TiledLayout``/``TMEMLayout`` are in that module's docstring).  What is paired with the catalog, and why:

* ``WGMMA_LAYOUT_ACC_32BIT`` over ``(64, N)``: the registers ``wgmma.py`` passes as a 32-bit accumulator
  (``WGMMAAccumulator.from_registers`` converts every 32-bit accumulator to it; ``wgmma_m64`` passes
  ``acc.flat`` in order) -> the ``D.f32`` of the instructions Mosaic emits (k8 tf32, k16 f16/bf16, k32 e4m3/e5m2)
  and ``D.s32`` of k32 (s8); ``WGMMA_LAYOUT`` (vector of 2, packed into one 32-bit register, low element
  first) -> ``D.f16`` of k16 and k32.  Each member ``N`` the spec has;
* register A: ``wgmma_m64`` slices ``a[:, i*k : (i+1)*k]`` and passes its four registers: ``WGMMA_LAYOUT`` over
  ``(64, 16)`` -> ``wgmma.m64nNk16.A.f16_bf16``, ``WGMMA_LAYOUT_8BIT`` over ``(64, 32)`` -> ``k32.A.u8_s8`` and
  ``k32.A.e4m3_e5m2`` (Mosaic's 8-bit A is s8, e4m3 or e5m2), at ``N`` = 64 (the A layout does not depend on N);
* Tensor Memory (``tcgen05.py``; ``mma`` checks D's and A's ``TMEMLayout`` against these functions):
  ``tmem_default_layout(packing=1)`` ("used for 1CTA MMA with M=128 and 2CTA MMA with M=256") ->
  ``tcgen05.datapath.D`` over ``(128, N)`` and ``A`` per CTA (each CTA of a collective MMA holds its own M / 2
  rows: row r in CTA r // 128); ``tmem_m64_collective_layout(N)`` ("used for 2CTA MMA with M=128") ->
  ``B`` per CTA (64 rows each); ``tmem_half_lane_layout(C)`` ("used for 1CTA MMA with M=64"), which ``mma``
  issues as two lane groups (``n_lane_groups = 2``) of C / 2 columns -> ``F`` with ``N`` = C / 2 and ``BASE`` 0
  (the first C / 2 columns) and 16 (the rest);
* packing: D is ``tmem_default_layout(packing=1)`` whatever its type (``mma``) -> ``tcgen05.packing.D.b16.unpacked``
  for a 16-bit D (one element per 32-bit column); A in Tensor Memory must be ``tmem_default_layout(packing=32 //
  bitwidth)`` -> ``A.b16.packed`` (packing 2) and ``A.mxf8f6f4`` (packing 4: Mosaic's 8-bit A in Tensor Memory,
  the same containers);
* scale factors: ``scales_layout()`` over the ``(128, 4)`` tile of 8-bit factors (row m in lane m % 32 of every
  quarter, the quarter's ``m // 32``-th column, factor k at byte k), and ``_do_mma``'s scale id: each kind's
  ``scale_steps`` (``kind = "mxf8f6f4.block_scale.scale_vec::1X"`` with ``scale_steps = 4`` ...) and ``scale_id =
  (k_step % scale_steps) * scale_vec_width``, evaluated from the source.  Together they state
  ``tcgen05.sf.A.4x1`` (for ``VS`` = 4 // scale_steps; the copy read is the quarter's own, as the spec's) and the
  sub-column of one MMA, ``tcgen05.mma.m1n4.SFA.*`` (the MMA's j-th factor at byte ``SFA_ID + j``, for each
  ``SFA_ID`` Mosaic gives).

Not paired, with why: ``TCGEN05_LAYOUT``, ``TMEM_NATIVE_LAYOUT`` and the other register layouts of tcgen05.ld
(Mosaic composes several ``tcgen05.ld`` shapes into them in procedural code, ``_load_32xcols``), the
``WGMMA_*`` layouts no instruction reads (row, column, transposed, upcast: relayout targets),
``sparse_meta_layout`` (its own comment: "does not really describe this layout"), ``b_scales_m64_collective_layout``
(2-CTA B scales: the catalog has no spec), and the shared-memory tilings (Mosaic builds its descriptors from
strides in ``mma_utils.create_descriptor``, not from a layout object).
"""
from __future__ import annotations

import ast
import itertools
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeGuard

from ...layout.corrections import in_use_of
from ...layout.model import Layout, MapLayout
from ..crosscheck import CrosscheckReport
from ..fragment import DEFAULT_TIMEOUT
from .common import Evaluated, conform_rows, files_root, located, version_of
from .mosaic_cp import apply_recipe, b_scales_copy_items, smem_copy_items
from .mosaic_sfb import sfb_items
from .pyfunc import DEPTH, LIMIT, Refused
from .tiled import Reader, Source, TiledLayout, placements, read_source, vector_length

NAME = "mosaic"
VERSION = "0.10.2"
DIST = "jax"
PACKAGE_DIR = "jax/experimental/mosaic/gpu"
FILES = ("fragmented_array", "tcgen05", "utils")
INSTALL = (f"pip install --no-deps jax=={VERSION} (Mosaic GPU's files are read from source; importing it needs "
           "jaxlib)")
FA, TC = "fragmented_array", "tcgen05"


@dataclass(frozen=True)
class Fragment:
    """A register layout of ``fragmented_array.py`` and the wgmma operands it is (see the module docstring)."""

    layout: str
    specs: tuple[str, ...]
    cols: int = 0          # 0: the member's N (an accumulator); else the A slice's K
    at_n: int = 0          # compare only the member N = at_n (A)


FRAGMENTS = (
    Fragment("WGMMA_LAYOUT_ACC_32BIT", ("wgmma.m64nNk8.D.f32", "wgmma.m64nNk16.D.f32", "wgmma.m64nNk32.D.f32",
                                        "wgmma.m64nNk32.D.s32")),
    Fragment("WGMMA_LAYOUT", ("wgmma.m64nNk16.D.f16", "wgmma.m64nNk32.D.f16")),
    Fragment("WGMMA_LAYOUT", ("wgmma.m64nNk16.A.f16_bf16",), cols=16, at_n=64),
    Fragment("WGMMA_LAYOUT_8BIT", ("wgmma.m64nNk32.A.u8_s8", "wgmma.m64nNk32.A.e4m3_e5m2"), cols=32, at_n=64),
)


@dataclass(frozen=True)
class Tmem:
    """A Tensor Memory map spec and the ``tcgen05.py`` function that states it."""

    func: str
    kwargs: tuple[tuple[str, int], ...] = ()
    rows: int = 128        # the rows one CTA holds
    ctas: int = 1          # the rows of CTA c are c * rows ...
    cols: int = 0          # 0: the member's N (doubled: ``half``)
    half: bool = False     # F: two lane groups of N columns each, BASE 0 and 16
    by_columns: bool = False   # the function takes the tile's columns


TMEM = {
    "tcgen05.datapath.D": Tmem("tmem_default_layout"),
    "tcgen05.datapath.A": Tmem("tmem_default_layout", ctas=2),
    "tcgen05.datapath.B": Tmem("tmem_m64_collective_layout", rows=64, ctas=2, by_columns=True),
    "tcgen05.datapath.F": Tmem("tmem_half_lane_layout", rows=64, half=True, by_columns=True),
    "tcgen05.packing.D.b16.unpacked": Tmem("tmem_default_layout", kwargs=(("packing", 1),), cols=64),
    "tcgen05.packing.A.b16.packed": Tmem("tmem_default_layout", kwargs=(("packing", 2),), cols=64),
    "tcgen05.packing.A.mxf8f6f4": Tmem("tmem_default_layout", kwargs=(("packing", 4),), cols=128),
}
SCALE_KINDS = {"scale_vec::1X": "1x", "scale_vec::2X": "2x", "scale_vec::4X": "4x"}
M1N4 = {"1x": "tcgen05.mma.m1n4.SFA.ue8m0.1x", "2x": "tcgen05.mma.m1n4.SFA.ue8m0.2x",
        "4x": "tcgen05.mma.m1n4.SFA.ue8m0_ue4m3.4x"}


def probe() -> str:
    return "" if _installed() is not None else f"no Mosaic GPU files: {INSTALL}"


def _installed() -> Path | None:
    where = located(DIST, PACKAGE_DIR)
    return where if where is not None and all((where / f"{f}.py").is_file() for f in FILES) else None


def read_files(root: Path) -> Reader:
    sources = {}
    for stem in FILES:
        p = root / f"{stem}.py"
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            sources[stem] = Source(f"{stem}.py", {}, {}, {}, {}, f"{stem}.py:0:0: {e.strerror or 'cannot read'}")
            continue
        sources[stem] = read_source(text, f"{stem}.py", FILES)
    return Reader(sources)


def _index(specs: Iterable) -> dict[str, Layout | MapLayout]:
    """id -> the layout compared (its reviewed correction where there is one)."""
    lays = {lay.id: lay for lay in specs if isinstance(lay, (Layout, MapLayout))}
    return {i: in_use_of(lays, i) or lay for i, lay in lays.items()}


def _values(spec: Layout | MapLayout, name: str) -> tuple[int, ...]:
    return next((tuple(p.values) for p in spec.params if p.name == name), ())


def fragment_entries(layout: TiledLayout, shape: tuple[int, int]) -> tuple[tuple[int, int, int, int], ...]:
    """(thread, element, row, col) of a warpgroup register layout: element = register x vector length + the
    vector's element (a register is a vector packed low element first)."""
    vl = vector_length(layout)
    return tuple(sorted((w * 32 + ln, reg * vl + e, idx[0], idx[1])
                        for w, ln, reg, e, idx in placements(layout, shape)))


def tmem_cells(layout: TiledLayout, shape: tuple[int, int], quarter: bool = False
               ) -> dict[tuple[int, int], tuple[int, int, int]]:
    """(row, col) -> (TMEM lane, 32-bit column, container) of a ``TMEMLayout``; a replicated element's copy in
    the row's own lane quarter when ``quarter`` (else the first)."""
    out: dict[tuple[int, int], tuple[int, int, int]] = {}
    for w, ln, reg, e, idx in placements(layout, shape):
        r, c = idx
        if quarter and w != r // 32:
            continue
        out.setdefault((r, c), (w * 32 + ln, reg, e))
    return out


def _map_rows(spec: MapLayout, cells: dict[tuple[int, int], tuple[int, int, int]], cta: int | None = None,
              col0: int = 0, row0: int = 0) -> list[tuple[int, ...]]:
    names = [d.name for d in spec.outputs]
    out = []
    for (r, c), (lane, col, e) in sorted(cells.items()):
        vals = {"cta": cta or 0, "tmem_lane": lane, "tmem_col": col, "slot": e, "byte": e}
        out.append((r + row0, c - col0, *(vals[n] for n in names)))
    return out


def _tmem_items(reader: Reader, index: dict, where: str) -> list[Evaluated]:
    items: list[Evaluated] = []
    for sid, how in TMEM.items():
        spec = index.get(sid)
        if not isinstance(spec, MapLayout):
            continue
        line = reader.line(TC, how.func)
        ns = _values(spec, "N") or (how.cols,)
        for n in ns:
            cols = 2 * n if how.half else n
            args = (cols,) if how.by_columns else ()
            call = f"{how.func}({', '.join(map(str, args))}{', ' if args and how.kwargs else ''}" \
                   f"{', '.join(f'{k}={v}' for k, v in how.kwargs)})"
            name = f"{call} over ({how.rows}, {cols})"
            try:
                lay = reader.call(TC, how.func, *args, **dict(how.kwargs))
                if not isinstance(lay, TiledLayout):
                    raise Refused(f"{how.func} returned no layout", f"{TC}.py", line)
                cells = tmem_cells(lay, (how.rows, cols))
            except (Refused, ValueError) as e:
                items.append(Evaluated(name, "", where, line, spec, _member(spec, n), error=str(e)))
                continue
            if how.half:
                for h, base in ((0, 0), (1, 16)):
                    part = {k: v for k, v in cells.items() if k[1] // n == h}
                    rows = _map_rows(spec, part, col0=h * n)
                    params = tuple(sorted({"N": n, "BASE": base}.items()))
                    items.append(Evaluated(f"{name}, lane group {h} (columns {h * n}..{h * n + n - 1})", "",
                                           where, line, spec, params, text=lay.text(), map_rows=tuple(rows)))
                continue
            rows = []
            for cta in range(how.ctas):
                rows += _map_rows(spec, cells, cta if how.ctas > 1 else None, row0=cta * how.rows)
            items.append(Evaluated(name + (f", each of {how.ctas} CTAs" if how.ctas > 1 else ""), "", where, line,
                                   spec, _member(spec, n), text=lay.text(), map_rows=tuple(sorted(rows))))
    return items


def _member(spec: MapLayout | Layout, n: int) -> tuple[tuple[str, int], ...]:
    return (("N", n),) if _values(spec, "N") else ()


def scale_steps(reader: Reader) -> tuple[dict[str, int], ast.expr, ast.expr, int]:
    """``_do_mma``'s block-scaled kinds: {variant: scale_steps}, the ``scale_vec_width`` and ``scale_id``
    expressions, and the line of ``scale_id`` (``Refused`` when the function no longer has them)."""
    fn = reader.function(TC, "_do_mma")
    steps: dict[str, int] = {}
    width: ast.expr | None = None
    sid: ast.expr | None = None
    line = 0
    for node in ast.walk(fn):
        body = getattr(node, "body", None)
        if isinstance(body, list):
            kinds = [s.value.value for s in body if _assigns(s, "kind") and isinstance(s.value, ast.Constant)
                     and isinstance(s.value.value, str)]
            st = [s.value.value for s in body if _assigns(s, "scale_steps") and isinstance(s.value, ast.Constant)
                  and type(s.value.value) is int]
            if len(kinds) == 1 and len(st) == 1:
                variant = next((v for k, v in SCALE_KINDS.items() if k in kinds[0]), None)
                if variant:
                    steps[variant] = st[0]
        if _assigns(node, "scale_vec_width"):
            width = node.value
        if _assigns(node, "scale_id"):
            sid, line = node.value, node.lineno
    if not steps or width is None or sid is None:
        raise Refused("_do_mma: no block-scaled kinds with scale_steps, scale_vec_width or scale_id",
                      f"{TC}.py", fn.lineno)
    return steps, width, sid, line


def _assigns(node: ast.AST, name: str) -> TypeGuard[ast.Assign]:
    return (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)
            and node.targets[0].id == name)


def _eval_int(e: ast.expr, env: dict[str, int], at: tuple[str, int], depth: int = 0) -> int:
    """An integer expression of names, literals and ``+ - * // %`` (the scale id's, the recipe's arguments,
    tinygrad's indices); anything else, a division by zero or nesting past ``4 * DEPTH`` is ``Refused``."""
    col = getattr(e, "col_offset", 0)
    if depth > 4 * DEPTH:
        raise Refused("an expression nests too deep", at[0], at[1], col)
    if isinstance(e, ast.Constant) and type(e.value) is int and -LIMIT < e.value < LIMIT:
        return e.value
    if isinstance(e, ast.Name) and e.id in env:
        return env[e.id]
    if isinstance(e, ast.BinOp) and type(e.op) in _INT_OPS:
        a, b = _eval_int(e.left, env, at, depth + 1), _eval_int(e.right, env, at, depth + 1)
        if isinstance(e.op, (ast.FloorDiv, ast.Mod)) and b == 0:
            raise Refused("division by zero", at[0], at[1], col)
        v = _INT_OPS[type(e.op)](a, b)
        if not -LIMIT < v < LIMIT:
            raise Refused("integer out of bounds", at[0], at[1], col)
        return v
    raise Refused(f"{type(e).__name__} outside the integer subset (names, integers, + - * // %)", at[0], at[1], col)


_INT_OPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b,
            ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b}


def _scale_items(reader: Reader, index: dict, where: str) -> list[Evaluated]:
    items: list[Evaluated] = []
    sf = index.get("tcgen05.sf.A.4x1")
    line = reader.line(TC, "scales_layout")
    try:
        steps, width_e, sid_e, sid_line = scale_steps(reader)
        lay = reader.call(TC, "scales_layout")
        if not isinstance(lay, TiledLayout):
            raise Refused("scales_layout returned no layout", f"{TC}.py", line)
        cells = tmem_cells(lay, (128, 4), quarter=True)
    except (Refused, ValueError) as e:
        spec = sf if isinstance(sf, MapLayout) else None
        return [Evaluated("scales_layout() and _do_mma's scale id", "", where, line, spec, error=str(e))]
    at = (f"{TC}.py", sid_line)
    for variant, st in sorted(steps.items()):
        vs = _eval_int(width_e, {"scale_steps": st}, at)
        ids = {}
        for k_step in range(st):
            ids[k_step] = _eval_int(sid_e, {"k_step": k_step, "scale_steps": st, "scale_vec_width": vs}, at)
        name = f"scales_layout() with _do_mma's scale id ({variant.upper()}: scale_steps = {st})"
        if isinstance(sf, MapLayout) and vs in _values(sf, "VS"):
            rows, bad = [], ""
            for (r, kb), (lane, col, byte) in sorted(cells.items()):
                read = ids[kb // vs] + kb % vs   # the MMA of K block kb reads its (kb % vs)-th factor here
                if read != byte:
                    bad = bad or (f"K block {kb} of row {r}: scales_layout puts it at byte {byte}, the MMA "
                                  f"given scale id {ids[kb // vs]} reads byte {read}")
                rows.append((r, kb, lane, col, read))
            items.append(Evaluated(name, "", where, sid_line, sf, (("VS", vs),), text=lay.text(),
                                   map_rows=tuple(rows), error=bad))
        m1n4 = index.get(M1N4.get(variant, ""))
        if isinstance(m1n4, Layout):
            pname = next((p.name for p in m1n4.params), "")
            for sfa_id in sorted(set(ids.values())):
                if sfa_id not in _values(m1n4, pname):
                    items.append(Evaluated(name, "SFA", where, sid_line, m1n4, error=f"scale id {sfa_id} is no "
                                           f"valid {pname} ({', '.join(map(str, _values(m1n4, pname)))})"))
                    continue
                # the MMA's j-th factor: K block (sfa_id + j) of the tile, at byte sfa_id + j (scales_layout);
                # the word's other bytes are no factor of this MMA
                held = {cells[(0, sfa_id + j)][2]: j for j in range(vs)}
                entries = tuple((0, i, 0, held[i]) if i in held else (0, i, None, None)
                                for i in range(m1n4.n_elements))
                items.append(Evaluated(f"{name}, scale id {sfa_id}", "SFA", where, sid_line, m1n4,
                                       ((pname, sfa_id),), entries, lay.text()))
    return items


COPY = "async_copy_scales_smem_to_tmem"
_STEP = re.compile(r"\.(reshape|transpose)\(([^()]*)\)")


def smem_recipe(reader: Reader) -> tuple[list[tuple[str, str]], int]:
    """The reshape/transpose chain ``async_copy_scales_smem_to_tmem``'s docstring gives for preparing an (MN,
    K // 32) array of scales for shared memory (``jnp.pad(scales, ...).reshape(...).transpose(...)...``), as
    (operation, arguments) pairs, and the function's line."""
    fn = reader.function(TC, COPY)
    doc = ast.get_docstring(fn) or ""
    start = doc.find("jnp.pad(scales")
    if start < 0:
        raise Refused(f"{COPY}: its docstring gives no jnp.pad(scales ...) recipe", f"{TC}.py", fn.lineno)
    steps = [(m.group(1), m.group(2)) for m in _STEP.finditer(doc[start:start + 400])][:3]
    if [op for op, _ in steps] != ["reshape", "transpose", "reshape"]:
        raise Refused(f"{COPY}: the recipe is not reshape, transpose, reshape", f"{TC}.py", fn.lineno)
    return steps, fn.lineno


def smem_offsets(steps: list[tuple[str, str]], pad_mn: int, k: int, at: tuple[str, int]) -> dict[tuple[int, int], int]:
    """(m, kb) -> byte offset in shared memory (8-bit factors, the recipe's result contiguous)."""
    flat = apply_recipe(steps, (pad_mn, k), {"pad_mn": pad_mn, "k": k}, at, _eval_int).reshape(-1)
    return {divmod(int(v), k): p for p, v in enumerate(flat)}


def _copy_items(reader: Reader, index: dict, where: str) -> list[Evaluated]:
    """The scale tile in shared memory (the docstring's recipe) and what ``tcgen05.cp .32x128b.warpx4`` makes
    of it (``scales_layout()``): ``storage.sf.cutlass.128x4`` (members with L = 1: Mosaic has no batch),
    its tile, and ``tcgen05.cp.32x128b.warpx4``."""
    items: list[Evaluated] = []
    store, tile, cp = (index.get(i) for i in ("storage.sf.cutlass.128x4", "storage.sf.cutlass.128x4.tile",
                                              "tcgen05.cp.32x128b.warpx4"))
    try:
        steps, line = smem_recipe(reader)
        lay = reader.call(TC, "scales_layout")
        if not isinstance(lay, TiledLayout):
            raise Refused("scales_layout returned no layout", f"{TC}.py", reader.line(TC, "scales_layout"))
        one = smem_offsets(steps, 128, 4, (f"{TC}.py", line))
        copies = {}
        for w, ln, reg, e, (r, c) in placements(lay, (128, 4)):
            copies[(r, c, w)] = (w * 32 + ln, reg, e)
    except (Refused, ValueError) as err:
        return [Evaluated(f"{COPY} recipe", "", where, 0, s, error=str(err))
                for s in (store, tile, cp) if isinstance(s, MapLayout)]
    recipe = " ".join(f".{op}({args})" for op, args in steps)
    if isinstance(tile, MapLayout):
        rows = tuple((r, kb, one[(r, kb)]) for r in range(128) for kb in range(4))
        items.append(Evaluated(f"{COPY} docstring recipe over (128, 4)", "", where, line, tile,
                               text=recipe, map_rows=rows))
    if isinstance(store, MapLayout):
        names = [p.name for p in store.params]
        for vals in itertools.product(*(p.values for p in store.params)):
            env = dict(zip(names, vals))
            if env.get("L", 1) != 1:
                continue
            pad_mn, kk = 128 * ((env["M"] + 127) // 128), 4 * ((env["KB"] + 3) // 4)
            offs = smem_offsets(steps, pad_mn, kk, (f"{TC}.py", line))
            member_rows = tuple((0, m, kb, offs[(m, kb)]) for m in range(pad_mn) for kb in range(kk))
            items.append(Evaluated(f"{COPY} docstring recipe over ({pad_mn}, {kk})", "", where, line, store,
                                   tuple(sorted(env.items())), text=recipe, map_rows=member_rows))
    if isinstance(cp, MapLayout):
        where_of = {off: mk for mk, off in one.items()}          # byte of the 512-byte tile -> (m, kb)
        rows_l = []
        for src_row in range(32):
            for src_byte in range(16):
                m, kb = where_of[16 * src_row + src_byte]    # the copy reads rows 16 bytes apart
                for c in range(4):
                    lane, col, byte = copies[(m, kb, c)]
                    rows_l.append((src_row, src_byte, c, lane, col, byte))
        items.append(Evaluated(f"{COPY}: the recipe's 32 x 16-byte tile through scales_layout() (tcgen05.cp "
                               f"32x128b, warpx4)", "", where, reader.line(TC, COPY), cp, text=recipe,
                               map_rows=tuple(rows_l)))
    return items


def _fragment_items(reader: Reader, index: dict, where: str) -> list[Evaluated]:
    items: list[Evaluated] = []
    for frag in FRAGMENTS:
        line = reader.line(FA, frag.layout)
        try:
            lay = reader.value(FA, frag.layout)
            if not isinstance(lay, TiledLayout):
                raise Refused(f"{frag.layout} is no layout", f"{FA}.py", line)
        except Refused as e:
            for sid in frag.specs:
                spec = index.get(sid)
                if isinstance(spec, Layout):
                    items.append(Evaluated(frag.layout, spec.operand, where, line, spec, error=str(e)))
            continue
        for sid in frag.specs:
            spec = index.get(sid)
            if not isinstance(spec, Layout):
                continue
            for n in (frag.at_n,) if frag.at_n else _values(spec, "N"):
                shape = (64, frag.cols or n)
                name = f"{frag.layout} over {shape}"
                try:
                    entries = fragment_entries(lay, shape)
                except ValueError as e:
                    items.append(Evaluated(name, spec.operand, where, line, spec, (("N", n),), error=str(e)))
                    continue
                items.append(Evaluated(name, spec.operand, where, line, spec, (("N", n),), entries, lay.text()))
    return items


def evaluate_default(specs: list, timeout: float = DEFAULT_TIMEOUT, path: str | Path | None = None
                     ) -> CrosscheckReport:
    """The installed Mosaic GPU's files (or ``path``: a directory holding them)."""
    t0 = time.perf_counter()
    root = files_root(path, _installed(), f"no Mosaic GPU files: {INSTALL}", (f"{f}.py" for f in FILES))
    version = f"jax {version_of(DIST)}" if path is None else f"Mosaic GPU files in {Path(path).name}"
    reader = read_files(root)
    index = _index(specs)
    items = [*_fragment_items(reader, index, f"{PACKAGE_DIR}/{FA}.py"),
             *_tmem_items(reader, index, f"{PACKAGE_DIR}/{TC}.py"),
             *_scale_items(reader, index, f"{PACKAGE_DIR}/{TC}.py"),
             *_copy_items(reader, index, f"{PACKAGE_DIR}/{TC}.py"),
             *sfb_items(reader, index, f"{PACKAGE_DIR}/{TC}.py", TC, scale_steps, _eval_int),
             *smem_copy_items(reader, index, f"{PACKAGE_DIR}/{TC}.py", TC, _eval_int),
             *b_scales_copy_items(reader, index, f"{PACKAGE_DIR}/{TC}.py", TC, _eval_int)]
    rows = conform_rows(items, timeout)
    return CrosscheckReport(version, tuple(f"{PACKAGE_DIR}/{f}.py" for f in FILES), tuple(rows), {},
                            time.perf_counter() - t0, NAME, "JAX Mosaic GPU layouts")
