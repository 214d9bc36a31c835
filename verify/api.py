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

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Sequence

import z3

from .checks import DEFAULT_TIMEOUT, check_layout, findings_for, syntax_findings
from .ingest_cli import PAGE_SUFFIXES
from .results import Finding, LayoutResult
from .spec import Layout, Spec, SpecError, load_spec_text, load_specs



def _is_page(p: Path) -> bool:
    return p.is_file() and p.suffix.lower() in PAGE_SUFFIXES


def load_with_doc_findings(paths: str | Path | Sequence[str | Path] = "specs") -> tuple[list[Spec], tuple]:
    """Like ``load``, plus the errata ``ingest`` found in the text of any doc pages (warnings
    and errors: wrong table headers, malformed element lists, figure mix-ups...)."""
    if isinstance(paths, (str, Path)):
        paths = [paths]
    spec_paths: list[str | Path] = []
    pages: list[Path] = []
    for p in map(Path, paths):
        if _is_page(p):
            pages.append(p)
        elif p.is_dir() and not any(p.rglob("*.toml")) and any(q.suffix.lower() in PAGE_SUFFIXES for q in p.iterdir()):
            pages.extend(sorted(q for q in p.iterdir() if _is_page(q)))
        else:
            spec_paths.append(p)
    specs = load_specs(spec_paths) if spec_paths else []
    doc_findings: tuple = ()
    if pages:
        from .ingest_cli import ingest  # noqa: PLC0415
        result = ingest([str(p) for p in pages])
        for name, text in result.specs():
            specs.append(load_spec_text(text, name))
        doc_findings = tuple(f for f in result.findings if f.severity in ("error", "warning"))
    return specs, doc_findings


def doc_findings(pages: Sequence[str | Path]) -> tuple:
    """Only the errata ``ingest`` finds in the text of doc pages (warnings and errors)."""
    from .ingest_cli import ingest  # noqa: PLC0415
    return tuple(f for f in ingest([str(p) for p in pages]).findings if f.severity in ("error", "warning"))


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


@dataclass(frozen=True)
class Report:
    """Everything ``ptx-verify check`` computes, before rendering."""

    specs: tuple[Spec, ...]
    results: tuple[LayoutResult, ...]
    findings: tuple[Finding, ...]
    instructions: tuple[object, ...] = ()
    doc_findings: tuple = ()  # errata in the doc text itself (from ingest); informational

    @property
    def as_expected(self) -> bool:
        return (all(r.as_expected for r in self.results) and all(f.as_expected for f in self.findings)
                and all(getattr(i, "as_expected", True) for i in self.instructions))


def _check_spec(spec: Spec, timeout: float) -> tuple[tuple[LayoutResult, ...], tuple[object, ...]]:
    """One spec file: its layouts, then its instructions (which reuse the layouts' evaluations)."""
    from .instruction import check_instructions  # noqa: PLC0415
    results = tuple(check_layout(lay, timeout) for lay in spec.layouts)
    return results, tuple(check_instructions([spec], results, timeout))


def _cost(spec: Spec) -> int:
    """A rough cost estimate of checking one spec, for scheduling only."""
    return sum(lay.n_elements * (8 if lay.sparse else 1) for lay in spec.layouts)


def _check_spec_remote(args: tuple[Spec, float]) -> tuple[tuple[LayoutResult, ...], tuple[object, ...]]:
    return _check_spec(*args)


def default_jobs() -> int:
    """Worker processes for ``check``: the CPUs this process may use, at most 4."""
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # pragma: no cover - not Linux
        return 1


def check_all(specs: Sequence[Spec], timeout: float = DEFAULT_TIMEOUT, jobs: int = 1,
              doc_findings: tuple = ()) -> Report:
    """Check every layout and instruction.  Spec files are independent: with ``jobs`` > 1
    they are checked in worker processes, and results come back in input order, so the
    output is the same byte for byte."""
    if jobs > 1 and len(specs) > 2:
        import concurrent.futures as cf  # noqa: PLC0415
        import multiprocessing as mp  # noqa: PLC0415
        # biggest first (sparse sections dominate), so no worker idles at the end
        order = sorted(range(len(specs)), key=lambda k: -_cost(specs[k]))
        with cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as pool:
            out = dict(zip(order, pool.map(_check_spec_remote, [(specs[k], timeout) for k in order])))
        done = [out[k] for k in range(len(specs))]
    else:
        done = [_check_spec(s, timeout) for s in specs]
    results = tuple(r for rs, _ in done for r in rs)
    instructions = tuple(i for _, ins in done for i in ins)
    findings = tuple(syntax_findings(specs)) + tuple(findings_for(results))
    for ins in instructions:
        findings += tuple(getattr(ins, "findings", ()))
    return Report(tuple(specs), results, findings, instructions, tuple(doc_findings))


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
    from .checks import cells_for  # noqa: PLC0415
    return cells_for(lay).z3_cell(lane, i)


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


__all__ = ["Proof", "cell", "domain", "prove", "variables", "Report", "SpecError", "check", "check_all", "layout", "layout_from_formula", "layouts",
           "load", "loads"]
