"""The writer and the reader of ``consistent``, from layout ids and from layouts written in other notations.

Each side is a list of steps applied in order (``verify.checks.consistency.chain``).  A step is a layout id (a
``MapLayout``, or a register fragment as ``(lane|thread, i) -> (row, col)``) or a ``Given`` text:

``cute``        CuTe.  A swizzled or typed shared-memory layout (``Sw<3,4,3> o smem_ptr[16b](unset) o ...``,
                ``GMMA::Layout_K_SW128_Atom<half_t>``, ``tile_to_shape(...)``), or any layout when an element type
                is given, is a shared-memory tile ``(row, col) -> offset`` in elements; otherwise ``shape:stride``
                is a storage map, one top-level mode per element coordinate, ``-> offset``.
``triton``      A Triton shared encoding (``#ttg.nvmma_shared``, ``swizzled_shared``, ``shared_linear`` with a
                memdesc or a type): a shared-memory tile; ``#ttg.shared_linear<{offset = [[...]]}>`` without a
                type: a storage map (the inverse of the offset bases over GF(2)).
``index``       Index code: with an element type, a shared-memory tile over ``row`` and ``col`` whose last
                definition is the offset (in ``unit``, bytes by default); otherwise definitions of the location's
                names over the element coordinates' names.
``tma``         ``ROWSxCOLS:MODE``: the tile a TMA load with that box and swizzle mode writes.
``descriptor``  ``0x...``: what a wgmma (or tcgen05) matrix descriptor reads, over the other side's tile (the
                reader of a shared-memory writer; k-blocks advanced as a mainloop advances them).

Names: a notation states no coordinate names, so a first step takes the other side's element coordinates (its
first step's inputs: ``(row, kb)`` of a scale-factor layout), and a last step produces the other side's
locations (a single location takes its name: ``offset``); a step after the first reads what the step before
produces.  ``resolve`` resolves the steps that say everything themselves first, then those that borrow names.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

from ..layout.dims import Dim, extent_text
from ..layout.notations.errors import NotationError
from ..layout.family import concrete

NOTATIONS = ("cute", "triton", "index", "tma", "descriptor")  # read here; any other registered shared reader too


def notations() -> tuple[str, ...]:
    """The notations a side may be written in: ``NOTATIONS``, then every other notation that registered a
    shared-memory reader (``layout.notations.registry``: read as a tile, with ``--type``)."""
    from ..layout.notations.registry import readers
    return NOTATIONS + tuple(r.name for r in readers("shared") if r.name not in NOTATIONS)


def inline(notation: str) -> bool:
    """Whether a side in ``notation`` is its text on the command line (not a file)."""
    from ..layout.notations.registry import reader
    read = reader("shared", notation)
    return notation == "descriptor" or (read is not None and read.inline)


@dataclass(frozen=True)
class Given:
    """A layout written in ``notation`` (``NOTATIONS``).  ``col``: the column where the text starts in its
    command-line argument (after ``cute:``), so that positions in errors count from the argument's start."""

    notation: str
    text: str | bytes
    source: str = "argument"
    col: int = 1

    def name(self) -> str:
        if self.source != "argument":
            return f"{self.notation}:{self.source}"
        text = self.text.decode("utf-8", "replace") if isinstance(self.text, (bytes, bytearray)) else self.text
        text = " ".join(text.split())
        return f"{self.notation}:{text if len(text) <= 60 else text[:57] + '...'}"


@dataclass(frozen=True)
class Context:
    """What the notations need besides their text: the element type (shared memory), the tile where the text
    does not state it, the buffer's base address, the descriptor's majorness and instruction, index code's unit."""

    type_bits: int | None = None
    tile: tuple[int, int] | None = None
    base: int = 0
    major: str | None = None
    instr: str = "wgmma"
    unit: str = "bytes"


@dataclass
class Step:
    map: Any = None              # NamedMap, once resolved
    name: str = ""
    given: Given | None = None
    shared: Any = None           # the SharedLayout of a shared-memory step
    reads: tuple[str, ...] = ()  # index code: the names of --param it reads (``layout.params``)


