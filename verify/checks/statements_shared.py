"""Judges of what the shared-memory and Tensor Memory packing pages state (``verify.catalog.statements_shared``).

Held against the reviewed maps of the same facts: the packing maps (``specs/tcgen05.packing.toml``: how many
elements a 32-bit Tensor Memory word holds, which consecutive elements share one), Table 52's transcription
(``specs/tcgen05.valid.toml``), the swizzle atoms and canonical layouts and worked examples
(``specs/wgmma.shared.toml``, ``specs/tcgen05.shared.toml``), and the descriptor command's model of the matrix
descriptor (``verify.layout.descriptor``, ``verify.layout.shared.MODES``: fields, codes, strides' roles).  Layouts
are compared as maps by both engines (``maps.same``), so a layout written another way (an identity swizzle's other
numbers, the stride of a size-1 mode, ``1T`` for ``T``) is the same statement.
"""
from __future__ import annotations

import functools
import re
from typing import Any

from ..formula import parse_formula
from ..layout.algebra import compose
from ..layout.reshape import fix
from ..layout.descriptor import FIELDS, stride_roles
from ..layout.dims import Dim
from ..layout.family import extent_at
from ..layout.model import MapLayout
from ..layout.named import FormulaMap
from ..layout.shared import MODES
from ..layout.statements import Statement
from ..layout.types import ACCUMULATOR_TYPES, ELEMENT_BITS
from .statement_base import PAGE, Context, Verdict, agree, by_engines, differ, judges, same_map

# The element types of each MMA kind (PTX ISA 9.7.16.10: .kind::mxf8f6f4 takes E4M3, E5M2, E3M2, E2M3 and E2M1,
# .kind::mxf4 and .kind::mxf4nvf4 E2M1); an EeMm type is 1 + e + m bits.
KIND_TYPES = {"mxf8f6f4": ("e4m3", "e5m2", "e3m2", "e2m3", "e2m1"), "mxf4": ("e2m1",), "mxf4nvf4": ("e2m1",)}
PACKING_OF_KIND = {"mxf8f6f4": "mxf8f6f4", "mxf4": "mxf4", "mxf4nvf4": "mxf4"}  # which reviewed packing map a kind reads
SIZES = (4, 6, 8, 16, 32)
MODE_ORDER = ("none", "128B_base32B", "128B", "64B", "32B")


def type_bits(name: str) -> int | None:
    m = re.fullmatch(r"e(\d)m(\d)", name.lower())
    return 1 + int(m.group(1)) + int(m.group(2)) if m else None


def _same(a: Any, b: Any, ctx: Context, names: tuple[str, str]) -> Any:
    return same_map(a, b, ctx.timeout, names)



# ----------------------------------------------------------------------------- packing

def _context(subject: str) -> tuple[tuple[str, ...], tuple[str, ...], str]:
    parts = subject.split(":")
    ops = tuple(x for x in parts[1].split(",") if x) if len(parts) > 1 else ()
    kinds = tuple(x for x in parts[2].split(",") if x) if len(parts) > 2 else ()
    return ops, kinds, parts[3] if len(parts) > 3 else ""


def _packing_map(ctx: Context, operand: str, kind: str) -> MapLayout | None:
    suffix = PACKING_OF_KIND.get(kind, kind)
    return ctx.maps.get(f"tcgen05.packing.{operand}.{suffix}")


def _slots(m: MapLayout) -> int:
    return next(extent_at(d.size, {}) for d in m.map.outputs if d.name == "slot")


def _sub_byte(kinds: tuple[str, ...]) -> frozenset[int]:
    return frozenset(b for k in (kinds or tuple(KIND_TYPES)) for t in KIND_TYPES.get(k, ()) for b in [type_bits(t)]
                     if b is not None and b < 8)


def _kind_bits(kinds: tuple[str, ...]) -> frozenset[int]:
    return frozenset(b for k in kinds for t in KIND_TYPES.get(k, ()) for b in [type_bits(t)] if b is not None)


