"""Judges of what the ldmatrix, stmatrix and movmatrix pages state (``verify.catalog.statements_matrix``).

Every statement is held against the reviewed layouts of its instruction (``specs/ldmatrix.*``, ``stmatrix.*``,
``movmatrix``): their shapes, ``.num`` values, types, variants, register facts, and their maps (both engines,
``verify.checks.statement_maps``), and against the page's own other statements where the reviewed record has no
such fact (the source formats' bits, an example's declarations against its instruction).  Coordinates: a
``.trans``-only shape's text speaks of the loaded matrix, the transpose of the reviewed memory image.
"""
from __future__ import annotations

import re
from typing import Any

from ..layout.family import extent_at
from ..layout.model import Layout
from ..layout.statements import Statement
from ..layout.types import ELEMENT_BITS, REGISTER_BITS
from . import statement_maps as sm
from .statement_base import (PAGE, Context, Verdict, against_layout, agree, by_engines, differ, judges, known,
                             known_erratum, same_map)

# Errata of these pages the reviewed record names (docs/catalog.md), by the value the page states.
known_erratum("addresses-per-matrix", "ldmatrix", 8, "LDM-2: a .m16n16 matrix has 16 rows, so 16 addresses")
known_erratum("address-threads-per-matrix", "ldmatrix", 8, "LDM-2: a .m16n16 matrix has 16 rows, given by 16 threads")
known_erratum("thread-cells", "movmatrix.m8n8.D", ("column", 1, 0), "MOV-1: d holds a row of the result (a column "
              "of the input); read literally, a column of the result would be a's own elements")
known_erratum("row-threads", "movmatrix.m8n8.D", (4, "column"), "MOV-1: four threads hold a row of the result")
known_erratum("example", "stmatrix.example:m16n8.x4.b8", ("m16n8", 4, False, ("b8",)),
              "STM-1: .m16n8 needs .trans (ptxas rejects the example)")
known_erratum("example-bits", "ldmatrix.example:m16n16.x1.trans.shared.b8", 64, "LDM-3: .b8 loads 8-bit elements")
known_erratum("example-bits", "ldmatrix.example:m16n16.x2.trans.shared::cta.b8", 64, "LDM-3: .b8 loads 8-bit elements")
# shapes the page's address table does not describe (LDM-2, reported at 'eight addresses')
ADDRESS_EXEMPT = {("ldmatrix", "m16n16")}


# ----------------------------------------------------------------------------- the reviewed record

def _instr(subject: str) -> str:
    return subject.split(".")[0] if not subject.startswith("movmatrix") else "movmatrix"


def _shape(subject: str) -> str:
    parts = subject.split(".")
    return parts[1] if len(parts) > 1 else ""


def layouts_of(ctx: Context, subject: str) -> list[Layout]:
    """The reviewed doc layouts a subject is about: a layout id, ``instr.SHAPE``, or the instruction."""
    if subject in ctx.layouts:
        return [ctx.layouts[subject]]
    instr, shape = _instr(subject), _shape(subject)
    parts = subject.split(".")
    operand = parts[2] if len(parts) > 2 and parts[2] in ("A", "B", "C", "D", "R") else ""
    return [lay for lay in ctx.instruction(instr) if (not shape or str(lay.shape) == shape)
            and (not operand or lay.operand == operand)]


def _main(lays: list[Layout]) -> Layout | None:
    """The layout a shape's prose is about: its plain (non-``.trans``) one if it has one."""
    plain = [lay for lay in lays if not lay.variant]
    return plain[0] if plain else (lays[0] if lays else None)


def _trans_only(ctx: Context, lay: Layout) -> bool:
    same = [x for x in ctx.instruction(lay.instruction) if x.shape == lay.shape]
    return bool(same) and all(x.variant == "trans" for x in same)


def _first(lay: Layout) -> dict[str, int]:
    return {p.name: p.values[0] for p in lay.domain.params}


