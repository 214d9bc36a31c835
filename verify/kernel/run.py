"""One engine's run of a launch: global memory laid out, inputs filled by the engine, every CTA executed."""
from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from ..ptx.syntax import Function, Module
from .launch import Launch
from .decode import decode
from .machine import CTA, Cluster, KernelError, Program, run_cluster, run_cta
from .memory import GlobalMemory


@dataclass
class Run:
    prog: Program
    domain: Any
    gmem: GlobalMemory
    seconds: float


def cta_ids(launch: Launch) -> list[tuple[int, int, int]]:
    gx, gy, gz = launch.grid
    return [(x, y, z) for z in range(gz) for y in range(gy) for x in range(gx)]


def execute(module: Module, fn: Function, launch: Launch, domain: Any, trace: bool = False,
            only: int | None = None) -> Run:
    """Run every CTA of ``launch`` (``only``: that CTA alone, by its linear index) in ``domain``."""
    t0 = time.process_time()
    req = dict(fn.directives).get(".reqnctapercluster")
    if req is not None and tuple(req) + (1,) * (3 - len(req)) != launch.cluster:
        raise KernelError(module.path, fn.line, fn.col, f"{fn.name} requires clusters of {list(req)} CTAs "
                          f"(.reqnctapercluster), the launch gives cluster = {list(launch.cluster)}")
    tensors = list(launch.tensors().values())
    gmem = GlobalMemory(tensors, {launch.computes.output.tensor})
    domain.init_memory(gmem)
    prog = decode(module, fn, launch, domain, gmem, trace)
    ids = cta_ids(launch)
    cl = launch.cluster
    if cl == (1, 1, 1):
        for k, cid in enumerate(ids):
            if only is not None and k != only:
                continue
            run_cta(prog, CTA(prog, cid, k))
        return Run(prog, domain, gmem, time.process_time() - t0)
    # a cluster's CTAs run together (barrier.cluster, another CTA's mbarrier and shared memory, a CTA pair's MMA);
    # ``only`` runs the cluster that holds that CTA
    clusters: dict[tuple[int, ...], list[tuple[int, tuple[int, int, int]]]] = {}
    for k, cid in enumerate(ids):
        clusters.setdefault(tuple(c // n for c, n in zip(cid, cl)), []).append((k, cid))
    for members in clusters.values():
        if only is not None and all(k != only for k, _ in members):
            continue
        cluster = Cluster()
        run_cluster(prog, [CTA(prog, cid, k, cluster) for k, cid in members])
    return Run(prog, domain, gmem, time.process_time() - t0)


__all__ = ["Run", "cta_ids", "execute"]
