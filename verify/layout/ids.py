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
from typing import Sequence

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

CORRECTED = "@corrected"  # the output id of a spec's correction of a doc layout: ``ID@corrected``


def corrected_id(lid: str) -> str:
    """The output id of the correction of doc layout ``lid`` (``verify.layout.corrections``: a doc layout holds
    its correction; this is the one place that names it)."""
    return lid + CORRECTED


CORRECTED_RX = re.escape(CORRECTED)  # the suffix in a pattern over output ids (reviewed tables keyed by them)


def given_doc_id(given: str) -> str:
    """The doc layout's id of an id a user gives (``conform ID``, ``ID@corrected``): which spec file holds it."""
    return given.removesuffix(CORRECTED)
