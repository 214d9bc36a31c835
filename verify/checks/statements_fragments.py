"""Judges of the register-fragment sections shown only as figures (``verify.catalog.statements_fragments``): wgmma,
sparse wgmma, tcgen05.ld/st.  Each fact is compared with the reviewed layout of the same id (``specs/wgmma.*``,
``specs/wgmma.sp.*``, ``specs/tcgen05.{ld,st}.*``) at every member of its family: register counts evaluated at every
N or .num, element lists expanded, sets of N as sets."""
from __future__ import annotations

from typing import Any

from ..errors import SpecError
from ..formula import FormulaError
from ..layout.elements import element_list_at
from ..layout.family import extent_at
from ..layout.model import Layout
from ..layout.statements import Statement
from .statement_base import (PAGE, Context, Verdict, _expr_values, _per_member, against_layout, agree, differ, judges,
                             known_erratum, members)

# SP-1 (docs/catalog.md): the sparse k64 metadata register "containing 16 4-bit vectors", 64 bits in a .b32
for _subject in ("section:asynchronous-warpgroup-level-matrix-fragment-sparse-wgmma-64n64",
                 "section:Matrix Fragments for sparse wgmma.mma_async.m64nNk64"):
    known_erratum("metadata-vectors", _subject, 16, "SP-1: a .b32 register holds 8 4-bit vectors")


# ----------------------------------------------------------------------------- register fragments

@judges("layout")
def _layout(st: Statement, ctx: Context) -> Verdict:
    if st.value in ctx.layouts:
        return agree(f"the reviewed specs record {st.value}")
    return differ(f"no reviewed spec records {st.value}: the page states a layout that is new (an instruction, "
                  "shape, operand or type the reviewed specs do not have)")


@judges("registers")
def _registers(st: Statement, ctx: Context) -> Verdict:
    def page(lay: Layout) -> Any:
        v = _expr_values(str(st.value), lay)
        return "!" + v if isinstance(v, str) else v
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "registers", page,
                          lambda lay: _per_member(lay, lambda x, env: extent_at(x.regs.count, env)))


@judges("elements-total")
def _elements_total(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "elements in its registers",
                          lambda lay: [st.value] * len(members(lay)),
                          lambda lay: _per_member(lay, lambda x, env: extent_at(x.regs.count, env) * x.regs.elements_per_register))


@judges("element-types")
def _element_types(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "element types", lambda lay: st.value,
                          lambda lay: frozenset(lay.types))


@judges("matrix")
def _matrix(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "the matrix", lambda lay: st.value,
                          lambda lay: lay.operand)


def _elements_of(text: str, lay: Layout) -> list[tuple[str, ...]] | str:
    params = tuple(p.name for p in lay.domain.params)
    try:
        return [element_list_at(text, env, params) for env in members(lay)]
    except (FormulaError, SpecError, ZeroDivisionError, ValueError, ArithmeticError, KeyError) as err:
        return f"the element list {text!r} does not read ({err})"


@judges("elements")
def _elements(st: Statement, ctx: Context) -> Verdict:
    def page(lay: Layout) -> Any:
        v = _elements_of(str(st.value), lay)
        return "!" + v if isinstance(v, str) else v

    def reviewed(lay: Layout) -> Any:
        v = _elements_of(lay.regs.elements_text or "", lay)
        return None if isinstance(v, str) else v
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "the element list", page, reviewed)


@judges("params")
def _params(st: Statement, ctx: Context) -> Verdict:
    def reviewed(lay: Layout) -> Any:
        return frozenset(v for p in lay.domain.params for v in p.values)
    return against_layout(st, ctx, ctx.layouts.get(st.subject), "the parameter's values", lambda lay: st.value, reviewed)


@judges("shape", consistent=True)
def _shape(st: Statement, ctx: Context) -> Verdict | None:
    lays = ctx.anchored(st.subject)
    if not lays:
        return None
    shapes = {str(lay.shape) for lay in lays}
    if st.value in shapes:
        return agree(f"the reviewed specs of this section state .{st.value}")
    return differ(f"the page names the shape .{st.value}, the reviewed specs of this section "
                  f"{', '.join('.' + s for s in sorted(shapes))}")


@judges("operand")
def _operand(st: Statement, ctx: Context) -> Verdict:
    op, where = st.value
    if where == "shared":
        if op in ("A", "B"):
            return agree(f"{op} read from shared memory (its layout is the shared-memory page's)", PAGE)
        return differ(f"operand {op} is no multiplicand: it is not read from shared memory", PAGE)
    lays = ctx.anchored(st.subject)
    if not lays:
        return agree(f"operand {op}; no reviewed spec records this section", PAGE)
    operands = {lay.operand for lay in lays}
    if op in operands:
        return agree(f"the reviewed specs of this section state operand {op}")
    return differ(f"the page names operand {op} in registers, the reviewed specs of this section state "
                  f"{', '.join(sorted(operands))}")


_HEADER = {"A": "atype", "B": "btype", "C": "ctype", "D": "dtype"}


@judges("type-header")
def _type_header(st: Statement, ctx: Context) -> Verdict:
    op = st.subject.removeprefix("operand:")
    want = _HEADER.get(op)
    if st.value == want or (op == "D" and st.value == "ctype"):
        return agree(f"the table of operand {op} is headed .{st.value}", PAGE)
    return differ(f"the table of operand {op} (its bullet) is headed .{st.value}, not .{want}", PAGE)


