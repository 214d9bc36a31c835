"""The Python API for proof scripts; the CLI is a thin shell over it.

    from verify import api
    specs = api.load("specs/")
    lay = api.layout(specs, "mma.m16n8k16.A.f16_bf16")
    lay.evaluate(lane=5, i=3)                 # -> (9, 3)
    res = api.check(lay)                      # -> LayoutResult with counterexamples
    mine = api.layout_from_formula("row = %laneid >> 2\\ncol = (%laneid % 4) * 2 + i",
                                   operand="C", rows=8, cols=8, elements=2)
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import z3

from .catalog import pages as _pages
from .catalog.spec import load_spec_text
from .checks.fragment import DEFAULT_TIMEOUT, check_layout
from .checks.run import check_all, default_jobs
from .errors import SpecError
from .layout.model import Layout, Spec
from .results import Finding, LayoutResult, Report


def load_with_doc_findings(paths: str | Path | Sequence[str | Path] = "specs") -> tuple[list[Spec], tuple]:
    """Like ``load``, plus the errata ``ingest`` found in the text of any doc pages (warnings
    and errors: wrong table headers, malformed element lists, figure mix-ups...)."""
    return _pages.load([paths] if isinstance(paths, (str, Path)) else list(paths))


def doc_findings(pages: Sequence[str | Path]) -> tuple:
    """Only the errata ``ingest`` finds in the text of doc pages (warnings and errors)."""
    return _pages.doc_findings(pages)


def load(paths: str | Path | Sequence[str | Path] = "specs") -> list[Spec]:
    """Load specs from files/directories; doc pages (.md/.txt/.html) are ingested on the fly."""
    return load_with_doc_findings(paths)[0]


def loads(text: str, path: str = "<string>") -> Spec:
    """Load one spec from TOML text."""
    return load_spec_text(text, path)


def layouts(specs: Iterable[Spec]) -> list[Layout]:
    return [lay for s in specs for lay in s.layouts]


def layout(specs: Iterable[Spec], layout_id: str) -> Layout:
    """Find a layout by id; a unique substring of an id is accepted too."""
    all_layouts = layouts(specs)
    for lay in all_layouts:
        if lay.id == layout_id:
            return lay
    hits = [lay for lay in all_layouts if layout_id in lay.id]
    if len(hits) == 1:
        return hits[0]
    if not hits:
        raise KeyError(f"no layout {layout_id!r} (see 'ptx-verify list')")
    raise KeyError(f"{layout_id!r} matches {len(hits)} layouts: " + ", ".join(h.id for h in hits[:6]))


def check(lay: Layout, timeout: float = DEFAULT_TIMEOUT) -> LayoutResult:
    return check_layout(lay, timeout)


def layout_from_formula(formula: str, *, operand: str = "C", rows: int, cols: int, elements: int,
                        threads: int = 32, registers: int | None = None,
                        register_type: str = "b32", types: Sequence[str] = ("b32",),
                        shape: str | None = None, layout_id: str = "custom") -> Layout:
    """Build a layout from a formula string in a few lines (for proof scripts)."""
    m, n, k = {"A": (rows, 1, cols), "B": (1, cols, rows)}.get(operand, (rows, cols, 1))
    shape = shape or f"m{m}n{n}k{k}"
    regs = registers or elements
    per = elements // regs
    lit = formula.replace("'''", "")
    text = (f"schema = 1\n[source]\nsection = \"custom\"\n[instruction]\nname = \"mma\"\nshape = \"{shape}\"\n"
            f"threads = {threads}\n[[fragment]]\nid = \"{layout_id}\"\noperand = \"{operand}\"\n"
            f"types = [{', '.join(repr(t).replace(chr(39), chr(34)) for t in types)}]\n"
            f"registers = {regs}\nregister_type = \"{register_type}\"\nelements_per_register = {per}\n"
            f"rows = {rows}\ncols = {cols}\nelement_bits = {32 // per if 32 % per == 0 else 1}\n"
            f"formula = '''\n{lit}\n'''\n")
    return load_spec_text(text, f"<{layout_id}>").layouts[0]


@dataclass(frozen=True)
class Proof:
    """Result of ``prove``: ``proved``, ``refuted`` (with a model) or ``unknown``."""

    status: str
    counterexample: dict[str, int] | None = None


def variables(names: str, width: int = 16) -> list[z3.BitVecRef]:
    """Symbolic integers (bit-vectors) for proof scripts: ``lane, i = api.variables("lane i")``."""
    return list(z3.BitVecs(names, width))


def cell(lay: Layout, lane: z3.BitVecRef, i: z3.BitVecRef) -> tuple[z3.BoolRef, z3.ExprRef, z3.ExprRef]:
    """(defined, row, col) of element i of ``lane`` as Z3 terms (sparse A: compressed col)."""
    return lay.map.z3_cell(lane, i)


def domain(lay: Layout, lane: z3.BitVecRef, i: z3.BitVecRef) -> z3.BoolRef:
    """0 <= lane < threads and 0 <= i < elements."""
    return z3.And(lane >= 0, lane < lay.threads, i >= 0, i < lay.n_elements)


def prove(claim: z3.BoolRef, assuming: Sequence[z3.BoolRef] = (), timeout: float = DEFAULT_TIMEOUT) -> Proof:
    """Prove ``assuming => claim`` for all values of the free variables (Z3; unknown stays unknown)."""
    s = z3.SolverFor("BV")
    s.set("timeout", int(timeout * 1000))
    s.add(*assuming)
    s.add(z3.Not(claim))
    r = s.check()
    if r == z3.unsat:
        return Proof("proved")
    if r == z3.sat:
        m = s.model()
        return Proof("refuted", {str(d): m[d].as_signed_long() for d in sorted(m.decls(), key=str)
                                 if isinstance(m[d], z3.BitVecNumRef)})
    return Proof("unknown")


__all__ = ["Finding", "Layout", "LayoutResult", "Proof", "Report", "Spec", "SpecError", "cell", "check", "check_all",
           "default_jobs", "doc_findings", "domain", "layout", "layout_from_formula", "layouts", "load",
           "load_with_doc_findings", "loads", "prove", "variables"]
