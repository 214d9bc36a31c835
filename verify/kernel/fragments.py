"""The tensor-core instructions' meaning, read from the catalog: the ONE module of the kernel executor that
touches the fragment model.

Each operand of ``mma``, ``ldmatrix``, ``stmatrix`` and ``movmatrix`` is a named map ``(lane, i) -> (row, col)``
(``verify.layout.views.fragment_map``), tabulated here for the 32 lanes as ``Operand`` (numpy tables plus the
register packing: registers, elements per register, element bits).  The executor never reads a layout any other
way, so a fixed spec changes the executor, and the engineer who unifies the two layout models changes this
module only.  Two faces are offered: ``vector`` (the map's numpy ``evaluate``, read by the symbolic engine) and
``scalar`` (its one-point ``at``, read by the numeric engine), so the two engines do not share one tabulation.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..catalog import bundled
from ..catalog.instructions import effective, instructions
from ..catalog.spec import load_spec_file
from ..layout.types import ELEMENT_BITS, REGISTER_BITS
from ..layout.views import fragment_map


class NoLayout(LookupError):
    """The catalog states no layout for an instruction form (the executor reports it as unsupported)."""


@dataclass(frozen=True)
class Operand:
    """One operand's fragment for a warp: element ``i`` of lane ``l`` is matrix cell ``(row[l, i], col[l, i])``;
    element ``i`` is element ``i % per_register`` (from the low bits) of register ``i // per_register``."""

    layout_id: str
    rows: int
    cols: int
    registers: int
    per_register: int
    element_bits: int
    register_bits: int
    row: np.ndarray  # int64[32, elements]
    col: np.ndarray

    @property
    def elements(self) -> int:
        return int(self.row.shape[1])


@dataclass(frozen=True)
class MmaForm:
    """``mma.sync`` of one shape and type combination: operands A (M x K), B (K x N), C and D (M x N)."""

    shape: tuple[int, int, int]
    a: Operand
    b: Operand
    c: Operand
    d: Operand


def _specs_dir(specs: str | None) -> Path:
    return Path(specs) if specs else Path(bundled.resolve().path)


@functools.lru_cache(maxsize=64)
def _spec(path: str):  # type: ignore[no-untyped-def]
    return load_spec_file(path)


def _table(lay, env: dict[str, int], face: str) -> tuple[np.ndarray, np.ndarray, int, int]:  # type: ignore[no-untyped-def]
    """(row, col) of every (lane, i) of ``lay`` (a member ``env`` of a family), by ``face``."""
    fm = fragment_map(lay)
    lay_i = lay.instance(**env) if env else lay
    n = int(lay_i.domain.elements)
    rows, cols = int(lay_i.codomain.rows), int(lay_i.codomain.cols)
    out_r, out_c = (d.name for d in fm.outputs if d.name != "mma")
    if face == "vector":
        v = fm.evaluate({"lane": np.arange(32, dtype=np.int64)[:, None], "i": np.arange(n, dtype=np.int64)[None, :]},
                        env or None)
        if not np.all(v.ok):
            raise NoLayout(f"{lay.id} leaves some (lane, i) without a cell")
        row = np.ascontiguousarray(np.broadcast_to(v.out[out_r], (32, n))).astype(np.int64)
        col = np.ascontiguousarray(np.broadcast_to(v.out[out_c], (32, n))).astype(np.int64)
    else:
        row = np.zeros((32, n), np.int64)
        col = np.zeros((32, n), np.int64)
        for lane in range(32):
            for i in range(n):
                cell = fm.at({"lane": lane, "i": i}, env or None)
                if cell is None:
                    raise NoLayout(f"{lay.id} leaves lane {lane}, element {i} without a cell")
                row[lane, i], col[lane, i] = cell[out_r], cell[out_c]
    return row, col, rows, cols


def _operand(lay, env: dict[str, int], face: str, element_type: str) -> Operand:  # type: ignore[no-untyped-def]
    row, col, rows, cols = _table(lay, env, face)
    lay_i = lay.instance(**env) if env else lay
    regs = int(lay_i.registers)
    ebits = lay.element_bits or ELEMENT_BITS.get(element_type) or ELEMENT_BITS[lay.types[0]]
    rbits = REGISTER_BITS.get(lay.register_type, 32)
    return Operand(lay.id, rows, cols, regs, int(lay.elements_per_register), int(ebits), rbits, row, col)