@judges("packing-context")
def _packing_context(st: Statement, ctx: Context) -> Verdict:
    ops, kinds, memory = st.value
    if not set(ops) <= {"A", "B", "D"}:
        return differ(f"matrix {', '.join(ops)}: the packing formats are of A, B and D")
    if any(k not in KIND_TYPES for k in kinds):
        return differ(f"no MMA kind .kind::{next(k for k in kinds if k not in KIND_TYPES)}")
    if memory == "tmem":
        for op in ops:
            if op == "D":
                if not any(i.startswith("tcgen05.packing.D.") for i in ctx.maps):
                    return differ("no reviewed packing of D in Tensor Memory")
                continue
            for k in kinds:
                if _packing_map(ctx, op, k) is None:
                    return differ(f"no reviewed spec records a Tensor Memory packing of {op} for .kind::{k}")
    elif memory == "smem" and "D" in ops:
        return differ("D is not read from shared memory")
    return agree(f"the packing of {', '.join(ops)}" + (f" for .kind::{', .kind::'.join(kinds)}" if kinds else ""))


@judges("packing-operand")
def _packing_operand(st: Statement, ctx: Context) -> Verdict:
    ops, _, _ = _context(st.subject)
    if st.value in ops:
        return agree(f"matrix {st.value}, as the section's title", PAGE)
    return differ(f"matrix {st.value}; the section is about {', '.join(ops)}", PAGE)


def _d_maps(ctx: Context, bits: int | None = None) -> list[MapLayout]:
    return [m for i, m in ctx.maps.items() if i.startswith("tcgen05.packing.D.") and (bits is None or f".b{bits}." in i + ".")]


@judges("packed")
def _packed(st: Statement, ctx: Context) -> Verdict:
    maps = _d_maps(ctx)
    if not maps:
        return differ("no reviewed packing of D")
    packed = any(_slots(m) > 1 for m in maps)
    if st.value == packed:
        return agree("D's sub-word elements " + ("are" if packed else "are not") + " packed: the reviewed "
                     + ", ".join(m.id for m in maps))
    return differ(f"the reviewed {maps[0].id} holds {_slots(maps[0])} element(s) per word: D's sub-word elements "
                  + ("are" if packed else "are not") + " packed")


@judges("word-bits")
def _word_bits(st: Statement, ctx: Context) -> Verdict:
    words = {_slots(m) * b for i, m in ctx.maps.items() if i.startswith("tcgen05.packing.") and m.kind == "tmem"
             for b in [_bits_of_packing(i)] if b and _slots(m) > 1}  # (the shared-memory packings have no words)
    if words == {st.value}:
        return agree(f"a Tensor Memory word holds {st.value} bits in every reviewed packing")
    return differ(f"the reviewed packings fill words of {', '.join(map(str, sorted(words)))} bits, not {st.value}")


def _bits_of_packing(lid: str) -> int | None:
    part = lid.split(".")[3] if lid.count(".") >= 3 else ""
    if part.startswith("b") and part[1:].isdigit():
        return int(part[1:])
    return {"mxf8f6f4": 8, "mxf4": 4}.get(part)


@judges("packing-element-bits")
def _packing_element_bits(st: Statement, ctx: Context) -> Verdict:
    ops, kinds, _ = _context(st.subject)
    parts = st.subject.split(":")
    if len(parts) > 5:  # D's: an element of the size the reviewed packing of D keeps
        if _d_maps(ctx, st.value):
            return agree(f"the reviewed packing of D keeps {st.value}-bit elements")
        return differ(f"no reviewed packing of D has {st.value}-bit elements")
    if st.value in _sub_byte(kinds):
        return agree(f"{st.value}-bit elements of .kind::{', '.join(kinds)} sit in 8-bit containers")
    return differ(f"no type of .kind::{', '.join(kinds)} is {st.value} bits below a byte "
                  f"({', '.join(map(str, sorted(_sub_byte(kinds))))})")


@judges("packing-container-bits")
def _packing_container(st: Statement, ctx: Context) -> Verdict:
    m = ctx.maps.get("tcgen05.packing.A.mxf8f6f4")
    if m is None:
        return differ("no reviewed packing of 8-bit containers")
    want = 32 // _slots(m)
    if st.value == want:
        return agree(f"{want}-bit containers, {_slots(m)} to a word in the reviewed {m.id}")
    return differ(f"the reviewed {m.id} packs {_slots(m)} containers in a 32-bit word: {want}-bit containers, not {st.value}")


