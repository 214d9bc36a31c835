"""Families everywhere: a command that compares layouts, run on every member of a family.

A family (wgmma ``N``, ldmatrix/tcgen05 ``NUM``, the block-scale selectors) is one layout per parameter
value.  ``conform`` and ``handoff`` answer for a family in one of three ways:

* **one member**, named by the user (``--param N=24``, ``params=`` in the API);
* **the member the given fixes**: a given layout written for one size (a 64 x 24 CuTe D) is compared with
  the member of that extent, and the output says which (``conform``);
* **every member**: the answer holds for every parameter value, or the output names the values where it
  does not (a handoff between two families, or a given written over the parameter: index code over ``N``).

``FamilyResult`` holds the per-member results (each an ordinary ``ConformResult`` / ``HandoffResult`` of
one instance, decided by both engines) and summarises them: the overall status is the worst member's,
members are grouped by status, and the first member with the worst status is shown in full.
"""
from __future__ import annotations

from typing import Any, Callable, Mapping

from ..layout.family import Param
from ..layout.model import Layout
from ..results.members import FamilyResult, Incompatible, binding_text, bindings_text
from ..layout.params import FamilyError, bindings, check, check_side, foreign, own, side_of, with_values

def params_of(*layouts: Layout) -> tuple[Param, ...]:
    """The parameters of ``layouts`` (each name once; the same name must have the same values)."""
    out: dict[str, Param] = {}
    for lay in layouts:
        for p in lay.domain.params:
            if p.name in out and out[p.name] != p:
                raise FamilyError(f"{p.name} takes {out[p.name].describe()} in one layout and {p.describe()} in the "
                                  "other: give --param to pick a member of each")
            out.setdefault(p.name, p)
    return tuple(out.values())


def member(lay: Layout, env: Mapping[str, int]) -> Layout:
    """``lay`` at ``env`` (only its own parameters; a plain layout is itself)."""
    if not lay.is_family:
        return lay
    return lay.instance(**{p.name: env[p.name] for p in lay.domain.params})


def run_members(command: str, label: str, params: tuple[Param, ...], envs: list[dict[str, int]],
                run: Callable[[dict[str, int]], Any]) -> Any:
    """``run`` on each binding; a single binding gives its own result, several a ``FamilyResult``."""
    results = tuple((env, run(env)) for env in envs)
    if len(results) == 1:
        return results[0][1]
    return FamilyResult(command, label, params, results)


# ----------------------------------------------------------------------------- the commands

def _shown(given: Layout) -> str:
    """``index FILE``, or ``cute '((4,8),...)'`` for text given inline."""
    notation = getattr(given.map, "notation", "") or "layout"
    if given.provenance.spec_path not in ("", "argument"):
        return f"{notation} {given.provenance.spec_path}"
    text = " ".join(given.provenance.formula_text.split())
    return f"{notation} {text if len(text) <= 60 else text[:57] + '...'!r}"


