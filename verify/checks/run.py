"""Checking a whole catalog: every layout, then every instruction, spec file by spec file.

Spec files are independent, so with ``jobs`` > 1 they are checked in worker processes; results
come back in input order, so the output is the same byte for byte whatever the job count.
"""
from __future__ import annotations

import os
from typing import Sequence

from ..layout.model import Spec
from ..results import LayoutResult, Report
from .fragment import DEFAULT_TIMEOUT, check_layout, findings_for, syntax_findings
from .instruction import InstructionResult, check_instructions


def check_spec(spec: Spec, timeout: float) -> tuple[tuple[LayoutResult, ...], tuple[InstructionResult, ...]]:
    """One spec file: its layouts, then its instructions (which reuse the layouts' evaluations)."""
    results = tuple(check_layout(lay, timeout) for lay in spec.layouts)
    return results, tuple(check_instructions([spec], results, timeout))


def _cost(spec: Spec) -> int:
    """A rough cost estimate of checking one spec, for scheduling only."""
    return sum(lay.n_elements * (8 if lay.sparse else 1) for lay in spec.layouts)


def _check_spec_remote(args: tuple[Spec, float]) -> tuple[tuple[LayoutResult, ...], tuple[InstructionResult, ...]]:
    return check_spec(*args)


def default_jobs() -> int:
    """Worker processes for ``check``: the CPUs this process may use, at most 4."""
    try:
        return max(1, min(4, len(os.sched_getaffinity(0))))
    except AttributeError:  # pragma: no cover - not Linux
        return 1


def check_all(specs: Sequence[Spec], timeout: float = DEFAULT_TIMEOUT, jobs: int = 1,
              doc_findings: tuple = ()) -> Report:
    """Check every layout and instruction of ``specs``."""
    if jobs > 1 and len(specs) > 2:
        import concurrent.futures as cf  # noqa: PLC0415
        import multiprocessing as mp  # noqa: PLC0415
        # biggest first (sparse sections dominate), so no worker idles at the end
        order = sorted(range(len(specs)), key=lambda k: -_cost(specs[k]))
        with cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as pool:
            out = dict(zip(order, pool.map(_check_spec_remote, [(specs[k], timeout) for k in order])))
        done = [out[k] for k in range(len(specs))]
    else:
        done = [check_spec(s, timeout) for s in specs]
    results = tuple(r for rs, _ in done for r in rs)
    instructions = tuple(i for _, ins in done for i in ins)
    findings = tuple(syntax_findings(specs)) + tuple(findings_for(results))
    for ins in instructions:
        findings += tuple(ins.findings)
    return Report(tuple(specs), results, findings, instructions, tuple(doc_findings))