def _per_matrix(ctx: Context, lay: Layout) -> tuple[int, int]:
    """A matrix's rows x cols as the page speaks of it (a ``.trans``-only shape: the loaded matrix)."""
    env = _first(lay)
    num = env.get("NUM", 1)
    r, c = extent_at(lay.codomain.rows, env) // num, extent_at(lay.codomain.cols, env)
    return (c, r) if _trans_only(ctx, lay) else (r, c)


def _memory_rows(lay: Layout) -> int:
    env = _first(lay)
    return extent_at(lay.codomain.rows, env) // env.get("NUM", 1)


def _nums(lays: list[Layout]) -> frozenset[int]:
    return frozenset(v for lay in lays for p in lay.domain.params if p.name == "NUM" for v in p.values)


def _effective(ctx: Context, lay: Layout) -> Layout:
    return ctx.fixed(lay) or lay


def _src_bits(ctx: Context) -> dict[str, int]:
    """The source formats the page's syntax lists (``.b6x16_p32``: 6-bit elements), by name."""
    out: dict[str, int] = {}
    for s in ctx.statements:
        if s.kind == "syntax-src-fmt" and isinstance(s.value, frozenset):
            for name in s.value:
                m = re.fullmatch(r"b(\d+)x16_p\d+", name)
                if m:
                    out[name] = int(m.group(1))
    return out


def _bits_of(ctx: Context, lays: list[Layout]) -> frozenset[int]:
    """The element sizes the layouts' types hold: a ``.b8x16`` row holds the source formats' elements."""
    out: set[int] = set()
    for lay in lays:
        for t in lay.types:
            if t.endswith("x16"):
                out |= set(_src_bits(ctx).values())
            elif t in ELEMENT_BITS:
                out.add(ELEMENT_BITS[t])
    return frozenset(out)


def _shape_name(subject: str) -> tuple[int, int] | None:
    m = re.fullmatch(r"m(\d+)n(\d+)", _shape(subject))
    return (int(m.group(1)), int(m.group(2))) if m else None


def _no_layout(st: Statement) -> Verdict:
    return differ(f"no reviewed spec records {st.subject}: the page speaks of a shape or operand that is not "
                  "the instruction's")


# ----------------------------------------------------------------------------- the syntax

@judges("syntax-shape")
def _syntax_shape(st: Statement, ctx: Context) -> Verdict:
    lays = ctx.instruction(st.subject)
    shapes = {str(lay.shape) for lay in lays}
    extra = set(st.value) - shapes
    if extra:
        return differ(f"the .shape list names {', '.join(sorted(extra))}, which no reviewed {st.subject} layout has")
    forms = {_shape(s.subject) for s in ctx.statements if s.kind == "syntax-trans" and _shape(s.subject)}
    missing = shapes - set(st.value) - forms
    if missing:
        return differ(f"the syntax leaves out {', '.join(sorted(missing))}, a shape of the reviewed {st.subject}")
    return agree(f"the shapes of the reviewed {st.subject}")


@judges("syntax-num")
def _syntax_num(st: Statement, ctx: Context) -> Verdict:
    want = _nums(ctx.instruction(st.subject))
    if st.value == want:
        return agree("the .num values of the reviewed layouts")
    return differ(f"the .num values .x{', .x'.join(map(str, sorted(st.value)))} are not the reviewed "
                  f".x{', .x'.join(map(str, sorted(want)))}")


@judges("syntax-type", "syntax-dst-fmt")
def _syntax_type(st: Statement, ctx: Context) -> Verdict:
    types = {t for lay in ctx.instruction(st.subject) for t in lay.types}
    want = {t for t in types if t.endswith("x16") == (st.kind == "syntax-dst-fmt")}
    if set(st.value) == want:
        return agree("the types of the reviewed layouts")
    return differ(f"{_set(st.value)} is not the reviewed {_set(want)}")


def _set(v: Any) -> str:
    return "{" + ", ".join("." + str(x) for x in sorted(v)) + "}"


