"""Memos held on the objects they memoise.

A per-process memo keyed by ``id(obj)`` is wrong when a later object reuses the id; one keyed by the object's
value pays for hashing it.  ``held`` keeps the memo in the object's own ``__dict__`` instead (the layouts, maps,
formulas and cells are frozen dataclasses): it lives exactly as long as the object.
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, TypeVar

_T = TypeVar("_T")


class HeldMemo(dict):
    """A memo held on the object it memoises (``held``): it dies with the object, so no store is keyed by an
    ``id()`` a later object may reuse; it pickles and copies as an empty memo (a map sent to a worker carries
    no Z3 terms), and ``forget_held`` makes every one stale (cold benchmark runs)."""

    __slots__ = ("generation",)
    generation: int  # the ``_GENERATION`` it was made in (set by ``held``)

    def __reduce__(self) -> tuple[Any, ...]:
        return (HeldMemo, ())


_PREFIX = "_held_"
_GENERATION = [0]  # bumped by ``forget_held`` (``clear_cells``): a memo of an older generation is empty


def held(obj: object, name: str, key: Hashable, build: Callable[[], _T]) -> _T:
    """``build()`` memoised under ``key`` in the memo ``name`` held on ``obj`` (a frozen dataclass: the memo
    sits in its ``__dict__``, outside its fields, so equality, hashing and ``repr`` do not see it)."""
    d = obj.__dict__
    name = _PREFIX + name  # never an attribute's or method's name
    memo = d.get(name)
    if memo is None or getattr(memo, "generation", None) != _GENERATION[0]:
        memo = d[name] = HeldMemo()
        memo.generation = _GENERATION[0]
    if key in memo:
        return memo[key]
    if len(memo) > 1 << 12:
        memo.clear()
    out = memo[key] = build()
    return out


def forget_held() -> None:
    """Make every held memo empty (``layout.model.clear_cells``: cold benchmark runs)."""
    _GENERATION[0] += 1


__all__ = ["HeldMemo", "forget_held", "held"]
