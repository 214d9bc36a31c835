"""The tcgen05 zero-column mask descriptor (``tcgen05.zero_column.*``) as CuTe's header states it.

Part of the ``cute-text`` reference (CUTLASS CuTe's origin: the headers of the installed nvidia-cutlass wheel, read
as text, never compiled).  ``cute/arch/mma_sm100_desc.hpp`` states the descriptor twice:

* ``union MaskAndShiftB``'s anonymous struct: ``uint8_t start_count_ [4]``, then the ``uint32_t`` bit-fields
  ``first_span_ : 4``, an unnamed ``: 3``, ``nzm_ : 1``, ``skip_span_ : 8``, ``use_span_ : 8``, ``shift_ : 6`` and an
  unnamed ``: 2``.  ``struct_fields`` lays them out by a closed grammar of C declarations (``TYPE NAME;``,
  ``TYPE NAME [N];``, ``TYPE [NAME] : W, ...;`` of the fixed-width integer types) and the Itanium C++ ABI's rules
  (what GCC, Clang and NVCC follow): a member or array at the next multiple of its type's width; a bit-field at the
  next bit where it does not cross a unit of its type's width, its type's next unit otherwise; an unnamed one
  pads the same way (a zero-width one ends the unit).  The fields from the first to the last named one, unnamed
  padding between them included (Table 45's reserved bits 36-38), their bits counted in order, are
  ``tcgen05.zero_column.fields``' ``bit -> position``; trailing padding (CuTe's ``: 2``, bits 62-63, past the
  table's last field) is not counted.
* ``make_column_zero_mask<ShapeType, FLT_S, CTA_M, CTA_N>``: ``int step_q = CTA_M == 128 ? CTA_N / 1 : CTA_M == 64 ?
  CTA_N / 2 : CTA_M == 32 ? CTA_N / 4 : 0;`` (a chain of ``CTA_M == LITERAL ? EXPR :``, each ``EXPR`` evaluated by
  ``cexpr`` with ``CTA_N``), the loop ``for (int mask_iter = 0; mask_iter < int(EXPR); ++mask_iter)`` (``EXPR`` with
  ``CTA_N`` and ``step_q``: the number of sub-masks) that fills ``start_count_[mask_iter]`` and ``first_span_``'s bit
  ``mask_iter``, and ends with ``cta_q += step_q;``: sub-mask ``i`` starts ``i * step_q`` columns into the CTA's
  tile and its bit ``j`` is the column after ``j`` more, so ``(sub, bit) -> i * step_q + j`` for each M
  (``tcgen05.zero_column.coverage.m128/.m64/.m32``), a member per N of the spec.

Anything outside the grammar is a finding at its header line.  (CuTe's comment on ``nzm_``, "0 = Enable the mask.
1 = Disable the mask.", is the other way round from the page, where 0 gives the all-0 mask, and from CuTe's own
``make_column_zero_mask``, which sets ``nzm = 0`` where no column is zeroed: a comment, not read here; recorded in
docs/references.md.)
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from ...layout.corrections import in_use_of
from ...layout.model import MapLayout
from . import cexpr
from .common import Evaluated
from .pyfunc import Refused

HEADER = "cute/arch/mma_sm100_desc.hpp"
UNION, FUNC = "MaskAndShiftB", "make_column_zero_mask"
FIELDS_SPEC = "tcgen05.zero_column.fields"
COVERAGE_SPECS = {128: "tcgen05.zero_column.coverage.m128", 64: "tcgen05.zero_column.coverage.m64",
                  32: "tcgen05.zero_column.coverage.m32"}
WIDTHS = {"uint8_t": 8, "int8_t": 8, "uint16_t": 16, "int16_t": 16, "uint32_t": 32, "int32_t": 32,
          "uint64_t": 64, "int64_t": 64}
_IDENT = r"[A-Za-z_]\w*"
_DECLARATOR = re.compile(rf"^(?:(?P<arr>{_IDENT})\s*\[\s*(?P<n>\w+)\s*\]|(?P<bf>{_IDENT})?\s*:\s*(?P<w>\w+)|"
                         rf"(?P<plain>{_IDENT}))$")
_STEP = re.compile(r"\bint\s+step_q\s*=(?P<expr>[^;]*);")
_CASE = re.compile(r"\s*CTA_M\s*==\s*(?P<m>\d+)\s*\?(?P<then>[^?:]*):")
_LOOP = re.compile(r"for\s*\(\s*int\s+mask_iter\s*=\s*0\s*;\s*mask_iter\s*<\s*int\s*\((?P<count>[^;]*)\)\s*;"
                   r"\s*\+\+mask_iter\s*\)")


@dataclass(frozen=True)
class CField:
    """One member of a C struct, laid out: ``name`` ('' for unnamed padding; ``name[i]`` for an array's
    elements), its first bit and width, and its line."""

    name: str
    lo: int
    bits: int
    line: int


def _line(text: str, pos: int, base: int) -> int:
    return base + text.count("\n", 0, pos)


def _literal(s: str, file: str, line: int) -> int:
    if not re.fullmatch(r"\d+", s):
        raise Refused(f"{s!r} is no decimal width or length", file, line)
    return int(s)


def struct_fields(body: str, file: str = HEADER, first_line: int = 1) -> list[CField]:
    """The members of a C struct body (comments already blanked), laid out as the Itanium ABI does (module
    docstring); ``first_line``: the line ``body`` starts on.  ``Refused`` outside the grammar."""
    out: list[CField] = []
    bit = 0
    pos = 0
    for decl in body.split(";"):
        line = _line(body, pos + len(decl) - len(decl.lstrip()), first_line)
        pos += len(decl) + 1
        if not decl.strip():
            continue
        m = re.match(rf"\s*(?P<type>{_IDENT})\s+(?P<rest>.*)$", decl, re.S)
        if m is None or m.group("type") not in WIDTHS:
            raise Refused(f"{decl.strip()[:40]!r} is no declaration of a fixed-width integer type "
                          f"({', '.join(WIDTHS)})", file, line)
        unit = WIDTHS[m.group("type")]
        for d in m.group("rest").split(","):
            d = d.strip()
            g = _DECLARATOR.match(d)
            if g is None:
                raise Refused(f"{d!r} is no declarator (NAME, NAME[N], [NAME] : WIDTH)", file, line)
            if g.group("w") is not None:
                w = _literal(g.group("w"), file, line)
                if w > unit:
                    raise Refused(f"a {w}-bit field of a {unit}-bit type", file, line)
                if w == 0:
                    if g.group("bf"):
                        raise Refused(f"a named zero-width bit-field {g.group('bf')}", file, line)
                    bit = -(-bit // unit) * unit
                    continue
                if bit // unit != (bit + w - 1) // unit:
                    bit = -(-bit // unit) * unit
                out.append(CField(g.group("bf") or "", bit, w, line))
                bit += w
                continue
            bit = -(-bit // unit) * unit
            if g.group("arr") is not None:
                n = _literal(g.group("n"), file, line)
                for i in range(n):
                    out.append(CField(f"{g.group('arr')}[{i}]", bit, unit, line))
                    bit += unit
            else:
                out.append(CField(g.group("plain"), bit, unit, line))
                bit += unit
    return out


def table_fields(fields: list[CField]) -> list[CField]:
    """The fields from the first to the last named one (unnamed padding between them kept)."""
    named = [i for i, f in enumerate(fields) if f.name]
    return fields[named[0]:named[-1] + 1] if named else []


def bit_rows(fields: list[CField]) -> tuple[tuple[int, int], ...]:
    """``(bit, position)``: the fields' bits counted in order."""
    rows, k = [], 0
    for f in fields:
        for b in range(f.bits):
            rows.append((k, f.lo + b))
            k += 1
    return tuple(rows)


