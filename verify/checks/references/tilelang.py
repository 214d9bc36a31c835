"""The TileLang reference: TileLang's pure-Python fragment layouts, read from source and evaluated here.

TileLang (``pip install --no-deps tilelang==0.1.15``) states its tensor-core fragments as small Python
functions in ``tilelang/cuda/intrinsics/layout/``: ``mma_layout.py`` (dense ``mma``, sm_80 and later),
``mma_sp_layout.py`` (``mma.sp``) and ``mma_sm70_layout.py`` (``mma.m8n8k4`` on sm_70).  Importing
``tilelang`` needs torch and TVM, so this reference never imports it: it finds the installed files
through the distribution's metadata (``importlib.metadata``, nothing executed), reads them with ``ast``
and evaluates the functions with ``pyfunc``'s closed integer interpreter (no ``eval``/``exec``).  A
function outside that subset is a ``malformed`` row with the construct's position.

Two kinds of function, each enumerated over its whole domain into a table and conformed (both
engines) to the catalog layout it is paired with in ``PAIRINGS``:

* forward, ``f(thread_id, local_id) -> (row, col)`` (``mma_load_*``, ``mma_store_*``,
  ``mma_sp_load_*``): threads 0..31 and the spec's element indices 0..E-1 (``local_id`` is the element
  index, not a 32-bit register: ``mma_load_a_32x8_to_shared_16x16_layout``, mma_layout.py:171, spells
  out the PTX ``ai`` formula with ``i = local_id``);
* inverse, ``f(i, j) -> (thread_id, local_id)`` (``shared_*_to_mma_*``): every cell of the spec's
  tile, each giving the (thread, element) that holds it.

The conventions applied (each a pairing's ``transpose``/``domain``/``quad_pairs`` in ``PAIRINGS``):

* B is stated as ``(n, k)`` ("sr": the spatial axis first, the reduction axis second, comment at
  mma_layout.py:71-73; e.g. ``mma_load_b_32x8_to_shared_16x16_layout``, mma_layout.py:193) where the
  spec's B is ``(k, n)``: those pairings transpose.  The ``*_trans`` inverses take the transposed tile
  (``shared_16x8_to_mma_a_32x4_layout_trans(i, j) = ...(j, i)``, mma_layout.py:79): A ``_trans`` is
  ``(k, m)`` (transposed here), B ``_trans`` is ``(k, n)`` (as the spec).
* B tiles are two ``n8`` MMAs wide (``16x16`` for m16n8k16: ``mma_load_b_32x8_to_shared_16x16_layout``,
  mma_layout.py:193, with 8 local ids): the first MMA's B is local ids 0..E-1 (forward) or the cells
  with ``n < 8`` (inverse); C likewise (``mma_store_32x8_to_shared_16x16_layout``, mma_layout.py:59:
  local ids 0..3 are the first m16n8 accumulator).
* The operand width names the shape, as in ``get_mma_micro_size`` (utils.py:90): 32x4 = tf32 m16n8k8,
  32x8 = 16-bit m16n8k16, 32x16 = 8-bit m16n8k32, 32x32 = e2m1 m16n8k64.  For ``mma.sp`` the tile is
  the logical (uncompressed) A: ``shared_16x16_to_mma_sp_layout_sr_a`` (mma_sp_layout.py:14) is the
  tf32 m16n8k16 compressed A (16x8), ``16x32`` the 16-bit m16n8k32, ``16x64`` the 8-bit m16n8k64;
  sparse A is compared in the spec's compressed view (16 x K/2), as for every sparse A here.
* sm_70 ``m8n8k4`` (mma_sm70_layout.py): TileLang's 16x16 (16x4, 4x16) tile is shared by the four
  quad pairs; each quad pair's 8x8 (8x4, 4x8) matrix is the rows and columns its threads touch, in
  increasing order (``quad_pairs``).  Which rows a quad pair owns is TileLang's choice; the order and
  the (thread, element) -> position within it are the spec's.  The inverses with ``rep``
  (``shared_16x4_to_mma_a_32x4_layout(row, col, rep)``, mma_sm70_layout.py:1) are enumerated over
  ``rep`` 0..1 too.

* ldmatrix (``LDMATRIX``): TileLang states no ldmatrix fragment, only row-address maps
  ``f(lane, e) -> (row, col)`` (lane s gives row s % 8 of matrix s // 8; e walks the row's 16 bytes;
  ``f(lane)``, the row's start, for e2m1: ``ldmatrix_32x32_to_shared_16x64_layout_a``, mma_layout.py:236).
  Loaded with one of its fragment functions, the pair states the ldmatrix fragment: fragment element
  (thread, local) sits at a tile position that the address map places at stacked row s, element e,
  which is the spec's (row s, b16 column e * bits // 16); 32-bit elements are two b16 elements, sub-b16
  ones (8- and 4-bit) must sit in the same part of their b16 in both.  Which map goes with which
  fragment: ``get_ldmatrix_offset`` (utils.py:20) picks the map by ``transposed`` for A and B alike
  (utils.py:41-49), and a 32-bit or 8-bit B is loaded only "transposed" (utils.py:30-40, 50-62), i.e.
  stored ``(n, k)``, with the plain instruction; so ``ldmatrix_trans_32x8_to_shared_16x16_layout``
  (mma_layout.py:25) loads B stored ``(n, k)`` (plain ``ldmatrix``) and A stored ``(k, m)``
  (``.trans``), ``ldmatrix_32x8_to_shared_16x16_layout`` (mma_layout.py:19) A stored ``(m, k)`` (plain)
  and B stored ``(k, n)`` (``.trans``).  ``.trans`` exactly when the stored tile is the fragment's
  transposed.

Functions with no pairing are ``unmatched`` with why (metadata, Metal, helpers, ldmatrix maps with no
fragment function in these files).
"""
from __future__ import annotations