@judges("elements-per-word")
def _elements_per_word(st: Statement, ctx: Context) -> Verdict:
    parts = st.subject.split(":")
    ops, kinds, _ = _context(st.subject)
    if len(parts) > 5:
        maps = _d_maps(ctx, int(parts[5]))
        if maps and all(_slots(m) == st.value for m in maps):
            return agree(f"{st.value} element(s) per word, as the reviewed {maps[0].id}")
        return differ(f"the reviewed packing of D holds {_slots(maps[0]) if maps else '?'} per word, not {st.value}")
    m = _packing_map(ctx, ops[0] if ops else "A", kinds[0] if kinds else "")
    if m is None:
        return differ("no reviewed packing of this operand and kind")
    if _slots(m) != st.value:
        return differ(f"the reviewed {m.id} packs {_slots(m)} elements in a word, not {st.value}")
    word = Dim("word", next(d.size for d in m.map.outputs if d.name == "tmem_col"))
    claim = FormulaMap(parse_formula(f"word = k / {st.value}\n", "x", ("row", "k"), ("word",)), m.map.inputs, (word,))
    col_only = FormulaMap(parse_formula("word = tmem_col\n", "x", ("tmem_lane", "tmem_col", "slot"), ("word",)),
                          m.map.outputs, (word,))
    r = _same(compose(col_only, m.map), claim, ctx, (f"the reviewed {m.id}", f"{st.value} consecutive elements a word"))
    return by_engines(r, f"{st.value} consecutive elements share a word in the reviewed {m.id}",
                       f"the reviewed {m.id} does not put {st.value} consecutive elements in one word")


@judges("word-position")
def _word_position(st: Statement, ctx: Context) -> Verdict:
    where, bits = st.value
    elem = int(st.subject.split(":")[5]) if st.subject.count(":") >= 5 else bits
    if where == "lower" and bits == elem:
        return agree(f"one {elem}-bit element in the lower {bits} bits (slot 0 of the reviewed packing of D)")
    return differ(f"an unpacked {elem}-bit element sits in the lower {elem} bits of its word (slot 0 of the reviewed "
                  f"packing of D), not the {where} {bits}")


@judges("packed-types")
def _packed_types(st: Statement, ctx: Context) -> Verdict:
    _, kinds, _ = _context(st.subject)
    want = _sub_byte(kinds)
    if st.value == want:
        return agree(f"the {' and '.join(f'{b}-bit' for b in sorted(want, reverse=True))} types of "
                     + (f".kind::{', .kind::'.join(kinds)}" if kinds else "the MMA kinds"))
    return differ(f"the types below a byte of {'.kind::' + ', .kind::'.join(kinds) if kinds else 'the MMA kinds'} are "
                  f"{', '.join(f'{b}-bit' for b in sorted(want))}, not {', '.join(f'{b}-bit' for b in sorted(st.value))}")


@judges("per-container")
def _per_container(st: Statement, ctx: Context) -> Verdict:
    n, data, container = st.value
    _, kinds, _ = _context(st.subject)
    if n * data != container:
        return differ(f"{n} {data}-bit elements are {n * data} bits, not an {container}-bit container", PAGE)
    if data not in _kind_bits(kinds):
        return differ(f"no type of .kind::{', '.join(kinds)} is {data} bits")
    m = _packing_map(ctx, "A", kinds[0]) if kinds else None
    if m is not None and _slots(m) * data != 32:
        return differ(f"the reviewed {m.id} holds {_slots(m)} elements a word: {32 // _slots(m)} bits each, not {data}")
    return agree(f"{n} {data}-bit elements fill an {container}-bit container" + (f", {_slots(m)} a word as the reviewed "
                                                                               f"{m.id}" if m else ""))


@judges("kind-named")
def _kind_named(st: Statement, ctx: Context) -> Verdict:
    _, kinds, _ = _context(st.subject)
    if st.value in kinds:
        return agree(f".kind::{st.value}, of the section's title", PAGE)
    return differ(f"{st.value}: the section is about .kind::{', .kind::'.join(kinds)}", PAGE)


@judges("smem-packing")
def _smem_packing(st: Statement, ctx: Context) -> Verdict:
    n, data, container, no_padding = st.value
    _, kinds, _ = _context(st.subject)
    if data not in _kind_bits(kinds):
        return differ(f"no type of .kind::{', '.join(kinds)} is {data} bits")
    if no_padding and n * data != container:
        return differ(f"{n} {data}-bit elements with no padding are {n * data} bits, not a {container}-bit container", PAGE)
    if container != 8:
        return differ(f"the containers are bytes, not {container} bits")
    return agree(f"{n} {data}-bit elements in a byte", PAGE)


