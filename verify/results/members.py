"""A command run on several members of a family (``checks.members``): each member's result, the worst status, and
the words of a binding (``N = 8..32 step 8``), worded by ``outputs.text_results``."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from ..layout.family import Param


# From best to worst: the overall status of a family is the worst of its members'.
ORDER = {"conform": ("equal", "tiled", "permuted", "replicated", "differs", "unspecified", "incompatible", "unknown", "error"),
         "handoff": ("free", "shuffle", "shared", "missing", "unspecified", "incompatible", "unknown", "error"),
         "reduce": ("exact", "inexact", "unknown", "error")}


def binding_text(env: Mapping[str, int]) -> str:
    return ", ".join(f"{k} = {v}" for k, v in env.items())


def _runs(values: list[int]) -> str:
    """``8..32 step 8, 48`` where the values run in steps, else the values (``1, 2, 4, 8``)."""
    p = Param("x", tuple(values))
    return p.describe() if any(n >= 3 for _, _, n in p.runs()) else ", ".join(map(str, values))


def bindings_text(envs: Sequence[Mapping[str, int]]) -> str:
    """``N = 8..32 step 8`` for bindings of one parameter, else each binding."""
    if envs and all(len(e) == 1 for e in envs) and len({next(iter(e)) for e in envs}) == 1:
        name = next(iter(envs[0]))
        return f"{name} = {_runs(sorted(e[name] for e in envs))}"
    return "; ".join(binding_text(e) for e in envs)


@dataclass(frozen=True)
class Incompatible:
    """A member the command cannot run on (its extents do not tile the other side, say)."""

    status: str
    message: str

    def exit_code(self, *_: Any) -> int:
        return 1

    def to_json(self) -> dict[str, Any]:
        return {"status": self.status, "message": self.message}


@dataclass(frozen=True)
class FamilyResult:
    """A command run on several members of a family (see the module docstring)."""

    command: str  # conform | handoff
    label: str  # "handoff A -> B"
    params: tuple[Param, ...]
    members: tuple[tuple[dict[str, int], Any], ...]  # (binding, ConformResult | HandoffResult | Incompatible)

    @property
    def status(self) -> str:
        order = ORDER[self.command]
        return max((r.status for _, r in self.members), key=lambda s: order.index(s) if s in order else len(order))

    def exit_code(self, *args: Any) -> int:
        return max(r.exit_code(*args) for _, r in self.members)

    def first(self) -> tuple[dict[str, int], Any]:
        """The first member with the overall status."""
        return next((env, r) for env, r in self.members if r.status == self.status)

    def groups(self) -> list[tuple[str, list[dict[str, int]]]]:
        order = ORDER[self.command]
        by: dict[str, list[dict[str, int]]] = {}
        for env, r in self.members:
            by.setdefault(r.status, []).append(env)
        return sorted(by.items(), key=lambda kv: order.index(kv[0]) if kv[0] in order else len(order))

    def to_json(self) -> dict[str, Any]:
        env, r = self.first()
        return {"schema": 1, self.command: {
            "label": self.label,
            "family": {p.name: list(p.values) for p in self.params},
            "status": self.status,
            "members": [{"params": e, "status": m.status} for e, m in self.members],
            "first": {"params": env, **r.to_json().get(self.command, r.to_json())},
        }}