import itertools
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...layout.corrections import by_doc_id
from ...layout.model import Layout
from ..crosscheck import CrosscheckReport, Row
from ..fragment import DEFAULT_TIMEOUT
from .common import Evaluated, conform_rows, files_root, located, version_of
from .pyfunc import Interpreter, Module, Refused, read_module
from .tilelang_tmem import FILE as TMEM_FILE
from .tilelang_tmem import evaluate as tmem_rows

NAME = "tilelang"
VERSION = "0.1.15"
PACKAGE_DIR = "tilelang/cuda/intrinsics/layout"
FILES = ("mma_layout", "mma_sp_layout", "mma_sm70_layout")
INSTALL = (f"pip install --no-deps tilelang=={VERSION} (its layout functions are read from source; tilelang "
           "itself needs torch)")


@dataclass(frozen=True)
class Pairing:
    """One TileLang function and the catalog layout it states."""

    file: str            # module stem (``mma_layout``)
    func: str
    spec: str            # the catalog id (its reviewed correction, ``@corrected``, is used where there is one)
    inverse: bool = False          # (i, j[, rep]) -> (thread, local) rather than (thread, local) -> (row, col)
    transpose: bool = False        # TileLang's (row, col) is the spec's (col, row)
    domain: tuple[int, ...] = ()   # an inverse's argument ranges (default: the spec's tile)
    quad_pairs: bool = False       # sm_70: positions ranked within each quad pair's rows and columns


_C16 = ("mma.m16n8k8.C.f16", "mma.m16n8k8.C.f32", "mma.m16n8k16.float.C.f16", "mma.m16n8k16.float.C.f32",
        "mma.m16n8k16.int.C.s32", "mma.m16n8k32.C.s32", "mma.m16n8k32.C.f32", "mma.m16n8k32.C.f16")
_A8 = ("mma.m16n8k32.A.u8_s8", "mma.m16n8k32.A.e4m3_e5m2_e3m2_e2m3_e2m1")
_B8 = ("mma.m16n8k32.B.u8_s8", "mma.m16n8k32.B.e4m3_e5m2_e3m2_e2m3_e2m1")
_SPA8 = ("mma.sp.m16n8k64.A.u8_s8", "mma.sp.m16n8k64.A.e4m3_e5m2_e3m2_e2m3_e2m1")
_SPB8 = ("mma.sp.m16n8k64.B.u8_s8", "mma.sp.m16n8k64.B.e4m3_e5m2_e3m2_e2m3_e2m1")


