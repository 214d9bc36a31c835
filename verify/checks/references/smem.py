"""Shared-memory map layouts paired with the tiles the references lay out (CuTe's GMMA/UMMA atoms and their
``tile_to_shape``, Triton's ``NVMMASharedLayout``).

The catalog's shared-memory maps (``specs/wgmma.shared.toml``, ``specs/tcgen05.shared.toml``) are families
``(row, col) -> offset`` in elements, row the M/N index, col the K index, over ``T = 128 / element bits`` and,
for the canonical layouts, the repeats ``Rm`` (along M/N) and ``Rk`` (along K) with dense LBO/SBO.  A
reference lays out one tile; a member is compared with the tile's restriction to the member's rows and
columns, which is the member exactly when the tile stacks its atoms in the order the restriction keeps:

* CuTe's ``tile_to_shape(atom, (R, C))`` stacks atoms along M first, then along K (the page's dense LBO/SBO
  order), so one tile per (T, Rm) serves every ``Rk`` (columns restricted: K is the outer mode);
* Triton's ``NVMMASharedLayout`` stacks 8-row swizzle tiles along its non-contiguous dimension first: M for
  K-major (one tile per T serves every Rm, rows restricted, the tile one swizzle row wide), K for MN-major
  (so only the members with ``Rm = 1`` or ``Rk = 1`` are the same layout: the others are canonical layouts
  with LBO and SBO exchanged, which the page's dense values do not name); its shapes are powers of two, its
  elements 8, 16, 32 or 64 bits (no 4-bit ``T = 32``), and its swizzle-0 layout is row-major over the whole
  block (``nvmmaSharedToLinearLayout``: ``identity1D`` over the TMA block), not the core-matrix tiling of the
  no-swizzle canonical layouts: it is compared at the 8 x 16-byte atoms only.

A layout with a reviewed correction (``ID@corrected``) is compared in its corrected form.
"""
from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from typing import Any

from ...layout.corrections import prefer_corrections

SWIZZLES = {"none": (0, "INTER"), "32B": (32, "SW32"), "64B": (64, "SW64"), "128B": (128, "SW128")}
_ID = re.compile(r"(?P<inst>wgmma|tcgen05)\.shared\.(?:(?P<what>atom|example)\.)?(?P<major>K|MN)\."
                 r"(?P<swz>none|32B|64B|128B|128B_base32B)(?:\.(?P<type>tf32|bf16))?")
CUTE_TYPES = {32: "float", 16: "cutlass::half_t", 8: "uint8_t", 4: "cute::uint4_t"}
EXAMPLE_TYPES = {"tf32": (32, "cutlass::tfloat32_t"), "bf16": (16, "cutlass::bfloat16_t")}


@dataclass(frozen=True)
class SmemSpec:
    """What a shared-memory map's id says: instruction, atom/canonical/example, major, swizzle."""

    spec: Any          # the MapLayout
    instruction: str   # wgmma | tcgen05
    what: str          # atom | canonical | example
    major: str         # K | MN
    swizzle: str       # none | 32B | 64B | 128B | 128B_base32B


@dataclass(frozen=True)
class Tile:
    """One tile a reference lays out, and the spec members that are its restrictions."""

    spec: SmemSpec
    bits: int                       # element bits
    rows: int
    cols: int
    members: tuple[tuple[tuple[tuple[str, int], ...], int, int], ...]   # (params, rows, cols) of each member
    cxx_type: str = ""              # CuTe's element type


def parse_id(spec: Any) -> SmemSpec | None:
    m = _ID.fullmatch(spec.doc_id)  # a correction's: the doc layout's
    if m is None:
        return None
    what = m["what"] or "canonical"
    return SmemSpec(spec, m["inst"], what, m["major"], m["swz"])


def smem_specs(maps: list) -> list[SmemSpec]:
    """The shared-memory maps, each in its corrected form where one exists."""
    out = []
    for m in prefer_corrections(maps):
        if getattr(m, "kind", "") != "shared":
            continue
        s = parse_id(m)
        if s is not None:
            out.append(s)
    return out


