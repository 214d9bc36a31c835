"""Judges of what the other cited pages state (``verify.catalog.statements_other``): wmma's fragment tables against the
reviewed wmma layouts (``specs/wmma.*``), Table 37's selector values against the block-scale layouts' parameters
(``specs/mma.block_scale.*``), the data-path layouts' M and lane alignment against ``specs/tcgen05.datapath.toml``,
and SFA_ID's values against ``specs/tcgen05.mma.block_scale.toml``."""
from __future__ import annotations

from typing import Any, Callable

from ..layout.family import extent_at
from ..layout.ids import canonical_types
from ..layout.model import Layout
from ..layout.statements import Statement
from .statement_base import Context, Verdict, agree, differ, judges, known


def _wmma_layouts(ctx: Context, subject: str) -> list[Layout]:
    _, shape, op, types = subject.split(":")
    want = canonical_types(types.split("_")) if types else ""
    return [lay for lay in ctx.doc_layouts() if lay.instruction == "wmma" and (shape == "*" or str(lay.shape) == shape)
            and lay.operand == op and canonical_types(lay.types) == want]


def _wmma(st: Statement, ctx: Context, what: str, get: Callable[[Layout], Any]) -> Verdict:
    lays = _wmma_layouts(ctx, st.subject)
    if not lays:
        return differ(f"no reviewed wmma layout of {st.subject.split(':', 1)[1]} (shape:operand:types)")
    wrong: list[tuple[Layout, Any]] = []
    erratum: list[tuple[Layout, Any]] = []
    for lay in lays:
        fixed = ctx.fixed(lay) or lay
        if st.value == get(fixed):
            continue
        (erratum if st.value == get(lay) else wrong).append((lay, get(fixed)))
    if wrong:
        lay, want = wrong[0]
        return differ(f"the reviewed {lay.id} has {what} {want}, not {st.value}")
    if erratum:
        lay, want = erratum[0]
        return known(f"{what} {st.value} is the erratum the reviewed {lay.id} records (corrected: {want})")
    return agree(f"{what} {st.value}, as the reviewed " + ", ".join(lay.id for lay in lays))


@judges("wmma-registers")
def _wmma_registers(st: Statement, ctx: Context) -> Verdict:
    return _wmma(st, ctx, "registers", lambda lay: extent_at(lay.regs.count, {}))


@judges("wmma-register-type")
def _wmma_register_type(st: Statement, ctx: Context) -> Verdict:
    return _wmma(st, ctx, "register type", lambda lay: lay.regs.type)


@judges("wmma-per-register")
def _wmma_per_register(st: Statement, ctx: Context) -> Verdict:
    return _wmma(st, ctx, "elements per register", lambda lay: lay.regs.elements_per_register)


# the block-scale layouts of each .scale_vec_size (specs/mma.block_scale.*)
VEC_LAYOUTS = {"1X": ("mma.block_scale.m16n8k32.SFA.ue8m0", "mma.block_scale.m16n8k32.SFB.ue8m0"),
               "2X": ("mma.block_scale.m16n8k64.SFA.ue8m0", "mma.block_scale.m16n8k64.SFB.ue8m0"),
               "4X": ("mma.block_scale.m16n8k64.SFA.ue4m3", "mma.block_scale.m16n8k64.SFB.ue4m3")}


@judges("selector-values")
def _selector_values(st: Statement, ctx: Context) -> Verdict:
    _, vec, comp = st.subject.split(":")
    param = comp.upper().replace("-", "_")
    values = {v for lid in VEC_LAYOUTS.get(vec, ()) for lay in [ctx.layouts.get(lid)] if lay is not None
              for p in lay.domain.params if p.name == param for v in p.values}
    if not values:
        return differ(f"no reviewed {vec} block-scale layout has the selector {comp}")
    if st.value == frozenset(values):
        return agree(f"{comp} in {sorted(values)} for .scale_vec::{vec}, as the reviewed layouts")
    return differ(f"{comp} takes {sorted(values)} for .scale_vec::{vec} in the reviewed layouts, not {sorted(st.value)}")


@judges("datapath-m")
def _datapath_m(st: Statement, ctx: Context) -> Verdict:
    m = ctx.maps.get(st.subject)
    if m is None:
        return differ(f"no reviewed {st.subject}")
    rows = extent_at(m.map.inputs[0].size, {})
    if rows == st.value:
        return agree(f"M = {rows}, the rows of the reviewed {m.id}")
    return differ(f"the reviewed {m.id} has M = {rows} rows, not {st.value}")


@judges("datapath-base")
def _datapath_base(st: Statement, ctx: Context) -> Verdict:
    m = ctx.maps.get(st.subject)
    if m is None:
        return differ(f"no reviewed {st.subject}")
    bases = frozenset(v for p in m.params if p.name == "BASE" for v in p.values) or frozenset({0})
    if st.value == bases:
        return agree(f"lane alignment {' or '.join(map(str, sorted(bases)))}, as the reviewed {m.id}")
    return differ(f"the reviewed {m.id} starts at lane {' or '.join(map(str, sorted(bases)))}, not "
                  f"{' or '.join(map(str, sorted(st.value)))}")


@judges("sfa-ids")
def _sfa_ids(st: Statement, ctx: Context) -> Verdict:
    vec = st.subject.split(":")[1]
    values = {v for lay in ctx.doc_layouts() if lay.instruction.startswith("tcgen05.mma")
              for p in lay.domain.params if p.name == f"SFA_ID_{vec}" for v in p.values}
    if not values:
        return differ(f"no reviewed layout gives the SFA_ID values of .scale_vec::{vec}")
    if st.value in values:
        return agree(f"SFA_ID {st.value} is valid for .scale_vec::{vec} ({sorted(values)}), as the reviewed layouts")
    return differ(f"SFA_ID takes {sorted(values)} for .scale_vec::{vec} in the reviewed layouts, not {st.value}")


__all__: list[str] = []