_AT = re.compile(r"\b(opened|written) at 1:(\d+)")


def _shift(e: NotationError, g: Given) -> NotationError:
    """Positions on line 1 of a command-line text counted from the argument's start (``cute:`` included), the
    position a message quotes (``tuple opened at 1:12``) too."""
    if g.source == "argument" and e.line == 1:
        msg = _AT.sub(lambda m: f"{m.group(1)} at 1:{int(m.group(2)) + g.col - 1}", e.message)
        return NotationError(msg, 1, e.col + g.col - 1, g.source)
    return e


def _text(g: Given) -> str:
    if isinstance(g.text, (bytes, bytearray)):
        from ..layout.notations.errors import decode_source
        return decode_source(g.text, g.source, limit=1 << 20)
    return g.text


def _tile_of(like: Any) -> tuple[int, int] | None:
    """(rows, cols) of a (row, col) map with fixed extents."""
    if like is None or [d.name for d in like.inputs] != ["row", "col"]:
        return None
    try:
        return int(like.inputs[0].at()), int(like.inputs[1].at())
    except (TypeError, ValueError, KeyError):
        return None


def _shared_step(lay: Any, name: str) -> Step:
    return Step(lay.map, name, shared=lay)


def _resolve_given(g: Given, ctx: Context, coords: tuple[Dim, ...] | None, targets: tuple[Dim, ...] | None,
                   prev: tuple[Dim, ...] | None, other_shared: Any, final: bool,
                   family: tuple[Any, ...] = (), values: Mapping[str, int] | None = None) -> Step | None:
    """One given step, or None when it needs names it cannot have yet (``final``: use the defaults now).
    ``family``: the parameters of the layouts on either side that ``--param`` leaves free, ``values`` those it
    binds: index code may read both by name."""
    from ..layout.notations import storage
    text = _text(g)
    ins = prev if prev is not None else coords
    single = targets[0].name if targets is not None and len(targets) == 1 else "offset"
    bits = ctx.type_bits
    if g.notation == "tma":
        return _read_shared(g, text, bits=bits, base=ctx.base)
    if g.notation == "descriptor":
        if other_shared is None:
            if not final:
                return None
            raise ValueError(f"{g.name()}: a descriptor reads the other side's shared-memory tile; give the writer as "
                             "a shared-memory layout (a TMA box, CuTe, Triton, index code with --type, or a shared "
                             "layout id)")
        from .descriptor import descriptor_reads
        try:
            value = int(text.strip(), 0)
        except ValueError:
            raise NotationError(f"{text.strip()!r} is not a number (e.g. 0x4000004000010040)", 1, 1, g.source) from None
        return _shared_step(descriptor_reads(other_shared, value, ctx.instr, ctx.major), g.name())
    if g.notation == "cute":
        if bits is not None or _looks_shared("cute", text):
            return _read_shared(g, text, bits=bits, base=ctx.base)
        if ins is None and not final:
            return None
        m = storage.cute_map(text, None, single, g.source, ins)
        named = [d.name for d in m.inputs]
        # modes matched to the other side's coordinates by extent: say which (a writer's copies, a broadcast)
        shown = g.name() if ins is None or named == [d.name for d in ins] else f"{g.name()} over ({', '.join(named)})"
        return Step(m, shown)
    if g.notation == "triton":
        if bits is not None or _looks_shared("triton", text):
            tile = ctx.tile or _tile_of(other_shared.map if other_shared is not None else None) or \
                (_tile_of_dims(coords) if coords is not None else None)
            if tile is None and not final and "memdesc" not in text:
                return None
            return _read_shared(g, text, bits=bits, tile=tile, base=ctx.base)
        if ins is None:
            if not final:
                return None
            raise ValueError(f"{g.name()}: Triton offset bases name no coordinates; the other side must (a layout id, "
                             "CuTe) or give --type for a shared-memory tile over (row, col)")
        return Step(storage.bases_map(text, _fixed(ins, g), single, g.source), g.name())
    if g.notation == "index":
        if bits is not None:
            tile = ctx.tile or _tile_of(other_shared.map if other_shared is not None else None) or \
                (_tile_of_dims(coords) if coords is not None else None)
            if tile is None:
                if not final:
                    return None
                raise ValueError(f"{g.name()}: give the tile (--tile ROWSxCOLS) of the index code")
            # index code states no extent: its buffer is the tile (a write past it is out of range)
            step = _read_shared(g, text, bits=bits, tile=tile, base=ctx.base, unit=ctx.unit, params=values,
                                buffer=tile[0] * tile[1])
            from ..layout.params import index_side
            return replace(step, reads=index_side(g.name(), text, values or {}, ("row", "col")).reads)
        if ins is None or targets is None:
            if not final:
                return None
            raise ValueError(f"{g.name()}: index code names coordinates and locations that the other side must "
                             "state (give the other side as a layout id), or give --type for a shared-memory tile")
        ins, targets = _fixed(ins, g), _fixed(targets, g)
        return Step(storage.index_map(text, ins, targets, g.source, family, values), g.name(),
                    reads=storage.index_reads(text, ins, targets, g.source, family, values))
    from ..layout.notations.registry import reader
    if reader("shared", g.notation) is not None:  # a notation that reads only shared-memory tiles
        if bits is None:
            raise ValueError(f"{g.name()}: give the element type (--type) of the {g.notation} tile")
        tile = ctx.tile or _tile_of(other_shared.map if other_shared is not None else None) or \
            (_tile_of_dims(coords) if coords is not None else None)
        return _read_shared(g, text, bits=bits, tile=tile, base=ctx.base, unit=ctx.unit, params=values)
    raise ValueError(f"unknown notation {g.notation!r} (known: {', '.join(notations())})")