@judges("format-bits", consistent=True)
def _format_bits(st: Statement, ctx: Context) -> Verdict:
    types = [s for s in ctx.statements if s.kind == "format-type" and s.subject == st.subject and s.value]
    for t in types:
        b = type_bits(t.value[1])
        if b != st.value:
            return differ(f"the figure's type {t.value[1].upper()} is {b} bits", PAGE, (t,))
    if st.value not in _sub_byte(()):
        return differ(f"no packing format is of {st.value}-bit elements", PAGE)
    return agree(f"a {st.value}-bit format", PAGE)


@judges("format-type")
def _format_type(st: Statement, ctx: Context) -> Verdict:
    context, name = st.value
    _, kinds, _ = _context(context)
    if not any(name in KIND_TYPES.get(k, ()) for k in kinds):
        return differ(f"{name.upper()} is no type of .kind::{', .kind::'.join(kinds)}")
    return agree(f"{name.upper()} is a {type_bits(name)}-bit type of .kind::{', .kind::'.join(kinds)}")


# ----------------------------------------------------------------------------- Table 52

_MAJOR = {("row", "A"): "K", ("column", "B"): "K", ("column", "A"): "MN", ("row", "B"): "MN"}


def _points(v: Any) -> list[tuple[int, int]]:
    sizes, word, transposed, matrix, _ = v
    major = _MAJOR.get((word, matrix))
    return [(SIZES.index(s), 0 if major == "K" else 1) for s in sorted(sizes)] if major else []


@judges("valid-modes")
def _valid_modes(st: Statement, ctx: Context) -> Verdict:
    sizes, word, transposed, matrix, modes = st.value
    major = _MAJOR.get((word, matrix))
    if major is None:
        return differ(f"{word} {matrix}: no major-ness")
    if transposed != (major == "MN"):
        return differ(f"{word}-major {matrix} is {major}-major, which is {'not ' if major == 'K' else ''}the transpose; "
                      f"the row says it is {'' if transposed else 'not '}transposed", PAGE)
    mine = set(_points(st.value))
    for o in ctx.statements:
        if o.kind == "valid-modes" and o.value and o.value[4] != st.value[4] and mine & set(_points(o.value)):
            if (o.line, o.value) != (st.line, st.value):
                both = sorted(mine & set(_points(o.value)))[0]
                return differ(f"{SIZES[both[0]]}-bit {major}-major is stated again at line {o.line} with other modes",
                              PAGE, (o,))
    ref = ctx.maps.get("tcgen05.valid.modes")
    if ref is None:
        return differ("no reviewed record of Table 52 (tcgen05.valid.modes)")
    cases = " || ".join(f"mode == {MODE_ORDER.index(m)}" for m in sorted(modes, key=MODE_ORDER.index)) or "mode < 0"
    claim = FormulaMap(parse_formula(f"allowed = 1 if {cases}\n          0 Otherwise\n", "x", ("mode",), ("allowed",)),
                       (Dim("mode", len(MODE_ORDER)),), (Dim("allowed", 2),))
    for size, j in sorted(mine):
        reviewed = fix(fix(ref.map, "size", size), "major", j)
        r = _same(reviewed, claim, ctx, ("the reviewed Table 52", "this row"))
        if r.status != "proved":
            return by_engines(r, "", f"{SIZES[size]}-bit {major}-major: the row's modes are not the reviewed ones")
    return agree(f"the modes of {', '.join(f'{s}-bit' for s in sorted(sizes))} {major}-major, as the reviewed "
                 "Table 52 (both engines)")


# ----------------------------------------------------------------------------- the atoms