def _pairs() -> tuple[Pairing, ...]:
    m, sp, s70 = FILES
    out = [Pairing(m, f, c) for f in ("mma_store_32x8_to_shared_16x16_layout", "mma_32x8_to_shared_16x16_layout")
           for c in _C16]
    out += [
        Pairing(m, "mma_store_32x2_to_shared_8x8_layout_fp64", "mma.m8n8k4.C.f64"),
        Pairing(m, "mma_load_a_32x4_to_shared_16x8_layout", "mma.m16n8k8.A.tf32"),
        Pairing(m, "mma_load_b_32x4_to_shared_16x8_layout", "mma.m16n8k8.B.tf32", transpose=True),
        Pairing(m, "mma_load_a_32x8_to_shared_16x16_layout", "mma.m16n8k16.A.f16_bf16"),
        Pairing(m, "mma_load_b_32x8_to_shared_16x16_layout", "mma.m16n8k16.B.f16_bf16", transpose=True),
        *(Pairing(m, "mma_load_a_32x16_to_shared_16x32_layout", s) for s in _A8),
        *(Pairing(m, "mma_load_b_32x16_to_shared_16x32_layout", s, transpose=True) for s in _B8),
        Pairing(m, "mma_load_a_32x32_to_shared_16x64_layout", "mma.m16n8k64.A.e2m1"),
        Pairing(m, "mma_load_b_32x16_to_shared_8x64_layout", "mma.m16n8k64.B.e2m1", transpose=True),
    ]
    for size, a, b in (("16x8_to_mma_a_32x4", ("mma.m16n8k8.A.tf32",), None),
                       ("16x8_to_mma_b_32x4", None, ("mma.m16n8k8.B.tf32",)),
                       ("16x16_to_mma_a_32x8", ("mma.m16n8k16.A.f16_bf16",), None),
                       ("16x16_to_mma_b_32x8", None, ("mma.m16n8k16.B.f16_bf16",)),
                       ("16x32_to_mma_a_32x16", _A8, None), ("16x32_to_mma_b_32x16", None, _B8),
                       ("16x64_to_mma_a_32x32", ("mma.m16n8k64.A.e2m1",), None),
                       ("8x64_to_mma_b_32x16", None, ("mma.m16n8k64.B.e2m1",))):
        for s in a or ():
            out.append(Pairing(m, f"shared_{size}_layout", s, inverse=True))
        for s in b or ():
            out.append(Pairing(m, f"shared_{size}_layout", s, inverse=True, transpose=True))
    trans = {"shared_16x8_to_mma_a_32x4_layout_trans": (("mma.m16n8k8.A.tf32",), True),
             "shared_16x8_to_mma_b_32x4_layout_trans": (("mma.m16n8k8.B.tf32",), False),
             "shared_16x16_to_mma_a_32x8_layout_trans": (("mma.m16n8k16.A.f16_bf16",), True),
             "shared_16x16_to_mma_b_32x8_layout_trans": (("mma.m16n8k16.B.f16_bf16",), False),
             "shared_32x16_to_mma_a_32x16_layout_trans": (_A8, True),
             "shared_32x16_to_mma_b_32x16_layout_trans": (_B8, False),
             "shared_64x16_to_mma_a_32x32_layout_trans": (("mma.m16n8k64.A.e2m1",), True),
             "shared_64x8_to_mma_b_32x16_layout_trans": (("mma.m16n8k64.B.e2m1",), False)}
    for f, (ids, t) in trans.items():
        out += [Pairing(m, f, s, inverse=True, transpose=t) for s in ids]
    out += [   # mma.sp: the logical A tile names the shape (module docstring)
        Pairing(sp, "shared_16x16_to_mma_sp_layout_sr_a", "mma.sp.m16n8k16.A.tf32", inverse=True),
        Pairing(sp, "shared_16x16_to_mma_sp_layout_sr_b", "mma.sp.m16n8k16.B.tf32", inverse=True, transpose=True),
        Pairing(sp, "shared_16x32_to_mma_sp_layout_sr_a", "mma.sp.m16n8k32.A.f16_bf16", inverse=True),
        Pairing(sp, "shared_16x32_to_mma_sp_layout_sr_b", "mma.sp.m16n8k32.B.f16_bf16", inverse=True,
                transpose=True),
        *(Pairing(sp, "shared_16x64_to_mma_sp_layout_sr_a", s, inverse=True) for s in _SPA8),
        *(Pairing(sp, "shared_16x64_to_mma_sp_layout_sr_b", s, inverse=True, transpose=True) for s in _SPB8),
        Pairing(sp, "mma_sp_load_a_32x4_to_shared_16x16_layout", "mma.sp.m16n8k16.A.tf32"),
        Pairing(sp, "mma_sp_load_a_32x8_to_shared_16x32_layout", "mma.sp.m16n8k32.A.f16_bf16"),
        *(Pairing(sp, "mma_sp_load_a_32x16_to_shared_16x64_layout", s) for s in _SPA8),
        Pairing(sp, "mma_sp_load_b_32x8_to_shared_16x16_layout", "mma.sp.m16n8k16.B.tf32", transpose=True),
        Pairing(sp, "mma_sp_load_b_32x16_to_shared_16x32_layout", "mma.sp.m16n8k32.B.f16_bf16", transpose=True),
        *(Pairing(sp, "mma_sp_load_b_32x32_to_shared_16x64_layout", s, transpose=True) for s in _SPB8),
    ]
    out += [   # sm_70 mma.m8n8k4 (quad pairs, module docstring)
        Pairing(s70, "shared_16x4_to_mma_a_32x4_layout", "mma.m8n8k4.A.f16.row", inverse=True, domain=(16, 4, 2),
                quad_pairs=True),
        Pairing(s70, "shared_4x16_to_mma_b_32x4_layout", "mma.m8n8k4.B.f16.row", inverse=True, domain=(4, 16, 2),
                quad_pairs=True),
        Pairing(s70, "shared_16x4_to_mma_b_32x4_layout_trans", "mma.m8n8k4.B.f16.col", inverse=True,
                transpose=True, domain=(16, 4, 2), quad_pairs=True),
        Pairing(s70, "mma_32x8_to_shared_16x16_layout_fp32", "mma.m8n8k4.f16.C.f32", quad_pairs=True),
        Pairing(s70, "mma_32x8_to_shared_16x16_layout_fp16", "mma.m8n8k4.C.f16", quad_pairs=True),
        Pairing(s70, "mma_load_a_32x4_to_shared_16x4_layout", "mma.m8n8k4.A.f16.row", quad_pairs=True),
        Pairing(s70, "mma_load_b_32x4_to_shared_16x4_layout_trans", "mma.m8n8k4.B.f16.col", transpose=True,
                quad_pairs=True),
        Pairing(s70, "mma_load_b_32x4_to_shared_4x16_layout", "mma.m8n8k4.B.f16.row", quad_pairs=True),
    ]
    return tuple(out)


