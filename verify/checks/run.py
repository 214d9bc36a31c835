"""Checking a whole catalog: every layout, then every instruction, spec file by spec file.

Spec files are independent, so with ``jobs`` > 1 they are checked in worker processes; results
come back in input order, so the output is the same byte for byte whatever the job count.
"""
from __future__ import annotations

import dataclasses
import os
from typing import Sequence

from ..errors import SpecError
from ..layout.family import preload_sympy
from ..layout.model import Spec
from ..results import Finding, LayoutResult, MapResult, Report
from .family import check_any
from .fragment import DEFAULT_TIMEOUT, findings_for, syntax_findings
from .instruction import InstructionResult, check_instructions
from .maps import check_map_layout, map_findings
from .relations import check_relations
from .review import evaluation_finding, review_findings


Checked = tuple[tuple[LayoutResult, ...], tuple[InstructionResult, ...], tuple[Finding, ...], tuple[MapResult, ...]]


def check_spec(spec: Spec, timeout: float) -> Checked:
    """One spec file (or doc page): its layouts, its instructions (which reuse the layouts' evaluations)
    and, for a page, its review against the reviewed specs.  A page formula that cannot be evaluated is a
    finding; in a spec file it is bad input (``SpecError``, exit 2)."""
    results: list[LayoutResult] = []
    extra: list[Finding] = []
    for lay in spec.layouts:
        try:
            results.append(check_any(lay, timeout))
        except SpecError as e:
            if not spec.page:
                raise
            extra.append(evaluation_finding(lay, e))
    checked = {r.layout.id for r in results}
    extra += review_findings(spec, checked, timeout)
    if len(checked) < len(spec.layouts):  # instructions of the layouts that could be evaluated
        spec = dataclasses.replace(spec, layouts=tuple(lay for lay in spec.layouts if lay.id in checked))
    maps = tuple(check_map_layout(m, timeout) for m in spec.maps)
    return tuple(results), tuple(check_instructions([spec], results, timeout)), tuple(extra), maps


def _cost(spec: Spec) -> int:
    """A rough cost estimate of checking one spec, for scheduling only."""
    return sum(lay.threads * lay.max_elements * len(lay.instances()) * (8 if lay.sparse else 1) for lay in spec.layouts)


def _check_spec_remote(args: tuple[Spec, float]) -> Checked:
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
        if any(lay.is_family for s in specs for lay in s.layouts):
            preload_sympy()  # the families' count identities need it in every worker
        with cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork")) as pool:
            out = dict(zip(order, pool.map(_check_spec_remote, [(specs[k], timeout) for k in order])))
        done = [out[k] for k in range(len(specs))]
    else:
        done = [check_spec(s, timeout) for s in specs]
    results = tuple(r for rs, _, _, _ in done for r in rs)
    maps = tuple(m for _, _, _, ms in done for m in ms)
    instructions = tuple(i for _, ins, _, _ in done for i in ins)
    instructions += tuple(check_relations(specs, results, timeout))  # across spec files: after them
    findings = tuple(syntax_findings(specs)) + tuple(findings_for(results))
    for ins in instructions:
        findings += tuple(ins.findings)
    findings += tuple(f for _, _, extra, _ in done for f in extra)
    findings += tuple(map_findings(maps))
    return Report(tuple(specs), results, findings, instructions, tuple(doc_findings), maps)
