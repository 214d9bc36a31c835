"""``ptx-verify handoff``'s result (``checks.handoff``): where each element of TO comes from in FROM (free, a shuffle,
or missing), worded by ``outputs.text_results``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..layout.model import Layout
from ..layout.sparse import is_sparse
from ..witnesses import Witness, as_witness, witness_json
from . import CheckResult


@dataclass(frozen=True)
class Step:
    """Where TO's element ``i`` of ``lane`` comes from: element ``j`` (tile ``tile``, element ``element``
    of FROM) of ``src_lane``; ``src_lane`` is None when no lane holds the cell."""

    lane: int
    i: int
    src_lane: int | None
    j: int | None
    tile: int | None
    element: str | None

    @property
    def moves(self) -> bool:
        return self.src_lane is not None and self.src_lane != self.lane


@dataclass(frozen=True)
class HandoffResult:
    source: Layout
    target: Layout
    tiled: Layout
    grid: tuple[int, int]
    status: str  # free | shuffle | missing | unspecified | unknown | error
    plan: tuple[Step, ...]
    counterexample: Witness | None
    message: str
    engines: dict[str, str]
    checks: tuple[CheckResult, ...]
    seconds: float = field(default=0.0, compare=False)
    notes: tuple[str, ...] = ()  # what is compared and what else is needed (a sparse A: compressed view)

    def __post_init__(self) -> None:
        object.__setattr__(self, "counterexample", as_witness(self.counterexample))

    @property
    def moving(self) -> tuple[Step, ...]:
        return tuple(s for s in self.plan if s.moves)

    @property
    def lanes_receiving(self) -> int:
        return len({s.lane for s in self.moving})

    @property
    def lanes_sending(self) -> int:
        return len({s.src_lane for s in self.moving})

    def exit_code(self) -> int:
        return 0 if self.status == "free" else 1

    def warp_exchange(self) -> tuple[tuple[int, int, int], ...]:
        """(destination warp, source warp, values) for every pair of different warps values move between."""
        counts: dict[tuple[int, int], int] = {}
        for s in self.plan:
            if s.src_lane is not None and warp_of(s.src_lane) != warp_of(s.lane):
                key = (warp_of(s.lane), warp_of(s.src_lane))
                counts[key] = counts.get(key, 0) + 1
        return tuple((d, src, n) for (d, src), n in sorted(counts.items()))

    def identity(self) -> bool:
        """Whether every (lane, i) of TO is (lane, i) of FROM itself: the same layout, nothing to do."""
        return self.grid == (1, 1) and all(s.src_lane == s.lane and s.j == s.i for s in self.plan
                                           if s.src_lane is not None)

    def mapping_groups(self) -> list[tuple[tuple[int, ...], tuple[Step, ...]]]:
        """Lanes with the same element mapping, together (for a ``free`` handoff)."""
        n = self.target.n_elements
        groups: dict[tuple, list[int]] = {}
        for lane in range(self.target.threads):
            steps = self.plan[lane * n:(lane + 1) * n]
            groups.setdefault(tuple((s.j, s.tile) for s in steps), []).append(lane)
        out = []
        for lanes in sorted(groups.values()):
            out.append((tuple(lanes), self.plan[lanes[0] * n:(lanes[0] + 1) * n]))
        return out

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "handoff": {
            "from": self.source.id, "to": self.target.id,
            **({"params": bound_params(self.source, self.target)}
               if self.source.params_bound or self.target.params_bound else {}),
            "tiles": {"down": self.grid[0], "across": self.grid[1], "rows": self.source.rows, "cols": self.source.cols},
            "views": {"from": _view(self.source), "to": _view(self.target)},
            "status": self.status,
            "counterexample": witness_json(self.counterexample),
            "message": self.message,
            "lanes_receiving": self.lanes_receiving,
            "values_moving": len(self.moving),
            "warp_exchange": [{"to_warp": d, "from_warp": w, "values": k} for d, w, k in self.warp_exchange()],
            "notes": list(self.notes),
            "plan": [{"lane": s.lane, "i": s.i, "element": self.target.element_name(s.i), "src_lane": s.src_lane,
                      "src_i": s.j, "tile": s.tile, "src_element": s.element} for s in self.plan],
            "engines": dict(self.engines),
            "checks": {c.check: {"status": c.status, "counterexample": witness_json(c.counterexample), "message": c.message,
                                 "engines": dict(c.engines)} for c in self.checks},
        }}


def bound_params(source: Layout, target: Layout) -> dict[str, int]:
    """The members the two sides are: each name once where the sides agree, ``FROM NAME`` and ``TO NAME`` where
    they take it apart (``--from-param``/``--to-param``)."""
    f, t = dict(source.params_bound), dict(target.params_bound)
    out: dict[str, int] = {}
    for k in [*f, *(k for k in t if k not in f)]:
        if k in f and k in t and f[k] != t[k]:
            out[f"FROM {k}"], out[f"TO {k}"] = f[k], t[k]
        else:
            out[k] = f.get(k, t.get(k))  # type: ignore[assignment]
    return out


def _view(lay: Layout) -> dict[str, Any]:
    """Which view of a layout's matrix a handoff compares: ``dense`` (its rows x cols), ``compressed``
    (a sparse A: the kept values, rows x K * kept / chunk, with the logical extent), ``unspecified`` (wmma)."""
    if lay.unspecified:
        return {"view": "unspecified", "rows": lay.rows, "cols": lay.cols}
    if is_sparse(lay):
        md = lay.map.model
        return {"view": "compressed", "rows": lay.rows, "cols": lay.cols, "logical_cols": md.k,
                "kept": md.kept, "chunk": md.chunk}
    return {"view": "dense", "rows": lay.rows, "cols": lay.cols}


WARP = 32  # threads that can exchange registers by shuffle (shfl.sync): one warp


def warp_of(thread: int) -> int:
    return thread // WARP