def members(spec: Any) -> list[tuple[tuple[tuple[str, int], ...], int, int, int]]:
    """(params, rows, cols, element bits) of every member of a shared-memory map."""
    names = [q.name for q in spec.params]
    out = []
    for vals in itertools.product(*(q.values for q in spec.params)):
        env = dict(zip(names, vals))
        member = spec.instance(**env) if env else spec
        rows, cols = (int(d.size) for d in member.inputs)
        out.append((tuple(sorted(env.items())), rows, cols, 128 // env["T"] if "T" in env else 0))
    return out


def _bits(s: SmemSpec, env_bits: int) -> tuple[int, str]:
    if s.what == "example":
        m = _ID.fullmatch(s.spec.doc_id)
        assert m is not None and m["type"]
        return EXAMPLE_TYPES[m["type"]]
    return env_bits, CUTE_TYPES[env_bits]


def cute_tiles(s: SmemSpec) -> list[Tile]:
    """CuTe's tiles: one per member with every parameter but ``Rk`` fixed (the largest Rk's columns)."""
    groups: dict[tuple, list] = {}
    for params, rows, cols, bits in members(s.spec):
        key = tuple(kv for kv in params if kv[0] != "Rk")
        groups.setdefault(key, []).append((params, rows, cols, bits))
    out = []
    for group in groups.values():
        bits, cxx = _bits(s, group[0][3])
        rows = group[0][1]
        if any(r != rows for _, r, _, _ in group):
            raise ValueError(f"{s.spec.id}: members with one (T, Rm) differ in rows")
        out.append(Tile(s, bits, rows, max(c for _, _, c, _ in group),
                        tuple((p, r, c) for p, r, c, _ in group), cxx))
    return out


def cute_expression(t: Tile) -> str:
    """The C++ expression of CuTe's tile: the atom, or ``tile_to_shape(atom, (rows, cols))``."""
    s = t.spec
    if s.swizzle == "128B_base32B":
        atom = f"UMMA::Layout_MN_SW128_32B_Atom<{t.cxx_type}>{{}}"
    else:
        ns = "GMMA" if s.instruction == "wgmma" else "UMMA"
        atom = f"{ns}::Layout_{s.major}_{SWIZZLES[s.swizzle][1]}_Atom<{t.cxx_type}>{{}}"
    if s.what == "atom":
        return atom
    return f"tile_to_shape({atom}, make_shape({t.rows}, {t.cols}))"


def _pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def triton_tiles(s: SmemSpec) -> list[Tile]:
    """Triton's tiles (power-of-two shapes, 8- to 32-bit elements, swizzled or the 16-byte-wide atoms):
    K-major one tile per T (rows restricted); MN-major one per T for the members with Rk = 1 (rows
    restricted) and one for those with Rm = 1 (columns restricted)."""
    if s.swizzle == "128B_base32B" or (s.swizzle == "none" and s.what != "atom"):
        return []
    mem = members(s.spec)
    if s.what == "example":
        bits = _bits(s, 0)[0]
        (params, rows, cols, _), = mem
        if s.major == "MN" and rows > 8 * 128 // bits * SWIZZLES[s.swizzle][0] // 128 and cols > 8:
            return []     # atoms along both M and K: Triton stacks them along K first
        if rows != _pow2(rows) or cols != _pow2(cols):
            return []
        return [Tile(s, bits, rows, cols, ((params, rows, cols),))]
    out = []
    by_t: dict[int, list] = {}
    for m in mem:
        if m[3] in (8, 16, 32):
            by_t.setdefault(m[3], []).append(m)
    for bits, group in sorted(by_t.items(), reverse=True):
        if s.what == "atom":
            for params, rows, cols, _ in group:
                out.append(Tile(s, bits, rows, cols, ((params, rows, cols),)))
        elif s.major == "K":
            rows = _pow2(max(r for _, r, _, _ in group))
            cols = max(c for _, _, c, _ in group)
            out.append(Tile(s, bits, rows, _pow2(cols), tuple((p, r, c) for p, r, c, _ in group)))
        else:
            env = [(dict(p), p, r, c) for p, r, c, _ in group]
            rk1 = [(p, r, c) for e, p, r, c in env if e.get("Rk", 1) == 1]
            rm1 = [(p, r, c) for e, p, r, c in env if e.get("Rm", 1) == 1 and e.get("Rk", 1) != 1]
            if rk1:
                out.append(Tile(s, bits, _pow2(max(r for _, r, _ in rk1)), _pow2(max(c for _, _, c in rk1)),
                                tuple(rk1)))
            if rm1:
                out.append(Tile(s, bits, _pow2(max(r for _, r, _ in rm1)), _pow2(max(c for _, _, c in rm1)),
                                tuple(rm1)))
    return out


def restrict(offsets: dict[tuple[int, int], int], rows: int, cols: int) -> tuple[tuple[int, int, int], ...]:
    """The (row, col, offset) rows of a member: the tile's offsets on its first ``rows`` x ``cols`` cells."""
    return tuple((r, c, offsets[(r, c)]) for r in range(rows) for c in range(cols))


__all__ = ["SmemSpec", "Tile", "cute_expression", "cute_tiles", "members", "parse_id", "restrict", "smem_specs",
           "triton_tiles"]