PAIRINGS = _pairs()


@dataclass(frozen=True)
class LdPairing:
    """An ldmatrix row-address map of TileLang's and the fragment it loads with it: together they state the
    ldmatrix fragment (module docstring)."""

    address: str         # f(lane, e) -> (row, col) of the tile, or f(lane) -> the row's start (``row_start``)
    fragment: str        # TileLang's forward fragment function (thread, local) -> (row, col) it loads
    spec: str            # the ldmatrix id
    num: int             # .x1, .x2, .x4
    bits: int            # the element width of the fragment's local ids
    swap: bool = False   # the tile is stored transposed to the fragment's (row, col)
    row_start: bool = False


LDMATRIX = (
    LdPairing("ldmatrix_32x8_to_shared_16x16_layout", "mma_load_a_32x8_to_shared_16x16_layout",
              "ldmatrix.m8n8.R.b16", 4, 16),
    LdPairing("ldmatrix_trans_32x8_to_shared_16x16_layout", "mma_load_b_32x8_to_shared_16x16_layout",
              "ldmatrix.m8n8.R.b16", 4, 16),
    LdPairing("ldmatrix_trans_32x8_to_shared_16x16_layout", "mma_load_a_32x8_to_shared_16x16_layout",
              "ldmatrix.m8n8.R.b16.trans", 4, 16, swap=True),
    LdPairing("ldmatrix_32x8_to_shared_16x16_layout", "mma_load_b_32x8_to_shared_16x16_layout",
              "ldmatrix.m8n8.R.b16.trans", 4, 16, swap=True),
    LdPairing("ldmatrix_32x4_to_shared_16x8_layout_a", "mma_load_a_32x4_to_shared_16x8_layout",
              "ldmatrix.m8n8.R.b16", 4, 32),
    LdPairing("ldmatrix_32x4_to_shared_16x8_layout_b", "mma_load_b_32x4_to_shared_16x8_layout",
              "ldmatrix.m8n8.R.b16", 4, 32),
    LdPairing("ldmatrix_32x16_to_shared_16x32_layout_a", "mma_load_a_32x16_to_shared_16x32_layout",
              "ldmatrix.m8n8.R.b16", 4, 8),
    LdPairing("ldmatrix_32x16_to_shared_16x32_layout_b", "mma_load_b_32x16_to_shared_16x32_layout",
              "ldmatrix.m8n8.R.b16", 4, 8),
    LdPairing("ldmatrix_32x32_to_shared_16x64_layout_a", "mma_load_a_32x32_to_shared_16x64_layout",
              "ldmatrix.m8n8.R.b16", 4, 4, row_start=True),
    LdPairing("ldmatrix_32x16_to_shared_8x64_layout_b", "mma_load_b_32x16_to_shared_8x64_layout",
              "ldmatrix.m8n8.R.b16", 2, 4, row_start=True),
)