def _format_bits(name: str) -> tuple[int, int, int] | None:
    m = re.fullmatch(r"b(\d+)x(\d+)_p(\d+)", name)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def _container_bits(ctx: Context, instr: str) -> int | None:
    dst = {t for lay in ctx.instruction(instr) for t in lay.types if t.endswith("x16")}
    return 16 * ELEMENT_BITS[next(iter(dst))] if dst else None


@judges("syntax-src-fmt")
def _syntax_src(st: Statement, ctx: Context) -> Verdict:
    total = _container_bits(ctx, st.subject)
    for name in sorted(st.value):
        f = _format_bits(name)
        if f is None:
            return differ(f".{name} is no source format (.bNxK_pP)", PAGE)
        if total is not None and f[0] * f[1] + f[2] != total:
            return differ(f".{name}: {f[1]} x {f[0]} bits + {f[2]} bits of padding is {f[0] * f[1] + f[2]} bits, not "
                          f"the {total} of the destination's 16 8-bit containers")
    named = {s.value for s in ctx.statements if s.kind == "src-format" and s.value}
    if named and named != set(st.value):
        return differ(f"the source-format table names {_set(named)}", PAGE)
    return agree("each source format fills the 16 8-bit containers")


@judges("syntax-trans")
def _syntax_trans(st: Statement, ctx: Context) -> Verdict | None:
    if st.subject.startswith("movmatrix"):
        return None  # the instruction transposes; its layouts have no .trans variant: the page's statements agree
    lays = layouts_of(ctx, st.subject)
    if not lays:
        return _no_layout(st)
    if not _shape(st.subject):
        return agree("a form of the instruction") if st.value in ("optional", "mandatory", "none") else differ("?")
    variants = {lay.variant for lay in lays}
    want = "mandatory" if variants == {"trans"} else "optional" if "trans" in variants else "none"
    if st.value == want:
        return agree(f".trans is {want} for {_shape(st.subject)}, as the reviewed layouts have it")
    return differ(f"the page makes .trans {st.value} for .{_shape(st.subject)}; the reviewed layouts make it {want}")


# ----------------------------------------------------------------------------- shapes, sizes, source formats

@judges("matrix-shape", "matrix-ref")
def _matrix_shape(st: Statement, ctx: Context) -> Verdict:
    lay = _main(layouts_of(ctx, st.subject))
    if lay is None or not _shape(st.subject):
        return _no_layout(st)
    want = _per_matrix(ctx, lay)
    named = _shape_name(st.subject)
    if st.value != want:
        return differ(f"a .{_shape(st.subject)} matrix is {want[0]}x{want[1]} in the reviewed {lay.id}, not "
                      f"{st.value[0]}x{st.value[1]}")
    if named is not None and st.kind == "matrix-shape" and named != want:
        return differ(f".{_shape(st.subject)} names a {named[0]}x{named[1]} matrix")
    return agree(f"a {want[0]}x{want[1]} matrix, as the reviewed {lay.id}")


@judges("element-bits", "data-bits", "figure-bits")
def _element_bits(st: Statement, ctx: Context) -> Verdict:
    lays = layouts_of(ctx, st.subject)
    if not lays:
        return _no_layout(st)
    want = _bits_of(ctx, lays)
    if st.kind == "data-bits":
        want = frozenset(_src_bits(ctx).values())
    elif st.kind == "figure-bits":  # a figure's elements: the registers' containers
        want = frozenset(lay.regs.element_bits or ELEMENT_BITS.get(lay.types[0], 0) for lay in lays)
    if st.value == want:
        return agree(f"element sizes {_bits(want)}, as the reviewed types hold")
    return differ(f"the page states {_bits(st.value)}, the reviewed types of {st.subject} hold {_bits(want)}")


def _bits(v: Any) -> str:
    return " or ".join(f"{b}-bit" for b in sorted(v, reverse=True)) or "none"


