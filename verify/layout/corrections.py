"""A doc layout and its reviewed correction, as one object.

A spec that corrects a doc layout (``[fragment.corrected]``, ``[layout.corrected]``) gives the doc layout its
``correction`` (``Layout``/``MapLayout``): the hardware's layout where the doc is wrong.  The correction names
the doc layout it ``corrects``; it is checked and reported on its own, under the output id ``ID@corrected``
(``verify.layout.ids.corrected_id``, the one place that spells it).  Where a layout is compared with something
else (a reference, a hardware probe, a relation between instructions), the layout to use is the correction
where there is one: ``in_use``.  These functions read the objects, never an id's spelling.  Those given a
collection (``in_use_of``, ``correction_of``, ``by_doc_id``) take the correction as the collection holds it: a
catalog with one layout replaced (a deliberate mistake, an edited spec) is read as it stands.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Iterable, Mapping, Protocol, TypeVar

if TYPE_CHECKING:  # pragma: no cover
    from typing_extensions import Self  # typing.Self from Python 3.11


class Correctable(Protocol):
    """A layout that may hold a correction (``Layout``, ``MapLayout``)."""

    @property
    def id(self) -> str: ...

    @property
    def corrects(self) -> str: ...  # a correction: the id of the doc layout it corrects ("" for a doc layout)

    @property
    def correction(self) -> Self | None: ...


_L = TypeVar("_L", bound=Correctable)


def in_use(lay: _L) -> _L:
    """The layout to use for ``lay``: its reviewed correction where it has one, else itself."""
    fix = lay.correction
    return fix if fix is not None else lay


def prefer_corrections(items: Iterable[_L]) -> list[_L]:
    """``items`` (doc layouts and corrections, as a spec lists them) without each doc layout that has a
    correction: the correction stands in its place.  The order is kept."""
    return [x for x in items if x.correction is None]


def by_doc_id(items: Iterable[_L]) -> dict[str, _L]:
    """doc id -> the layout to use for it (``in_use_of``), for every doc layout among ``items``."""
    by = {x.id: x for x in items}
    return {i: in_use_of(by, i) or x for i, x in by.items() if not x.corrects}


def correction_of(by_id: Mapping[str, _L], lid: str) -> _L | None:
    """The reviewed correction of doc layout ``lid`` in ``by_id`` (also where the doc's formula does not parse,
    so that only the correction was built), or ``None``."""
    hit = by_id.get(lid)
    if hit is not None and not hit.corrects:
        fix = hit.correction
        return by_id.get(fix.id, fix) if fix is not None else None
    return next((x for x in by_id.values() if x.corrects == lid), None)


def in_use_of(by_id: Mapping[str, _L], lid: str) -> _L | None:
    """The layout to use for ``lid`` in ``by_id``: its correction where there is one, else ``lid``'s own entry
    (``None``: neither)."""
    hit = by_id.get(lid)
    if hit is not None and hit.corrects:
        return hit
    fix = correction_of(by_id, lid)
    return fix if fix is not None else hit