def _unpaired_reason(name: str) -> str:
    """Why a function of the layout files is compared with nothing."""
    if name.startswith("ldmatrix"):
        return ("an ldmatrix row-address map with no fragment function of these files to load with it (the "
                "pairing is made outside them)")
    if name.startswith("metadata") or name.startswith("get_logical_id"):
        return "sparse metadata: the catalog states it within mma.sp A (sparse.metadata), not as a layout"
    if name.startswith("metal"):
        return "Apple Metal, not PTX"
    if "smooth" in name or "swizzle" in name:
        return "a shared-memory permutation, not a register fragment"
    return "not a fragment layout (a helper)"


def probe() -> str:
    return "" if _installed() is not None else f"no tilelang files: {INSTALL}"


def _installed() -> Path | None:
    """The installed layout directory (found through the distribution's file list; nothing is imported)."""
    where = located("tilelang", PACKAGE_DIR)
    return where if where is not None and all((where / f"{f}.py").is_file() for f in FILES) else None


def _version() -> str:
    return version_of("tilelang")


def read_files(root: Path) -> dict[str, Module]:
    """The layout files under ``root`` (a missing one is a module with that error)."""
    out = {}
    for stem in FILES:
        p = root / f"{stem}.py"
        try:
            text = p.read_text(encoding="utf-8", errors="replace")
        except OSError as e:
            out[stem] = Module(f"{stem}.py", {}, {}, {}, f"{stem}.py:0:0: {e.strerror or 'cannot read'}")
            continue
        out[stem] = read_module(text, f"{stem}.py")
    return out


def _spec_index(specs: Iterable) -> dict[str, Layout]:
    """id -> layout, a reviewed correction standing in for its layout."""
    return by_doc_id(lay for lay in specs if isinstance(lay, Layout))


def entries(interp: Interpreter, p: Pairing, spec: Layout) -> tuple[tuple[int, int, int, int], ...]:
    """The pairing's table (thread, element, row, col) in the spec's terms; ``Refused`` or ``ValueError``
    (what TileLang returned cannot be one) with why."""
    rows, cols = int(spec.codomain.rows), int(spec.codomain.cols)   # type: ignore[arg-type]
    out: list[tuple[int, int, int, int]] = []
    if p.inverse:
        ranges = p.domain or ((cols, rows) if p.transpose else (rows, cols))
        seen: dict[tuple[int, int], tuple[tuple[int, ...], tuple[int, int]]] = {}
        for args in itertools.product(*(range(n) for n in ranges)):
            got = _pair(interp.call(p.file, p.func, args), p.func, args)
            r, c = (args[1], args[0]) if p.transpose else (args[0], args[1])
            if got in seen and seen[got][1] != (r, c):
                raise ValueError(f"{p.func}{seen[got][0]} and {p.func}{args} are both thread {got[0]} local "
                                 f"{got[1]} (not a bijection)")
            if got not in seen:
                seen[got] = (args, (r, c))
                out.append((got[0], got[1], r, c))
    else:
        for t in range(spec.threads):
            for i in range(spec.n_elements):
                r, c = _pair(interp.call(p.file, p.func, (t, i)), p.func, (t, i))
                out.append((t, i, c, r) if p.transpose else (t, i, r, c))
    if p.quad_pairs:
        out = _ranked(out, spec)
    return tuple(sorted(out))