@judges("src-format")
def _src_format(st: Statement, ctx: Context) -> Verdict:
    f = _format_bits(str(st.value))
    total = _container_bits(ctx, _instr_of_page(ctx, st))
    if f is None:
        return differ(f".{st.value} is no source format (.bNxK_pP)")
    if total is not None and f[0] * f[1] + f[2] != total:
        return differ(f".{st.value}: {f[1]} x {f[0]} bits + {f[2]} bits of padding is {f[0] * f[1] + f[2]} bits, not "
                      f"the {total} of 16 8-bit containers")
    listed = {n for s in ctx.statements if s.kind == "syntax-src-fmt" and isinstance(s.value, frozenset) for n in s.value}
    if listed and st.value not in listed:
        return differ(f"the syntax's .src_fmt lists {_set(listed)}", PAGE)
    return agree(f".{st.value} fills 16 8-bit containers")


def _instr_of_page(ctx: Context, st: Statement) -> str:
    return next((s.subject for s in ctx.statements if s.kind.startswith("syntax-") and "." not in s.subject), "ldmatrix")


def _src_field(st: Statement, k: int, what: str) -> Verdict:
    f = _format_bits(st.subject)
    if f is None:
        return differ(f"the format .{st.subject} does not read")
    if st.value != f[k]:
        return differ(f"the format .{st.subject} is {f[1]} {f[0]}-bit elements and {f[2]} bits of padding: {what} "
                      f"{f[k]}, not {st.value}", PAGE)
    return agree(f"{what} {f[k]}, as the format's name says", PAGE)


@judges("src-count")
def _src_count(st: Statement, ctx: Context) -> Verdict:
    return _src_field(st, 1, "elements")


@judges("src-bits")
def _src_bits_j(st: Statement, ctx: Context) -> Verdict:
    return _src_field(st, 0, "bits per element")


@judges("src-padding")
def _src_padding(st: Statement, ctx: Context) -> Verdict:
    return _src_field(st, 2, "bits of padding")


@judges("src-shape")
def _src_shape(st: Statement, ctx: Context) -> Verdict:
    lays = layouts_of(ctx, st.subject)
    if not lays or not _shape(st.subject):
        return _no_layout(st)
    if any(t.endswith("x16") for lay in lays for t in lay.types):
        return agree(f".{_shape(st.subject)} takes 8-bit containers of source data, as its reviewed layouts")
    return differ(f"no reviewed .{_shape(st.subject)} layout takes source formats (its types: "
                  f"{_set({t for lay in lays for t in lay.types})})")


@judges("src-dst")
def _src_dst(st: Statement, ctx: Context) -> Verdict:
    name, count, bits = st.value
    dst = {t for lay in ctx.instruction(_instr_of_page(ctx, st)) for t in lay.types if t.endswith("x16")}
    if name not in dst:
        return differ(f".{name} is not the reviewed destination format {_set(dst)}")
    m = re.fullmatch(r"b(\d+)x(\d+)", name)
    if m is None or (int(m.group(2)), int(m.group(1))) != (count, bits):
        return differ(f".{name} is not {count} {bits}-bit elements", PAGE)
    return agree(f".{name}: {count} {bits}-bit containers")


# ----------------------------------------------------------------------------- .num and registers

@judges("num-matrices")
def _num_matrices(st: Statement, ctx: Context) -> Verdict:
    x, n = st.value
    nums = _nums(ctx.instruction(st.subject))
    if x not in nums:
        return differ(f".x{x} is no .num of the reviewed {st.subject} ({_set({f'x{v}' for v in nums})})")
    if x != n:
        return differ(f".x{x} loads {x} matrices (the reviewed layouts' NUM), not {n}")
    return agree(f".x{x}: {n} matrices")


@judges("shape-nums")
def _shape_nums(st: Statement, ctx: Context) -> Verdict:
    lays = layouts_of(ctx, st.subject)
    if not lays:
        return _no_layout(st)
    want = _nums(lays)
    if st.value == want:
        return agree(f"the .num values of the reviewed {_shape(st.subject)}")
    return differ(f".{_shape(st.subject)} takes .x{', .x'.join(map(str, sorted(want)))} in the reviewed layouts")


