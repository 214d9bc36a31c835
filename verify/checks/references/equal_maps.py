"""Catalog layouts that are the same map as a layout the references back.

A layout no reference states (``mma.sp``'s B operands, the compressed A fragments, ``wgmma.sp``'s A) can
still be the very map of another catalog layout that two or more independent references agree with
(``mma.sp.m16n8k8.B.tf32`` is ``mma.m16n8k8.B.tf32``).  That is a fact about the doc's two statements,
proved here with both engines (a family member by member), and the matrix reports it as the finding that explains why the layout has
fewer than two references of its own: never as a reference's agreement.

Preconditions: ``candidates`` are backed layouts (two or more origins agree).  Postcondition: each pair
returned was proved equal by ``equivalence.same_map`` (fragments and families) or ``maps.same`` (map layouts), Z3 and
enumeration agreeing; a layout whose equality is ``unknown`` or refuted gets no pair.
"""
from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from ...layout.fragment_maps import UnspecifiedMap
from ...layout.model import Layout, MapLayout
from .. import maps
from ..equivalence import _domain_problem, first_difference, same_map


def _role(lid: str) -> str:
    """The operand of a layout id (``A``, ``B``, ``C``, ``D``, ``R``, ``SFA`` ...), '' for map layouts."""
    m = re.search(r"\.(A|B|C|D|R|SFA|SFB|E)\.", lid + ".")
    return m.group(1) if m else ""


def _key(lay: Any) -> tuple | None:
    """What two layouts must share to be compared at all (cheap, no evaluation)."""
    if isinstance(lay, MapLayout):
        if isinstance(lay.map, UnspecifiedMap):
            return None
        return ("map", tuple((d.name, str(d.size)) for d in lay.map.inputs), tuple(d.name for d in lay.map.outputs))
    if isinstance(lay, Layout):
        if lay.unspecified:
            return None
        if lay.is_family:   # every member compared, binding by binding
            return ("family", tuple((p.name, tuple(p.values)) for p in lay.params))
        return ("fragment", lay.threads, lay.n_elements, lay.groups, lay.rows, lay.cols)
    return None


def _equal_by_enumeration(a: Any, b: Any) -> bool:
    try:
        if isinstance(a, MapLayout):
            return True   # maps.same enumerates first, then asks Z3
        pairs = [(x, b.instance(**env)) for env, x in a.instances()] if a.is_family else [(a, b)]
        return all(_domain_problem(x, y) is None and first_difference(x, y) is None for x, y in pairs)
    except (ValueError, TypeError, KeyError, IndexError):   # a layout the enumerator cannot take whole: no claim
        return False


def _proved(a: Any, b: Any, timeout: float) -> bool:
    if isinstance(a, MapLayout):
        return maps.same(a.map, b.map, timeout).status == "proved"
    return same_map(a, b, timeout).status == "proved"


def equal_backed(unbacked: Iterable[Any], candidates: Iterable[Any], timeout: float = 10.0) -> Mapping[str, str]:
    """layout id -> the id of a backed layout with the same map (both engines), for each of ``unbacked``
    that has one.  Among several, the one with the same operand role first, then the first id in order."""
    by_key: dict[tuple, list[Any]] = {}
    for c in candidates:
        k = _key(c)
        if k is not None:
            by_key.setdefault(k, []).append(c)
    out: dict[str, str] = {}
    for lay in unbacked:
        k = _key(lay)
        if k is None or k not in by_key:
            continue
        role = _role(lay.id)
        ranked = sorted(by_key[k], key=lambda c: (_role(c.id) != role, c.id))
        for c in ranked:
            if c.id != lay.id and _equal_by_enumeration(lay, c) and _proved(lay, c, timeout):
                out[lay.id] = c.id
                break
    return out
