"""Layout ids: one grammar, whatever the input (a spec file, a doc page, another release of the doc).

    id      = instruction "." shape [ "." tag ] "." operand "." types [ "." variant ] [ "@corrected" ]
    types   = type { "_" type }          in the canonical order of ``TYPE_ORDER``
    tag     = the doc section's qualifier ("float", "int", "f16", "u4", ...), only on an accumulator
              (operand C) whose types do not contain it: accumulators are the one operand that two
              sections of one shape share (m16n8k16 ``.f32`` C of the floating-point and of the
              integer/fp8 section), and the only place the grammar needs it.

So ``mma.m16n8k16.A.f16_bf16``, ``mma.m16n8k16.float.C.f32``, ``mma.m8n8k4.A.f16.row``,
``mma.sp.m16n8k32.B.u8_s8``.  The same fragment gets the same id from a reviewed spec and from the
page it was transcribed from, which is what pairs them in ``check PAGES`` and ``diff``.
"""
from __future__ import annotations

import re
from typing import Any, Container, Iterable, Mapping, Sequence, TypeVar

# PTX types in the order ids list them (the order the doc's type tables mostly use).
TYPE_ORDER = ("f16", "bf16", "tf32", "f32", "f64", "u8", "s8", "u4", "s4", "b1", "e4m3", "e5m2", "e3m2", "e2m3",
              "e2m1", "s32", "u32", "b16", "b32", "ue8m0", "ue4m3")
_TYPE_RX = re.compile(r"\.(" + "|".join(sorted(TYPE_ORDER, key=len, reverse=True)) + r")\b")


_RANK = {t: k for k, t in enumerate(TYPE_ORDER)}


def canonical_types(types: Sequence[str]) -> str:
    """``"_".join`` of the types in canonical order (unknown types after the known ones, as given)."""
    given = list(types)
    return "_".join(sorted(dict.fromkeys(given), key=lambda t: (_RANK.get(t, len(_RANK)), given.index(t))))


def section_tag(title: str) -> str:
    """The qualifier of a fragment section title: "... mma.m16n8k16 with floating point type" -> "float",
    "... with .u4 / .s4 integer type" -> "u4", no "with ..." -> ""."""
    m = re.search(r"\bm\d+n\d+k\d+\b\s*(.*)$", title.replace("`", ""))
    rest = m.group(1) if m else ""
    if not rest.lower().startswith("with"):
        return ""
    ts = _TYPE_RX.findall(rest)
    if ts:
        return ts[0]
    if "floating" in rest.lower():
        return "float"
    if "integer" in rest.lower():
        return "int"
    return ""


def layout_id(instruction: str, shape: str, operand: str, types: Sequence[str], variant: str | None = None,
              tag: str = "") -> str:
    parts = [instruction, shape]
    if operand == "C" and tag and tag not in types:
        parts.append(tag)
    parts += [operand, canonical_types(types)]
    if variant:
        parts.append(variant)
    return ".".join(parts)


# ----------------------------------------------------------------------------- corrections

CORRECTED = "@corrected"  # a spec's correction of a doc layout: ``ID@corrected``


def corrected_id(lid: str) -> str:
    """The id of the correction of layout ``lid``."""
    return base_id(lid) + CORRECTED


def base_id(lid: str) -> str:
    """The doc layout's id, whether ``lid`` names it or its correction."""
    return lid.removesuffix(CORRECTED)


def is_corrected_id(lid: str) -> bool:
    return lid.endswith(CORRECTED)


_T = TypeVar("_T")

CORRECTED_RX = re.escape(CORRECTED)  # the suffix in a pattern over ids


def preferred(by_id: Mapping[str, _T], lid: str) -> _T | None:
    """The reviewed correction of layout ``lid`` where ``by_id`` holds one, else ``lid``'s own entry (``None``:
    neither): what a reference is compared with (the hardware's layout where the doc is wrong)."""
    hit = by_id.get(corrected_id(lid))
    return hit if hit is not None else by_id.get(lid)


def corrections_preferred(items: Iterable[_T]) -> list[_T]:
    """``items`` (anything with an ``id``) without each doc layout whose correction is among them: the correction
    stands in its place."""
    items = list(items)
    ids = {x.id for x in items}  # type: ignore[attr-defined]
    return [x for x in items if is_corrected_id(x.id) or corrected_id(x.id) not in ids]  # type: ignore[attr-defined]


def by_doc_id(items: Iterable[Any]) -> dict[str, Any]:
    """doc id -> the item standing for it: its correction where ``items`` hold one, else the doc layout."""
    by = {x.id: x for x in items}
    return {i: preferred(by, i) for i in by if not is_corrected_id(i)}


def effective_id(lid: str, known: "Container[str]") -> str:
    """The layout that stands for ``lid`` where the catalog's checks combine layouts: its correction when
    the catalog has one (the hardware's layout where the doc is wrong), else itself."""
    c = corrected_id(lid)
    return c if c in known else lid
