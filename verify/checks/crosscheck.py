"""CuTe's ``MMA_Traits`` against the spec: every trait operand matched to its spec layout and conformed.

CUTLASS states each MMA atom's fragment layouts as C++ types in ``cute/atom/mma_traits_sm*.hpp``;
``verify.layout.notations.cute_headers`` reads them.  Each trait is matched to spec layouts by

* shape: ``Shape_MNK = Shape<M,N,K>`` -> the ``mma`` spec of shape ``mMnNkK``;
* operand and type: ``ALayout`` with ``ValTypeA``, ``BLayout`` with ``ValTypeB``, ``CLayout`` with
  ``ValTypeC`` (and with ``ValTypeD`` when it differs: CuTe's C and D share ``CLayout``), the C++
  type as the PTX type (``cutlass::half_t`` -> ``f16``, ``cutlass::int4b_t`` -> ``s4``);
* majorness (SM70 ``m8n8k4`` has row and col variants): the trait's ``_TN``/``_NT``/``_NN``/``_TT``
  suffix, first letter for A (``T``: row), second for B (``N``: col);
* among several candidates: a layout of the section whose A types include the trait's A type before
  others (the ``f16`` accumulator of an ``f16`` MMA is 9.7.14.5.8's, of an ``e4m3`` MMA the f8
  section's), then the reviewed correction (``ID@corrected``, where the doc is wrong) before the
  doc's layout.

Then ``conform`` decides each pair with both engines.  Rows: ``agree`` (conform ``equal``),
``differ`` (any other verdict, with the first difference), ``malformed`` (a trait the reader could
not evaluate, with its header position), ``unmatched`` (no spec: shape, type or instruction not in
the catalog), plus a count of templated traits (partial specialisations, not read).
"""
from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ..layout.model import Layout
from ..layout.notations import (
    HeaderResult,
    NotationError,
    TraitEntry,
    ptx_type,
    table_from_entries,
    table_to_formula,
    to_layout,
)
from ..results.crosscheck import CrosscheckReport, Row
from .conform import ConformResult, conform
from .fragment import DEFAULT_TIMEOUT

def _variant(trait: str, operand: str) -> str | None:
    major = trait.split("_")[-1] if "_" in trait else ""
    if operand not in ("A", "B") or len(major) < 2 or not set(major[:2]) <= {"T", "N"}:
        return None
    if operand == "A":
        return "row" if major[0] == "T" else "col"
    return "col" if major[1] == "N" else "row"


class SpecIndex:
    """The catalog's ``mma`` and ``wgmma`` layouts by (shape, operand, PTX type, variant); wgmma's are
    families over ``N`` (shape ``m64nNk16``), ``wgmma.sp``'s under their own instruction."""

    INSTRUCTIONS = ("mma", "mma.sp", "wgmma", "wgmma.sp")

    def __init__(self, layouts: Iterable[Layout]) -> None:
        self.by: dict[tuple[str, str, str, str, str | None], list[Layout]] = {}
        self.a_types: dict[str, set[str]] = {}
        self.shapes: set[str] = set()
        for lay in layouts:
            if not isinstance(lay, Layout) or lay.instruction not in self.INSTRUCTIONS:  # register fragments only
                continue
            self.shapes.add(f"{lay.instruction} {lay.shape}")
            if lay.operand == "A":
                self.a_types.setdefault(lay.provenance.source.section, set()).update(lay.types)
            for t in lay.types:
                self.by.setdefault((lay.instruction, str(lay.shape), lay.operand, t, lay.variant), []).append(lay)

    def has_shape(self, shape: str, instruction: str = "mma") -> bool:
        return f"{instruction} {shape}" in self.shapes

    def match(self, shape: str, operand: str, ptype: str, variant: str | None, a_type: str | None,
              instruction: str = "mma") -> Layout | None:
        cands = (self.by.get((instruction, shape, operand, ptype, variant))
                 or self.by.get((instruction, shape, operand, ptype, None)) or [])
        if not cands:
            return None
        ranked = sorted(enumerate(cands), key=lambda kc: (a_type not in self.a_types.get(kc[1].provenance.source.section, ()),
                                                          not kc[1].corrected, kc[0]))
        return ranked[0][1]


def _relative(path: str, root: Path) -> str:
    try:
        return str(Path(path).resolve().relative_to(root.resolve()))
    except ValueError:
        return path


def crosscheck(results: list[HeaderResult], specs: Iterable[Layout], root: str | Path,
               timeout: float = DEFAULT_TIMEOUT) -> CrosscheckReport:
    """Every trait of ``results`` (from ``read_headers``) against the spec layouts ``specs``."""
    t0 = time.perf_counter()
    rootp = Path(root)
    index = SpecIndex(specs)
    rows: list[Row] = []
    templated: dict[str, int] = {}
    cache: dict[tuple, ConformResult | NotationError] = {}
    for hr in results:
        header = _relative(hr.source, rootp)
        for sk in hr.skipped:
            if sk.reason.startswith("templated"):
                templated[header] = templated.get(header, 0) + 1
                continue
            reason = sk.reason.replace(hr.source, header).replace(str(Path(hr.source).resolve()), header)
            rows.append(Row("malformed", sk.name, "", header, sk.line, detail=reason))
        for t in hr.traits:
            rows.extend(_trait_rows(t, header, index, cache, timeout))
    return CrosscheckReport(str(root), tuple(_relative(r.source, rootp) for r in results), tuple(rows), templated,
                            time.perf_counter() - t0)


def _is_smem(layout: Any) -> bool:
    """A GMMA operand read from shared memory by descriptor: every thread sees the whole tile (thread stride 0)."""
    return all(d == 0 for _, d in layout.mode(0).leaves())


