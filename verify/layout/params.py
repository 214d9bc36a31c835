"""``--param NAME=VALUE``: the one rule by which every command and the API bind a family's parameters
(``docs/layouts.md``, "Parameters: --param").

A command reads one or more *sides*: a spec layout, a layout given in a notation, index code, the layouts a
probe runs.  Each side *has* some names (``Side``):

* a family's parameters, each with its values (wgmma ``N = 8..256 step 8``);
* a member's values (a given read as one member of a family: its extent fixed it, or ``--param`` did);
* the names index code reads that it neither defines nor takes as an input (``BK`` in ``off = row * BK +
  col``): only ``--param`` gives them a value.

The rule (``check``):

1. ``--param NAME=V`` binds NAME on every side that has it, and index code reads V;
2. a NAME no side has is one error naming the names they have, with their values (``FamilyError``);
3. a V a family does not take, or other than the member a given side is, is one error naming its values;
4. a family's parameter left unbound: a command that decides takes every member (or the member a given
   side's extent fixes); a command that prints one layout (``table``) asks for it (``need_member``);
5. a name index code reads that nothing binds: a family's values where a family side has the name (the code
   is a family too), else an error at its line asking for ``--param NAME=VALUE``.

Pure functions over immutable values; nothing here reads a command line (``cli.options.params`` does).
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any, Iterable, Mapping, Sequence

from ..formula import Formula, Var, walk
from .family import Param


class FamilyError(ValueError):
    """A family command that cannot run: an unknown parameter or value, a given that fits no member or
    several.  (Re-exported by ``checks.members`` and ``api``.)"""


@dataclass(frozen=True)
class Side:
    """What one side of a command has (module docstring): ``params`` a family's, ``bound`` a member's values,
    ``reads`` the names index code reads that only ``--param`` gives."""

    label: str
    params: tuple[Param, ...] = ()
    bound: tuple[tuple[str, int], ...] = ()
    reads: tuple[str, ...] = ()

    def has(self, name: str) -> bool:
        return name in self.names()

    def names(self) -> tuple[str, ...]:
        out = [p.name for p in self.params] + [k for k, _ in self.bound] + list(self.reads)
        return tuple(dict.fromkeys(out))


def side_of(lay: Any, label: str = "") -> Side:
    """A layout's side: a fragment (``Layout``), a ``[[layout]]`` (``MapLayout``) or a named map; a given read
    as a member carries that member's values (``params_bound``), a family its parameters."""
    params = tuple(getattr(getattr(lay, "domain", None), "params", None) or getattr(lay, "params", ()) or ())
    params = tuple(p for p in params if isinstance(p, Param))
    bound = tuple(getattr(lay, "params_bound", ()) or ())
    return Side(label or str(getattr(lay, "id", "")), params, bound)


def index_side(label: str, text: str, values: Mapping[str, int], variables: tuple[str, ...] = (),
               required: tuple[str, ...] = (), thread: bool = False) -> Side:
    """The side of index code ``text`` (as its reader parses it: ``variables`` its inputs, ``required`` what it
    must define, ``thread`` whether ``lane`` names the thread): the names of ``values`` it reads.  Bad text
    raises the reader's ``FormulaError`` (the parse is memoised: the reader pays nothing more)."""
    from ..formula.index import parse_index
    f = parse_index(text, "x", variables, required, tuple(values), thread)
    return Side(label, reads=reads(f, values))


def reads(formula: Formula, names: Iterable[str]) -> tuple[str, ...]:
    """The names of ``names`` that ``formula`` reads (as variables), in the order the code first reads them."""
    wanted = set(names)
    seen = (n.name for d in formula.definitions for n in walk(d) if isinstance(n, Var) and n.name in wanted)
    return tuple(dict.fromkeys(seen))


def have_text(sides: Sequence[Side]) -> str:
    """``N = 8..256 step 8, BK (read by the index code)``: every name the sides have, once, or ``none``."""
    out: dict[str, str] = {}
    for s in sides:
        for p in s.params:
            out.setdefault(p.name, f"{p.name} = {p.describe()}")
        for k, v in s.bound:
            out.setdefault(k, f"{k} = {v}")
    read = [k for s in sides for k in s.reads if k not in out]
    if read:
        out[""] = ", ".join(dict.fromkeys(read)) + " (read by the index code)"
    return ", ".join(out.values()) or "none"