def _block(text: str, open_at: int) -> int:
    """The index of the ``}`` closing the ``{`` at ``open_at`` (``cexpr``'s brace matcher)."""
    return cexpr._closing_brace(text, open_at, Refused("a '{' without its '}'", HEADER, _line(text, open_at, 1)))


def read_union(text: str) -> tuple[list[CField], int]:
    """The fields of ``union MaskAndShiftB``'s anonymous struct (``text``: the header, comments blanked) and the
    union's line."""
    m = re.search(rf"\bunion\s+{UNION}\s*\{{", text)
    if m is None:
        raise Refused(f"no union {UNION}", HEADER, 0)
    end = _block(text, m.end() - 1)
    s = re.compile(r"\bstruct\s*\{").search(text, m.end(), end)
    if s is None:
        raise Refused(f"union {UNION} has no anonymous struct", HEADER, _line(text, m.start(), 1))
    close = _block(text, s.end() - 1)
    body = text[s.end():close]
    return struct_fields(body, HEADER, _line(text, s.end(), 1)), _line(text, m.start(), 1)


def step_expressions(text: str) -> tuple[dict[int, tuple[str, int]], str, int, int]:
    """From ``make_column_zero_mask``: CTA_M -> (step_q's expression, its line); the sub-mask count's expression and
    its line; the function's line.  ``Refused`` when the function is not of the form the docstring reads."""
    f = re.search(rf"\b{FUNC}\s*\([^)]*\)\s*\{{", text)
    if f is None:
        raise Refused(f"no function {FUNC}", HEADER, 0)
    fline = _line(text, f.start(), 1)
    body_start, body_end = f.end(), _block(text, f.end() - 1)
    st = _STEP.search(text, body_start, body_end)
    if st is None:
        raise Refused(f"{FUNC}: no 'int step_q = ...;'", HEADER, fline)
    expr, at = st.group("expr"), st.start("expr")
    steps: dict[int, tuple[str, int]] = {}
    k = 0
    while (c := _CASE.match(expr, k)) is not None:
        steps.setdefault(int(c.group("m")), (c.group("then"), _line(text, at + c.start("then"), 1)))
        k = c.end()
    if not steps:
        raise Refused("step_q is no chain of CTA_M == LITERAL ? EXPR : ...", HEADER, _line(text, at, 1))
    loop = _LOOP.search(text, st.end(), body_end)
    if loop is None:
        raise Refused(f"{FUNC}: no 'for (int mask_iter = 0; mask_iter < int(...); ++mask_iter)' after step_q", HEADER,
                      _line(text, st.start(), 1))
    lbody = loop.end() + len(text[loop.end():]) - len(text[loop.end():].lstrip())
    if text[lbody] != "{":
        raise Refused("the mask_iter loop has no block", HEADER, _line(text, loop.start(), 1))
    lend = _block(text, lbody)
    inner = text[lbody:lend]
    for need in (r"\bstart_count_\s*\[\s*mask_iter\s*\]\s*=", r"\bfirst_span_\s*\|=\s*first_span\s*<<\s*mask_iter\b",
                 r"\bcta_q\s*\+=\s*step_q\s*;"):
        if re.search(need, inner) is None:
            raise Refused(f"the mask_iter loop has no {need.replace(chr(92) + 's*', ' ').replace(chr(92) + 'b', '')}",
                          HEADER, _line(text, loop.start(), 1))
    return steps, loop.group("count"), _line(text, loop.start("count"), 1), fline