@judges("sparse-chunk")
def _sparse_chunk(st: Statement, ctx: Context) -> Verdict:
    lay = ctx.layouts.get(st.subject)
    if lay is None or not lay.sparse:
        return differ(f"no reviewed sparse layout {st.subject}")
    kept, chunk = lay.sparse["kept"], lay.sparse["chunk"]
    said, out_of, each = st.value
    held = lay.regs.elements_per_register if each else lay.regs.elements_per_register * extent_at(lay.regs.count, {})
    if said != held or out_of % chunk or said * chunk != kept * out_of:
        return differ(f"the reviewed {lay.id} keeps {kept} of each {chunk} elements: {held} non-zero elements come out of "
                      f"{held * chunk // kept}, not {said} of {out_of}")
    return agree(f"{said} of {out_of}: {kept} of each {chunk}, as the reviewed {lay.id}")


def _sparse_of(ctx: Context, subject: str) -> Layout | None:
    return next((lay for lay in ctx.anchored(subject) if lay.sparse), None)


@judges("metadata-register")
def _metadata_register(st: Statement, ctx: Context) -> Verdict:
    if st.value == "b32":
        return agree("a .b32 metadata register")
    return differ(f"the metadata operand is a .b32 register, not .{st.value}")


@judges("metadata-bits")
def _metadata_bits(st: Statement, ctx: Context) -> Verdict:
    lay = _sparse_of(ctx, st.subject)
    if lay is None:
        return differ("no reviewed sparse layout of this section")
    bits, indices, width = st.value
    kept, chunk = lay.sparse["kept"], lay.sparse["chunk"]
    per_index = lay.sparse.get("index_bits", kept * (chunk - 1).bit_length()) // kept  # the reviewed metadata's
    if width != chunk:
        return differ(f"the reviewed {lay.id} keeps {kept} of each {chunk} elements: {chunk}-wide chunks, not {width}")
    if indices > kept:
        return differ(f"a chunk of the reviewed {lay.id} keeps {kept} element(s), not {indices}")
    if bits != indices * per_index:
        return differ(f"{indices} index(es) of {per_index} bits (the reviewed {lay.id}'s metadata) take "
                      f"{indices * per_index} bits, not {bits}")
    return agree(f"{indices} index(es) of {per_index} bits into a {chunk}-wide chunk, as the reviewed {lay.id}")


@judges("metadata-vectors")
def _metadata_vectors(st: Statement, ctx: Context) -> Verdict:
    bits = next((s.value[0] for s in ctx.statements if s.kind == "metadata-bits" and s.subject == st.subject and s.value),
                None)
    if bits is None:
        return differ("the vectors' bits do not read", PAGE)
    if st.value * bits > 32:
        return differ(f"a .b32 register cannot hold {st.value} {bits}-bit vectors ({st.value * bits} bits)", PAGE)
    lay = _sparse_of(ctx, st.subject)
    if lay is not None and st.value * bits != 32:
        return differ(f"{st.value} {bits}-bit vectors fill {st.value * bits} of the register's 32 bits", PAGE)
    return agree(f"{st.value} {bits}-bit vectors fill the .b32 register", PAGE)


def _tmem_layout(ctx: Context, subject: str) -> Layout | None:
    return next(iter(ctx.anchored(subject)), None)


@judges("tmem-registers")
def _tmem_registers(st: Statement, ctx: Context) -> Verdict:
    lay = _tmem_layout(ctx, st.subject)
    text = "NUM" if str(st.value).lower() == "num" else str(st.value)

    def page(x: Layout) -> Any:
        v = _expr_values(text, x)
        return "!" + v if isinstance(v, str) else v
    return against_layout(st, ctx, lay, "registers", page,
                          lambda x: _per_member(x, lambda y, env: extent_at(y.regs.count, env)))


@judges("tmem-register-type")
def _tmem_register_type(st: Statement, ctx: Context) -> Verdict:
    return against_layout(st, ctx, _tmem_layout(ctx, st.subject), "register type", lambda lay: st.value,
                          lambda lay: lay.regs.type)


@judges("tmem-instruction")
def _tmem_instruction(st: Statement, ctx: Context) -> Verdict:
    base, suffixes = st.value
    names = {lay.instruction for lay in ctx.anchored(st.subject)}
    said = {f"{base}.{x}" for x in suffixes}
    if names and said == names:
        return agree(f"{', '.join(sorted(names))}, as the reviewed layouts of this section")
    return differ(f"{base}{{.{', .'.join(sorted(suffixes))}}} is not the reviewed instructions "
                  f"{', '.join(sorted(names)) or 'of this section'}")


@judges("tmem-lanes")
def _tmem_lanes(st: Statement, ctx: Context) -> Verdict:
    def rows(lay: Layout) -> Any:
        return _per_member(lay, lambda x, env: extent_at(x.codomain.rows, env))
    return against_layout(st, ctx, _tmem_layout(ctx, st.subject), "Tensor Memory lanes",
                          lambda lay: [st.value] * len(members(lay)), rows)


@judges("tmem-bits")
def _tmem_bits(st: Statement, ctx: Context) -> Verdict:
    def bits(lay: Layout) -> Any:  # the bits each lane moves per .num: (32-bit columns x accesses) / NUM
        x2 = str(lay.shape).endswith("x2")
        return _per_member(lay, lambda x, env: extent_at(x.codomain.cols, env) * 32 // env.get("NUM", 1) // (2 if x2 else 1))
    return against_layout(st, ctx, _tmem_layout(ctx, st.subject), "bits per lane and .num",
                          lambda lay: [st.value] * len(members(lay)), bits)


