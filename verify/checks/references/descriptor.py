"""The tcgen05 shared-memory descriptor's swizzle codes (``tcgen05.descriptor.swizzle``) as CuTe's header states them.

Part of the ``cute-text`` reference (CUTLASS CuTe's origin: the headers of the installed nvidia-cutlass wheel, read
as text).  ``cute/arch/mma_sm100_desc.hpp`` declares ``enum class LayoutType : uint8_t { SWIZZLE_NONE = 0,
SWIZZLE_128B_BASE32B = 1, SWIZZLE_128B = 2, SWIZZLE_64B = 4, SWIZZLE_32B = 6 }`` (the values ``UMMA::SmemDescriptor``'s
``layout_type_`` bit-field, bits 61-63, takes); each enumerator's C integer literal is evaluated by ``cexpr``
and paired with the spec's modes in the spec's order (none, 128B with 32B atomicity, 128B, 64B, 32B).  A mode with no
enumerator, or an enumerator that is no integer literal, is a finding with the header line.
"""
from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from ...layout.corrections import in_use_of
from ...layout.model import MapLayout
from . import cexpr
from .common import Evaluated
from .pyfunc import Refused

SPEC = "tcgen05.descriptor.swizzle"
HEADER = "cute/arch/mma_sm100_desc.hpp"
MODES = ("SWIZZLE_NONE", "SWIZZLE_128B_BASE32B", "SWIZZLE_128B", "SWIZZLE_64B", "SWIZZLE_32B")   # the spec's order
_ENUM = re.compile(r"enum\s+class\s+LayoutType\s*:\s*\w+\s*\{(?P<body>[^}]*)\}")


def swizzle_items(specs: Iterable, root: Path) -> list[Evaluated]:
    by = {s.id: s for s in specs if isinstance(s, MapLayout)}
    spec = in_use_of(by, SPEC)
    path = Path(root) / HEADER
    if not isinstance(spec, MapLayout) or not path.is_file():
        return []
    text = cexpr.strip_comments(path.read_text(encoding="utf-8", errors="replace"))
    m = _ENUM.search(text)
    name = "UMMA::LayoutType"
    if m is None:
        return [Evaluated(name, "", HEADER, 0, spec, error=f"{HEADER}: no enum class LayoutType")]
    line = text.count("\n", 0, m.start()) + 1
    values: dict[str, int] = {}
    try:
        for item in m.group("body").split(","):
            if not item.strip():
                continue
            key, sep, val = item.partition("=")
            at = cexpr.Where(HEADER, text.count("\n", 0, m.start("body") + m.group("body").find(item)) + 1)
            if not sep:
                raise Refused(f"enumerator {key.strip()} has no value", at.file, at.line)
            values[key.strip()] = cexpr.evaluate(val, {}, at)
        missing = [x for x in MODES if x not in values]
        if missing:
            raise Refused(f"LayoutType has no {missing[0]}", HEADER, line)
    except Refused as e:
        return [Evaluated(name, "", HEADER, e.line, spec, error=str(e))]
    rows = tuple((mode, values[x]) for mode, x in enumerate(MODES))
    shown = ", ".join(f"{x} = {values[x]}" for x in MODES)
    return [Evaluated(name, "", HEADER, line, spec, text=f"enum class LayoutType {{{shown}}}", map_rows=rows)]
