"""Judges of the examples on the ldmatrix, stmatrix and movmatrix pages (``verify.catalog.statements_matrix``).

An example's instruction is held against the reviewed layouts it loads (shape, ``.num``, ``.trans``, types, its
register count and type), and the example's declarations and comments against its own instruction.
"""
from __future__ import annotations

from typing import Any

from ..layout.family import extent_at
from ..layout.model import Layout
from ..layout.statements import Statement
from ..layout.types import ELEMENT_BITS
from .statement_base import PAGE, REVIEWED, Context, Verdict, agree, differ, judges, known
from .statements_matrix import _format_bits, _nums, _per_matrix, _set, _src_bits


def _stated(ctx: Context, kind: str, subject: str) -> tuple[Statement, ...]:
    """The page's statement of ``kind`` about ``subject`` (to be named by a finding that contradicts it)."""
    return tuple(s for s in ctx.statements if s.kind == kind and s.subject == subject)[:1]


def _example_of(ctx: Context, st: Statement) -> tuple[Any, Layout | None, Layout | None]:
    """The example's instruction (shape, num, trans, types) and the reviewed layout it loads (and its correction)."""
    ins = next((s.value for s in ctx.statements if s.kind == "example" and s.subject == st.subject and s.value), None)
    if ins is None:
        return None, None, None
    shape, num, trans, types = ins
    instr = st.subject.split(".example")[0]
    typed = [lay for lay in ctx.instruction(instr) if str(lay.shape) == shape and types and types[0] in lay.types]
    cands = [lay for lay in typed if instr == "movmatrix" or (lay.variant == "trans") == trans] or typed
    return ins, (cands[0] if cands else None), (ctx.fixed(cands[0]) or cands[0]) if cands else None


@judges("example")
def _example(st: Statement, ctx: Context) -> Verdict:
    shape, num, trans, types = st.value
    instr = st.subject.split(".example")[0]
    lays = [lay for lay in ctx.instruction(instr) if str(lay.shape) == shape]
    if not lays:
        return differ(f"{instr} has no reviewed .{shape} layout")
    typed = [lay for lay in lays if types and types[0] in lay.types]
    if not typed:
        return differ(f".{shape} takes {_set({t for lay in lays for t in lay.types})} in the reviewed layouts, "
                      f"not .{types[0] if types else '?'}")
    if instr != "movmatrix" and not any((lay.variant == "trans") == trans for lay in typed):
        return differ(f".{shape} {'has no .trans' if trans else 'needs .trans'} in the reviewed layouts")
    if instr == "movmatrix" and not trans:
        return differ("movmatrix without its mandatory .trans", PAGE)
    if instr != "movmatrix" and num not in _nums(typed):
        return differ(f".x{num} is no .num of the reviewed .{shape}")
    for extra in types[1:]:
        if _format_bits(extra) is None or extra not in _src_bits(ctx):
            return differ(f".{extra} is not a source format of the page's syntax", PAGE)
    return agree(f"a valid {instr} of the reviewed layouts")


@judges("example-registers")
def _example_registers(st: Statement, ctx: Context) -> Verdict:
    ins, lay, fixed = _example_of(ctx, st)
    if ins is None or lay is None or fixed is None:
        return differ("the example's instruction is not a reviewed layout", PAGE)
    count = st.value
    instr = st.subject.split(".example")[0]
    if instr == "movmatrix":
        want = sum(extent_at(x.regs.count, {}) for x in ctx.instruction("movmatrix"))
        doc = want
    else:
        env = {"NUM": ins[1]}
        want, doc = extent_at(fixed.regs.count, env), extent_at(lay.regs.count, env)
    if count == want:
        return agree(f"{count} register(s), as the reviewed {lay.id}")
    if count == doc:
        return known(f"{count} register(s) is the doc's count the reviewed {lay.id} corrects to {want}")
    return differ(f"the example names {count} register(s); the reviewed {fixed.id} at .x{ins[1]} has {want}")


@judges("example-declared")
def _example_declared(st: Statement, ctx: Context) -> Verdict:
    name, count, used = st.value
    want = tuple(f"{name}{k}" for k in range(count)) if count > 1 or any(u != name for u in used) else (name,)
    if tuple(used) == want:
        return agree(f"declares the {count} register(s) the instruction names", PAGE)
    return differ((f"declares {name}<{count}>" if count > 1 else f"declares {name}") + f", the instruction names "
                  f"{', '.join(used) or 'none of them'}", PAGE, _stated(ctx, "example-registers", st.subject))


@judges("example-register-type")
def _example_register_type(st: Statement, ctx: Context) -> Verdict:
    _, lay, _ = _example_of(ctx, st)
    if lay is None:
        return differ("the example's instruction is not a reviewed layout", PAGE)
    if st.value == lay.regs.type:
        return agree(f".{st.value} registers, as the reviewed {lay.id}")
    return differ(f"declared .{st.value}; the reviewed {lay.id}'s registers are .{lay.regs.type}")


@judges("example-address-bits", consistent=True)
def _example_address(st: Statement, ctx: Context) -> Verdict:
    if st.value in (32, 64):
        return agree(f"{st.value}-bit addresses", PAGE)
    return differ(f"an address register of {st.value} bits (shared-memory addresses are 32 or 64 bits)", PAGE)


@judges("example-count")
def _example_count(st: Statement, ctx: Context) -> Verdict:
    ins, _, _ = _example_of(ctx, st)
    if ins is None:
        return differ("the example's instruction does not read", PAGE)
    if st.value == ins[1]:
        return agree(f"{st.value} matrices: .x{ins[1]}", PAGE)
    return differ(f"the comment says {st.value} matrices, the instruction loads .x{ins[1]}", PAGE,
                  _stated(ctx, "example", st.subject))


@judges("example-shape")
def _example_shape(st: Statement, ctx: Context) -> Verdict:
    ins, lay, _ = _example_of(ctx, st)
    if ins is None or lay is None:
        return differ("the example's instruction is not a reviewed layout", PAGE)
    want = _per_matrix(ctx, lay)
    if st.value == want:
        return agree(f"{want[0]}x{want[1]} matrices: .{ins[0]}")
    return differ(f"the comment says {st.value[0]}x{st.value[1]} matrices; .{ins[0]} loads {want[0]}x{want[1]} ones",
                  REVIEWED, _stated(ctx, "example", st.subject))


@judges("example-bits")
def _example_bits(st: Statement, ctx: Context) -> Verdict:
    ins, lay, _ = _example_of(ctx, st)
    if ins is None or lay is None:
        return differ("the example's instruction is not a reviewed layout", PAGE)
    types = ins[3]
    want = _src_bits(ctx).get(types[-1]) if len(types) > 1 else ELEMENT_BITS.get(types[0])
    if st.value == want:
        return agree(f"{want}-bit elements: .{'.'.join(types)}")
    return differ(f"the comment says {st.value}-bit elements; .{'.'.join(types)} holds {want}-bit ones", REVIEWED,
                  _stated(ctx, "example", st.subject))


@judges("example-trans")
def _example_trans(st: Statement, ctx: Context) -> Verdict:
    ins, _, _ = _example_of(ctx, st)
    if ins is None:
        return differ("the example's instruction does not read", PAGE)
    if st.value == ins[2]:
        return agree("the comment and the instruction agree on .trans", PAGE)
    return differ(f"the comment says the matrix is {'transposed' if st.value else 'not transposed'}, the instruction "
                  f"{'has' if ins[2] else 'lacks'} .trans", PAGE, _stated(ctx, "example", st.subject))

