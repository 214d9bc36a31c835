"""Shared memory: shared layouts, map conformance, descriptors, banks."""
from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any


from ..catalog import bundled as _bundled
from ..checks.fragment import DEFAULT_TIMEOUT
from ..layout.model import Layout, MapLayout, Spec
from .catalog import _a_layout, _timeout, layout, load
from .written import _params

if TYPE_CHECKING:
    pass


def shared_layout(notation: str, text: str | bytes, *, type: str | None = None, tile: tuple[int, int] | None = None,
                  base: int = 0, unit: str = "bytes", source: str = "argument",
                  params: Mapping[str, int] | None = None) -> Any:
    """A shared-memory tile ``(row, col) -> offset`` (``verify.layout.shared.SharedLayout``) from CuTe text
    (``"cute"``: ``Sw<3,4,3> o smem_ptr[16b](unset) o (8,64):(64,1)``, ``GMMA::Layout_K_SW128_Atom<half_t>``,
    ``tile_to_shape(...)``), a Triton shared encoding (``"triton"``) or index code over ``row`` and ``col``
    (``"index"``; offsets in ``unit``), or the box a TMA load writes (``"tma"``: ``64x64:128B``, ``64x64:128B:col``
    for a column-major box).  ``type``: the element type (``f16``...), required where the text does
    not say it; ``tile``: (rows, cols) where the text does not say it; ``base``: the buffer's shared-memory
    address; ``params``: values index code may read by name (``--param``; another notation reads none: a
    ``FamilyError``).  Bad text is a ``NotationError`` at its position."""
    from ..layout.notations.registry import reader, readers
    from ..layout.params import Side, check
    from ..layout.shared import element_bits
    read = reader("shared", notation)
    if read is None or not read.reads_params:
        check(params, [Side(f"the {notation} layout")])
    if read is None:
        names = [r.name for r in readers("shared")]
        raise ValueError(f"notation is {', '.join(names[:-1])} or {names[-1]}, not {notation!r}")
    bits = element_bits(type) if type else None
    out = read.read(text, bits=bits, tile=tile, base=base, unit=unit, source=source,
                    params=_params(params) if read.reads_params else None)
    if read.reads_params and params:  # a name the code does not read is no one's here
        from ..layout.params import index_side
        raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
        check(params, [index_side(f"the {notation} code", raw, params, ("row", "col"))])
    return out


def shared_from_map(lay: MapLayout, type: str | None = None, base: int = 0, **params: int) -> Any:
    """A ``[[layout]]`` of kind shared (``(row, col) -> offset`` in elements) as a ``SharedLayout``: ``params``
    bind some of a family's parameters; a family over ``T`` (elements per 16 bytes) is bound to the type's T."""
    from ..layout.algebra import bind
    from ..layout.params import check, side_of
    from ..layout.shared import element_bits, from_map
    check(params, [side_of(lay)])
    names = {p.name for p in lay.params}
    env = dict(params)
    bits = element_bits(type) if type else None
    if "T" in names and bits is not None:
        if "T" in env and env["T"] * bits != 128:
            raise ValueError(f"T = {env['T']} is not 128 / {bits} bits")
        env["T"] = 128 // bits
    if bits is None:
        if "T" not in env:
            raise ValueError(f"{lay.id}: give the element type (T = 128 / bits)")
        bits = 128 // env["T"]
    m = bind(lay.map, **env) if env else lay.map
    return from_map(m, bits, base, "spec", lay.id)