@judges("registers-per-num")
def _registers_per_num(st: Statement, ctx: Context) -> Verdict:
    lays = ctx.instruction(st.subject)
    nums = sorted(_nums(lays))
    if len(st.value) != len(nums):
        return differ(f"{len(st.value)} counts for the {len(nums)} values of .num")
    said = dict(zip(nums, st.value))
    bad_doc, bad_fixed = [], []
    for lay in lays:
        for p in lay.domain.params:
            for n in p.values:
                if extent_at(lay.regs.count, {"NUM": n}) != said[n]:
                    bad_doc.append((lay, n))
                if extent_at(_effective(ctx, lay).regs.count, {"NUM": n}) != said[n]:
                    bad_fixed.append((lay, n))
    if not bad_fixed:
        return agree("registers per .num, as every reviewed layout")
    if not bad_doc:
        lay, n = bad_fixed[0]
        return known(f"{said[n]} register(s) at .x{n} is what the reviewed {lay.id} records as the doc's erratum; "
                     f"corrected: {extent_at(_effective(ctx, lay).regs.count, {'NUM': n})}")
    lay, n = bad_doc[0]
    return differ(f"the page gives .x{n} {said[n]} register(s); the reviewed {lay.id} has "
                  f"{extent_at(_effective(ctx, lay).regs.count, {'NUM': n})}")


@judges("register-bits")
def _register_bits(st: Statement, ctx: Context) -> Verdict:
    lays = layouts_of(ctx, st.subject)
    want = {REGISTER_BITS.get(lay.regs.type) for lay in lays}
    if want == {st.value}:
        return agree(f"{st.value}-bit registers, as the reviewed layouts")
    return differ(f"the reviewed layouts' registers are {', '.join(str(w) for w in sorted(want, key=lambda w: -1 if w is None else w))}-bit, not {st.value}")


def _layout_fact(st: Statement, ctx: Context, what: str, get: Any) -> Verdict:
    lay = _main(layouts_of(ctx, st.subject))
    if lay is None:
        return _no_layout(st)
    doc, fixed = get(lay), get(_effective(ctx, lay))
    if st.value == fixed:
        return agree(f"{what} {st.value}, as the reviewed {lay.id}" + (" corrects it" if doc != fixed else ""))
    if st.value == doc:
        return known(f"{what} {st.value} is the erratum the reviewed {lay.id} records (corrected: {fixed})")
    return differ(f"the page states {what} {st.value}, the reviewed {lay.id} {fixed}")


@judges("registers-per-matrix")
def _registers_per_matrix(st: Statement, ctx: Context) -> Verdict:
    return _layout_fact(st, ctx, "registers per matrix",
                        lambda lay: extent_at(lay.regs.count, {p.name: 1 for p in lay.domain.params}))


def _register_fact(what: str, get: Any) -> Any:
    """The judge of a register fact stated of a layout id (the fragment pages) or of an instruction's shape."""
    def judge(st: Statement, ctx: Context) -> Verdict:
        if st.subject in ctx.layouts or not layouts_of(ctx, st.subject):
            return against_layout(st, ctx, ctx.layouts.get(st.subject), what, lambda lay: st.value, get)
        return _layout_fact(st, ctx, what, get)
    return judge


judges("register-type")(_register_fact("register type", lambda lay: lay.regs.type))
judges("elements-per-register")(_register_fact("elements per register", lambda lay: lay.regs.elements_per_register))


@judges("container-bits")
def _container(st: Statement, ctx: Context) -> Verdict:
    return _layout_fact(st, ctx, "bits per element container",
                        lambda lay: lay.regs.element_bits or ELEMENT_BITS.get(lay.types[0]))