def _trait_rows(t: TraitEntry, header: str, index: SpecIndex, cache: dict, timeout: float) -> list[Row]:
    m, n, k = t.shape_mnk
    shape = f"m{m}n{n}k{k}"
    sparse = "SPARSE" in t.name or any(v.startswith("cute::sparse_elem<") for v in t.value_types)
    warpgroup = t.thr_id.size() == 128
    params: tuple[tuple[str, int], ...] = ()
    instruction = "mma"
    if warpgroup:
        instruction, shape, params = ("wgmma.sp" if sparse else "wgmma"), f"m{m}nNk{k}", (("N", n),)
    elif sparse:
        instruction = "mma.sp"
    if not index.has_shape(shape, instruction):
        if warpgroup and not index.shapes & {f"wgmma {s}" for s in ("m64nNk16", "m64nNk8")}:
            reason = "warpgroup MMA (wgmma, 128 threads): the catalog has no wgmma specs"
        elif warpgroup:
            reason = f"no {instruction} spec of shape {shape}"
        else:
            reason = f"no {instruction} spec of shape {shape}"
        return [Row("unmatched", t.name, "", header, t.line, detail=reason)]
    a_type = ptx_type(_element_type(t.value_types[0]))
    ops = [("A", t.value_types[0]), ("B", t.value_types[1]), ("C", t.value_types[2])]
    if t.value_types[3] != t.value_types[2] and not warpgroup:
        ops.append(("D", t.value_types[3]))
    out = []
    for op, vt in ops:
        ptype = ptx_type(_element_type(vt))
        layout_text = str(t.layout(op))
        if warpgroup and op in ("A", "B") and _is_smem(t.layout(op)):
            out.append(Row("unmatched", t.name, op, header, t.line, layout=layout_text, params=params,
                           detail="operand in shared memory (GMMA descriptor): no register fragment"))
            continue
        if ptype is None:
            out.append(Row("unmatched", t.name, op, header, t.line, layout=layout_text,
                           detail=f"value type {vt.split('::')[-1]!r} has no PTX type"))
            continue
        spec_op = ("D" if warpgroup else "C") if op in ("C", "D") else op
        like = index.match(shape, spec_op, ptype, _variant(t.name, op), a_type, instruction)
        if like is None:
            out.append(Row("unmatched", t.name, op, header, t.line, layout=layout_text, params=params,
                           detail=f"no spec for {shape} {spec_op} .{ptype}"))
            continue
        key = (layout_text, str(t.thr_id), shape, op, like.id, params)
        if key not in cache:
            try:
                member = like.instance(**dict(params)) if params else like
                imp = sparse_a_import(t, member) if sparse and op == "A" else t.import_operand(op)
                given = to_layout(imp, member, source=header)
                cache[key] = conform(member, given, timeout, notation="cute")
            except NotationError as e:
                cache[key] = e
        res = cache[key]
        if isinstance(res, NotationError):
            out.append(Row("malformed", t.name, op, header, t.line, spec=like.id, layout=layout_text,
                           detail=res.one_line(), params=params))
            continue
        kind = "agree" if res.status == "equal" else "differ"
        detail = "" if kind == "agree" else res.message.split("\n")[0]
        broken = [c for c in res.given_checks if c.status != "proved"]
        if kind == "differ" and broken:  # a differs can hide that CuTe's layout itself is not a bijection
            detail += "; the CuTe layout itself: " + "; ".join(f"{c.check} {c.status} ({c.message})" if c.message
                                                               else f"{c.check} {c.status}" for c in broken)
        out.append(Row(kind, t.name, op, header, t.line, like.id, res.status, detail, res.counterexample, layout_text,
                       params))
    return out


def sparse_a_import(t: TraitEntry, like: Layout) -> Any:
    """A sparse A (``ValTypeA = sparse_elem<2, T>``) as its compressed fragment.  CuTe's ``ALayout`` maps
    (thread, value) to the *logical* M x K tile, two consecutive values per stored element (the 2:4 or 1:2
    group's pair); the stored element ``v / 2`` sits at compressed column ``k / 2`` of row ``m``, which
    both values of the pair must agree on (else ``NotationError``).  Compared with the spec's compressed
    view (``M x K/2``), as ``conform`` compares any sparse A."""
    m, _, k = t.shape_mnk
    layout = t.a_layout
    threads, values = layout.mode(0).size(), layout.mode(1).size()
    if values % 2:
        raise NotationError(f"sparse ALayout {layout} has an odd number of values per thread")
    cells: dict[tuple[int, int], tuple[int, int]] = {}
    for th in range(threads):
        lane = t.thr_id(th) if t.thr_id.size() == threads else th
        for v in range(values):
            idx = layout(th + threads * v)
            cell = (idx % m, (idx // m) // 2)
            if cells.setdefault((lane, v // 2), cell) != cell:
                raise NotationError(f"sparse ALayout {layout}: thread {th} values {v - 1} and {v} (one stored "
                                    f"element) are in different compressed cells {cells[(lane, v // 2)]} and {cell}")
    imp = table_to_formula(table_from_entries((ln, i, r, c) for (ln, i), (r, c) in sorted(cells.items())),
                           like.prefix, operand="A", text=f"MMA_Traits<{t.name}>::ALayout = {layout} (compressed)")
    return imp


def _element_type(value_type: str) -> str:
    """``cute::sparse_elem<2, cutlass::half_t>`` -> ``cutlass::half_t``; other names unchanged."""
    v = value_type.strip()
    if v.startswith("cute::sparse_elem<") and v.endswith(">"):
        return v[len("cute::sparse_elem<"):-1].split(",", 1)[-1].strip()
    return v
