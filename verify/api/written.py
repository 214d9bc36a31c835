"""The layouts people write: a notation read as a layout (given), conform, block tiles, handoff, reductions, wmma per architecture."""
from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any


from ..catalog import bundled as _bundled
from ..checks.fragment import DEFAULT_TIMEOUT
from ..layout.model import Layout, Spec
from .catalog import _MAX_DIM, _a_layout, _specs, _timeout, layout, load

if TYPE_CHECKING:
    from ..results.conform import ConformResult
    from ..results.handoff import HandoffResult
    from ..results.members import FamilyResult


def _like(like: Layout | str, specs: Iterable[Spec] | str | Path | None) -> Layout:
    _a_layout(like, "like", ids=True)
    if isinstance(like, Layout):
        return like
    if specs is None or isinstance(specs, (str, Path)):
        specs = load(str(specs) if specs is not None else _bundled.resolve().path)
    found = layout(specs, like)
    if not isinstance(found, Layout):  # a map layout's id (it has no threads and registers to compare)
        raise TypeError(f"{like} is not a register fragment")
    return found


def given(notation: str, text: str | bytes, like: Layout | str, *, specs: Iterable[Spec] | str | Path | None = None,
          source: str = "argument", params: Mapping[str, int] | None = None, strict: bool = True,
          **options: Any) -> Layout:
    """A layout someone wrote, in a registered notation (``api.notations()``: ``cute``, ``triton``, ``index``,
    ``table``...), as a layout of ``like``'s instruction operand (a spec ``Layout`` or its id).  ``options``
    are the notation's own (``thr_id`` for CuTe).  ``like`` a family: the member ``params`` names, or the member
    whose extent the text has (tagged in ``params_bound``), or, for index code over the parameters, a family.
    A name of ``params`` the family lacks is a value index code may read (``verify.layout.params``), kept in
    ``params_bound``; one the text does not read is a ``FamilyError`` (``strict=False``: not, for a caller that
    checks several sides' names at once, as ``handoff`` does).
    Bad text: ``NotationError`` with line and column; a text that fits no member or several: ``FamilyError``.
    ``api.cute(text, like, ...)``, ``api.triton(...)``... are this with the notation named."""
    from ..checks.members import read_as
    from ..layout.notations import import_as, notation as _notation
    n = _notation(notation)
    if not isinstance(text, (str, bytes)):
        raise TypeError(f"the {n.name} text must be str or bytes, not {type(text).__name__}")
    for k, v in options.items():
        if v is not None and not isinstance(v, str):
            raise TypeError(f"{k} must be text, not {type(v).__name__}")
    return read_as(_like(like, specs), lambda m: import_as(n.name, text, m, source=source, **options), _params(params),
                   strict)


def notations() -> tuple:
    """The registered notations (``verify.layout.notations.registry.Notation``), in help order."""
    from ..layout.notations import notations as _notations
    return _notations()


def map_notations() -> tuple:
    """The notations that read a ``[[layout]]``'s map over its own names (``verify.layout.notations.registry.
    MapReader``: index code, a table), in help order; a shared layout's map is also read by ``shared_notations``."""
    from ..layout.notations.registry import readers
    return readers("map")


def shared_notations() -> tuple:
    """The notations that read a shared-memory tile (``verify.layout.notations.registry.SharedReader``: the
    readers ``shared_layout`` looks up, and the options of ``descriptor`` and ``banks``), in help order."""
    from ..layout.notations.registry import readers
    return readers("shared")


def _constructor(name: str) -> Callable[..., Layout]:
    from ..layout.notations import notation as _notation
    n = _notation(name)

    def construct(text: str | bytes, like: Layout | str, **kw: Any) -> Layout:
        return given(n.name, text, like, **kw)

    construct.__name__ = construct.__qualname__ = n.constructor
    construct.__doc__ = f"{n.api_doc}\n\n``api.given({n.name!r}, text, like, ...)``: see ``api.given``."
    return construct


def _params(params: object) -> dict[str, int] | None:
    if params is None:
        return None
    if not isinstance(params, Mapping) or not all(isinstance(k, str) and isinstance(v, int) and not isinstance(v, bool)
                                                  for k, v in params.items()):
        raise TypeError("params must map parameter names to integers, e.g. {\"N\": 24}")
    return dict(params)