def _none_text(sides: Sequence[Side]) -> str:
    """``; mma.m16n8k16.A.f16_bf16 is not a family`` (the first side's label) where no side has a name."""
    if any(s.names() for s in sides):
        return ""
    labels = [s.label for s in sides if s.label]
    return f"; {labels[0]} is not a family" if labels else ""


def check(chosen: Mapping[str, int] | None, sides: Sequence[Side], flag: str = "--param") -> None:
    """Every name of ``chosen`` is had by some side (rule 2), and every side that has it takes its value
    (rule 3); ``FamilyError`` otherwise, one line naming what is valid."""
    for name, value in (chosen or {}).items():
        having = [s for s in sides if s.has(name)]
        if not having:
            raise FamilyError(f"{flag} {name}={value}: no parameter {name} here (parameters: {have_text(sides)}"
                              + _none_text(sides) + ")")
        for s in having:
            for p in s.params:
                if p.name == name and value not in p.values:
                    raise FamilyError(f"{flag} {name}={value}: not a value of {name} ({p.describe()})")
            for k, v in s.bound:
                if k == name and v != value and not any(p.name == name for p in s.params):
                    raise FamilyError(f"{flag} {name}={value}: {s.label} is the member {name} = {v}")


def check_side(chosen: Mapping[str, int] | None, side: Side, flag: str) -> None:
    """``check`` of one side's own values (``--from-param``/``--to-param``), its label in the message."""
    for name, value in (chosen or {}).items():
        if not side.has(name):
            raise FamilyError(f"{flag} {name}={value}: {side.label} has no parameter {name} "
                              f"(parameters: {have_text([side])})")
    check(chosen, [side], flag)


def bindings(params: Sequence[Param], chosen: Mapping[str, int] | None = None) -> list[dict[str, int]]:
    """Every binding of ``params`` (in order), or the ones ``chosen`` names (``check``ed against ``params``:
    every name known, every value valid; names not chosen range over all their values)."""
    chosen = dict(chosen or {})
    check(chosen, [Side("", tuple(params))])
    choices = [(p.name, (chosen[p.name],) if p.name in chosen else p.values) for p in params]
    return [dict(zip([n for n, _ in choices], combo)) for combo in itertools.product(*(v for _, v in choices))]


def need_member(lay: Any, chosen: Mapping[str, int]) -> None:
    """Rule 4 for a command that prints one layout: every parameter of ``lay``'s family bound, else one error
    naming each with its values."""
    missing = [p for p in side_of(lay).params if p.name not in chosen]
    if missing:
        raise FamilyError(f"{lay.id} is a family: name its member with "
                          + " ".join(f"--param {p.name}=VALUE ({p.describe()})" for p in missing))


def own(chosen: Mapping[str, int] | None, side: Side) -> dict[str, int]:
    """The values of ``chosen`` that ``side`` has."""
    return {k: v for k, v in (chosen or {}).items() if side.has(k)}


def with_values(lay: Any, values: Mapping[str, int]) -> Any:
    """``lay`` carrying ``values`` beside a member's own in ``params_bound``, for index code read as its operand
    to read (``notations.expr``); ``lay`` itself without values."""
    if not values:
        return lay
    import dataclasses
    return dataclasses.replace(lay, params_bound=tuple(sorted({**dict(lay.params_bound), **values}.items())))


def foreign(chosen: Mapping[str, int] | None, *sides: Side) -> dict[str, int]:
    """The values of ``chosen`` that none of ``sides`` has (index code may read them)."""
    return {k: v for k, v in (chosen or {}).items() if not any(s.has(k) for s in sides)}


__all__ = ["FamilyError", "Side", "bindings", "check", "check_side", "foreign",
           "have_text", "index_side", "need_member", "own", "reads", "side_of", "with_values"]
