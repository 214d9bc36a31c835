"""Writer against reader: does the reader read every element where the writer wrote it."""
from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any


from ..catalog import bundled as _bundled
from ..checks.fragment import DEFAULT_TIMEOUT
from ..layout.model import Spec
from .catalog import layout, load
from .written import _params

if TYPE_CHECKING:
    pass


def consistent(writer: Any, reader: Any, specs: Iterable[Spec] | None = None, *, params: dict[str, int] | None = None,
               timeout: float = DEFAULT_TIMEOUT, type: str | None = None, tile: tuple[int, int] | None = None,
               base: int = 0, major: str | None = None, instr: str = "wgmma", unit: str = "bytes") -> Any:
    """Does ``reader`` read every element where ``writer`` wrote it (``verify.checks.consistency``), for every
    parameter value at once?  Each side is a step or a list of steps applied in order (a pipeline: storage layout,
    shared-memory rows, tcgen05.cp): a layout id (looked up in ``specs``, default the bundled catalog), a
    ``MapLayout``, a named map, a shared-memory ``SharedLayout`` (``api.shared_layout``), or ``Given(notation,
    text)``, a layout in CuTe, Triton, index code, a TMA box or a matrix descriptor (``verify.checks
    .consistency_sides``: names the notation does not state are the other side's).  ``params`` binds parameters
    of either side (``{"VS": 4}``); ``type`` (``"f16"``) reads the notations as shared-memory tiles of that
    element (and binds a shared spec's ``T``), ``tile``/``base``/``unit`` as ``shared_layout`` takes them,
    ``major``/``instr`` a descriptor's.  Returns a ``Decision``: ``.status`` is ``consistent`` or the first kind
    of failure, ``.checks`` each property with its witness (the first element read from another place).

        d = api.consistent("storage.sf.flat_batch_padding", "storage.sf.cutlass.128x4.quantizer")
        d.status                                   # -> "mismatch"
        d = api.consistent(Given("tma", "64x64:128B"), Given("descriptor", "0x4000004000010000"), type="f16",
                           major="K")
    """
    from ..checks.consistency import chain, decide
    from ..checks.consistency_sides import Context, Given, resolve
    from ..layout.shared import element_bits
    lookup = list(specs) if specs is not None else None

    def find(lid: str) -> Any:
        nonlocal lookup
        if lookup is None:
            lookup = load([_bundled.resolve().path])
        return layout(lookup, lid)

    def steps(x: Any) -> list[Any]:
        return list(x) if isinstance(x, (list, tuple)) else [x]

    from ..layout.params import Side, check, own, side_of
    ctx = Context(element_bits(type) if type else None, tile, base, major, instr, unit)
    params = _params(params)
    # each layout's side (``layout.params``): its values checked before it is bound, every name once all are read
    laid = [side_of(find(st) if isinstance(st, str) else st) for st in (*steps(writer), *steps(reader))
            if not isinstance(st, Given)]
    for side in laid:
        check(own(params, side), [side])
    ws, rs = resolve(steps(writer), steps(reader), find, ctx, params)
    check(params, [*laid, *(Side(s.name, reads=s.reads) for s in (*ws, *rs))])
    w = chain([s.map for s in ws], params or {})
    r = chain([s.map for s in rs], params or {})
    return decide(w, r, timeout, (" then ".join(s.name for s in ws), " then ".join(s.name for s in rs)))