def _atom_units(m: MapLayout) -> tuple[int, int]:
    """A reviewed atom's shape in 16-byte units: (M/N, K) as the tables write it."""
    T = m.params[0].values[0] if m.params else 1
    env = {"T": T}
    rows, cols = (extent_at(d.size, env) for d in m.map.inputs)
    major = m.id.split(".")[3]
    return (rows // T, cols) if major == "MN" else (rows, cols // T)


@judges("atom")
def _atom(st: Statement, ctx: Context) -> Verdict:
    m = ctx.maps.get(st.subject)
    if st.value is None:
        if m is None:
            return agree(f"no {st.subject} atom, as the reviewed specs")
        return differ(f"the reviewed specs record {st.subject} ({'x'.join(map(str, _atom_units(m)))})")
    if m is None:
        return differ(f"no reviewed spec records {st.subject}")
    twin = [o for o in ctx.statements if o.kind == "atom" and o.subject == st.subject and o.line != st.line]
    if twin:
        return differ(f"the table gives the {st.subject.split('.')[3]}-major {st.subject.split('.')[4]} atom again at line "
                      f"{twin[0].line}", PAGE, (twin[0],))
    units = _atom_units(m)
    if units == st.value:
        return agree(f"{units[0]}x{units[1]} 128-bit elements, as the reviewed {m.id}")
    return differ(f"the reviewed {m.id} is {units[0]}x{units[1]} 128-bit elements, not {st.value[0]}x{st.value[1]}")


@judges("transpose-major")
def _transpose_major(st: Statement, ctx: Context) -> Verdict:
    matrix, plain, trans = st.value
    want = {"A": ("K-major", "M-major"), "B": ("K-major", "N-major")}.get(matrix)
    if want is None:
        return differ(f"{matrix!r} is neither A nor B")
    if (plain, trans) == want:
        return agree(f"{matrix}: {want[0]}, transposed {want[1]} (the reviewed Table 52's major-ness: A row-major and "
                     "B column-major are K-major)")
    return differ(f"{matrix} is {want[0]} and, transposed, {want[1]} (the reviewed Table 52: A row-major and B "
                  f"column-major are K-major); the page says {plain}, {trans}")


@judges("atom-unit-bits", "atom-factor")
def _atom_unit(st: Statement, ctx: Context) -> Verdict:
    if st.value == 128:
        return agree("128-bit elements: the reviewed atoms' T = 128 / element bits")
    return differ(f"the reviewed atoms count 128-bit elements (T = 128 / element bits), not {st.value}-bit ones")


@judges("atom-example")
def _atom_example(st: Statement, ctx: Context) -> Verdict:
    major, mode, a, unit, bits, k, r1, r2, tname = st.value
    m = ctx.maps.get(f"{st.subject}.shared.atom.{major}.{mode}")
    if m is None:
        return differ(f"no reviewed {st.subject} atom {major}-major {mode}")
    units = _atom_units(m)
    tb = ELEMENT_BITS.get(tname) if tname in ACCUMULATOR_TYPES else None  # a tensor core input type (mma's type table)
    if (a, k) != units:
        return differ(f"the {major}-major {mode} atom is {units[0]}x{units[1]} (the reviewed {m.id}), the example starts "
                      f"from {a}x{k}")
    if unit != 128:
        return differ(f"the atoms count 128-bit elements, not {unit}-bit ones")
    if tb != bits:
        return differ(f".{tname} is no {bits}-bit tensor core input type" if tb is None else
                      f".{tname} elements are {tb} bits, not {bits}")
    f = unit // bits if bits else 0
    want = (a * f, k) if major == "MN" else (a, k * f)
    if (r1, r2) != want or major != "MN":
        return differ(f"the {major}-major atom grows along its leading dimension by 128/{bits} = {f}: {want[0]}x{want[1]}, "
                      f"and ({a}*({unit}/{bits}))x{k} = {r1}x{r2} says " + ("so" if (r1, r2) == want else "otherwise"))
    return agree(f"{a}x{k} 128-bit elements are {r1}x{r2} {tname} elements")


@judges("figure-atom")
def _figure_atom(st: Statement, ctx: Context) -> Verdict:
    major, mode = st.value
    lid = f"{st.subject}.shared.atom.{major}.{mode}"
    if lid not in ctx.maps:
        return differ(f"no reviewed spec records the {major}-major {mode} atom the figure names")
    twin = [o for o in ctx.statements if o.kind == "figure-atom" and o.subject == st.subject and o.value == st.value
            and o.line != st.line]
    if twin:
        return differ(f"the figure at line {twin[0].line} shows the same atom", PAGE, (twin[0],))
    return agree(f"the reviewed {lid}")


# ----------------------------------------------------------------------------- wgmma: definitions, canonical layouts, examples

def _wgmma_atom(ctx: Context, major: str, mode: str) -> tuple[int, int] | None:
    m = ctx.maps.get(f"wgmma.shared.atom.{major}.{mode}")
    return _atom_units(m) if m is not None else None


@judges("stride-definition")
def _stride_definition(st: Statement, ctx: Context) -> Verdict:
    _, name, major, cond = st.subject.split(".")
    modes = {"none": ("none",), "swizzled": ("32B", "64B", "128B"), "any": ("none", "32B", "64B", "128B")}[cond]
    for mode in modes:
        role = stride_roles(major, mode)[name]
        units = _wgmma_atom(ctx, major, mode)
        if units is None:
            return differ(f"no reviewed {major}-major {mode} atom")
        want: Any = "unused" if role is None else ("rows", units[0]) if role == "MN" else ("columns", units[1])
        said = st.value
        if isinstance(said, tuple) and said[1] == "W":
            said = (said[0], MODES[mode].units)
        if said != want:
            return differ(f"{name} of the {major}-major {mode} layouts steps " + (
                "nowhere (not used)" if want == "unused" else f"to the next atom along {'M/N' if role == 'MN' else 'K'}: "
                f"the offset after the first {want[1]} {want[0]}") + " (the descriptor model's stride roles, the reviewed "
                "atoms)")
    return agree(f"{name} of the {major}-major " + "/".join(modes) + " layouts, as the descriptor model and the reviewed atoms")


@judges("definition-tile")
def _definition_tile(st: Statement, ctx: Context) -> Verdict:
    m = ctx.maps.get(st.subject)
    if m is None:
        return differ(f"no reviewed {st.subject}")
    T = m.params[0].values[0]
    env = {p.name: (T if p.name == "T" else 1) for p in m.params}
    rows, cols = (extent_at(d.size, env) for d in m.map.inputs)
    want = (rows, cols // T)
    if st.value == want:
        return agree(f"the {want[0]}x{want[1]} tile of the reviewed {m.id} (m = k = 1, 128-bit elements)")
    return differ(f"the reviewed {m.id} at m = k = 1 is a {want[0]}x{want[1]} tile of 128-bit elements")


@judges("definition-assumed")
def _definition_assumed(st: Statement, ctx: Context) -> Verdict:
    if st.value == 1:
        return agree("an unused LBO is 1 (one 16-byte unit: the step the layout takes instead)")
    return differ(f"an unused LBO is assumed to be 1 (the layouts step by one 16-byte unit), not {st.value}")


@judges("canonical-row", "example-canonical", "example-exact")
def _canonical(st: Statement, ctx: Context) -> Verdict:
    ref = ctx.maps.get(st.subject)
    if ref is None:
        return differ(f"no reviewed spec records {st.subject}")
    r = _same(ref.map, st.value, ctx, (f"the reviewed {ref.id}", "the page's layout"))
    return by_engines(r, f"the reviewed {ref.id}", f"not the reviewed {ref.id}")


@judges("example-id", consistent=True)
def _example_id(st: Statement, ctx: Context) -> Verdict:
    if st.value in ctx.maps:
        return agree(f"the reviewed {st.value}")
    return differ(f"no reviewed spec records {st.value}: the example's major-ness, swizzling or type is not one of the "
                  "reviewed examples")


def _stride_elements(text: str, tname: str) -> tuple[int | None, str]:
    m = re.fullmatch(r"(\d+)\s*\*\s*sizeof\((\w+)\)", text)
    if text.strip().upper() == "NA":
        return None, ""
    if not m:
        return None, f"{text!r} does not read as N*sizeof(type)"
    if m.group(2).lower() != tname:
        return None, f"{text} counts {m.group(2)} elements in a {tname} example"
    return int(m.group(1)), ""


def _instance(frame: Any, env: dict[str, Any]) -> tuple[list[int], list[int]] | str:
    """(the canonical layout's offsets at ``env``, the exact layout's), or why they cannot be computed."""
    try:
        row, col = _leaves(frame[4])
        erow, ecol = _leaves(frame[5])
        full = {k: v for k, v in env.items() if v is not None}
        a = _offsets([(_eval(s, full), _eval(d, full)) for s, d in row], [(_eval(s, full), _eval(d, full)) for s, d in col])
        b = _offsets([(_eval(s, {}), _eval(d, {})) for s, d in erow], [(_eval(s, {}), _eval(d, {})) for s, d in ecol])
    except (ValueError, KeyError, ArithmeticError) as e:
        return f"cannot instantiate: {e}"
    return a, b


@functools.lru_cache(maxsize=64)
def _leaves(text: str) -> tuple[tuple[tuple[Any, Any], ...], tuple[tuple[Any, Any], ...]]:
    from ..catalog.shared_symbolic import SymError, parse_symbolic
    body = re.sub(r"^\s*Swizzle\s*<[^>]*>\s*o\s*", "", text)
    try:
        row, col = parse_symbolic(body)
    except SymError as e:
        raise ValueError(str(e)) from None
    return tuple(row), tuple(col)


def _eval(e: Any, env: dict[str, int]) -> int:
    """A leaf of a canonical layout (an integer, or a product or sum of the page's symbols) at ``env``."""
    if isinstance(e, int):
        return e
    name = type(e).__name__
    if name == "Num":
        return int(e.value)
    if name == "Var":
        if e.name not in env:
            raise KeyError(f"no value for {e.name}")
        return int(env[e.name])
    if name == "BinOp" and e.op in ("+", "-", "*"):
        a, b = _eval(e.left, env), _eval(e.right, env)
        return a + b if e.op == "+" else a - b if e.op == "-" else a * b
    raise ValueError(f"a leaf {e!r} of no known form")


def _offsets(row: list[tuple[int, int]], col: list[tuple[int, int]]) -> list[int]:
    def mode(leaves: list[tuple[int, int]]) -> list[int]:
        out = [0]
        for size, stride in leaves:
            if size > 4096 or len(out) * size > 1 << 16:
                raise ValueError("too large")
            out = [o + k * stride for k in range(size) for o in out]
        return out
    rs, cs = mode(row), mode(col)
    return [r + c for r in rs for c in cs]


def _stated_env(frame: Any) -> tuple[dict[str, Any], str]:
    major, mode, tname, bits, can_text, ex_text, stated = frame
    env: dict[str, Any] = {}
    for name, text in stated:
        if name in ("T", "m", "k"):
            if not text.strip().isdigit():
                return {}, f"{name} = {text!r} is no number"
            env[name] = int(text)
        else:
            v, why = _stride_elements(text, tname)
            if why:
                return {}, why
            env[name] = v
    return env, ""


@judges("example-param")
def _example_param(st: Statement, ctx: Context) -> Verdict:
    name, text, frame = st.value
    major, mode, tname, bits, *_ = frame
    twin = [o for o in ctx.statements if o.kind == "example-param" and o.subject == st.subject and o.value
            and o.value[0] == name and o.line != st.line]
    if twin:
        return differ(f"the example gives {name} again at line {twin[0].line}", PAGE, (twin[0],))
    if name == "T":
        if not text.isdigit() or not bits or int(text) != 128 // bits:
            return differ(f"T = 128 / {bits} bits = {128 // bits if bits else '?'} for {tname}, not {text}")
        return agree(f"T = 128 / {bits}")
    if name in ("LBO", "SBO"):
        v, why = _stride_elements(text, tname)
        if why:
            return differ(why)
        if v is None and stride_roles(major, mode)[name] is not None:
            return differ(f"{name} is used by the {major}-major {mode} layouts: it needs a value")
    env, why = _stated_env(frame)
    if why:
        return agree("judged at the parameter that does not read") if name not in why else differ(why)
    got = _instance(frame, env)
    if isinstance(got, str):
        return differ(got)
    a, b = got
    if a == b:
        return agree("the canonical layout at the stated parameters is the exact layout")
    for cand in _candidates(name, b):  # does another value of this parameter alone make them the same?
        other = _instance(frame, {**env, name: cand})
        if not isinstance(other, str) and other[0] == other[1]:
            shown = cand if name in ("m", "k") else f"{cand}*sizeof({tname})"
            return differ(f"the exact layout is the canonical one at {name} = {shown}, not {text}")
    return agree("this parameter alone does not make the canonical layout the exact one (another statement differs)")


def _candidates(name: str, exact: list[int]) -> list[int]:
    if name in ("m", "k"):
        return list(range(1, 9))
    return list(range(0, min(max(exact) + 2, 1 << 12))) if exact else []


@judges("example-encoding")
def _example_encoding(st: Statement, ctx: Context) -> Verdict:
    name, expr, shift, result, frame = st.value
    major, mode, tname, bits, *_ = frame
    if expr is None:  # "1 (assumed)"
        if stride_roles(major, mode)[name] is not None:
            return differ(f"{name} is used by the {major}-major {mode} layouts; its encoding is no assumed value")
        return agree(f"an unused {name} is encoded as 1") if result == 1 else \
            differ(f"an unused {name} is encoded as 1 (the layouts step by one 16-byte unit), not {result}")
    if expr != name:
        return differ(f"the encoding of {name} is written with ({expr})", PAGE)
    if shift != 4:
        return differ(f"matrix-descriptor-encode shifts by 4 (the descriptor model's 16-byte units), not {shift}")
    stated = dict(frame[6])
    v, why = _stride_elements(stated.get(name, ""), tname)
    if why or v is None:
        return differ(why or f"no {name} to encode", PAGE)
    want = (v * bits // 8) >> 4
    if want != result:
        return differ(f"{name} = {v}*sizeof({tname}) = {v * bits // 8} bytes, and ({name}) >> 4 = {want}, not {result}",
                      PAGE)
    return agree(f"({name}) >> 4 = {want}", PAGE)


# ----------------------------------------------------------------------------- the descriptor

@judges("descriptor-word")
def _descriptor_word(st: Statement, ctx: Context) -> Verdict:
    top = max(f.hi for f in FIELDS["wgmma"]) + 1
    return agree("a 64-bit descriptor, as the model's fields") if st.value == 64 and top <= 64 else \
        differ(f"the descriptor model's fields fill a 64-bit word, not {st.value} bits")


@judges("descriptor-field")
def _descriptor_field(st: Statement, ctx: Context) -> Verdict:
    name, a, b, size = st.value
    lo, hi = min(a, b), max(a, b)
    if hi - lo + 1 != size:
        return differ(f"bits {a}–{b} are {hi - lo + 1} bits, the row says {size}", PAGE)
    model = {f.name: f for f in FIELDS["wgmma"]}.get(name)
    if model is None:
        return differ(f"the descriptor model has no field {name}")
    if (lo, hi) != (model.lo, model.hi):
        return differ(f"the descriptor model has {name} in bits {model.hi}–{model.lo}, not {a}–{b}")
    return agree(f"{name}: bits {model.hi}–{model.lo}, as the descriptor model")


@judges("descriptor-code")
def _descriptor_code(st: Statement, ctx: Context) -> Verdict:
    code, mode = st.value
    want = MODES[mode].wgmma if mode in MODES else None
    if want == code:
        return agree(f"{mode} is code {code} in the descriptor model")
    return differ(f"the descriptor model encodes {mode} as {want}, not {code}")


@judges("descriptor-encode")
def _descriptor_encode(st: Statement, ctx: Context) -> Verdict:
    mask, shift = st.value
    if not (0 <= mask < 1 << 64 and 0 <= shift < 64):
        return differ(f"(x & {mask:#x}) >> {shift} does not fit a 64-bit descriptor's arithmetic")
    page = FormulaMap(parse_formula(f"v = (x & {mask}) >> {shift}\n", "x", ("x",), ("v",)), (Dim("x", 1 << 18),),
                      (Dim("v", 1 << 18),))
    model = FormulaMap(parse_formula("v = (x & 262143) >> 4\n", "x", ("x",), ("v",)), (Dim("x", 1 << 18),),
                       (Dim("v", 1 << 18),))
    r = _same(model, page, ctx, ("the descriptor model's matrix-descriptor-encode", "the page's"))
    return by_engines(r, "matrix-descriptor-encode on shared-memory addresses (below 2^18)",
                       "not the model's matrix-descriptor-encode")


@judges("pattern-boundary")
def _pattern_boundary(st: Statement, ctx: Context) -> Verdict:
    mode, bytes_ = st.value
    units = _wgmma_atom(ctx, "MN", mode)
    if units is None:
        return differ(f"no reviewed {mode} atom")
    want = units[0] * units[1] * 16
    if want == bytes_:
        return agree(f"a {mode} atom is {want} bytes (the reviewed wgmma.shared.atom.MN.{mode})")
    return differ(f"a {mode} atom repeats every {want} bytes (the reviewed wgmma.shared.atom.MN.{mode}), not {bytes_}")


@judges("base-offset-formula")
def _base_offset(st: Statement, ctx: Context) -> Verdict:
    shift, mask = st.value
    bits = {f.name: f for f in FIELDS["wgmma"]}["base_offset"].bits
    row = MODES["128B"].width
    if mask != (1 << bits) - 1:
        return differ(f"the base offset field has {bits} bits: & {(1 << bits) - 1:#x}, not & {mask:#x}")
    if 1 << shift != row:
        return differ(f"the pattern's rows are {row} bytes: >> {row.bit_length() - 1}, not >> {shift:#x}")
    return agree(f"(addr >> {shift:#x}) & {mask:#x}: the row of the {row}-byte pattern, in the {bits}-bit field")


__all__ = ["KIND_TYPES", "type_bits"]