def conform_map(spec: MapLayout | str, notation: str, text: str | bytes, *, type: str | None = None,
                tile: tuple[int, int] | None = None, params: Mapping[str, int] | None = None, source: str = "argument",
                specs: Iterable[Spec] | str | Path | None = None, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """Is the map written in ``notation`` the map of the ``[[layout]]`` ``spec`` (one of its members)?  Index
    code (``"index"``) over the spec's input names defining its outputs, for every kind (a text over the
    family's parameters is compared with the whole family); its table (``"table"``: what ``table
    --format json`` prints, every point with its outputs); a shared-memory tile in ``"cute"``, ``"triton"``
    or ``"tma"`` (as ``shared_layout`` reads it) for the ``shared`` kind, its element type binding ``T``.  Both
    engines decide (``verify.checks.map_conform.MapConformResult``: ``equal``, ``differs``, ``unknown``).  Bad
    text is a ``NotationError``/``FormulaError`` at its position; names that cannot match a
    ``MapConformError``."""
    from ..checks.map_conform import MapConformError, conform_map as _conform_map
    lay: Layout | MapLayout
    if isinstance(spec, str):
        if specs is None or isinstance(specs, (str, Path)):
            specs = load(str(specs) if specs is not None else _bundled.resolve().path)
        lay = layout(specs, spec)
    else:
        lay = spec
    if not isinstance(lay, MapLayout):
        raise MapConformError(f"{lay.id} is a register fragment: use conform")
    given, env = given_map(lay, notation, text, type=type, tile=tile, params=params, source=source)
    return _conform_map(lay, given, notation, source, env, timeout)


def given_map(spec: MapLayout, notation: str, text: str | bytes, *, type: str | None = None,
              tile: tuple[int, int] | None = None, params: Mapping[str, int] | None = None,
              source: str = "argument") -> tuple[Any, dict[str, int]]:
    """The map written in ``notation`` as a map of the ``[[layout]]`` ``spec`` (its inputs and outputs), and the
    values of ``params`` that bind the spec (``conform_map`` and ``table --formula`` of a map read it so).
    ``params`` binds the spec's parameters and any other name the index code reads (``layout.params``: a
    name neither has is a ``FamilyError``)."""
    from ..checks.map_conform import MapConformError
    from ..layout.algebra import bind
    from ..layout.family import Param
    from ..layout.notations.registry import reader
    from ..layout.params import Side, check, foreign, own, reads, side_of
    spec_side = side_of(spec)
    env, extra = own(params, spec_side), foreign(params, spec_side)
    check(env, [spec_side])
    read = reader("map", notation)
    if read is not None and read.reads_params:
        raw = text.decode("utf-8") if isinstance(text, (bytes, bytearray)) else text
        own_params = tuple(Param(k, (v,)) for k, v in extra.items())
        # over every parameter of the family, so that the code may read one --param binds
        given = read.read(raw, inputs=spec.map.inputs, outputs=spec.map.outputs, params=spec.map.params + own_params,
                          source=source)
        check(extra, [spec_side, Side(f"the {notation} text", reads=reads(given.formula, extra))])
        return (bind(given, **env, **extra) if env or extra else given), env
    check(extra, [spec_side])  # only a notation that reads parameters reads a name of its own
    if read is not None:
        base = bind(spec.map, **env) if env else spec.map
        return read.read(text, inputs=base.inputs, outputs=base.outputs, source=source), env
    if spec.kind != "shared":
        raise MapConformError(f"{spec.id} is a {spec.kind} layout: give it as index code over "
                              f"({', '.join(d.name for d in spec.map.inputs)}) (--formula)")
    tile_ = shared_layout(notation, text, type=type, tile=tile, source=source)
    if "T" in {p.name for p in spec.map.params} and "T" not in env:
        env["T"] = max(1, 128 // tile_.element_bits)
    return tile_.map, env


def descriptor(layout: Any, *, instr: str = "wgmma", major: str | None = None, rows: int | None = None,
               check: int | None = None, timeout: float = DEFAULT_TIMEOUT) -> list[tuple[dict[str, int], Any]]:
    """The descriptor of ``instr`` that reads ``layout`` (row = M or N, col = K) as an operand tile of ``rows``
    rows, or why none does; with ``check``, whether that 64-bit descriptor does (``DescriptorResult``).  One
    result per parameter binding of a family, ``[({}, result)]`` otherwise."""
    from ..checks import descriptor as d
    from ..layout.algebra import bind
    from ..layout.named import bindings
    out = []
    for env in bindings(layout.map):
        one = dataclasses.replace(layout, map=bind(layout.map, **env)) if env else layout
        res = d.check(one, check, instr, major, rows, timeout) if check is not None else \
            d.derive(one, instr, major, rows, timeout)
        out.append((env, res))
    return out


def banks(layout: Any, access: str, *, addresses: str | None = None, timeout: float = DEFAULT_TIMEOUT,
          params: Mapping[str, int] | None = None) -> Any:
    """Bank conflicts of ``access`` (``ldmatrix.x4``, ``ld.shared.v4``...) repeated over the tile of ``layout``,
    lanes addressing cells as ``addresses`` (index code defining row and col over ``lane``) says or as the
    mma-operand pattern does (``verify.results.shared.BanksResult``).  ``ValueError`` for an unknown access or
    an access that does not fit the tile; ``FormulaError`` for bad address text.  ``params``: values the
    address code may read by name (``--param``)."""
    from ..checks.banks import check_banks
    from ..layout.smem_access import default_pattern, parse_access, pattern_from_text
    acc = parse_access(access)
    pat = pattern_from_text(addresses, acc, layout.element_bits, params=_params(params)) if addresses else \
        default_pattern(acc, layout.element_bits)
    if params:  # a name the address code does not read is no one's here
        from ..layout.params import Side, check, index_side
        check(params, [index_side("the address code", addresses, params, (), ("row", "col"), True) if addresses
                       else Side("the access")])
    return check_banks(layout, acc, pat, timeout)


def check_given(layout: Layout, timeout: float = DEFAULT_TIMEOUT) -> Any:
    """A given layout on its own (``api.triton(text, like)``, any notation): ``in_range``, ``injective``,
    ``surjective`` and ``valid``, Triton's rule (a bijection once the input bits that move no element, broadcast,
    are removed), each by both engines (``verify.results.given.GivenCheck``).  A family: ``ValueError``."""
    _a_layout(layout, "layout")
    from ..checks.validity import check_given as _check_given
    return _check_given(layout, _timeout(timeout))


def register_banks(registers: str | bytes, layout: Any, access: str, *, tensor: str | None = None,
                   source: str = "argument", timeout: float = DEFAULT_TIMEOUT) -> Any:
    """Bank conflicts of the accesses Triton lowers a register layout to when it stores it into (``access``
    ``st.shared``) or loads it from (``ld.shared``) the shared layout ``layout``: the lane addresses and the vector
    width derived from the two layouts (``verify.checks.banks_registers``).  ``registers``: a Triton distributed
    layout (bases JSON, ``#ttg.linear``, TTGIR with ``tensor`` picking the tensor type).  ``NotationError`` for bad
    text, ``ValueError`` for layouts Triton would not lower so."""
    from ..checks.banks_registers import check_register_banks
    from ..layout.notations.triton import parse_triton
    kind = access.strip().split(".")[0]
    if access.strip() not in (f"{kind}.shared",):
        raise ValueError(f"with a register layout the access is ld.shared or st.shared (the vector width is derived), "
                         f"not {access!r}")
    return check_register_banks(parse_triton(registers, source, tensor), layout, kind, _timeout(timeout))
