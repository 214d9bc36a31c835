"""Checking a whole catalog: every layout, then every instruction, spec file by spec file.

Spec files are independent, so with ``jobs`` > 1 they are checked in worker processes; results
come back in input order, so the output is the same byte for byte whatever the job count.

Workers never outlive the run: an exception or a signal in the parent (Ctrl-C, ``SIGTERM``, which the
CLI turns into exceptions) stops them before it propagates, and a parent that dies without a word
(``SIGKILL``) takes them with it (``PR_SET_PDEATHSIG`` on Linux, else a thread in each worker that
watches its parent).  Workers ignore ``SIGINT``: Ctrl-C reaches the whole process group, and only the
parent answers it.
"""
from __future__ import annotations

import dataclasses
import os
import signal
import sys
import threading
import time
from typing import Any, Callable, Sequence

from ..errors import SpecError
from ..layout.model import Spec
from ..results import DocFinding, Finding, InstructionResult, LayoutResult, MapResult, Report, StatementResult
from .family import check_any
from .fragment import DEFAULT_TIMEOUT, findings_for, syntax_findings
from .instruction import check_instructions
from .maps import check_map_layout, map_findings
from .relations import check_relations
from .review import evaluation_finding, review_findings
from .statements import judge as judge_statements


Checked = tuple[tuple[LayoutResult, ...], tuple[InstructionResult, ...], tuple[Finding, ...], tuple[MapResult, ...],
                tuple[StatementResult, ...]]


def check_spec(spec: Spec, timeout: float) -> Checked:
    """One spec file (or doc page): its layouts, its instructions (which reuse the layouts' evaluations)
    and, for a page, its review against the reviewed specs and its statements judged.  A page formula that cannot
    be evaluated is a finding; in a spec file it is bad input (``SpecError``, exit 2)."""
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
    stated, wrong = judge_statements(spec, timeout)
    extra += wrong
    return tuple(results), tuple(check_instructions([spec], results, timeout)), tuple(extra), maps, tuple(stated)


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


PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent: int) -> bool:
    """Ask the kernel to kill this process when its parent dies (Linux); whether that was arranged."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0:
            return False
    except (OSError, AttributeError):
        return False
    return True


def _watch_parent(parent: int, every: float = 0.5) -> None:
    """The portable fallback: exit as soon as the parent is gone (this process is re-parented)."""
    while os.getppid() == parent:
        time.sleep(every)
    os._exit(1)


def _worker_init(parent: int) -> None:
    """Run in each worker before any task: die with the parent, leave Ctrl-C to it."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if not _die_with_parent(parent):
        threading.Thread(target=_watch_parent, args=(parent,), name="watch-parent", daemon=True).start()
    if os.getppid() != parent:  # the parent died before this worker could ask to die with it
        os._exit(1)


def _stop_workers(pool: Any) -> None:
    """Stop every worker of ``pool`` now (its running tasks are abandoned) and wait until they are gone."""
    main = threading.current_thread() is threading.main_thread()
    if main and hasattr(signal, "SIGPIPE"):
        # the pool's feeder thread may still write to the pipes of the workers stopped below: that must be an
        # ignored EPIPE, not a SIGPIPE that kills this process (the CLI sets SIGPIPE to default for ``| head``)
        signal.signal(signal.SIGPIPE, signal.SIG_IGN)
    blocked = {signal.SIGINT, signal.SIGTERM}
    old = signal.pthread_sigmask(signal.SIG_BLOCK, blocked) if main and hasattr(signal, "pthread_sigmask") else None
    try:
        procs = list((getattr(pool, "_processes", None) or {}).values())
        pool.shutdown(wait=False, cancel_futures=True)
        for p in procs:
            try:
                p.terminate()
            except (OSError, ValueError):  # already gone
                pass
        for p in procs:
            try:
                p.join(5)
                if p.is_alive():
                    p.kill()
                    p.join(5)
            except (OSError, ValueError, AssertionError):
                pass
    finally:
        if old is not None:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)


def in_workers(fn: Any, items: Sequence[Any], jobs: int, done: Callable[[int], None] | None = None) -> list[Any]:
    """``[fn(x) for x in items]`` in ``jobs`` forked worker processes, in order.  ``fn`` and the results must
    pickle.  ``done(k)`` is called (in this process) as item ``k`` finishes, in the order they finish (progress).
    An error in a worker, Ctrl-C or SIGTERM stops every worker before it propagates: none outlives this call.
    Each worker's solver state dies with it (a long-lived process pays for the Z3 terms it has held:
    docs/architecture.md)."""
    import concurrent.futures as cf
    import multiprocessing as mp
    pool = cf.ProcessPoolExecutor(jobs, mp_context=mp.get_context("fork"), initializer=_worker_init,
                                  initargs=(os.getpid(),))
    try:
        futures = [pool.submit(fn, x) for x in items]
        index = {f: k for k, f in enumerate(futures)}
        for f in cf.as_completed(futures):
            f.result()  # an error in a worker propagates at once
            if done is not None:
                done(index[f])
        out = [f.result() for f in futures]
        pool.shutdown(wait=True)
    except BaseException:  # an error in a worker, Ctrl-C, SIGTERM: no worker outlives this call
        _stop_workers(pool)
        raise
    return out


def size(spec: Spec) -> int:
    """What checking ``spec`` counts as for progress: its layouts and its map layouts."""
    return len(spec.layouts) + len(spec.maps)


def check_all(specs: Sequence[Spec], timeout: float = DEFAULT_TIMEOUT, jobs: int = 1,
              doc_findings: Sequence[DocFinding] = (), progress: Callable[[int], None] | None = None) -> Report:
    """Check every layout and instruction of ``specs``; ``progress(n)`` is called as the ``n`` layouts of a spec
    file (``size``) are done."""
    step = progress or (lambda n: None)
    if jobs > 1 and len(specs) > 2:
        # biggest first (sparse sections dominate), so no worker idles at the end
        order = sorted(range(len(specs)), key=lambda k: -_cost(specs[k]))
        out = dict(zip(order, in_workers(_check_spec_remote, [(specs[k], timeout) for k in order], jobs,
                                         lambda k: step(size(specs[order[k]])))))
        done = [out[k] for k in range(len(specs))]
    else:
        done = []
        for s in specs:
            done.append(check_spec(s, timeout))
            step(size(s))
    results = tuple(r for rs, _, _, _, _ in done for r in rs)
    maps = tuple(m for _, _, _, ms, _ in done for m in ms)
    statements = tuple(st for *_, sts in done for st in sts)
    instructions = tuple(i for _, ins, _, _, _ in done for i in ins)
    instructions += tuple(check_relations(specs, results, timeout))  # across spec files: after them
    findings = tuple(syntax_findings(specs)) + tuple(findings_for(results))
    for ins in instructions:
        findings += tuple(ins.findings)
    findings += tuple(f for _, _, extra, _, _ in done for f in extra)
    findings += tuple(map_findings(maps))
    findings += tuple(unread_findings(doc_findings))
    return Report(tuple(specs), results, findings, instructions, tuple(doc_findings), maps, statements)


def unread_findings(doc_findings: Sequence[DocFinding]) -> list[Finding]:
    """A page section the reader found but could not read (``unread-section``) is a failure of the run, whatever else
    is checked: its layouts are not, and a doc page never passes silently."""
    from ..witnesses import TextPosition
    return [Finding(f"section {f.section}", "unread", "refuted", "proved", f.one_line().replace(": error: ", ": ", 1),
                    TextPosition(f.page, f.line, f.column, f.kind)) for f in doc_findings if f.kind == "unread-section"]