def read_as(like: Layout, read: Callable[[Layout], Layout], params: Mapping[str, int] | None = None,
            strict: bool = True) -> Layout:
    """A given text read as a layout of ``like``'s operand (``read(like)`` is a notation importer).

    ``like`` plain: ``read(like)``.  ``like`` a family: the member ``params`` names; else the text as a family
    when it reads the family's parameters (index code over ``N``: ``read`` returns a family layout); else the
    one member whose extent and domain the text has, tagged with its binding (``params_bound``), and
    ``FamilyError`` when none or several fit.  A text that fits no member raises the first member's
    positioned ``NotationError``.  Names of ``params`` the family lacks are values index code may read
    (``layout.params``, rule 1): the given carries those it read in ``params_bound``; ``strict``: one it does
    not read is an error naming the valid ones (``False``: another side may read it, and the command checks
    every side's names at once)."""
    from ..layout.notations.errors import NeedsMember, NotationError
    fam = side_of(like)
    extra = foreign(params, fam)
    chosen = own(params, fam)

    def done(g: Layout) -> Layout:
        if strict:
            check(extra, [fam, side_of(g)])
        return g

    if not like.is_family:
        check(chosen, [fam])
        return done(read(with_values(like, extra)))
    envs = bindings(like.domain.params, chosen)
    if len(envs) > 1:
        try:
            whole = read(with_values(like, extra))
        except NeedsMember:
            whole = None
        if whole is not None:
            return done(whole)
    reads: list[tuple[dict[str, int], Layout, Layout]] = []
    failed: list[NotationError] = []
    for env in envs:
        m = member(like, env)
        try:
            reads.append((env, m, read(with_values(m, extra))))
        except NotationError as e:
            failed.append(e)
    if not reads:
        raise failed[0]
    fits = [(env, m, g) for env, m, g in reads
            if (g.threads, g.n_elements, g.rows, g.cols) == (m.threads, m.n_elements, m.rows, m.cols)]
    if len(envs) == 1:
        fits = reads
    if len(fits) == 1:
        import dataclasses
        env, _, g = fits[0]
        read_extra = tuple((k, v) for k, v in g.params_bound if k in extra)
        return done(dataclasses.replace(g, params_bound=tuple(env.items()) + read_extra))
    g = reads[0][2]
    if not fits and _block_tile(reads):
        return done(g)  # a block tile: conform_any picks the member it is tiled from
    if not fits:
        sizes = ", ".join(f"{binding_text(e)}: {m.threads} x {m.n_elements}, {m.rows} x {m.cols}"
                          for e, m, _ in reads[:3])
        raise FamilyError(f"the given ({g.threads} threads x {g.n_elements} elements, {g.rows} x {g.cols}) is no "
                          f"member of {like.id} ({sizes}{', ...' if len(reads) > 3 else ''}); give --param NAME=VALUE "
                          "to compare it with one member anyway")
    raise FamilyError(f"the given fits every member of {like.id} it was read against "
                      f"({bindings_text([e for e, _, _ in fits])}): give --param NAME=VALUE to pick one")


def _block_tile(reads: list[tuple[dict[str, int], Layout, Layout]]) -> bool:
    """Whether the given is a block tile: over more points and a larger extent than every member it was read
    against, and reading no parameter (it states its own domain: Triton, a TiledMMA, index code with threads)."""
    return all(not any(k in m.params_bound for k, _ in g.params_bound) and g.threads * g.n_elements > m.threads * m.n_elements
               and (g.rows, g.cols) != (m.rows, m.cols) for _, m, g in reads)


def conform_any(spec: Layout, given: Layout, timeout: float, params: Mapping[str, int] | None = None,
                block: tuple[int, int] | None = None) -> Any:
    """``conform`` of a given layout against any spec layout: a plain spec once; a family against the member
    ``params`` names, or the member the given was read as (``read_as`` tags it), or, for a given that is a
    family itself, every member (``FamilyResult``)."""
    from .conform import conform
    check(params, [side_of(spec), side_of(given)])  # every name had by a side (index code's own values too)
    if not spec.is_family:
        return conform(spec, given, timeout, block=block)
    ps = params_of(spec, given) if given.is_family else spec.domain.params
    names = {p.name for p in ps}
    chosen = {k: v for k, v in (dict(params or {}) or dict(given.params_bound)).items() if k in names}
    envs = bindings(ps, chosen)
    if given.is_family or len(envs) == 1:
        note = "" if names & set(params or {}) or given.is_family else "the member whose extent the given has"
        label = f"conform {spec.id} <- {_shown(given)}"

        def run(env: dict[str, int]) -> Any:
            import dataclasses
            res = conform(member(spec, env), member(given, env), timeout, block=block)
            return dataclasses.replace(res, member_note=f"{binding_text(env)}, {note}") if note else res

        return run_members("conform", label, ps, envs, run)
    fits = [env for env in envs
            if (member(spec, env).threads, member(spec, env).n_elements, member(spec, env).rows,
                member(spec, env).cols) == (given.threads, given.n_elements, given.rows, given.cols)]
    why = "the member whose extent the given has"
    if not fits:
        fits, why = _largest_tile(spec, given, envs, block)
    if len(fits) != 1:
        raise FamilyError(f"{spec.id} is a family and the given fits {len(fits)} of its members: give --param "
                          "NAME=VALUE to pick one")
    import dataclasses
    res = conform(member(spec, fits[0]), given, timeout, block=block)
    return dataclasses.replace(res, member_note=f"{binding_text(fits[0])}, {why}")