@judges("padding")
def _padding(st: Statement, ctx: Context) -> Verdict:
    data, container, pad = st.value
    if container - data != pad:
        return differ(f"{data}-bit data in a {container}-bit element leaves {container - data} bits of padding, not {pad}",
                      PAGE)
    src = set(_src_bits(ctx).values())
    if src and data not in src:
        return differ(f"no source format of the page has {data}-bit elements ({_bits(src)})", PAGE)
    return agree(f"{data}-bit data in {container} bits: {pad} bits of padding", PAGE)


@judges("warp-threads")
def _warp_threads(st: Statement, ctx: Context) -> Verdict:
    return _layout_fact(st, ctx, "threads", lambda lay: lay.threads)


@judges("thread-elements")
def _thread_elements(st: Statement, ctx: Context) -> Verdict:
    return _layout_fact(st, ctx, "elements per thread per matrix",
                        lambda lay: extent_at(lay.regs.count, {p.name: 1 for p in lay.domain.params})
                        * lay.regs.elements_per_register)


@judges("byte-name", "register-name")
def _names(st: Statement, ctx: Context) -> Verdict:
    k, n = st.value
    what = "element" if st.kind == "byte-name" else "register"
    if k != n:
        return differ(f"the {what}s are numbered from 0 in order: the name in place {k} is {k}, not {n}", PAGE)
    lay = _main(layouts_of(ctx, st.subject))
    if lay is None:
        return _no_layout(st)
    top = lay.regs.elements_per_register if st.kind == "byte-name" else \
        extent_at(_effective(ctx, lay).regs.count, {p.name: 1 for p in lay.domain.params})
    if n >= top:
        return differ(f"the reviewed {lay.id} has {top} {what}s per {'register' if what == 'element' else 'matrix'}: "
                      f"no {what} {n}")
    return agree(f"{what} {n} of {top}")


@judges("byte-order")
def _byte_order(st: Statement, ctx: Context) -> Verdict:
    lay = _main(layouts_of(ctx, st.subject))
    if lay is None:
        return _no_layout(st)
    (lo, lo_word), (hi, hi_word) = st.value
    want = (("e0", "LSB"), (f"e{lay.regs.elements_per_register - 1}", "MSB"))
    if ((lo, lo_word), (hi, hi_word)) == want:
        return agree(f"element e0 in the lowest bits, e{lay.regs.elements_per_register - 1} in the highest, as the reviewed "
                     f"{lay.id} numbers its {lay.regs.elements_per_register} elements")
    return differ(f"the reviewed {lay.id}'s element 0 is a register's lowest bits (its LSB), element "
                  f"{lay.regs.elements_per_register - 1} the highest (MSB); the page says {lo} {lo_word}, {hi} {hi_word}")


@judges("shape-types")
def _shape_types(st: Statement, ctx: Context) -> Verdict:
    lays = layouts_of(ctx, st.subject)
    if not lays:
        return _no_layout(st)
    want = frozenset(t for lay in lays for t in lay.types)
    if st.value == want:
        return agree(f"the types of the reviewed {_shape(st.subject)}")
    return differ(f".{_shape(st.subject)} takes {_set(want)} in the reviewed layouts, not {_set(st.value)}")


@judges("figure-of")
def _figure_of(st: Statement, ctx: Context) -> Verdict:
    if st.value == st.subject:
        return agree(f"the figure of the {_shape(st.subject)} the text before it describes", PAGE)
    return differ(f"the figure's caption names .{_shape(str(st.value))}; the text before it describes "
                  f".{_shape(st.subject)}", PAGE)


# ----------------------------------------------------------------------------- addresses

def _address_rows(ctx: Context, instr: str) -> tuple[int | None, list[Layout]]:
    lays = [lay for lay in ctx.instruction(instr) if (instr, str(lay.shape)) not in ADDRESS_EXEMPT]
    rows = {_memory_rows(lay) for lay in lays}
    return (rows.pop() if len(rows) == 1 else None), lays