def conform(spec: Layout | str, given: Layout, timeout: float = DEFAULT_TIMEOUT, *,
            specs: Iterable[Spec] | str | Path | None = None,
            params: Mapping[str, int] | None = None,
            block: tuple[int, int] | None = None) -> ConformResult | FamilyResult:
    """Is ``given`` the spec layout?  ``ConformResult.status``: ``equal``, ``permuted`` (with the
    permutation), ``replicated`` (with the copy structure) or ``differs`` (with the first difference),
    or ``unspecified``/``unknown``/``error``; every status decided by Z3 and enumeration.  A family spec: the
    member ``params`` names, or the one the given was read as (``api.given`` tags it), or, when the given is a
    family too, every member (``FamilyResult``: the worst member's status, the first such member in full).

    A given over more threads (a block tile: several warps, warpgroups, register repeats) and a larger extent
    is ``tiled`` when each warp's repeats are the spec moved to a sub-tile and the sub-tiles cover the block
    (``ConformResult.tiling`` says which warp holds which sub-tile; ``verify/checks/tiled.py``).  ``block``:
    (rows, cols) the given must cover, else its own extent."""
    _a_layout(spec, "spec", ids=True)
    _a_layout(given, "given")
    timeout = _timeout(timeout)
    if block is not None and not (isinstance(block, tuple) and len(block) == 2 and all(
            isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= _MAX_DIM for x in block)):
        raise TypeError(f"block must be (rows, cols), each an int in 1..{_MAX_DIM}")
    from ..checks.members import conform_any
    return conform_any(_like(spec, specs), given, timeout, _params(params), block)


class ArchError(ValueError):
    """A per-architecture wmma map that the reference does not give (``wmma_arch_layout``): the message names
    what it covers."""


def wmma_arch_maps() -> tuple:
    """wmmae's per-architecture wmma maps (``verify.catalog.wmma_arch.ArchMap``): reference data, each
    ``reference_only`` (never doc-stated), with its source ``wmmae <path>:<line>`` and commit."""
    from ..catalog import wmma_arch
    return wmma_arch.MAPS