def _largest_tile(spec: Layout, given: Layout, envs: list[dict[str, int]],
                  block: tuple[int, int] | None) -> tuple[list[dict[str, int]], str]:
    """A block tile given against a family: the member with the most elements (then columns) whose threads and
    elements divide the given's and whose extent fits in its block, the one whose tiles are fewest."""
    from .tiled import can_tile
    rows, cols = block if block is not None else (given.rows, given.cols)
    ok = [env for env in envs if can_tile(member(spec, env), given)
          and member(spec, env).rows <= rows and member(spec, env).cols <= cols]
    if not ok:
        return [], ""
    best = max(ok, key=lambda env: (member(spec, env).n_elements, member(spec, env).cols, member(spec, env).rows))
    return [best], "the largest member that tiles the given (give --param to compare with another)"


FROM, TO = "FROM", "TO"


def _side_names(lay: Layout) -> dict[str, Param | int]:
    """A side's parameters: a family's (name -> ``Param``), or a member's bound values (name -> value: a given
    layout read as the member its extent or ``--param`` fixes)."""
    return {p.name: p for p in lay.domain.params} if lay.is_family else dict(lay.params_bound)


def side_bindings(source: Layout, target: Layout, params: Mapping[str, int] | None = None,
                  from_params: Mapping[str, int] | None = None, to_params: Mapping[str, int] | None = None
                  ) -> tuple[tuple[Param, ...], list[tuple[dict[str, int], dict[str, int], dict[str, int]]]]:
    """The members of a handoff between two layouts, each side's parameters bound (docs/layouts.md):

    * ``from_params`` / ``to_params`` (``--from-param`` / ``--to-param``): that side's own value;
    * ``params`` (``--param``): the value of the name on every side that has it and no value of its own;
    * a name both sides have and neither binds alone is one parameter: the same value on both sides (the
      member a given side's extent fixes, or every value the two have alike);
    * any other name: every value of its side.

    Returns the parameters that vary (named ``NAME``, or ``FROM NAME`` / ``TO NAME`` where the two sides have
    the name but take it apart) and, for every member, (that binding, FROM's, TO's).  ``FamilyError`` for a
    name a side does not have, a value it does not take, or a shared name whose values differ."""
    sides = {FROM: (source, _side_names(source), dict(from_params or {})),
             TO: (target, _side_names(target), dict(to_params or {}))}
    params = dict(params or {})
    side = {role: side_of(lay, f"{role} {lay.id}") for role, (lay, _, _) in sides.items()}
    for role, (_, _, own_values) in sides.items():
        check_side(own_values, side[role], f"--{role.lower()}-param")
    for name, value in params.items():  # every side that has the name and no value of its own takes it
        check({name: value}, [side[r] for r in sides if name not in sides[r][2]] or list(side.values()))
    fixed: dict[str, dict[str, int]] = {FROM: {}, TO: {}}
    for role, (lay, names, own_values) in sides.items():
        for name in names:
            if name in own_values or name in params:
                fixed[role][name] = own_values[name] if name in own_values else params[name]
    variables: list[tuple[Param, tuple[str, ...]]] = []  # (the parameter shown, the sides it binds)
    other = {FROM: TO, TO: FROM}
    for role, (lay, names, _own) in sides.items():
        for name, have in names.items():
            if not isinstance(have, Param) or name in fixed[role]:
                continue
            o_lay, o_names, o_own = sides[other[role]]
            o_have = o_names.get(name)
            if o_have is None or name in o_own:  # this side's own, or bound apart on the other side
                shown = name if o_have is None else f"{role} {name}"
                variables.append((Param(shown, have.values), (role,)))
            elif not isinstance(o_have, Param) or name in fixed[other[role]]:  # the other side's value, shared
                o_fixed = fixed[other[role]]
                value = o_fixed[name] if name in o_fixed or not isinstance(o_have, int) else o_have
                if value not in have.values:
                    raise FamilyError(f"{name} = {value} ({other[role]} {o_lay.id}) is not a value of {role} {lay.id}'s "
                                      f"{name} ({have.describe()}): bind each side with --from-param and --to-param")
                fixed[role][name] = value
            elif role == FROM:  # both families, one parameter (TO's turn finds it bound)
                if o_have != have:
                    raise FamilyError(f"{name} takes {have.describe()} in {lay.id} and {o_have.describe()} in "
                                      f"{o_lay.id}: give --param {name}=VALUE, or --from-param and --to-param to "
                                      "bind each side")
                variables.append((have, (FROM, TO)))
    import itertools
    out = []
    for combo in itertools.product(*(p.values for p, _ in variables)):
        binding: dict[str, int] = {}
        env_from, env_to = dict(fixed[FROM]), dict(fixed[TO])
        for (p, roles), v in zip(variables, combo):
            binding[p.name] = v
            for role in roles:
                (env_from if role == FROM else env_to)[p.name.split(" ")[-1]] = v
        out.append((binding, env_from, env_to))
    return tuple(p for p, _ in variables), out


