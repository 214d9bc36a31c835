"""The verdict on a launch, decided by two engines that share no value domain.

1. The symbolic engine (``symbolic``, ``check``): every output element exactly its einsum sum, each product once.
2. The numeric engine (``numeric``): the same PTX on random integers, each element equal to ``numpy.einsum`` of the
   inputs modulo 2^w.

They share the parser, the control flow and the address arithmetic (exact bit-vectors in both) and the catalog's
layouts (through ``fragments``: the symbolic engine its numpy face, the numeric engine its one-point face); the
data itself goes through the tags in one and through the bits in the other.  The verdict is ``proved`` only when
neither finds anything; the engines must then agree element by element: every element the numeric engine finds
wrong the symbolic engine finds wrong, and the first element the symbolic engine finds wrong the numeric engine
finds wrong too (for 8-bit inputs, whose random values make a wrong product vanish about once in 2^7, instead: of
3 or more wrong elements it finds some, of 16 or more at least half).  Anything else is ``error``.  Findings of
memory (out of bounds, reads of memory never written, copies in flight, races) are the executor's and are the same in
both runs, which is checked too.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..ptx.syntax import Function, Module
from .cells import oob_event, output_cells
from .check import check_elements, explain
from .launch import Launch
from .numeric import Numeric
from .result import Finding, KernelResult
from .run import execute
from .symbolic import Symbolic
from .trace import chain, source_of

MAX_ELEMENTS_NAMED = 1


def _element_name(launch: Launch, e: int) -> str:
    t = launch.tensors()[launch.computes.output.tensor]
    return f"{t.name}[{', '.join(str(int(i)) for i in np.unravel_index(e, t.shape))}]"


def verify_launch(module: Module, fn: Function, launch: Launch, launch_name: str = "") -> KernelResult:
    """Run ``fn`` of ``module`` for ``launch`` in both engines and decide."""
    srun = execute(module, fn, launch, Symbolic(launch))
    sym: Symbolic = srun.domain
    vals, status, writes = sym.output_values(srun.gmem)
    wrong_sym = check_elements(sym, launch, vals, status)
    nrun = execute(module, fn, launch, Numeric(launch, module))
    num: Numeric = nrun.domain
    wrong_num, modulo = num.compare(nrun.gmem)
    steps = srun.prog.steps
    findings: list[Finding] = []
    for ev in srun.prog.events.all():
        ins = steps[ev.instr].instr
        findings.append(Finding(ev.kind, ev.words + f" (CTA {ev.cta}, thread {ev.thread})", "", ins.line, ins.col,
                                source_of(module, ins), ev.count))
    twice = (writes > 1) & (status != 1)
    value_wrong = wrong_sym & ((status == 0) | (status == 3))  # written whole: the elements both engines judge
    never = status == 1
    if value_wrong.any() or (status == 2).any():
        bad = value_wrong | (status == 2)
        e = int(np.argmax(bad))
        words, product, side = explain(sym, launch, e, int(vals[e]), int(status[e]))
        links = chain(module, fn, launch, srun, e, product, side)
        first = links[0] if links else None
        mma = links[1] if len(links) > 1 else first
        findings.append(Finding("wrong_element", words, _element_name(launch, e), mma.line if mma else 0,
                                mma.col if mma else 0, mma.source if mma else "", int(bad.sum()), links))
    if never.any():
        e = int(np.argmax(never))
        words, _, _ = explain(sym, launch, e, -1, 1)
        findings.append(Finding("never_written", words, _element_name(launch, e), count=int(never.sum())))
    if twice.any():
        e = int(np.argmax(twice))
        region = srun.gmem.by_name[launch.computes.output.tensor]
        from .memory import writer_parts
        from .symbolic import element_starts
        out_t = launch.tensors()[launch.computes.output.tensor]
        cta, thread, instr = writer_parts(int(region.writer[int(element_starts(out_t)[e])]))
        ins = steps[instr].instr
        findings.append(Finding("written_twice", f"written {int(writes[e])} times (the last by CTA {cta}, thread "
                                f"{thread})" if writes[e] < 255 else "written 255 times or more",
                                _element_name(launch, e), ins.line, ins.col, source_of(module, ins),
                                int(twice.sum())))
    disagree = _disagreement(launch, num, srun, nrun, value_wrong, wrong_num, modulo)
    if disagree:
        findings.insert(0, Finding("engines_disagree", disagree))
    status_word = "error" if disagree else ("refuted" if findings else "proved")
    engines: dict[str, dict[str, Any]] = {
        "symbolic": {"verdict": "refuted" if (value_wrong.any() or findings) else "proved",
                     "wrong_elements": int(value_wrong.sum()), "mma": sym.mmas},
        "numeric": {"verdict": "refuted" if (wrong_num.any() or nrun.prog.events.all() or never.any()
                                             or twice.any()) else "proved",
                    "wrong_elements": int(wrong_num.sum()), "modulo_bits": int(modulo),
                    "input_bits": int(min(num.input_bits, 64)), "mma": num.mmas},
    }
    stats = {"ctas": launch.ctas, "threads": launch.threads, "instructions": srun.prog.steps_run,
             "output_elements": int(len(vals))}
    cells = output_cells(sym, launch, srun.gmem, vals, status, writes, value_wrong | (status == 2),
                         oob_event(srun.prog, lambda ins: source_of(module, ins)))
    return KernelResult(status_word, module.path, fn.name, launch_name or launch.path, launch.grid, launch.block,
                        launch.computes.describe(), tuple(findings), engines, stats, cells=cells)


def _disagreement(launch: Launch, num: Numeric, srun: Any, nrun: Any, value_wrong: np.ndarray,
                  wrong_num: np.ndarray, modulo: int) -> str:
    """Why the engines disagree ('' when they agree)."""
    extra = wrong_num & ~value_wrong
    if extra.any():
        e = int(np.argmax(extra))
        return (f"the engines disagree on {_element_name(launch, e)}: the numeric engine finds it wrong (modulo "
                f"2^{modulo}), the symbolic engine finds its sum exact")
    if value_wrong.any():
        e = int(np.argmax(value_wrong))
        if not wrong_num[e] and num.input_bits >= 16:
            return (f"the engines disagree on {_element_name(launch, e)}: the symbolic engine finds it wrong, the "
                    f"numeric engine's value equals the einsum modulo 2^{modulo}")
        n, seen = int(value_wrong.sum()), int((wrong_num & value_wrong).sum())
        if num.input_bits < 16 and (n >= 3 and seen == 0 or n >= 16 and 2 * seen < n):
            return (f"the engines disagree: the symbolic engine finds {n} elements wrong, the numeric engine only "
                    f"{seen} of them (with {num.input_bits}-bit inputs it misses about one in {1 << (num.input_bits - 1)})")
    ka = [(e.kind, e.count) for e in srun.prog.events.all()]
    kb = [(e.kind, e.count) for e in nrun.prog.events.all()]
    if ka != kb:
        return f"the two runs' memory findings differ: {ka} and {kb}"
    return ""


__all__ = ["verify_launch"]