def _looks_shared(notation: str, text: str) -> bool:
    """Whether ``text`` can only be a shared-memory tile in ``notation`` (its reader says)."""
    from ..layout.notations.registry import reader
    read = reader("shared", notation)
    return read is not None and read.looks_shared is not None and read.looks_shared(text)


def _read_shared(g: Given, text: str, **how: Any) -> Step:
    """The shared-memory tile ``text`` is in ``g.notation``, read by the notation's registered reader (the one
    reader every command uses); a reader whose errors name no position has them put at the text's start."""
    from ..layout.notations.registry import NeedsType, reader
    read = reader("shared", g.notation)
    assert read is not None, g.notation  # called only for the notations that read a shared tile (tma, cute, ...)
    try:
        return _shared_step(read.read(text, source=g.source, **how), g.name())
    except NeedsType as e:
        raise ValueError(f"{g.name()}: give the element type (--type) of the {e.what}") from None
    except NotationError:
        raise
    except ValueError as e:
        if not read.unpositioned:
            raise
        raise NotationError(str(e), 1, 1, g.source) from None



def _tile_of_dims(dims: tuple[Dim, ...]) -> tuple[int, int] | None:
    if [d.name for d in dims] != ["row", "col"] or not all(isinstance(d.size, int) for d in dims):
        return None
    return concrete(dims[0].size), concrete(dims[1].size)


def _fixed(dims: tuple[Dim, ...], g: Given) -> tuple[Dim, ...]:
    """Dims with integer sizes (a family's extent is bound first: --param)."""
    for d in dims:
        if not isinstance(d.size, int):
            raise ValueError(f"{g.name()}: {d.name} runs over {extent_text(d.size)} values on the other side, a family: bind its "
                             "parameters with --param to compare a layout in a notation with it")
    return dims