_MMA_SPEC_FILES = {"m16n8k16": ("mma.m16n8k16.float.toml", "mma.m16n8k16.int.toml"), "m16n8k8": ("mma.m16n8k8.toml",),
                   "m16n8k32": ("mma.m16n8k32.toml",), "m16n8k4": ("mma.m16n8k4.toml",), "m8n8k4": ("mma.m8n8k4.f16.toml",
                   "mma.m8n8k4.f64.toml"), "m8n8k16": ("mma.m8n8k16.toml",), "m8n8k32": ("mma.m8n8k32.toml",),
                   "m16n8k64": ("mma.m16n8k64.toml",), "m8n8k128": ("mma.m8n8k128.toml",),
                   "m16n8k128": ("mma.m16n8k128.toml",), "m16n8k256": ("mma.m16n8k256.toml",)}


@functools.lru_cache(maxsize=256)
def mma_form(shape: str, dtype: str, atype: str, btype: str, ctype: str, variant: str = "", face: str = "vector",
             specs: str | None = None) -> MmaForm:
    """The catalog's ``mma.sync.aligned.<shape>`` for these types (``variant``: m8n8k4's ``row.col`` order)."""
    files = _MMA_SPEC_FILES.get(shape)
    if not files:
        raise NoLayout(f"no catalog layouts for mma.{shape}")
    root = _specs_dir(specs)
    for name in files:
        path = root / name
        if not path.exists():
            continue
        spec = _spec(str(path))
        for ins in instructions(spec):
            if ins.kind != "mma":
                continue
            a, b, c = ins.operand("A"), ins.operand("B"), ins.operand("C")
            if atype not in a.types or btype not in b.types or ctype not in c.types or dtype not in c.types:
                continue
            if variant and (a.variant or "") + "." + (b.variant or "") != variant and (a.variant or b.variant):
                continue
            m, n, k = (int(x) for x in (spec.shape.m, spec.shape.n, spec.shape.k))
            if any(x.domain.groups > 1 for x in (a, b, c)):
                raise NoLayout(f"mma.{shape}'s operands belong to several MMA computations (quad-pairs): not executed "
                               "yet")
            if min(a.element_bits or ELEMENT_BITS.get(atype, 8), b.element_bits or ELEMENT_BITS.get(btype, 8)) < 8:
                raise NoLayout(f"mma.{shape} with {atype} x {btype}: elements narrower than a byte are not executed yet")
            return MmaForm((m, n, k), _operand(a, {}, face, atype), _operand(b, {}, face, btype),
                           _operand(c, {}, face, ctype), _operand(c, {}, face, dtype))
    raise NoLayout(f"the catalog has no mma.{shape} with D {dtype}, A {atype}, B {btype}, C {ctype}")


@functools.lru_cache(maxsize=64)
def matrix_load(name: str, shape: str, num: int, trans: bool, face: str = "vector", specs: str | None = None) -> Operand:
    """``ldmatrix``/``stmatrix`` ``.<shape>.x<num>[.trans].b16``: register element (lane, i) is element ``col`` of
    the row whose address lane ``row`` supplies (rows ``8k .. 8k + 7`` are matrix k)."""
    root = _specs_dir(specs)
    path = root / f"{name}.{shape}.toml"
    if shape != "m8n8" or not path.exists():
        raise NoLayout(f"no catalog layout for {name}.{shape}")
    want = f"{name}.{shape}.R.b16" + (".trans" if trans else "")
    for lay in effective(_spec(str(path)).layouts):
        if lay.id.split("@")[0] == want:
            return _operand(lay, {"NUM": num}, face, "b16")
    raise NoLayout(f"no catalog layout {want}")


@functools.lru_cache(maxsize=8)
def transpose_form(face: str = "vector", specs: str | None = None) -> tuple[Operand, Operand]:
    """``movmatrix.sync.aligned.m8n8.trans.b16``: (source A, result D), D in the coordinates of A's transpose."""
    path = _specs_dir(specs) / "movmatrix.toml"
    if not path.exists():
        raise NoLayout("no catalog layout for movmatrix")
    lays = {lay.operand: lay for lay in effective(_spec(str(path)).layouts)}
    return _operand(lays["A"], {}, face, "b16"), _operand(lays["D"], {}, face, "b16")


__all__ = ["MmaForm", "NoLayout", "Operand", "matrix_load", "mma_form", "transpose_form"]
