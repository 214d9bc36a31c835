"""``ptx-verify conform``'s result (``checks.conform``): a given layout against a spec layout, with the permutation
or replication that relates them, worded by ``outputs.text_results``."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ..layout.elements import number_ranges
from ..layout.model import Layout
from ..witnesses import Witness, as_witness, witness_json
from . import CheckResult


STATUSES = ("equal", "tiled", "permuted", "replicated", "differs", "unspecified", "unknown", "error")


@dataclass(frozen=True)
class Permutation:
    """Per lane, ``given element i`` holds the cell that spec element ``perm[i]`` holds.

    ``groups``: ((lanes, perm), ...), lanes with the same permutation together, in lane order.
    """

    groups: tuple[tuple[tuple[int, ...], tuple[int, ...]], ...]
    prefix: str

    @property
    def uniform(self) -> bool:
        return len(self.groups) == 1

    def of_lane(self, lane: int) -> tuple[int, ...]:
        for lanes, perm in self.groups:
            if lane in lanes:
                return perm
        raise KeyError(lane)

    def cycles_text(self, perm: tuple[int, ...]) -> str:
        """``a0<->a2, a1<->a3`` for swaps; ``(a0 a1 a2)`` for longer cycles (given a0 holds spec a1's
        cell, a1 holds a2's, a2 holds a0's); ``as spec`` for the identity."""
        seen: set[int] = set()
        out = []
        for s in range(len(perm)):
            if s in seen or perm[s] == s:
                continue
            cyc, x = [], s
            while x not in seen:
                seen.add(x)
                cyc.append(x)
                x = perm[x]
            names = [f"{self.prefix}{x}" for x in cyc]
            out.append(f"{names[0]}<->{names[1]}" if len(cyc) == 2 else "(" + " ".join(names) + ")")
        return ", ".join(out) if out else "as spec"

    def text(self) -> str:
        if self.uniform:
            return self.cycles_text(self.groups[0][1])
        return "; ".join(f"lanes {number_ranges(list(lanes))}: {self.cycles_text(perm)}" for lanes, perm in self.groups)

    def to_json(self) -> dict[str, Any]:
        return {"uniform": self.uniform, "text": self.text(),
                "lanes": [{"lanes": list(lanes), "given_to_spec": list(perm)} for lanes, perm in self.groups]}


@dataclass(frozen=True)
class Replication:
    """The given is ``thread_copies`` x ``value_copies`` copies of the spec: thread t acts as spec lane
    ``t mod threads``, element i as spec element ``projection[i]`` (``copy_bits`` removed)."""

    thread_copies: int
    value_copies: int
    copy_bits: tuple[int, ...] | None  # None: whole blocks (i mod N)
    projection: tuple[int, ...]
    spec_threads: int

    @property
    def k(self) -> int:
        return self.thread_copies * self.value_copies

    def describe(self) -> str:
        parts = []
        if self.thread_copies > 1:
            parts.append(f"{self.thread_copies} copies along the threads (thread t acts as lane t mod "
                         f"{self.spec_threads})")
        if self.value_copies > 1:
            if self.copy_bits is None:
                parts.append(f"{self.value_copies} copies along the elements (blocks: element i acts as "
                             f"i mod {len(set(self.projection))})")
            else:
                bits = ", ".join(map(str, self.copy_bits))
                parts.append(f"{self.value_copies} copies along element index bit{'s' if len(self.copy_bits) > 1 else ''} "
                             f"{bits}")
        return f"{self.k} copies of the spec: " + " and ".join(parts)

    def to_json(self) -> dict[str, Any]:
        return {"k": self.k, "thread_copies": self.thread_copies, "value_copies": self.value_copies,
                "copy_bits": list(self.copy_bits) if self.copy_bits is not None else "blocks",
                "projection": list(self.projection)}


@dataclass(frozen=True)
class ConformResult:
    """What ``conform`` decided about ``given`` against ``spec``.

    ``status``: ``equal`` | ``permuted`` | ``replicated`` | ``differs`` | ``unknown`` | ``error``;
    ``counterexample``: the first difference (``FragmentDiffers``: ``{"kind": "point", "lane", "i", "element",
    "first" (spec), "second" (given)}``) on the same domain; ``SpecGivenDiffer`` (``extent``/``domain``),
    ``ReplicaDiffers`` (``replica``) or a tiling's witness otherwise);
    ``checks``: the verdict of each step that ran (``equal``, ``permuted``, ``replicated``).
    """

    spec: Layout
    given: Layout
    status: str
    counterexample: Witness | None
    message: str
    engines: dict[str, str]
    checks: tuple[CheckResult, ...]
    permutation: Permutation | None = None
    replication: Replication | None = None
    notation: str = ""
    text: str = ""
    seconds: float = field(default=0.0, compare=False)
    given_checks: tuple[CheckResult, ...] = ()  # the given's own in_range, injective, surjective
    hint: str = ""
    member_note: str = ""  # a family's member compared, and why that one (the given's extent fixed it)
    tiling: Any = None  # a block tile: where each warp's repeats sit (``verify.checks.tiled.Tiling``)

    def __post_init__(self) -> None:
        object.__setattr__(self, "counterexample", as_witness(self.counterexample))

    def exit_code(self, allow_replication: bool = False) -> int:
        return 0 if self.status in ("equal", "tiled") or (self.status == "replicated" and allow_replication) else 1

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "conform": {
            "layout": self.spec.id,
            **({"params": dict(self.spec.params_bound), "member": self.member_note or None}
               if self.spec.params_bound else {}),
            "given": {"notation": self.notation, "text": self.text, "source": self.given.provenance.spec_path,
                      "threads": self.given.threads, "elements": self.given.n_elements,
                      "rows": self.given.rows, "cols": self.given.cols,
                      "lifted": self.given.provenance.derived or None,
                      "checks": {c.check: {"status": c.status, "counterexample": witness_json(c.counterexample),
                                           "message": c.message, "engines": dict(c.engines)}
                                 for c in self.given_checks}},
            "status": self.status,
            "counterexample": witness_json(self.counterexample),
            "permutation": self.permutation.to_json() if self.permutation else None,
            "replication": self.replication.to_json() if self.replication else None,
            **({"tiling": self.tiling.to_json()} if self.tiling is not None else {}),
            "message": self.message,
            "hint": self.hint or None,
            "engines": dict(self.engines),
            "checks": {c.check: {"status": c.status, "counterexample": witness_json(c.counterexample), "message": c.message,
                                 "engines": dict(c.engines)} for c in self.checks},
        }}
