"""``conform`` of a map layout (``verify.checks.map_conform.MapConformResult``) as text."""
from __future__ import annotations

from typing import Any


def _params(env: dict[str, int] | tuple) -> str:
    items = dict(env).items()
    return ", ".join(f"{k} = {v}" for k, v in items)


def render_map_conform(r: Any) -> str:
    """The verdict line, then each compared member with both engines' verdicts and the first difference."""
    member = f" ({_params(r.member)})" if r.member else ""
    out = [f"conform {r.spec_id}{member} <- {r.notation} {r.source}: {r.status}"]
    if r.reason:
        out.append(f"  {r.reason}")
    for env, c in r.compared:
        engines = ", ".join(f"{k} {v}" for k, v in sorted(c.engines.items()))
        head = f"  {_params(env)}: " if env else "  "
        out.append(f"{head}{c.status} ({engines}): {c.message}")
    return "\n".join(out) + "\n"


__all__ = ["render_map_conform"]
