"""Which tier runs each case of a cross-product over the catalog.

A test that runs one command on every layout (or every family member, every small instruction) keeps all its
cases.  The first case of each *kind* runs in the README's test command (``-m "not slow"``); every other case is
marked ``slow`` and runs in CI's integration tier (``-m slow``) after it, so CI still runs the whole product.

A kind is what the code under test branches on (the map's class, a family, a selector, a Tensor Memory or
shared-memory codomain, packing, sparsity, several MMA computations ...), so the sample reaches the same code as
the whole product: the README's command covers the same lines and branches of ``verify/`` with and without the rest
(``benchmarks/tier_coverage.py`` measures it with coverage.py; the README gives the numbers).
"""
from __future__ import annotations

from typing import Any, Callable, Hashable, Iterable

import pytest


def by_kind(cases: Iterable[Any], kind: Callable[[Any], Hashable],
            ids: Callable[[Any], str] | None = None) -> list[Any]:
    """``cases`` as pytest parameters in their order: the first case of each ``kind`` as it is, each later case
    of a kind already seen marked ``slow`` and ``kind_rest`` (``-m "not slow or kind_rest"`` is the README's
    command as it was before the split, which ``benchmarks/tier_coverage.py`` measures).  Ids are unchanged,
    so a case has the same node id in either tier."""
    seen: set[Hashable] = set()
    out = []
    for case in cases:
        k = kind(case)
        marks = (pytest.mark.slow, pytest.mark.kind_rest) if k in seen else ()
        seen.add(k)
        out.append(pytest.param(case, marks=marks, id=ids(case) if ids is not None else None))
    return out


def _names(dims: Any) -> tuple[str, ...]:
    return tuple(d.name for d in dims)


def _defined_everywhere(lay: Any) -> bool:
    """Whether a map layout has an output at every point of its first parameter value (a storage layout's
    padding has none: its tables show holes)."""
    import numpy as np
    from verify.layout.named import bindings, evaluate_all
    env = next(iter(bindings(lay.map)))
    return bool(np.all(np.asarray(evaluate_all(lay.map, env).ok)))


def layout_kind(lay: Any) -> tuple[Hashable, ...]:
    """What the commands and checks branch on, for a fragment layout or a map layout (``MapLayout``)."""
    if hasattr(lay, "inputs"):  # a map layout: shared memory, Tensor Memory, storage
        return ("map", lay.kind, lay.is_family, _names(lay.inputs), _names(lay.outputs), lay.unit,
                lay.corrected, bool(lay.provenance.erratum), _defined_everywhere(lay))
    return ("fragment", type(lay.map).__name__, lay.is_family, lay.unspecified, lay.partial, lay.groups > 1,
            lay.operand, lay.regs.elements_per_register, tuple(sorted(lay.sparse)), lay.corrected, bool(lay.provenance.erratum), lay.codomain.dims,
            lay.domain.group is not None, lay.domain.replication > 1, bool(lay.domain.params))


def layouts_by_kind(layouts: Iterable[Any]) -> list[Any]:
    """Layouts (fragments or maps) as parameters by ``layout_kind``, with their ids."""
    return by_kind(layouts, layout_kind, ids=lambda lay: lay.id)


def ids_by_kind(layouts: Iterable[Any]) -> list[Any]:
    """The ids of ``layouts`` as parameters by ``layout_kind``."""
    kinds = {lay.id: layout_kind(lay) for lay in layouts}
    return by_kind(kinds, kinds.__getitem__, ids=str)