def read_values(like: Layout, other: Layout, params: Mapping[str, int], own_values: Mapping[str, int]) -> dict[str, int]:
    """What one side of a handoff given in a notation is read with: the ``params`` names its family has or the
    other side's family lacks (index code may read them), then its own values; ``side_bindings`` then checks
    every name against both sides (``layout.params``)."""
    names, theirs = {p.name for p in like.domain.params}, {p.name for p in other.domain.params}
    return {k: v for k, v in params.items() if k in names or k not in theirs} | dict(own_values)


def handoff_any(source: Layout, target: Layout, timeout: float, params: Mapping[str, int] | None = None,
                from_params: Mapping[str, int] | None = None, to_params: Mapping[str, int] | None = None) -> Any:
    """``handoff`` between any two layouts: plain layouts once; with families, every member or the ones the
    bindings name (``side_bindings``).  A member whose extents cannot be tiled onto each other is
    ``incompatible`` (exit 1), the others are decided as usual."""
    from .handoff import HandoffError, handoff
    shown, members = side_bindings(source, target, params, from_params, to_params)
    if not source.is_family and not target.is_family:
        return handoff(source, target, timeout)
    by_env = {tuple(sorted(e.items())): (f, t) for e, f, t in members}

    def run(env: dict[str, int]) -> Any:
        env_from, env_to = by_env[tuple(sorted(env.items()))]
        try:
            return handoff(member(source, env_from), member(target, env_to), timeout)
        except HandoffError as e:
            if len(members) == 1:
                raise
            return Incompatible("incompatible", str(e))

    return run_members("handoff", f"handoff {source.id} -> {target.id}", shown, [e for e, _, _ in members], run)


def reduce_any(lay: Layout, axis: str, masks: tuple[int, ...], timeout: float,
               params: Mapping[str, int] | None = None) -> Any:
    """A butterfly reduction inside ``lay`` (``verify.checks.reduce``): a plain layout once, a family on every
    member or the one ``params`` names."""
    from .reduce import reduction
    check(params, [side_of(lay)])
    names = {p.name for p in lay.domain.params}
    envs = bindings(lay.domain.params, {k: v for k, v in (params or {}).items() if k in names})
    label = f"reduce {lay.id} along {axis} by shfl.xor {', '.join(map(str, masks))}"
    return run_members("reduce", label, lay.domain.params, envs,
                       lambda env: reduction(member(lay, env), axis, masks, timeout))


__all__ = ["conform_any", "handoff_any", "read_as", "read_values", "reduce_any", "side_bindings", "FamilyError", "FamilyResult", "Incompatible", "binding_text", "bindings", "bindings_text", "member",
           "params_of", "run_members"]