def wmma_arch_entry(spec: Layout | str, arch: str, major: str | None = None, *,
                    specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """wmmae's map (``verify.catalog.wmma_arch.ArchMap``) of the catalog's wmma layout ``spec`` for ``arch``
    (``sm_70``, ``sm_75``, ``sm_80``) and ``major`` (the wmma fragment's ``row``/``col`` major type).  ``major``
    may be left out where the row- and col-major maps are the same map (decided by both engines: sm_75,
    sm_80); else ``ArchError``, as for an id, architecture or major the reference does not cover."""
    from ..catalog import wmma_arch as W
    from ..checks.maps import same
    _a_layout(spec, "spec", ids=True)
    like = _like(spec, specs)
    if like.instruction != "wmma":
        raise ArchError(f"--arch is for wmma layouts (per-architecture maps from wmmae); {like.id} is not one")
    if major is not None and major not in W.MAJORS:
        raise ArchError(f"major must be row or col, not {major!r}")
    if arch not in W.ARCHS:
        raise ArchError(f"no per-architecture map for {arch!r}: wmmae gives {', '.join(W.ARCHS)}")
    pair = W.majors(like.id, arch)
    if major is None and len(pair) == 2:
        verdict = same(pair[0].named(), pair[1].named(), _timeout(timeout), (pair[0].name, pair[1].name))
        if verdict.status != "proved":
            raise ArchError(f"the row- and col-major maps of {like.id} differ on {arch} ({verdict.message}): "
                            "give --major row or --major col")
        major = pair[0].major
    try:
        return W.lookup(like.id, arch, major or W.MAJORS[0])
    except KeyError as e:
        raise ArchError(e.args[0]) from None


def wmma_arch_layout(spec: Layout | str, arch: str, major: str | None = None, *,
                     specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> Layout:
    """The catalog's (unspecified) wmma layout ``spec`` with wmmae's map for ``arch`` and ``major``
    (``wmma_arch_entry``) as its map, so ``conform``, ``table`` and every fragment view work on it.  Its
    ``derived`` says it is a per-architecture map from wmmae (reference), not doc-stated, with the source;
    its ``arch`` is ``arch``."""
    like = _like(spec, specs)
    entry = wmma_arch_entry(like, arch, major, timeout=timeout)
    return like.with_map(entry.named(), provenance=dataclasses.replace(like.provenance, derived=entry.label_text(),
                                                                       arch=arch))


def check_wmma_arch(specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> tuple[list, list]:
    """Every wmmae map's checks (``verify.checks.wmma_arch``: in range, covers, injective or the stated
    replication; both engines) and the relations (sm_80 = the doc's mma layouts, sm_75 = sm_80, row = col
    major where it holds): (``ArchMapResult`` list, ``CheckResult`` list)."""
    from ..checks import wmma_arch as C
    timeout = _timeout(timeout)
    if specs is None or isinstance(specs, (str, Path)):
        specs = load(str(specs) if specs is not None else _bundled.resolve().path)
    specs = _specs(specs)

    def layout_of(lid: str) -> Layout:
        lay = layout(specs, lid)
        if not isinstance(lay, Layout):
            raise TypeError(f"{lid} is not a register fragment")
        return lay
    return C.check_all(timeout), [r.decide(timeout) for r in C.relations(layout_of)]


def block_tile(layout: Layout | str, warps: tuple[int, int], block: tuple[int, int], order: str = "triton", *,
               specs: Iterable[Spec] | str | Path | None = None, params: Mapping[str, int] | None = None) -> Layout:
    """"Instruction X tiled as warps (wm, wn) over rows x cols": the fragment ``layout`` (or its id) held by
    ``warps`` units (warps; warpgroups for a warpgroup's fragment) and repeated in their registers over ``block``,
    built with the layout algebra (``verify/layout/block.py``), in the convention ``order``: ``triton`` (Ampere
    mma: warps and repeats along N first), ``triton-hopper`` (warps along M first) or ``cute`` (a ``TiledMMA``:
    both along M first).  A family needs ``params`` (one member).  ``api.conform(api.block_tile(...), given)`` is
    then ``equal`` exactly when the given is that tiling; ``BlockError`` when the block is not whole units."""
    from ..layout.block import block_tile as _block_tile
    lay = _like(layout, specs)
    for name, pair in (("warps", warps), ("block", block)):
        if not (isinstance(pair, tuple) and len(pair) == 2 and all(
                isinstance(x, int) and not isinstance(x, bool) and 1 <= x <= _MAX_DIM for x in pair)):
            raise TypeError(f"{name} must be (rows, cols), each an int in 1..{_MAX_DIM}")
    chosen = _params(params)
    if lay.is_family:
        from ..checks.members import FamilyError, bindings, member
        envs = bindings(lay.domain.params, chosen)
        if len(envs) != 1:
            raise FamilyError(f"{lay.id} is a family: give params (--param NAME=VALUE) to tile one member")
        lay = member(lay, envs[0])
    elif chosen:
        from ..checks.members import bindings
        bindings((), chosen)
    return _block_tile(lay, warps, block, order)


def handoff(source: Layout | str, target: Layout | str, timeout: float = DEFAULT_TIMEOUT, *,
            specs: Iterable[Spec] | str | Path | None = None, params: Mapping[str, int] | None = None,
            from_params: Mapping[str, int] | None = None,
            to_params: Mapping[str, int] | None = None) -> HandoffResult | FamilyResult:
    """Can the fragment ``source`` produces (tiled to cover ``target``) feed ``target`` lane for lane?
    ``HandoffResult.status``: ``free`` (with the element mapping), ``shuffle`` (with the exchange; over several
    warps, every value inside its warp) or ``shared`` (some value crosses warps: through shared memory;
    ``warp_exchange()`` says which warps exchange how many).  ``source``/``target`` may be block layouts of one
    kernel (``api.triton(dump, spec, tensor="#mma")`` and ``tensor="#blocked"``);
    ``HandoffError`` when the two cannot be tiled onto each other.  Families: every member (the bindings of
    their parameters together), or the ones the bindings name: ``params`` a name on every side that has it,
    ``from_params``/``to_params`` one side's alone (two families that share a name, bound apart: ldmatrix
    ``.x1`` -> ``.x2``); a name both sides have and neither binds alone takes one value on both (a given side
    read as a member binds the other side's too); a ``FamilyResult`` when several."""
    _a_layout(source, "source", ids=True)
    _a_layout(target, "target", ids=True)
    timeout = _timeout(timeout)
    if isinstance(source, str) or isinstance(target, str):
        loaded = specs if specs is not None and not isinstance(specs, (str, Path)) else None
        if loaded is None:
            loaded = load(str(specs) if specs is not None else _bundled.resolve().path)
        source, target = _like(source, loaded), _like(target, loaded)
    from ..checks.members import handoff_any
    return handoff_any(source, target, timeout, _params(params), _params(from_params), _params(to_params))


def reduction(layout: Layout | str, along: str = "row", masks: Sequence[int] = (1, 2), timeout: float = DEFAULT_TIMEOUT,
              *, specs: Iterable[Spec] | str | Path | None = None, params: Mapping[str, int] | None = None) -> Any:
    """Does a ``shfl.xor`` butterfly by ``masks`` reduce every row (``along="col"``: column) of ``layout``'s
    fragment over exactly the lanes that own it (``verify.results.reduce.ReduceResult``: ``exact``, or
    ``inexact`` with the lane pair that breaks it, ``ReductionLanes``)?  Both engines.  A family: every member,
    or the one ``params`` names (``FamilyResult``).  ``ReduceError`` for an axis or a mask that cannot be."""
    _a_layout(layout, "layout", ids=True)
    if isinstance(layout, str):
        loaded = specs if specs is not None and not isinstance(specs, (str, Path)) else None
        if loaded is None:
            loaded = load(str(specs) if specs is not None else _bundled.resolve().path)
        layout = _like(layout, loaded)
    if isinstance(masks, (str, bytes)) or not all(isinstance(m, int) and not isinstance(m, bool) for m in masks):
        raise TypeError("masks must be whole numbers, e.g. (1, 2)")
    from ..checks.members import reduce_any
    from ..checks.reduce import check_masks
    return reduce_any(layout, along, check_masks(along, tuple(masks)), _timeout(timeout), _params(params))