def ldmatrix_entries(interp: Interpreter, p: LdPairing, spec: Layout) -> tuple[tuple[int, int, int, int], ...]:
    """The ldmatrix fragment TileLang's pair of functions states, in the spec's b16 terms: each fragment
    element's tile position, found in the address map (lane s gives the row of matrix s // 8, row s % 8;
    its e-th element is column e), is stacked row s, b16 column e * bits // 16."""
    m = FILES[0]
    per_row = 128 // p.bits            # a matrix row is 16 bytes
    where: dict[tuple[int, int], tuple[int, int]] = {}
    for s in range(8 * p.num):
        start = _pair(interp.call(m, p.address, (s,)), p.address, (s,)) if p.row_start else None
        for e in range(per_row):
            pos = (start[0], start[1] + e) if start is not None else \
                _pair(interp.call(m, p.address, (s, e)), p.address, (s, e))
            if pos in where:
                raise ValueError(f"{p.address}: lanes {where[pos][0]} and {s} both point at {pos} (not a bijection)")
            where[pos] = (s, e)
    b16 = spec.n_elements
    count = b16 * 16 // p.bits         # the fragment's local ids per thread
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for t in range(32):
        for loc in range(count):
            r, c = _pair(interp.call(m, p.fragment, (t, loc)), p.fragment, (t, loc))
            pos = (c, r) if p.swap else (r, c)
            if pos not in where:
                raise ValueError(f"{p.fragment}({t}, {loc}) = {(r, c)}: no lane's row holds tile position {pos}")
            s, e = where[pos]
            if p.bits >= 16:
                k = p.bits // 16
                cells = [((t, loc * k + h), (s, e * k + h)) for h in range(k)]
            else:
                k = 16 // p.bits
                if loc % k != e % k:
                    raise ValueError(f"{p.fragment}({t}, {loc}) is {p.bits}-bit part {loc % k} of its b16 but part "
                                     f"{e % k} of lane {s}'s row")
                cells = [((t, loc // k), (s, e // k))]
            for key, cell in cells:
                if out.setdefault(key, cell) != cell:
                    raise ValueError(f"thread {t} b16 element {key[1]} is both {out[key]} and {cell}")
    return tuple(sorted((t, i, r, c) for (t, i), (r, c) in out.items()))


def _pair(v: int | tuple[int, ...], func: str, args: tuple[int, ...]) -> tuple[int, int]:
    if not isinstance(v, tuple) or len(v) != 2:
        raise ValueError(f"{func}{args} returned {v!r}, not a pair")
    return v[0], v[1]


def _ranked(out: list[tuple[int, int, int, int]], spec: Layout) -> list[tuple[int, int, int, int]]:
    """Rows and columns renumbered within each quad pair (the spec's group), in increasing order."""
    by: dict[int, tuple[set[int], set[int]]] = {}
    for t, _, r, c in out:
        rs, cs = by.setdefault(spec.domain.group_of(t), (set(), set()))
        rs.add(r)
        cs.add(c)
    rank = {g: ({v: k for k, v in enumerate(sorted(rs))}, {v: k for k, v in enumerate(sorted(cs))})
            for g, (rs, cs) in by.items()}
    return [(t, i, rank[spec.domain.group_of(t)][0][r], rank[spec.domain.group_of(t)][1][c]) for t, i, r, c in out]


def _describe(p: Pairing) -> str:
    shape = "(i, j" + (", rep" if len(p.domain) == 3 else "") + ") -> (thread, local)" if p.inverse else \
        "(thread, local) -> (row, col)"
    notes = [n for n, on in (("transposed", p.transpose), ("ranked within quad pairs", p.quad_pairs)) if on]
    return f"{p.func}: {shape}" + (f" ({', '.join(notes)})" if notes else "")


def evaluate_files(modules: dict[str, Module], specs: list, timeout: float, root: str) -> list[Row]:
    """Every function of the layout files: paired ones conformed, the others unmatched with why."""
    index = _spec_index(specs)
    interp = Interpreter(modules)
    items: list[Evaluated] = []
    paired = {(p.file, p.func) for p in PAIRINGS} | {(FILES[0], p.address) for p in LDMATRIX}
    rows: list[Row] = []
    for stem in FILES:
        mod = modules[stem]
        where = f"{root}/{stem}.py"
        if mod.error:
            rows.append(Row("malformed", f"{stem}.py", "", where, 0, detail=mod.error))
            continue
        for name in sorted(mod.functions, key=lambda n: mod.line_of(n)):
            if (stem, name) not in paired:
                rows.append(Row("unmatched", name, "", where, mod.line_of(name), detail=_unpaired_reason(name)))
        for p in (p for p in PAIRINGS if p.file == stem):
            line = mod.line_of(p.func)
            spec = index.get(p.spec)
            text = _describe(p)
            if p.func not in mod.functions:
                rows.append(Row("malformed", p.func, "", where, 0, spec=p.spec,
                                detail=f"{p.func} is not defined in {stem}.py"))
                continue
            if spec is None:
                rows.append(Row("unmatched", p.func, "", where, line, detail=f"no catalog layout {p.spec}",
                                layout=text))
                continue
            try:
                table = entries(interp, p, spec)
            except Refused as e:
                items.append(Evaluated(p.func, spec.operand, where, line, spec, text=text,
                                       error=f"{e.file}:{e.line}:{e.col}: {e.reason}"))
                continue
            except ValueError as e:
                items.append(Evaluated(p.func, spec.operand, where, line, spec, text=text, error=str(e)))
                continue
            items.append(Evaluated(p.func, spec.operand, where, line, spec, entries=table, text=text))
        if stem == FILES[0]:
            rows += _ldmatrix_items(mod, interp, index, where, items)
    return rows + conform_rows(items, timeout)


def _ldmatrix_items(mod: Module, interp: Interpreter, index: dict[str, Layout], where: str,
                    items: list[Evaluated]) -> list[Row]:
    """The ldmatrix pairings as evaluated items (appended); rows for the ones that cannot be."""
    rows = []
    for p in LDMATRIX:
        line = mod.line_of(p.address)
        text = (f"{p.address} with {p.fragment}: ldmatrix .x{p.num}{'.trans' if p.swap else ''} of "
                f"{p.bits}-bit elements as TileLang loads its fragment")
        family = index.get(p.spec)
        missing = [f for f in (p.address, p.fragment) if f not in mod.functions]
        if missing:
            rows.append(Row("malformed", p.address, "", where, line, spec=p.spec,
                            detail=f"{missing[0]} is not defined in {mod.file}"))
            continue
        if family is None:
            rows.append(Row("unmatched", p.address, "", where, line, detail=f"no catalog layout {p.spec}", layout=text))
            continue
        params = (("NUM", p.num),)
        member = family.instance(NUM=p.num)
        try:
            items.append(Evaluated(p.address, family.operand, where, line, family, params,
                                   ldmatrix_entries(interp, p, member), text))
        except Refused as e:
            items.append(Evaluated(p.address, family.operand, where, line, family, params, text=text,
                                   error=f"{e.file}:{e.line}:{e.col}: {e.reason}"))
        except ValueError as e:
            items.append(Evaluated(p.address, family.operand, where, line, family, params, text=text, error=str(e)))
    return rows


def evaluate_default(specs: list, timeout: float = DEFAULT_TIMEOUT, path: str | Path | None = None
                     ) -> CrosscheckReport:
    """The installed TileLang's files (or ``path``: a directory holding the three layout files)."""
    t0 = time.perf_counter()
    root = files_root(path, _installed(), f"no tilelang files: {INSTALL}", (f"{f}.py" for f in FILES))
    version = f"tilelang {_version()}" if path is None else f"tilelang files in {Path(path).name}"
    rows = evaluate_files(read_files(root), specs, timeout, PACKAGE_DIR) + tmem_rows(root, specs, timeout, PACKAGE_DIR)
    files = tuple(f"{PACKAGE_DIR}/{f}.py" for f in FILES) + (f"{PACKAGE_DIR}/{TMEM_FILE}",)
    return CrosscheckReport(version, files, tuple(rows), {},
                            time.perf_counter() - t0, NAME, "TileLang fragment layout functions")
