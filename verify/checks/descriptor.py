"""Matrix descriptors against shared-memory layouts: derive the descriptor that reads a layout, or decide
whether a given one does (both engines, through ``verify.checks.maps.same``).

The question is the one the hardware answers: the tile an instruction reads through a descriptor (its
canonical layout at the start address with LBO and SBO, the swizzle on address bits, one start address per
k-block of ``256 / bits`` columns, advanced as a mainloop advances it) against the layout the program wrote
(``verify.layout.shared.SharedLayout``: row = M or N, col = K, offsets from the buffer's base address).

The start advance of k-block ``j`` is the byte distance from the tile's first element to the k-block's first
element in the written layout (``addr(0, j * K) - addr(0, 0)``), as CUTLASS's descriptor iterator and Triton
compute it; for a swizzled layout that is the unswizzled distance (row 0 of an aligned atom is never
permuted).

``derive`` tries every swizzle mode of the instruction for the majorness (both when none is given): LBO and
SBO are read off the layout where the canonical layout places them, the descriptor is built, and the
layout it makes the hardware read is compared with the written one, point by point by enumeration first
(cheap) and then, for the mode that matches (or the closest that does not), by both engines.  When no
mode matches it says why: a start address or k-block start that is not 16-byte aligned, a tile that is not
whole atoms (an atom straddling the tile), a base address not aligned to the swizzle period (the layout
matches once the base is aligned), an offset the descriptor's 14-bit fields cannot hold, or a layout that
is no canonical one (with the first cell where the closest mode reads elsewhere).
"""
from __future__ import annotations

from dataclasses import replace

import numpy as np

from ..layout.reshape import restrict
from ..layout.descriptor import Descriptor, atom_rows, decode, k_block_of, reader, straddles
from ..layout.named import evaluate_all
from ..layout.shared import MODES, Mode, SharedLayout, concrete, mode_of_swizzle
from ..results import CheckResult
from ..results.shared import DescriptorResult, first_cell
from .fragment import DEFAULT_TIMEOUT
from .maps import same

MODE_ORDER = ("128B", "64B", "32B", "none", "128B_base32B")


def _addr(lay: SharedLayout, row: int, col: int) -> int | None:
    return lay.address(row, col)


def _unswizzled(md: Mode, addr: int) -> int:
    """The address the hardware swizzles to ``addr`` under ``md`` (a swizzle is its own inverse)."""
    s = md.swizzle
    return addr if s.identity else s.apply(addr)