@judges("addresses-per-matrix", "address-threads-per-matrix")
def _addresses(st: Statement, ctx: Context) -> Verdict:
    lays = ctx.instruction(st.subject)
    bad = [lay for lay in lays if _memory_rows(lay) != st.value]
    if not bad:
        return agree(f"{st.value}, the rows of each reviewed shape's matrix")
    return differ(f"a .{bad[0].shape} matrix has {_memory_rows(bad[0])} rows in the reviewed {bad[0].id}: "
                  f"{_memory_rows(bad[0])} addresses, not {st.value}")


@judges("address-range")
def _address_range(st: Statement, ctx: Context) -> Verdict:
    k, lo, hi = st.value
    rows, _ = _address_rows(ctx, st.subject)
    if rows is None:
        return differ("the reviewed shapes' matrices do not have one number of rows")
    want = ((k - 1) * rows, k * rows - 1)
    if (lo, hi) == want:
        return agree(f"matrix {k}'s {rows} rows")
    return differ(f"matrix {k}'s {rows} rows are addresses addr{want[0]}–addr{want[1]}, not addr{lo}–addr{hi}")


@judges("address-threads")
def _address_threads(st: Statement, ctx: Context) -> Verdict:
    j, (lo, hi) = st.value
    rows, lays = _address_rows(ctx, st.subject)
    threads = {lay.threads for lay in lays}
    if rows is None or len(threads) != 1:
        return differ("the reviewed shapes do not agree on a matrix's rows")
    want = (j * rows, j * rows + rows - 1)
    if (lo, hi) != want or hi >= threads.pop():
        return differ(f"column {j + 1} of the table gives matrix {j + 1}'s addresses: threads {want[0]}–{want[1]}, not "
                      f"{lo}–{hi}")
    return agree(f"threads {lo}–{hi}: matrix {j + 1}'s rows")


@judges("address-cell")
def _address_cell(st: Statement, ctx: Context) -> Verdict:
    num, j, rng = st.value
    rows, lays = _address_rows(ctx, st.subject)
    if num not in _nums(lays) or rows is None:
        return differ(f".x{num} is no .num of the reviewed layouts")
    has = j * rows < rows * num
    want = (j * rows, j * rows + rows - 1) if has else None
    if rng == want:
        return agree(f".x{num}: " + (f"addr{want[0]}–addr{want[1]}" if want else "no address") + f" from column {j + 1}")
    return differ(f".x{num} loads {num} matrices of {rows} rows: column {j + 1} gives "
                  + (f"addr{want[0]}–addr{want[1]}" if want else "no address") + ", not "
                  + (f"addr{rng[0]}–addr{rng[1]}" if rng else "none"))


# ----------------------------------------------------------------------------- the fragments (maps, both engines)

def _fragment(ctx: Context, st: Statement) -> tuple[sm.Fragment, Layout] | Verdict:
    lay = _main(layouts_of(ctx, st.subject))
    if lay is None:
        return _no_layout(st)
    key = ("fragment", lay.id)
    if key not in ctx.memo:  # the map as the reviewed record has it: the correction where there is one
        ctx.memo[key] = sm.Fragment(_effective(ctx, lay), _first(lay), _trans_only(ctx, lay))
    return ctx.memo[key], lay



@judges("row-threads")
def _row_threads(st: Statement, ctx: Context) -> Verdict:
    got = _fragment(ctx, st)
    if isinstance(got, Verdict):
        return got
    f, lay = got
    n, which = st.value
    r = sm.groups_hold_lines(f, n, which, ctx.timeout)
    return by_engines(r, f"in the reviewed {lay.id}, each {which} is held by one group of {n} consecutive lanes",
                       f"in the reviewed {lay.id}, a {which} is not held by a group of {n} consecutive lanes")


@judges("thread-cells")
def _thread_cells(st: Statement, ctx: Context) -> Verdict:
    got = _fragment(ctx, st)
    if isinstance(got, Verdict):
        return got
    f, lay = got
    which, lines, run = st.value
    if which not in ("row", "column"):
        return differ(f"{which!r} is neither rows nor columns")
    r = sm.lane_cells(f, which, lines, run, ctx.timeout)
    what = f"{run} consecutive {'columns' if which == 'row' else 'rows'} across " if run else ""
    return by_engines(r, f"in the reviewed {lay.id}, each lane holds {what}{lines} {which}(s)",
                       f"in the reviewed {lay.id}, a lane does not hold {what}{lines} {which}(s)")