def coverage_rows(steps: dict[int, tuple[str, int]], count: str, count_line: int, m: int,
                  n: int) -> tuple[tuple[int, int, int], ...]:
    """``(sub, bit, column)`` for CTA_M = ``m``, CTA_N = ``n``: sub-mask ``i < count`` starts at ``i * step_q``."""
    expr, line = steps[m]
    step = cexpr.evaluate(expr, {"CTA_N": n}, cexpr.Where(HEADER, line))
    if step <= 0:
        raise Refused(f"step_q = {step} for CTA_M = {m}, CTA_N = {n}", HEADER, line)
    subs = cexpr.evaluate(count, {"CTA_N": n, "step_q": step}, cexpr.Where(HEADER, count_line))
    return tuple((i, j, i * step + j) for i in range(subs) for j in range(step))


def _spec(by: dict, spec_id: str) -> MapLayout | None:
    s = in_use_of(by, spec_id)
    return s if isinstance(s, MapLayout) else None


def zero_column_items(specs: Iterable, root: Path) -> list[Evaluated]:
    """The four ``tcgen05.zero_column`` maps from ``root``'s ``HEADER`` (nothing when it or the specs are absent)."""
    by = {s.id: s for s in specs if isinstance(s, MapLayout)}
    path = Path(root) / HEADER
    if not path.is_file():
        return []
    text = cexpr.strip_comments(path.read_text(encoding="utf-8", errors="replace"))
    items: list[Evaluated] = []
    spec = _spec(by, FIELDS_SPEC)
    if spec is not None:
        name = f"union {UNION}"
        try:
            fields, line = read_union(text)
            used = table_fields(fields)
            shown = ", ".join(f"{f.name or '(unnamed)'} {f.lo}-{f.lo + f.bits - 1}" for f in used)
            items.append(Evaluated(name, "", HEADER, line, spec, text=f"{name} {{{shown}}}", map_rows=bit_rows(used)))
        except Refused as e:
            items.append(Evaluated(name, "", HEADER, e.line, spec, error=str(e)))
    covers = {m: _spec(by, i) for m, i in COVERAGE_SPECS.items()}
    if not any(covers.values()):
        return items
    name = f"{FUNC}<..., CTA_M, CTA_N> step_q"
    try:
        steps, count, count_line, fline = step_expressions(text)
    except Refused as e:
        return items + [Evaluated(name, "", HEADER, e.line, s, error=str(e)) for s in covers.values() if s]
    for m, cover in covers.items():
        if cover is None:
            continue
        if m not in steps:
            items.append(Evaluated(name, "", HEADER, fline, cover, error=f"step_q has no case CTA_M == {m}"))
            continue
        label, line = f"{FUNC}<..., CTA_M={m}, CTA_N> step_q", steps[m][1]
        shown = f"step_q = {steps[m][0].strip()}; sub-mask i from column i * step_q, {count.strip()} of them"
        for p in cover.params:
            for n in p.values:
                params = ((p.name, n),)
                try:
                    items.append(Evaluated(label, "", HEADER, line, cover, params, text=shown,
                                           map_rows=coverage_rows(steps, count, count_line, m, n)))
                except Refused as e:
                    items.append(Evaluated(label, "", HEADER, e.line, cover, params, error=str(e)))
    return items