def resolve(writer: Sequence[Any], reader: Sequence[Any], lookup: Callable[[str], Any], ctx: Context,
            params: dict[str, int] | None = None) -> tuple[list[Step], list[Step]]:
    """Both sides' steps as named maps (module docstring).  ``lookup(id)`` gives a ``MapLayout``/``Layout``;
    other steps may already be named maps or ``SharedLayout``s.  ``ValueError`` (or a positioned
    ``NotationError``) when a step cannot be read."""
    from ..layout.algebra import bind
    from ..layout.model import Layout, MapLayout
    from ..layout.shared import SharedLayout, from_map
    params = dict(params or {})
    sides: list[list[Step]] = [[], []]
    for k, steps in enumerate((writer, reader)):
        if not steps:
            raise ValueError("each side needs at least one step")
        for st in steps:
            if isinstance(st, Given):
                if st.notation not in notations():
                    raise ValueError(f"unknown notation {st.notation!r} (known: {', '.join(notations())})")
                sides[k].append(Step(given=st, name=st.name()))
                continue
            name = type(st).__name__
            if isinstance(st, str):
                name, st = st, lookup(st)
            if isinstance(st, SharedLayout):
                sides[k].append(Step(st.map, name if isinstance(name, str) and name != "SharedLayout" else st.text or "shared",
                                     shared=st))
                continue
            if isinstance(st, MapLayout):
                name = st.id
                m = st.map
                pnames = {p.name for p in m.params}
                env = {n: v for n, v in params.items() if n in pnames}
                if "T" in pnames and ctx.type_bits is not None and "T" not in env:
                    if 128 % ctx.type_bits:
                        raise ValueError(f"{st.id}: T = 128 / bits, and {ctx.type_bits} does not divide 128")
                    env["T"] = 128 // ctx.type_bits
                if env:
                    m = bind(m, **env)
                shared = None
                if st.kind == "shared" and [d.name for d in m.inputs] == ["row", "col"] and not m.params:
                    bits = ctx.type_bits or (128 // env["T"] if "T" in env else None)
                    if bits is not None and st.unit != "bytes":
                        shared = from_map(m, bits, ctx.base, "spec", st.id)
                sides[k].append(Step(m, name, shared=shared))
            elif isinstance(st, Layout):
                sides[k].append(Step(st.map, st.id))
            else:
                sides[k].append(Step(st, name))
    for final in (False, True):
        progress = True
        while progress:
            progress = False
            for k in (0, 1):
                mine, other = sides[k], sides[1 - k]
                for j, step in enumerate(mine):
                    if step.map is not None or step.given is None:
                        continue
                    coords = tuple(other[0].map.inputs) if other[0].map is not None else None
                    prev = tuple(mine[j - 1].map.outputs) if j > 0 and mine[j - 1].map is not None else None
                    if j > 0 and prev is None:
                        continue
                    if j + 1 < len(mine):
                        targets = tuple(mine[j + 1].map.inputs) if mine[j + 1].map is not None else None
                    else:
                        targets = tuple(other[-1].map.outputs) if other[-1].map is not None else None
                    other_shared = other[0].shared if len(other) == 1 else None
                    try:
                        got = _resolve_given(step.given, ctx, coords, targets, prev, other_shared, final,
                                             _free(sides), params)
                    except NotationError as e:
                        raise _shift(e, step.given) from None
                    if got is not None:
                        mine[j] = replace(got, given=step.given)
                        progress = True
    left = [s for side in sides for s in side if s.map is None]
    if left:
        raise ValueError(f"{left[0].name}: cannot be read: it borrows its names from a step that is not resolved")
    _same_elements(sides)
    return sides[0], sides[1]


def _free(sides: list[list[Step]]) -> tuple[Any, ...]:
    """The parameters the resolved steps still have (a family's that ``--param`` left free), each once."""
    from ..layout.named import merge_params
    return merge_params(*(tuple(s.map.params) for side in sides for s in side if s.map is not None))


def _same_elements(sides: list[list[Step]]) -> None:
    """Shared-memory steps on both sides must store elements of one width at one base."""
    shared = [s.shared for side in sides for s in side if s.shared is not None]
    if len({s.element_bits for s in shared}) > 1:
        widths = ", ".join(f"{s.text or s.notation}: {s.element_bits}-bit" for s in shared)
        raise ValueError(f"the two sides store elements of different widths ({widths})")
    if len({s.base for s in shared}) > 1:
        raise ValueError("the two sides describe buffers at different base addresses")


__all__ = ["Context", "Given", "NOTATIONS", "Step", "inline", "notations", "resolve"]