def advances(lay: SharedLayout, cols: int, k_block: int, md: Mode) -> tuple[int, list[int], str | None]:
    """(start address, the start advance of every k-block in bytes, a reason when they cannot be used), the
    addresses taken before ``md``'s swizzle (what a descriptor holds)."""
    a0 = _addr(lay, 0, 0)
    if a0 is None:
        return 0, [], "the layout does not place element (0, 0)"
    start = _unswizzled(md, a0)
    out = []
    for j in range(-(-cols // k_block)):
        a = _addr(lay, 0, j * k_block)
        if a is None:
            return start, [], f"the layout does not place element (0, {j * k_block})"
        d = _unswizzled(md, a) - start
        if d % 16:
            return start, [], (f"k-block {j} starts {d} bytes after the tile (element (0, {j * k_block})): not a "
                               "multiple of 16, which a start address must be")
        out.append(d)
    return start, out, None


def _offsets_equal(a: SharedLayout, b: SharedLayout) -> tuple[bool, tuple[int, int] | None]:
    va, vb = evaluate_all(a.map), evaluate_all(b.map)
    diff = (va.ok != vb.ok) | (va.ok & vb.ok & (va.out["offset"] != vb.out["offset"]))
    bad = np.flatnonzero(np.asarray(diff).reshape(-1))
    if not bad.size:
        return True, None
    r, c = np.unravel_index(int(bad[0]), va.ok.shape)
    return False, (int(r), int(c))


def _fields_from(lay: SharedLayout, major: str, md: Mode, T: int, rows: int, k_block: int) -> tuple[int, int]:
    """(LBO, SBO) in bytes read off the layout where the canonical layout of ``md`` puts them; a stride the
    tile does not use takes the value the page's dense examples give it (unused by the hardware)."""
    a0 = _addr(lay, 0, 0) or 0

    def dist(r: int, c: int, default: int) -> int:
        a = _addr(lay, r, c) if r < rows and c < k_block else None
        return default if a is None else a - a0

    atom = md.atom_bytes
    if major == "MN":
        if md.name == "none":
            return dist(0, 8, 128), dist(T, 0, 128)   # LBO: next 8 K rows; SBO: next 16-byte unit along MN
        return dist(T * md.units, 0, atom), dist(0, md.rows, atom)  # LBO: next atom along MN; SBO: next K group
    if md.name == "none":
        return dist(0, T, 128), dist(8, 0, 128)        # LBO: next 16-byte unit along K; SBO: next 8 rows
    return 16, dist(8, 0, atom)                          # LBO unused ("assumed 1"); SBO: next 8 rows


def _instr_modes(instr: str, major: str) -> list[Mode]:
    out = []
    for name in MODE_ORDER:
        md = MODES[name]
        code = md.wgmma if instr == "wgmma" else md.tcgen05
        if code is not None and major in md.majors:
            out.append(md)
    return out


def _tile(lay: SharedLayout, rows: int | None) -> tuple[SharedLayout, str | None]:
    """The layout restricted to the instruction's rows (M or N), when it has more."""
    n = lay.rows
    if not isinstance(n, int):
        return lay, "bind the family's parameters first (--param)"
    if rows is None or rows == n:
        return lay, None
    if rows > n:
        return lay, f"the instruction reads {rows} rows (M or N), the layout has {n}"
    return replace(lay, map=restrict(lay.map, "row", 0, rows)), None


def derive(lay: SharedLayout, instr: str = "wgmma", major: str | None = None, rows: int | None = None,
           timeout: float = DEFAULT_TIMEOUT) -> DescriptorResult:
    """The descriptor that makes ``instr`` read ``lay`` (module docstring), or why none does."""
    lay, problem = _tile(lay, rows)
    bits = lay.element_bits
    kb = k_block_of(bits) if bits <= 256 else 0
    if problem or 128 % bits:
        return DescriptorResult("none", instr, major, None, (), (problem or f"{bits}-bit elements do not pack 16 bytes",))
    R, C = concrete(lay.rows), concrete(lay.cols)
    tile = (R, C)
    if C % kb:
        return DescriptorResult("none", instr, major, None, (), (
            f"the tile has {C} columns (K), not a multiple of the {kb} one instruction reads ({bits}-bit elements: "
            "32 bytes of K)",), tile=tile, k_block=kb)
    reasons: list[str] = []
    T = 128 // bits
    majors = [major] if major else ["K", "MN"]
    prefer = mode_of_swizzle(lay.swizzle) if lay.swizzle is not None else None
    tried: list[tuple[str, str]] = []
    misaligned: list[str] = []
    straddling: dict[str, list[str]] = {}
    closest: tuple[int, Descriptor, str, SharedLayout] | None = None
    aligned_match: list[str] = []
    for mj in majors:
        modes = _instr_modes(instr, mj)
        if prefer is not None and prefer in modes:
            modes = [prefer] + [m for m in modes if m is not prefer]
        for md in modes:
            why = straddles(mj, md, bits, R)
            if why:
                tried.append((f"{mj} {md.name}", f"{R} rows are not whole {atom_rows(mj, md, bits)}-row atoms"))
                if md is prefer or len(majors) == 1:
                    straddling.setdefault(mj, []).append(why)
                continue
            start, adv, why = advances(lay, C, kb, md)
            if why or start % 16:
                why = why or f"the tile starts at byte {start:#x}: a descriptor's start address is a multiple of 16"
                tried.append((f"{mj} {md.name}", why))
                if why not in misaligned:
                    misaligned.append(why)
                continue
            lbo, sbo = _fields_from(lay, mj, md, T, R, kb)
            try:
                d = Descriptor(instr, start, lbo, sbo, md)
                d.encode()
            except ValueError as e:
                tried.append((f"{mj} {md.name}", str(e)))
                continue
            hw = reader(d, mj, bits, R, C, kb, adv, lay.base)
            _, where = _offsets_equal(lay, hw)
            if where is None:  # equal
                chk = same(lay.map, hw.map, timeout, ("layout", "descriptor"))
                status = "found" if chk.status == "proved" else "none"
                return DescriptorResult(status, instr, mj, d, tuple(adv), () if status == "found" else (chk.message,),
                                        chk, tile, kb, tuple(tried))
            tried.append((f"{mj} {md.name}", f"differs first at (row {where[0]}, col {where[1]})"))
            score = _agreement(lay, hw)
            if closest is None or score > closest[0]:
                closest = (score, d, mj, hw)
            # a layout swizzled relative to its buffer, at a base not aligned to the swizzle period: the same
            # mode at an aligned base
            if md.period > 16 and lay.base % md.period and lay.swizzle_on != "address":
                lay0 = replace(lay, base=0)
                start0, adv0, why0 = advances(lay0, C, kb, md)
                if not why0 and start0 % 16 == 0:
                    l0, s0 = _fields_from(lay0, mj, md, T, R, kb)
                    try:
                        hw0 = reader(Descriptor(instr, start0, l0, s0, md), mj, bits, R, C, kb, adv0, 0)
                    except ValueError:
                        continue
                    if _offsets_equal(lay0, hw0)[0]:
                        aligned_match.append(
                            f"the buffer's base {lay.base:#x} is not aligned to the {md.period}-byte period of {md.name} "
                            f"swizzling, which the hardware applies to address bits; at an aligned base, {mj}-major "
                            f"{md.name} reads this layout")
    reasons += aligned_match
    for mj, whys in straddling.items():
        if len(majors) == 1 or not any(t[0].startswith(mj + " ") and "differs" in t[1] for t in tried):
            reasons += whys
    if closest is None:
        reasons += misaligned
    nearest: CheckResult | None = None
    if closest is not None and not aligned_match:
        _, d, mj, hw = closest
        nearest = same(lay.map, hw.map, timeout, ("layout", "descriptor"))
        reasons.append(f"not a canonical layout: the closest, {mj}-major {d.mode.name} (LBO {d.lbo}, SBO {d.sbo}), "
                       f"{nearest.message}")
    if not reasons:
        reasons.append("no swizzle mode of " + instr + " reads this layout (" +
                       "; ".join(f"{a}: {b}" for a, b in tried) + ")")
    return DescriptorResult("none", instr, major, None, (), tuple(reasons), nearest, tile, kb, tuple(tried))


def _agreement(a: SharedLayout, b: SharedLayout) -> int:
    va, vb = evaluate_all(a.map), evaluate_all(b.map)
    return int(np.sum(va.ok & vb.ok & (va.out["offset"] == vb.out["offset"])))


def check(lay: SharedLayout, value: int, instr: str = "wgmma", major: str | None = None, rows: int | None = None,
          timeout: float = DEFAULT_TIMEOUT) -> DescriptorResult:
    """Does descriptor ``value`` make ``instr`` read exactly ``lay``?  ``major`` is required unless only one
    majorness has the descriptor's swizzle mode.  ``ValueError`` for a value that is no descriptor."""
    d = decode(instr, value)
    lay, problem = _tile(lay, rows)
    if problem:
        raise ValueError(problem)
    if major is None:
        if len(d.mode.majors) == 1:
            major = d.mode.majors[0]
        else:
            raise ValueError("give --major K or MN: the descriptor does not say which it reads")
    kb = k_block_of(lay.element_bits)
    R, C = concrete(lay.rows), concrete(lay.cols)
    why = straddles(major, d.mode, lay.element_bits, R) if 128 % lay.element_bits == 0 else None
    if why:  # the rule derive refuses the tile by: no descriptor of this mode reads it, this one neither
        return DescriptorResult("differs", instr, major, d, (), (why,), None, (R, C), kb)
    hw = descriptor_reads(lay, value, instr, major)
    _, adv, _ = advances(lay, C, kb, d.mode)
    chk = same(lay.map, hw.map, timeout, ("layout", "descriptor"))
    status = "reads" if chk.status == "proved" else "differs"
    return DescriptorResult(status, instr, major, d, tuple(adv), (), chk, (R, C), kb)


def descriptor_reads(lay: SharedLayout, value: int, instr: str = "wgmma", major: str | None = None) -> SharedLayout:
    """What descriptor ``value`` makes ``instr`` read over ``lay``'s tile (rows = M or N, cols = K): the
    hardware's ``(row, col) -> offset``, each k-block read with the start address advanced as a mainloop advances
    it over ``lay`` (``verify.layout.descriptor.reader``).  ``major`` is required unless the descriptor's swizzle
    mode has one majorness; ``ValueError`` for a value that is no descriptor or a tile it cannot read in
    k-blocks."""
    d = decode(instr, value)
    if major is None:
        if len(d.mode.majors) == 1:
            major = d.mode.majors[0]
        else:
            raise ValueError("give --major K or MN: the descriptor does not say which it reads")
    bits = lay.element_bits
    kb = k_block_of(bits)
    R, C = concrete(lay.rows), concrete(lay.cols)
    if C % kb:
        raise ValueError(f"the tile has {C} columns (K), not a multiple of the {kb} one instruction reads")
    _, adv, why = advances(lay, C, kb, d.mode)
    if why:
        raise ValueError(why)
    hw = reader(d, major, bits, R, C, kb, adv, lay.base)
    return replace(hw, text=f"{d.describe()}, {major}-major")


__all__ = ["DescriptorResult", "advances", "check", "derive", "descriptor_reads", "first_cell"]
