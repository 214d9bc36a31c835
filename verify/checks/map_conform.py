"""``conform`` for layouts with no register facts: is the map someone wrote the spec's map?

A spec ``[[layout]]`` (a shared-memory tile, a Tensor Memory layout, a storage layout) is compared with a map
given in a notation: index code over the spec's own input names (any kind), or a shared-memory tile written in
CuTe or Triton (``shared`` kinds).  Both engines decide ``checks.maps.same`` at every compared point.

Which members are compared: a given map stated over the family's parameters is compared with the whole family
(every binding); a concrete given map with each member of the same input sizes (``--param`` narrows them).  The
verdict is ``equal`` where a compared member is the given map (its binding is named), ``differs`` with the
first differing point otherwise, ``unknown`` where an engine could not decide and none differs, and
``differs`` with the reason where no member has the given's sizes (nothing is compared then).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from ..layout.algebra import bind
from ..layout.model import MapLayout
from ..layout.named import NamedMap, bindings
from ..results import CheckResult
from .fragment import DEFAULT_TIMEOUT
from .maps import same


class MapConformError(ValueError):
    """The given map cannot be compared with the spec (other input or output names); one line."""


@dataclass(frozen=True)
class MapConformResult:
    spec_id: str
    notation: str
    source: str
    compared: tuple[tuple[tuple[tuple[str, int], ...], CheckResult], ...]  # (member binding, decision)
    reason: str = ""  # why nothing was compared

    @property
    def status(self) -> str:
        if not self.compared:
            return "differs"
        if any(c.status == "proved" for _, c in self.compared):
            return "equal"
        if any(c.status == "refuted" for _, c in self.compared):
            return "differs"
        return "unknown"

    @property
    def member(self) -> dict[str, int] | None:
        """The binding found equal (or, differing, the first compared)."""
        for env, c in self.compared:
            if c.status == "proved":
                return dict(env)
        return dict(self.compared[0][0]) if self.compared else None

    def exit_code(self) -> int:
        return 0 if self.status == "equal" else 1

    def to_json(self) -> dict[str, Any]:
        return {"schema": 1, "conform": {
            "layout": self.spec_id, "given": {"notation": self.notation, "source": self.source},
            "status": self.status, "member": self.member, "reason": self.reason or None,
            "compared": [{"params": dict(env), "status": c.status, "engines": dict(c.engines),
                          "counterexample": c.counterexample, "message": c.message} for env, c in self.compared]}}


def _sizes(m: NamedMap, env: Mapping[str, int]) -> tuple[tuple[str, int], ...]:
    return tuple((d.name, int(d.at(env))) for d in m.inputs)


def conform_map(spec: MapLayout, given: NamedMap, notation: str, source: str,
                params: Mapping[str, int] | None = None, timeout: float = DEFAULT_TIMEOUT) -> MapConformResult:
    """Is ``given`` the map of ``spec`` (of one of its members)?  ``params`` binds some of the spec's
    parameters first.  Raises ``MapConformError`` where the names cannot match."""
    want_in, want_out = [d.name for d in spec.map.inputs], sorted(d.name for d in spec.map.outputs)
    got_in, got_out = [d.name for d in given.inputs], sorted(d.name for d in given.outputs)
    if got_in != want_in or got_out != want_out:
        raise MapConformError(f"{spec.id} maps ({', '.join(want_in)}) -> ({', '.join(want_out)}); the given map "
                              f"({', '.join(got_in)}) -> ({', '.join(got_out)})")
    base = bind(spec.map, **params) if params else spec.map
    names = lambda m: [p.name for p in m.params]  # noqa: E731
    if given.params:  # stated over the family's parameters: the whole family at once
        if names(given) != names(base):
            raise MapConformError(f"the given map's parameters ({', '.join(names(given))}) are not the spec's "
                                  f"({', '.join(names(base)) or 'none'})")
        check = same(base, given, timeout, ("spec", "given"))
        return MapConformResult(spec.id, notation, source, (((), check),))
    want = _sizes(given, {})
    compared = []
    for env in bindings(base):
        if _sizes(base, env) != want:
            continue
        member = bind(base, **env) if env else base
        check = same(member, given, timeout, ("spec", "given"))
        compared.append((tuple(sorted({**(params or {}), **env}.items())), check))
        if check.status == "proved":
            break
    reason = "" if compared else (
        "no member of " + spec.id + " has the given's sizes (" + ", ".join(f"{n} {v}" for n, v in want) + ")")
    return MapConformResult(spec.id, notation, source, tuple(compared), reason)


__all__ = ["MapConformError", "MapConformResult", "conform_map"]