@judges("first-fragment")
def _first_fragment(st: Statement, ctx: Context) -> Verdict:
    got = _fragment(ctx, st)
    if isinstance(got, Verdict):
        return got
    f, lay = got
    lane, k = st.value
    cols = int(f.cols[f.ok].max()) + 1 if f.ok.any() else 1
    run = len({int(f.cols[0, i]) for i in range(f.n) if f.ok[0, i] and int(f.rows[0, i]) == int(f.rows[0, 0])})
    start = (k - 1) * run
    cell = (start // cols, start % cols)
    r = sm.point_is(f, lane, 0, cell, ctx.timeout)
    return by_engines(r, f"lane {lane}'s first element is the start of fragment {k} of the reviewed {lay.id}",
                       f"lane {lane}'s first element is not where fragment {k} of the reviewed {lay.id} starts")


@judges("register-matrix")
def _register_matrix(st: Statement, ctx: Context) -> Verdict:
    lay = _main(layouts_of(ctx, st.subject))
    if lay is None:
        return _no_layout(st)
    num, k, reg = st.value
    if num not in _nums([lay]):
        return differ(f".x{num} is no .num of the reviewed {lay.id}")
    if k > num:
        return differ(f".x{num} loads {num} matrices: there is no matrix {k}")
    per = lay.regs.elements_per_register * extent_at(_effective(ctx, lay).regs.count, {"NUM": 1})
    f = sm.Fragment(_effective(ctx, lay), {"NUM": num}, False)
    r = sm.registers_hold_matrices(f, per, _memory_rows(lay), reg - 1, k - 1, ctx.timeout)
    return by_engines(r, f"at .x{num}, register {reg - 1} of the reviewed {lay.id} holds matrix {k}",
                       f"at .x{num}, register {reg - 1} of the reviewed {lay.id} does not hold matrix {k}")


@judges("trans-means")
def _trans_means(st: Statement, ctx: Context) -> Verdict:
    from ..layout.reshape import relabel
    pairs = []
    for lay in ctx.instruction(st.subject):
        if lay.variant == "trans":
            plains = [x for x in ctx.instruction(st.subject) if x.shape == lay.shape and not x.variant
                      and x.types == lay.types]
            if plains:
                pairs.append((plains[0], lay))
    if not pairs:
        return differ(f"no reviewed {st.subject} shape has both a plain and a .trans layout")
    if st.value not in ("column-major", "row-major"):
        return differ(f"{st.value!r} is no format (row-major, column-major)")
    for plain, trans in pairs:
        a = sm.Fragment(plain, {"NUM": 1}).map
        b = sm.Fragment(trans, {"NUM": 1}).map
        names = [d.name for d in a.outputs]
        if st.value == "column-major":
            a = relabel(a, outputs={names[0]: names[1], names[1]: names[0]})
        r = same_map(b, a, ctx.timeout, ("the .trans layout", "the plain one read " + st.value))
        if r.status != "proved":
            return by_engines(r, "", f"the reviewed {trans.id} is not {plain.id} read {st.value}")
    return agree(f"each reviewed .trans layout is its plain one read {st.value} (both engines)")


@judges("row-bytes")
def _row_bytes(st: Statement, ctx: Context) -> Verdict:
    lay = _main(layouts_of(ctx, st.subject))
    if lay is None:
        return _no_layout(st)
    _, cols = _per_matrix(ctx, lay)
    bits = ELEMENT_BITS.get(lay.types[0], 0)
    if cols * bits // 8 == st.value:
        return agree(f"a row of {cols} {bits}-bit elements is {st.value} bytes")
    return differ(f"a row of the reviewed {lay.id} is {cols} {bits}-bit elements: {cols * bits // 8} bytes, not {st.value}")
